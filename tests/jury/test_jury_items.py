"""The per-item reliability section of a run aggregated by ``mean``: Dawid-Skene on each judge's
pass/fail at the metric's threshold, from the run's own scores (``ragqa.jury.reliability``).

A seeded simulation runs through a real run (``ragqa.evaluate``) with test-double judges of known
per-item accuracy; the section recovers those accuracies, and the console, the JSON report, the
HTML page and the report rebuilt from the results file all show the same section.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _cli import run_cli
from _records import one_judge_container
from dependency_injector import providers

import ragqa
from ragqa.container import Container
from ragqa.errors import ConfigError, JudgeHTTPError
from ragqa.jury import fit_dawid_skene
from ragqa.jury.dawid_skene_batch import fit_dawid_skene_batch
from ragqa.jury.reliability import attach_item_reliability, gate_verdicts, item_reliability
from ragqa.metrics.context_relevance import ContextRelevance
from ragqa.render.console import jury_texts, report_to_text
from ragqa.report import Report
from ragqa.run.merge import dataset_ids, merge_results
from ragqa.run.replay import report_from_results
from ragqa.testing import FunctionJudge

pytestmark = pytest.mark.filterwarnings("ignore::ragqa.thresholds.UndecidedWarning")  # 0.5 is inside the interval

N_ITEMS = 300
ACCURACY = {"j95": 0.95, "j85": 0.85, "j75": 0.75, "j65": 0.65}
"""Each judge's chance of giving an item's true pass/fail (the same for passing and failing items)."""
MISSING = {"j65": 0.1}
"""Each judge's share of items it fails on (an HTTP error: no verdict)."""
PREVALENCE = 0.6


def _simulation(seed: int = 7) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The true class per item, each judge's verdict per item (1 pass, 0 fail) and where it fails."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(N_ITEMS) < PREVALENCE).astype(int)
    said = {j: np.where(rng.random(N_ITEMS) < acc, truth, 1 - truth) for j, acc in ACCURACY.items()}
    down = {j: rng.random(N_ITEMS) < MISSING.get(j, 0.0) for j in ACCURACY}
    return truth, said, down


def _judge(judge_id: str, said: np.ndarray, down: np.ndarray) -> FunctionJudge:
    """Rates the context 2 (score 1.0, a pass at 0.5) when the simulation says pass, else 0 (score 0.0)."""

    def answer(prompt: Any, data: Any) -> dict[str, int]:
        item = int(re.search(r"item (\d+)\?", data.user_input).group(1))  # type: ignore[union-attr]
        if down[item]:
            raise JudgeHTTPError("down", judge_id=judge_id, status=503)
        return {"rating": 2 if said[item] else 0}

    return FunctionJudge(judge_id, answer)


def _container(*judges: FunctionJudge) -> Container:
    container = one_judge_container(judges[0])
    container.judges.override(providers.Object(list(judges)))
    return container


def _records() -> list[dict[str, Any]]:
    return [
        {"id": f"i{i:03d}", "user_input": f"Is the answer in item {i}?", "retrieved_contexts": [f"Context {i}."]}
        for i in range(N_ITEMS)
    ]


@pytest.fixture(scope="module")
def simulated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path, np.ndarray, dict[str, np.ndarray]]:
    truth, said, down = _simulation()
    container = _container(*(_judge(j, said[j], down[j]) for j in ACCURACY))
    out = tmp_path_factory.mktemp("items")
    report = ragqa.evaluate(
        _records(),
        ["context_relevance"],
        container=container,
        thresholds={"context_relevance": 0.5},
        out=[out / "results.jsonl", out / "report.json", out / "report.html"],
        allow_incomplete=True,
        overwrite=True,
    )
    return report, out, truth, {j: np.where(down[j], -1, said[j]) for j in ACCURACY}


