"""``ragqa compare`` with repeats (a two-stage bootstrap) and its "no significant change" verdict."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from _records import BASELINE, write_run
from factories import result_of
from rich.console import Console
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.compare import compare_results, paired_bootstrap_ci, paired_cluster_bootstrap_ci
from ragqa.render.comparison import comparison_renderable
from ragqa.schema import PanelResult


def result(sample: str, *judges: list[float]) -> PanelResult:
    """A faithfulness result whose judges have these repeat values (one value: no repeats), mean-reduced."""
    return result_of(*judges, sample=sample)


def compare(a: list[PanelResult], b: list[PanelResult]) -> object:
    return compare_results(
        {(r.sample_id, r.metric): r for r in a},
        {(r.sample_id, r.metric): r for r in b},
        metrics=["faithfulness"],
        thresholds={"faithfulness": None},
    )


def text(comparison: object) -> str:
    console = Console(width=200, record=True)
    console.print(comparison_renderable(comparison))  # type: ignore[arg-type]
    return console.export_text()


SAMPLES = [f"s{i}" for i in range(12)]


def test_without_repeats_the_interval_is_the_plain_paired_bootstrap() -> None:
    rng = np.random.default_rng(1)
    a_values, b_values = rng.uniform(0.4, 0.8, 12), rng.uniform(0.45, 0.85, 12)
    comparison = compare(
        [result(s, [float(v)]) for s, v in zip(SAMPLES, a_values, strict=True)],
        [result(s, [float(v)]) for s, v in zip(SAMPLES, b_values, strict=True)],
    )
    agg = comparison.metrics[0].aggregate  # type: ignore[attr-defined]
    assert agg.repeats == 1
    assert (agg.ci_low, agg.ci_high) == paired_bootstrap_ci(list(b_values - a_values))


def test_repeats_widen_the_interval_until_a_steady_looking_change_is_not_significant() -> None:
    # every sample's reduced score rises by exactly 0.05, but B's judge is noisy from repeat to repeat
    a = [result(s, [0.5, 0.5, 0.5]) for s in SAMPLES]
    b = [result(s, [0.2, 0.55, 0.9]) for s in SAMPLES]
    agg = compare(a, b).metrics[0].aggregate  # type: ignore[attr-defined]
    assert agg.delta == pytest.approx(0.05) and agg.repeats == 3
    assert paired_bootstrap_ci([0.05] * 12) == (0.05, 0.05)  # the reduced scores alone: certain
    assert agg.ci_low < 0 < agg.ci_high and not agg.significant
    assert not agg.regression and not agg.improvement
    assert "no significant change" in text(compare(a, b))
    # a steady B (every repeat the same) is an improvement again
    steady = compare(a, [result(s, [0.55, 0.55, 0.55]) for s in SAMPLES]).metrics[0].aggregate  # type: ignore[attr-defined]
    assert steady.significant and steady.improvement and steady.ci_low == pytest.approx(0.05)


def test_the_two_stage_bootstrap_is_seeded_and_checks_its_input() -> None:
    d, ra, rb = [0.1, -0.05, 0.2], [[0.5, 0.6], [0.4], [0.3, 0.2, 0.1]], [[0.6, 0.7], [0.35], [0.4, 0.5]]
    assert paired_cluster_bootstrap_ci(d, ra, rb) == paired_cluster_bootstrap_ci(d, ra, rb)
    assert all(math.isnan(x) for x in paired_cluster_bootstrap_ci([0.1], [[0.5]], [[0.6]]))  # one sample
    with pytest.raises(ValueError, match="3 differences but 2 and 3 samples"):
        paired_cluster_bootstrap_ci(d, ra[:2], rb)


def test_a_judge_interval_uses_its_own_repeats() -> None:
    a = [result(s, [0.5, 0.5], [0.7]) for s in SAMPLES]
    b = [result(s, [0.1, 0.9], [0.8]) for s in SAMPLES]
    comparison = compare(a, b).metrics[0]  # type: ignore[attr-defined]
    noisy, steady = comparison.judges
    assert noisy.repeats == 2 and noisy.delta == pytest.approx(0.0) and not noisy.significant
    assert steady.repeats == 1 and steady.significant and steady.improvement


async def test_ragqa_compare_says_no_significant_change_when_the_interval_contains_0(tmp_path: Path) -> None:
    a = await write_run(tmp_path / "a.jsonl", BASELINE)
    b = await write_run(tmp_path / "b.jsonl", BASELINE)
    out = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert out.exit_code == 0, out.output
    assert "no significant change" in out.output and "no clear change" not in out.output
