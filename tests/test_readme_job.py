"""The README's main job keeps its scores: what makes it faster must not change a single number.

The job is ``ragqa evaluate examples/datasets/it_helpdesk.jsonl --profile local`` (60 samples,
faithfulness and hallucination, the two offline local judges). Its per-judge means are pinned to
the last bit, and every per-sample score with its details (statements, graded verdicts, reasons)
to a digest, both taken before the speed work of the local judge and the start-up. A change that
moves them is a change of the local judge's answers: bump ``ALGORITHM_VERSION`` and re-pin here
on purpose (the digest is printed by the failing assertion).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import ragqa
from ragqa.render.console import report_to_text
from ragqa.report import MetricSummary, Report

ROOT = Path(__file__).resolve().parents[1]

MEANS = {
    "faithfulness": {"local-strict": 0.6048997486685315, "local-lenient": 0.6090624279672494},
    "hallucination": {"local-strict": 0.39510025133146853, "local-lenient": 0.39093757203275054},
}
AGGREGATE_MEANS = {"faithfulness": 0.6069810883178904, "hallucination": 0.39301891168210956}
SCORES_DIGEST = "ffd24d19b3349f653476025dd8a69cba813662714381ce340fd92ed83fcb3cdb"


@pytest.fixture(scope="module")
def report() -> Report:
    return ragqa.evaluate(
        ROOT / "examples" / "datasets" / "it_helpdesk.jsonl", config=ROOT / "application.yaml", profile="local"
    )


def test_the_job_scores_what_the_readme_shows(report: Report) -> None:
    assert [s.metric for s in report.summaries] == ["faithfulness", "hallucination"]
    for summary in report.summaries:
        assert {j.judge_id: j.mean for j in summary.judges} == MEANS[summary.metric]
        assert summary.aggregate_mean == AGGREGATE_MEANS[summary.metric]
        assert all(j.n_scored == 60 and j.n_failed == 0 for j in summary.judges)


def _scores(report: Report) -> list[str]:
    return sorted(
        f"{r.sample_id}|{r.metric}|{o.judge_id}|{o.score.value!r}|{json.dumps(o.score.details, sort_keys=True)}"
        for r in report.results
        for o in r.judges
        if o.score is not None
    )


def test_every_score_and_verdict_of_the_job_is_unchanged(report: Report) -> None:
    lines = _scores(report)
    assert len(lines) == 240
    assert hashlib.sha256("\n".join(lines).encode()).hexdigest() == SCORES_DIGEST


@pytest.mark.filterwarnings("ignore::ragqa.thresholds.UndecidedWarning")  # 0.6 and 0.4 lie inside the intervals
def test_the_per_item_reliability_section_is_reporting_only(report: Report) -> None:
    # without thresholds the job's section cuts at each metric's default (faithfulness 0.8,
    # hallucination 0.2); with the run's thresholds at those: neither changes a score or a figure
    assert [s.item_jury.threshold for s in report.summaries if s.item_jury is not None] == [0.8, 0.2]
    gated = ragqa.evaluate(
        ROOT / "examples" / "datasets" / "it_helpdesk.jsonl",
        config=ROOT / "application.yaml",
        profile="local",
        thresholds={"faithfulness": 0.6, "hallucination": 0.4},
    )
    assert all(s.item_jury is not None and len(s.item_jury.judges) == 2 for s in gated.summaries)
    assert hashlib.sha256("\n".join(_scores(gated)).encode()).hexdigest() == SCORES_DIGEST
    assert [r.aggregate for r in gated.results] == [r.aggregate for r in report.results]
    assert [_figures(s) for s in gated.summaries] == [_figures(s) for s in report.summaries]


def _figures(summary: MetricSummary) -> Any:
    """Every figure of a summary but the section itself, the threshold's flaky samples and timings."""

    def untimed(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: untimed(v) for k, v in value.items() if k != "latency_s"}
        return [untimed(v) for v in value] if isinstance(value, list) else value

    return untimed(summary.model_dump(mode="json", exclude={"item_jury", "flaky_samples"}))


def test_the_readme_shows_the_jobs_console_report(report: Report) -> None:
    # "What you get": every line of the README's block is the console report's, in order
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## What you get", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    shown = [line.rstrip() for line in block.splitlines() if line.strip()]
    printed = [line.rstrip() for line in report_to_text(report, width=200).splitlines() if line.strip()]
    printed = [line for line in printed if not line.startswith(("calls ", "wall"))]
    assert shown == printed[: len(shown)]
