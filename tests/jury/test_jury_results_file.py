"""A voting run's results file: per-sample Dawid-Skene values in the final records, and the
reliability section of a report rebuilt from the file (``ragqa report results.jsonl``)."""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
ragqa = partial(run_cli, cwd=ROOT)  # the CLI in process, in the repository root unless told
IT = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"
METRICS = ["-m", "faithfulness,context_precision"]


def _evaluate(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    done = ragqa(
        "evaluate",
        str(IT),
        "--profile",
        "local",
        *METRICS,
        *extra,
        "--no-progress",
        "-o",
        "results.jsonl",
        "-o",
        "out.json",
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    return lines[0], lines[1:], json.loads((tmp_path / "out.json").read_text())


@pytest.mark.slow
def test_a_dawid_skene_run_writes_each_samples_fit_value_and_a_rebuilt_report_has_the_reliability(
    tmp_path: Path,
) -> None:
    header, records, report = _evaluate(tmp_path, "--aggregation", "dawid-skene")
    assert header["extractor"] == "local-strict"  # the first judge extracts, and settles ties
    by_metric: dict[str, list[float]] = {}
    for record in records:
        assert record["aggregate"]["strategy"] == "dawid-skene"
        if record["dawid_skene"] is not None:
            by_metric.setdefault(record["metric"], []).append(record["dawid_skene"])
    summaries = {s["metric"]: s for s in report["summaries"]}
    for metric, values in by_metric.items():
        # the summary's Dawid-Skene aggregate is the mean of the per-sample values the records now hold
        assert math.fsum(values) / len(values) == summaries[metric]["jury"]["voted_mean"]
        assert len(values) == summaries[metric]["jury"]["n_samples"]
    assert set(by_metric) == {"faithfulness", "context_precision"}

    done = ragqa("report", "results.jsonl", "-o", "rebuilt.json", cwd=tmp_path, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    rebuilt = {s["metric"]: s for s in json.loads((tmp_path / "rebuilt.json").read_text())["summaries"]}
    for metric, summary in summaries.items():
        assert rebuilt[metric]["jury"] == summary["jury"], metric  # the same fit, the same seed


@pytest.mark.slow
def test_a_mean_run_writes_the_records_and_header_it_wrote_before(tmp_path: Path) -> None:
    header, records, report = _evaluate(tmp_path)
    assert "extractor" not in header
    assert all(set(r) == {"sample_id", "metric", "direction", "aggregate", "judges"} for r in records)
    assert all(s["jury"] is None for s in report["summaries"])
    done = ragqa("report", "results.jsonl", "-o", "rebuilt.json", cwd=tmp_path, env={"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert all(s["jury"] is None for s in json.loads((tmp_path / "rebuilt.json").read_text())["summaries"])