def test_dawid_skene_per_item_recovers_the_judges_accuracies(
    simulated: tuple[Report, Path, np.ndarray, dict[str, np.ndarray]],
) -> None:
    report, _, truth, said = simulated
    [summary] = report.summaries
    section = summary.item_jury
    assert section is not None and section.unit == "item" and section.threshold == 0.5
    assert summary.jury is None  # the per-statement section is a voting run's
    assert section.n_statements == section.n_samples == N_ITEMS
    assert abs(section.prevalence - truth.mean()) < 0.05
    for judge in section.judges:
        given = said[judge.judge_id] >= 0
        measured = float((said[judge.judge_id][given] == truth[given]).mean())
        # DS estimates the accuracy it measures against the truth; with 300 items its standard error
        # is about sqrt(0.75 * 0.25 / 300) = 0.025 for the weakest judges: 0.06 is well over two of them,
        # and the simulated accuracy itself is within 0.06 of the nominal one (the same binomial error)
        assert abs(judge.accuracy.estimate - measured) < 0.06, judge.judge_id
        assert abs(judge.accuracy.estimate - ACCURACY[judge.judge_id]) < 0.06, judge.judge_id
        assert judge.accuracy.low <= judge.accuracy.estimate <= judge.accuracy.high
        assert judge.accuracy.method == "cluster-bootstrap" and judge.accuracy.n == N_ITEMS
    # the failures of j65 are missing verdicts, not fails: its rates are over the items it answered
    assert [j.n_failed for j in summary.judges] == [0, 0, 0, int((said["j65"] < 0).sum())]
    # the judges err independently here: no pair is flagged (the residuals of the two strongest judges
    # correlate negatively, as the posterior they are measured against is mostly theirs)
    assert all(r <= 0.3 for _, _, r in section.correlations) and not section.warnings


@pytest.mark.slow
def test_the_console_json_html_and_rebuilt_report_show_the_same_section(
    simulated: tuple[Report, Path, np.ndarray, dict[str, np.ndarray]],
) -> None:
    report, out, _, _ = simulated
    [summary] = report.summaries
    lines = [text for text, _ in jury_texts(summary)]
    assert lines[0] == (
        "reliability per item (Dawid-Skene on each judge's pass = score >= 0.5, no labels, 300 samples; 95% intervals)"
    )
    assert len(lines) == 1 + len(ACCURACY) + 2  # title, a line per judge, pass rates, correlations
    console = report_to_text(report, width=200)
    assert all(line in console for line in lines)

    written = json.loads((out / "report.json").read_text())["summaries"][0]["item_jury"]
    assert written == json.loads(summary.item_jury.model_dump_json())  # type: ignore[union-attr]
    page = html.unescape((out / "report.html").read_text())
    assert all(line in page for line in lines)

    rebuilt, _ = report_from_results(out / "results.jsonl")
    assert rebuilt.summaries[0].item_jury == summary.item_jury  # the same scores, thresholds and seed
    assert report_to_text(rebuilt, width=200).count(lines[1]) == 1


class _NoDefault(ContextRelevance):
    """Context relevance without a default threshold: a metric the section cannot cut."""

    default_threshold = None


def test_a_metric_without_a_threshold_or_default_says_so_in_one_line(tmp_path: Path) -> None:
    _, said, down = _simulation()
    container = _container(_judge("a", said["j95"], down["j95"]), _judge("b", said["j85"], down["j85"]))
    report = ragqa.evaluate(_records()[:20], [_NoDefault()], container=container, out=tmp_path / "r.jsonl")
    [summary] = report.summaries
    assert summary.item_jury is not None and summary.item_jury.threshold is None and not summary.item_jury.judges
    assert jury_texts(summary) == [
        (
            "reliability per item: not estimated, context_relevance has no threshold in this run "
            "and no default one (set one with --threshold or ragqa.thresholds)",
            "note",
        )
    ]
    rebuilt, _ = report_from_results(tmp_path / "r.jsonl")
    assert rebuilt.summaries[0].item_jury == summary.item_jury
    assert "thresholds" not in json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])


def test_without_a_run_threshold_the_section_cuts_at_the_metrics_default(tmp_path: Path) -> None:
    _, said, down = _simulation()
    container = _container(_judge("a", said["j95"], down["j95"]), _judge("b", said["j85"], down["j85"]))
    plain = ragqa.evaluate(_records()[:20], ["context_relevance"], container=container, out=tmp_path / "r.jsonl")
    gated = ragqa.evaluate(
        _records()[:20], ["context_relevance"], container=container, thresholds={"context_relevance": 0.5}
    )
    [summary] = plain.summaries
    assert ContextRelevance.default_threshold == 0.5
    assert summary.item_jury is not None and summary.item_jury.threshold == 0.5 and summary.item_jury.judges
    assert summary.item_jury == gated.summaries[0].item_jury  # the default cuts where the same gate would
    header = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])
    assert header["thresholds"] == {"context_relevance": 0.5}
    rebuilt, _ = report_from_results(tmp_path / "r.jsonl")
    assert rebuilt.summaries[0].item_jury == summary.item_jury


