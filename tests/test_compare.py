"""``ragqa compare``: two results files written from real runs of scripted judges."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _records import BASELINE, write_run
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.compare import compare_files, exit_code, paired_bootstrap_ci
from ragqa.errors import ConfigError, JudgeTimeout
from ragqa.metrics import Faithfulness

# Supported statements out of 4 per judge and sample (faithfulness = n / 4), or an exception.
#   A: x 4 4 3 4 4 3 4 4 ; y 3 3 3 4 3 3 3 3 (BASELINE, from _records.py)
#   B: x 2 3 2 4 2 3 2 4 ; y 3 3 3 4 3 3 3 (timeout on s8)
CANDIDATE: dict[str, list[Any]] = {
    "x": [2, 3, 2, 4, 2, 3, 2, 4],
    "y": [3, 3, 3, 4, 3, 3, 3, JudgeTimeout("no answer in 30 s", step="nli")],
}
# Faithfulness aggregate (mean of the judges) per sample:
#   A: .875 .875 .750 1 .875 .750 .875 .875
#   B: .625 .750 .625 1 .625 .750 .625 1.0 (x alone: y failed)
#   B - A: -.25 -.125 -.125 0 -.25 0 -.25 +.125 -> sum -0.875, mean -0.109375
AGG_A = [0.875, 0.875, 0.75, 1.0, 0.875, 0.75, 0.875, 0.875]
AGG_B = [0.625, 0.75, 0.625, 1.0, 0.625, 0.75, 0.625, 1.0]


@pytest.fixture
async def runs(tmp_path: Path) -> tuple[Path, Path]:
    return await write_run(tmp_path / "a.jsonl", BASELINE), await write_run(tmp_path / "b.jsonl", CANDIDATE)


def _cli(*args: str | Path) -> Any:
    return CliRunner().invoke(app, ["compare", *map(str, args)])


async def test_a_worse_candidate_is_a_regression_in_both_directions(runs: tuple[Path, Path]) -> None:
    a, b = runs
    comparison = compare_files(a, b)
    faith, hall = comparison.metrics
    assert (faith.metric, faith.direction, faith.n_pairs) == ("faithfulness", "higher", 8)
    agg = faith.aggregate
    assert agg.n == 8
    assert agg.mean_a == pytest.approx(sum(AGG_A) / 8) and agg.mean_b == pytest.approx(sum(AGG_B) / 8)
    assert agg.delta == pytest.approx(-0.875 / 8)
    assert agg.ci_low <= agg.delta <= agg.ci_high < 0
    assert agg.regression and not agg.improvement
    # the same interval as the bootstrap of the per-sample differences on its own (seeded)
    diffs = [b_ - a_ for a_, b_ in zip(AGG_A, AGG_B, strict=True)]
    assert (agg.ci_low, agg.ci_high) == pytest.approx(paired_bootstrap_ci(diffs))
    # per judge: x drops by (2+1+1+0+2+0+2+0)/4/8 = 0.25; y scored s8 in A only, so 7 pairs, no change
    x, y = faith.judges
    assert (x.subject, x.n, x.delta) == ("x", 8, pytest.approx(-0.25)) and x.regression
    assert (y.subject, y.n, y.delta) == ("y", 7, 0.0) and (y.ci_low, y.ci_high) == (0.0, 0.0)
    assert not y.regression and not y.improvement
    # default threshold 0.8: A fails s3, s6; B passes s4, s8 only -> s1, s2, s5, s7 flip pass -> fail
    assert faith.threshold == 0.8
    assert [(f.sample_id, f.regression) for f in faith.flips] == [(s, True) for s in ("s1", "s2", "s5", "s7")]
    assert [(f.judge_id, f.sample_id, f.step) for f in faith.new_failures] == [("y", "s8", "nli")]
    assert "JudgeTimeout" in faith.new_failures[0].error and faith.resolved_failures == []
    # hallucination (lower is better) = 1 - faithfulness: the delta is +0.109375, also a regression
    assert hall.direction == "lower" and hall.aggregate.delta == pytest.approx(0.875 / 8)
    assert hall.aggregate.ci_low > 0 and hall.aggregate.regression
    assert [f.sample_id for f in hall.flips] == ["s1", "s2", "s5", "s7"]  # default threshold 0.2
    assert exit_code(comparison) == 1 and [m.metric for m in comparison.regressions] == [
        "faithfulness",
        "hallucination",
    ]


async def test_the_other_way_round_is_an_improvement_that_resolves_the_failure(runs: tuple[Path, Path]) -> None:
    a, b = runs
    comparison = compare_files(b, a)
    faith = comparison.metrics[0]
    assert faith.aggregate.delta == pytest.approx(0.875 / 8) and faith.aggregate.improvement
    assert not faith.aggregate.regression and exit_code(comparison) == 0
    assert [(f.sample_id, f.regression) for f in faith.flips] == [(s, False) for s in ("s1", "s2", "s5", "s7")]
    assert [(f.judge_id, f.sample_id) for f in faith.resolved_failures] == [("y", "s8")]
    assert faith.new_failures == []


async def test_identical_runs_have_no_change_and_exit_0(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = runs
    again = await write_run(tmp_path / "again.jsonl", BASELINE)
    comparison = compare_files(a, again)
    for m in comparison.metrics:
        assert (m.aggregate.delta, m.aggregate.ci_low, m.aggregate.ci_high) == (0.0, 0.0, 0.0)
        assert m.flips == [] and m.new_failures == [] and not m.aggregate.regression
    assert exit_code(comparison) == 0


async def test_threshold_and_tolerance_options(runs: tuple[Path, Path]) -> None:
    a, b = runs
    # threshold 0.7: A passes all; B fails .625 on s1, s3, s5, s7
    faith = compare_files(a, b, thresholds={"faithfulness": 0.7}).metrics[0]
    assert faith.threshold == 0.7 and [f.sample_id for f in faith.flips] == ["s1", "s3", "s5", "s7"]
    # a tolerance larger than the worst the interval allows: not a regression
    lenient = compare_files(a, b, tolerance=0.5)
    assert lenient.regressions == [] and exit_code(lenient) == 0
    with pytest.raises(ConfigError, match="tolerance"):
        compare_files(a, b, tolerance=-0.1)
    with pytest.raises(ConfigError, match="context_recall"):
        compare_files(a, b, thresholds={"context_recall": 0.5})  # not a metric of these runs


def test_bootstrap_interval_edge_cases_are_exact_or_nan() -> None:
    assert all(math.isnan(v) for v in paired_bootstrap_ci([0.3]))
    assert all(math.isnan(v) for v in paired_bootstrap_ci([]))
    assert paired_bootstrap_ci([-0.2, -0.2, -0.2]) == (-0.2, -0.2)  # every resample has mean -0.2
    diffs = list(np.linspace(-1, 1, 21))
    low, high = paired_bootstrap_ci(diffs)
    assert low < 0 < high and paired_bootstrap_ci(diffs) == (low, high)  # seeded: the same every time
    # bounded by the smallest and largest possible resample means
    assert low >= -1 and high <= 1


async def test_cli_exit_codes_console_and_json(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = runs
    out = tmp_path / "cmp.json"
    worse = _cli(a, b, "--json", out)
    assert worse.exit_code == 1, worse.output
    assert "faithfulness" in worse.output and "worse" in worse.output
    assert "pass -> fail at threshold 0.8: s1 (0.875 -> 0.625)" in worse.output
    assert "new judge failures (1): y on s8 (nli: JudgeTimeout" in worse.output
    assert "regression beyond tolerance 0: faithfulness -0.109" in worse.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["regressed"] == ["faithfulness", "hallucination"]
    assert document["metrics"][0]["aggregate"]["delta"] == pytest.approx(-0.875 / 8)
    assert document["seed"] and document["confidence"] == 0.95
    better = _cli(b, a)
    assert better.exit_code == 0, better.output
    assert "no regression beyond tolerance 0" in better.output and "resolved judge failures (1)" in better.output
    assert _cli(a, b, "--tolerance", "0.5").exit_code == 0


async def test_cli_html_page_shows_the_deltas_flips_and_failures(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = runs
    page = tmp_path / "cmp.html"
    assert _cli(a, b, "--html", page).exit_code == 1
    html = page.read_text(encoding="utf-8")
    assert "regressed: faithfulness, hallucination" in html
    assert "pass → fail" in html and "new judge failures" in html and "JudgeTimeout" in html
    assert "<script" not in html and "http" not in html.split("</head>", 1)[1]  # no script, no outside resource
    assert _cli(a, b, "--html", tmp_path).exit_code == 2  # a directory: refused before comparing


async def test_cli_bad_usage_exits_2(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = runs
    dataset = tmp_path / "data.jsonl"
    dataset.write_text('{"id": "s1", "question": "q"}\n', encoding="utf-8")
    only_faith = await write_run(tmp_path / "f.jsonl", BASELINE, metrics=(Faithfulness(),))
    others = await write_run(tmp_path / "o.jsonl", BASELINE, samples=["t1", "t2"])
    cases = [
        ((a, tmp_path / "missing.jsonl"), "does not exist"),
        ((a, dataset), "no ragqa results header"),
        ((a, only_faith), "different metrics"),
        ((a, others), "no (sample, metric) pair in common"),
        ((a, a, "--threshold", "faithfulness"), "bad threshold"),
    ]
    for args, message in cases:
        result = _cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert message in " ".join(result.output.split()), result.output
