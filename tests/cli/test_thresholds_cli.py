"""``ragqa evaluate`` with a threshold inside, above and below the aggregate's confidence interval.

The shipped IT helpdesk dataset (60 samples) scored by the local panel (two deterministic judges)
has a faithfulness aggregate of 0.607 with a 95 % interval of about [0.53, 0.69]: a threshold of 0.6
is inside it, 0.4 below it and 0.8 above it. At 0.8 one sample is flaky: it-043, which the strict
judge scores 0.794 and the lenient one 0.849.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.run.exit_codes import ExitCode
from ragqa.thresholds import UndecidedWarning

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"
UNDECIDED = re.compile(r"UNDECIDED faithfulness: 0\.607 \[0\.\d{3}, 0\.\d{3}\] against 0\.6, add samples or repeats")


def evaluate(*args: str) -> tuple[int, str]:
    command = ["evaluate", str(DATA), "--profile", "local", "--metrics", "faithfulness", "--no-progress", *args]
    result = CliRunner().invoke(app, command)
    return result.exit_code, " ".join(result.output.split())  # one line: rich wraps long lines


@pytest.mark.slow
def test_a_threshold_inside_the_interval_is_undecided_and_exits_4() -> None:
    code, output = evaluate("--threshold", "faithfulness=0.6", "--no-cache")
    assert code == ExitCode.UNDECIDED == 4, output
    assert UNDECIDED.search(output), output
    assert "(needs >= 0.6; --on-undecided fail: exit 4)" in output
    assert "flaky" not in output  # both judges fall on the same side of 0.6 on every sample


@pytest.fixture(scope="module")
def above(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, dict]:
    out = tmp_path_factory.mktemp("gate") / "report.json"
    code, output = evaluate("--threshold", "faithfulness=0.8", "--out", str(out))
    return code, output, json.loads(out.read_text(encoding="utf-8"))


def test_a_threshold_above_the_interval_fails_as_today(above: tuple[int, str, dict]) -> None:
    code, output, _ = above
    assert code == ExitCode.THRESHOLD, output
    assert re.search(r"FAIL faithfulness: aggregate mean 0\.607 \[0\.\d{3}, 0\.\d{3}\], needs >= 0\.8", output)


def test_the_report_and_the_console_list_the_flaky_samples(above: tuple[int, str, dict]) -> None:
    _, output, report = above
    [summary] = report["summaries"]
    assert summary["flaky_samples"] == ["it-043"]
    results = {r["sample_id"]: r for r in report["results"]}
    scores = [j["score"] for j in results["it-043"]["judges"]]
    assert min(scores) < 0.8 <= max(scores)  # one judge passes 0.8, the other does not
    steady = [s for s in results if s != "it-043"]
    assert all(len({j["score"] >= 0.8 for j in results[s]["judges"]}) == 1 for s in steady)
    assert "flaky faithfulness: 1 sample(s) with judges or repeats on both sides of 0.8: it-043" in output


def test_on_undecided_warn_passes_with_a_warning() -> None:
    code, output = evaluate("--threshold", "faithfulness=0.6", "--on-undecided", "warn")
    assert code == ExitCode.OK, output
    assert UNDECIDED.search(output) and "--on-undecided warn: counted as pass, with a warning" in output
    assert "warning: faithfulness is undecided; counted as pass (--on-undecided warn)" in output


def test_a_threshold_below_the_interval_passes_as_today() -> None:
    code, output = evaluate("--threshold", "faithfulness=0.4")
    assert code == ExitCode.OK, output
    assert re.search(r"PASS faithfulness: aggregate mean 0\.607 \[0\.\d{3}, 0\.\d{3}\], needs >= 0\.4", output)


def test_a_bad_on_undecided_is_a_usage_error_before_any_call() -> None:
    code, output = evaluate("--threshold", "faithfulness=0.6", "--on-undecided", "sometimes")
    assert code == ExitCode.USAGE and "--on-undecided 'sometimes': use fail, pass or warn" in output


def test_ragqa_evaluate_warns_where_the_cli_would_exit_4() -> None:
    with pytest.warns(UndecidedWarning, match=UNDECIDED.pattern):
        report = ragqa.evaluate(DATA, metrics=["faithfulness"], profile="local", thresholds={"faithfulness": 0.6})
    assert report.summaries[0].interval is not None