def test_report_threshold_recuts_the_rebuilt_section_as_a_run_at_that_threshold(tmp_path: Path) -> None:
    # `ragqa report --threshold` gates the rebuilt report at the user's value: the section follows it
    _, said, down = _simulation()
    container = _container(_judge("a", said["j95"], down["j95"]), _judge("b", said["j85"], down["j85"]))
    ragqa.evaluate(_records()[:20], ["context_relevance"], container=container, out=tmp_path / "r.jsonl")
    at_07 = ragqa.evaluate(
        _records()[:20], ["context_relevance"], container=container, thresholds={"context_relevance": 0.7}
    )
    rebuilt, _ = report_from_results(tmp_path / "r.jsonl", thresholds={"context_relevance": 0.7})
    [summary] = rebuilt.summaries
    assert summary.item_jury is not None and summary.item_jury.threshold == 0.7
    assert summary.item_jury == at_07.summaries[0].item_jury
    with pytest.raises(ConfigError, match="--threshold faithfulness: no metric of this run"):
        report_from_results(tmp_path / "r.jsonl", thresholds={"faithfulness": 0.5})
    done = run_cli("report", tmp_path / "r.jsonl", "-o", tmp_path / "r.html", "--threshold", "context_relevance=0.7")
    assert done.returncode == 0, done.stderr
    assert "pass = score >= 0.7" in html.unescape((tmp_path / "r.html").read_text())


def test_a_mean_run_with_one_judge_has_no_section(tmp_path: Path) -> None:
    _, said, down = _simulation()
    container = one_judge_container(_judge("alone", said["j95"], down["j95"]))
    report = ragqa.evaluate(
        _records()[:20], ["context_relevance"], container=container, thresholds={"context_relevance": 0.5}
    )
    [summary] = report.summaries
    assert summary.item_jury is None and summary.jury is None and jury_texts(summary) == []
    assert "reliability" not in report_to_text(report)


def test_gate_verdicts_follow_the_metrics_direction_and_keep_missing_as_missing() -> None:
    scores = np.array([[0.2, 0.5, math.nan], [0.7, 0.4, 0.5]])
    higher = gate_verdicts(scores, 0.5, "higher")
    lower = gate_verdicts(scores, 0.5, "lower")
    assert higher.shape == (3, 2)
    np.testing.assert_array_equal(higher, [[0.0, 1.0], [1.0, 0.0], [math.nan, 1.0]])
    np.testing.assert_array_equal(lower, [[1.0, 0.0], [1.0, 1.0], [math.nan, 1.0]])


def test_item_reliability_needs_two_judges_and_an_item_with_a_verdict() -> None:
    assert item_reliability(np.array([[1.0, 0.0]]), ["a"], 0.5, "higher") is None
    assert item_reliability(np.full((2, 3), math.nan), ["a", "b"], 0.5, "higher") is None
    with pytest.raises(ValueError, match="one per judge"):
        item_reliability(np.zeros((3, 4)), ["a", "b"], 0.5, "higher")
    fit = item_reliability(np.array([[1.0, 0.0, math.nan], [1.0, 1.0, math.nan]]), ["a", "b"], 0.5, "higher")
    assert fit is not None and fit.n_statements == 2  # the item nobody judged is left out
    assert fit.majority_mean == 0.5  # the tie on item 2 goes to the first judge's fail
    assert attach_item_reliability([], ["a"], {}, lambda key: np.zeros((1, 0))) == []


