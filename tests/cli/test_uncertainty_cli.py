"""--confidence and the intervals in every output, run as a user runs ragqa (in process) on the shipped dataset."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from _cli import CliResult, run_cli

from ragqa.metrics import value_ranges
from ragqa.render.records import read_result_record
from ragqa.report import summarize
from ragqa.run.replay import report_from_results

ROOT = Path(__file__).resolve().parents[2]
IT_HELPDESK = str(ROOT / "examples/datasets/it_helpdesk.jsonl")


def _ragqa(*args: str, cwd: Path) -> CliResult:
    return run_cli(*args, cwd=cwd)


@pytest.fixture(scope="module")
def run_90(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliResult, Path]:
    work = tmp_path_factory.mktemp("confidence")
    result = _ragqa(
        "evaluate", IT_HELPDESK, "--profile", "local", "--no-progress", "--confidence", "0.9",
        "--out", "results.jsonl", "--out", "results.csv", cwd=work,
    )  # fmt: skip
    return result, work


def test_the_console_shows_each_mean_with_its_interval_and_a_variance_line(
    run_90: tuple[CliResult, Path],
) -> None:
    result, _ = run_90
    assert result.returncode == 0, result.stderr
    aggregate = [line for line in result.stdout.splitlines() if line.startswith("aggregate (mean)")]
    assert len(aggregate) == 2 and all(row.split()[3] == "±" for row in aggregate)
    variance = [line for line in result.stdout.splitlines() if line.startswith("variance: ")]
    assert len(variance) == 2 and all("to halve ±" in line and "240 samples" in line for line in variance)


def test_the_header_names_the_level_and_holds_the_intervals_of_the_records(
    run_90: tuple[CliResult, Path],
) -> None:
    result, work = run_90
    assert result.returncode == 0, result.stderr
    lines = (work / "results.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    records = [read_result_record(json.loads(line)) for line in lines[1:]]
    ranges = value_ranges(header["metrics"])
    summaries = {s.metric: s for s in summarize(records, header["judges"], confidence=0.9, ranges=ranges)}
    assert header["confidence"] == 0.9
    for metric, intervals in header["intervals"].items():
        summary = summaries[metric]
        assert summary.interval is not None
        assert intervals["aggregate"] == summary.interval.model_dump()
        assert intervals["aggregate"]["confidence"] == 0.9 and intervals["aggregate"]["method"] == "clustered-se"
        assert intervals["judges"] == {
            j.judge_id: j.interval.model_dump() for j in summary.judges if j.interval is not None
        }


def test_the_csv_carries_the_metric_interval_and_each_samples_interval(
    run_90: tuple[CliResult, Path],
) -> None:
    result, work = run_90
    assert result.returncode == 0, result.stderr
    header = json.loads((work / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    with (work / "results.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 120
    for row in rows:
        aggregate = header["intervals"][row["metric"]]["aggregate"]
        assert (float(row["metric_ci_low"]), float(row["metric_ci_high"])) == (aggregate["low"], aggregate["high"])
        assert (row["ci_confidence"], row["ci_method"]) == ("0.9", "clustered-se")
        if row["sample_ci_low"]:  # two deterministic judges: an interval when they differ or agree
            assert 0.0 <= float(row["sample_ci_low"]) <= float(row["aggregate"]) <= float(row["sample_ci_high"]) <= 1.0


def test_a_report_rebuilt_from_the_results_file_keeps_the_level_and_the_intervals(
    run_90: tuple[CliResult, Path],
) -> None:
    result, work = run_90
    assert result.returncode == 0, result.stderr
    header = json.loads((work / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    report, _ = report_from_results(work / "results.jsonl")
    for summary in report.summaries:
        assert summary.interval is not None
        assert summary.interval.model_dump() == header["intervals"][summary.metric]["aggregate"]


def test_a_confidence_outside_0_and_1_exits_2_before_any_call(tmp_path: Path) -> None:
    result = _ragqa("evaluate", IT_HELPDESK, "--profile", "local", "--no-progress", "--confidence", "95", cwd=tmp_path)
    assert result.returncode == 2
    assert "--confidence 95.0: use a level between 0 and 1" in result.stderr
    assert "Traceback" not in result.stderr