@pytest.mark.slow
def test_parts_merged_and_rebuilt_give_the_unsharded_runs_section(tmp_path: Path) -> None:
    _, said, down = _simulation()
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in _records()[:80]), encoding="utf-8")

    def run(out: Path, shard: str | None = None) -> Report:
        return ragqa.evaluate(
            data,
            ["context_relevance"],
            container=_container(*(_judge(j, said[j], down[j]) for j in ACCURACY)),
            thresholds={"context_relevance": 0.5},
            out=out,
            shard=shard,
            allow_incomplete=True,
        )

    one = run(tmp_path / "one.jsonl")
    parts = [tmp_path / "part-1.jsonl", tmp_path / "part-2.jsonl"]
    for k, part in enumerate(parts, start=1):
        run(part, f"{k}/2")
    merge_results(parts, tmp_path / "all.jsonl", dataset_ids=dataset_ids(data, parts))
    rebuilt, _ = report_from_results(tmp_path / "all.jsonl")
    assert one.summaries[0].item_jury is not None and one.summaries[0].item_jury.judges
    assert rebuilt.summaries[0].item_jury == one.summaries[0].item_jury


def test_a_weighted_fit_equals_the_fit_on_the_rows_repeated() -> None:
    patterns = np.array([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [math.nan, 1.0, 0.0]])
    counts = np.array([40, 7, 5, 30, 3])
    weighted = fit_dawid_skene(patterns, weights=counts)
    repeated = fit_dawid_skene(np.repeat(patterns, counts, axis=0))
    for name in ("sensitivity", "specificity", "accuracy"):
        np.testing.assert_allclose(getattr(weighted, name), getattr(repeated, name), rtol=0, atol=1e-9)
    assert weighted.prevalence == pytest.approx(repeated.prevalence, abs=1e-9)
    assert weighted.log_likelihood == pytest.approx(repeated.log_likelihood, rel=1e-9)
    starts = np.cumsum(counts) - counts  # the first repeated row of each pattern
    np.testing.assert_allclose(weighted.posterior, repeated.posterior[starts], rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="non-negative"):
        fit_dawid_skene(patterns, weights=[1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        fit_dawid_skene(patterns, weights=[1, 2, 3, 4, -1])


@pytest.mark.slow
def test_the_bootstrap_fits_each_distinct_draw_once_with_the_intervals_of_a_fit_per_replicate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scores = np.array([[0.9, 0.8, 0.2, 0.7, math.nan], [0.6, 0.3, 0.1, 0.9, 0.8], [0.7, 0.9, 0.4, 0.2, 0.1]])
    matrix = gate_verdicts(scores, 0.5, "higher")
    code = (np.where(np.isnan(matrix), 2.0, matrix) * 3.0 ** np.arange(3)).sum(axis=1)
    _, first, counts = np.unique(code, return_index=True, return_counts=True)
    rng = np.random.default_rng(7)
    weights = [rng.multinomial(5, counts / 5) for _ in range(120)]
    once = {w.tobytes(): fit_dawid_skene(matrix[first], weights=w, max_iterations=100) for w in weights}
    per_replicate = [once[w.tobytes()] for w in weights]  # a fit per replicate: the same draw, the same fit
    calls: list[object] = []
    fitted: list[np.ndarray] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("weights"))
        return fit_dawid_skene(*args, **kwargs)

    def batched(patterns: Any, weights: Any, **kwargs: Any) -> Any:
        fitted.extend(np.asarray(weights))
        return fit_dawid_skene_batch(patterns, weights, **kwargs)

    monkeypatch.setattr("ragqa.jury.reliability.fit_dawid_skene", counted)
    monkeypatch.setattr("ragqa.jury.reliability.fit_dawid_skene_batch", batched)
    got = item_reliability(scores, ["a", "b", "c"], 0.5, "higher", n_boot=120, seed=7)
    assert got is not None
    assert len(calls) == 1  # the full fit; then each distinct draw once, side by side
    assert sorted(w.tobytes() for w in fitted) == sorted({w.tobytes() for w in weights})
    assert len(fitted) < 120
    alpha = (1 - 0.95) / 2  # the percentile interval's tails, computed as item_reliability does
    for j, judge in enumerate(got.judges):
        for name in ("sensitivity", "specificity", "accuracy"):
            draws = np.array([getattr(fit, name)[j] for fit in per_replicate])
            interval = getattr(judge, name)
            assert interval.low == min(float(np.quantile(draws, alpha)), interval.estimate)
            assert interval.high == max(float(np.quantile(draws, 1 - alpha)), interval.estimate)
