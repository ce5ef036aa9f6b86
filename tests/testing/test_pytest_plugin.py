"""The pytest plugin, exercised the way users run it: `pytest` on the example suite, in this process.

Each user session runs in this process (``Pytester.runpytest_inprocess``: the plugin loads from its
``pytest11`` entry point and the exit code comes through); the check that an unused plugin imports
nothing heavy starts a real child, since its point is a fresh process's ``sys.modules``.

The example suite (examples/pytest_suite) points a panel of three judges at ragqa's fake
OpenAI-compatible server, so the whole real client path runs offline.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from _pytest_run import run_pytest, run_pytest_inprocess

from ragqa.evaluation import PanelEvaluator
from ragqa.pytest_plugin import parse_properties, select_judges, summary_table
from ragqa.render.records import read_result_record, result_record
from ragqa.testing import ScriptedJudge

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "pytest_suite"


@dataclass
class SuiteRun:
    proc: subprocess.CompletedProcess[str]
    junit: ET.Element
    results: list[dict]

    def case(self, name: str) -> ET.Element:
        for case in self.junit.iter("testcase"):
            if case.get("name") == name:
                return case
        raise AssertionError(f"no testcase {name}")

    def props(self, name: str) -> dict[str, str]:
        return {p.get("name", ""): p.get("value", "") for p in self.case(name).iter("property")}


pytest_plugins = ("pytester",)  # the user's sessions run in this process (Pytester.runpytest_inprocess)

_SUITE_RUNS: list[SuiteRun] = []
"""The one run of the example suite, shared by this module's tests (``pytester`` is per test)."""


@pytest.fixture
def suite_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> SuiteRun:
    if not _SUITE_RUNS:
        work = pytester.path
        shutil.copytree(SUITE, work, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"), dirs_exist_ok=True)
        proc = run_pytest_inprocess(
            pytester, monkeypatch, "-q", "--junitxml=junit.xml", "--ragqa-results=out/results.jsonl"
        )
        junit = ET.parse(work / "junit.xml").getroot()
        lines = (work / "out" / "results.jsonl").read_text(encoding="utf-8").splitlines()
        _SUITE_RUNS.append(SuiteRun(proc, junit, [json.loads(line) for line in lines]))
    return _SUITE_RUNS[0]


def test_example_suite_has_exactly_the_intended_failure(suite_run: SuiteRun) -> None:
    out = suite_run.proc.stdout
    assert suite_run.proc.returncode == 1, out + suite_run.proc.stderr
    assert "1 failed, 6 passed" in out
    assert "FAILED test_rag_service.py::test_invented_details_are_caught" in out


def test_short_summary_line_leads_with_metric_score_and_threshold(suite_run: SuiteRun) -> None:
    # pytest cuts the summary line to the terminal width: the score and threshold come first
    line = next(ln for ln in suite_run.proc.stdout.splitlines() if ln.startswith("FAILED "))
    shown = line.split(" - ", 1)[1].removesuffix("...")
    assert "faithfulness 0.444 < 0.8 (mean of 3 judges), sample 'What is your refund policy?'".startswith(shown)
    assert shown.startswith("faithfulness 0")
    assert "ragqa.assertions.MetricAssertionError" not in line


def test_failure_message_lists_every_judge_score_and_reason(suite_run: SuiteRun) -> None:
    out = suite_run.proc.stdout
    assert "faithfulness FAILED on sample 'What is your refund policy?'" in out
    assert "needs the mean aggregate >= 0.8; it is 0.444 (threshold 0.8, higher is better)" in out
    # judge-b (lenient) supports the borderline statement; judge-a and judge-c do not
    assert "judge-a  0.333     FAIL  1 of 3 statements supported" in out
    assert "judge-b  0.667     FAIL  2 of 3 statements supported; unsupported: Store credit never expires." in out
    assert "judge-c  0.333     FAIL  1 of 3 statements supported" in out
    assert "aggregate: 0.444 (mean of 3 judge(s), spread 0.333" in out
    assert "ragqa/pytest_plugin/" not in out  # plugin frames are hidden from the traceback


def test_the_summary_table_in_the_docs_is_what_the_example_suite_prints(suite_run: SuiteRun) -> None:
    docs = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    block = docs.split("**Terminal summary.**", 1)[1].split("```", 2)[1]
    rows = [line for line in block.splitlines() if line.strip() and not line.startswith("=")]
    assert len(rows) == 3
    for row in rows:
        assert row in suite_run.proc.stdout.splitlines()


def test_terminal_summary_table_shows_metric_by_judge(suite_run: SuiteRun) -> None:
    out = suite_run.proc.stdout
    assert "ragqa: mean score per metric and judge" in out
    header = next(line for line in out.splitlines() if line.startswith("metric "))
    assert header.split() == ["metric", "n", "passed", "judge-a", "judge-b", "judge-c", "aggregate"]
    faith = next(line for line in out.splitlines() if line.startswith("faithfulness "))
    assert faith.split()[:3] == ["faithfulness", "6", "5/6"]
    assert "(1 excl)" in faith  # judge-c answered garbage once
    halluc = next(line for line in out.splitlines() if line.startswith("hallucination "))
    assert halluc.split() == ["hallucination", "1", "1/1", "0.000", "0.000", "0.000", "0.000"]


def test_junit_properties_carry_per_judge_scores(suite_run: SuiteRun) -> None:
    failed = suite_run.props("test_invented_details_are_caught")
    assert failed["ragqa:faithfulness:sample"] == "What is your refund policy?"
    assert failed["ragqa:faithfulness:aggregate"] == "0.4444"
    assert failed["ragqa:faithfulness:judge:judge-a"] == "0.3333"
    assert failed["ragqa:faithfulness:judge:judge-b"] == "0.6667"
    assert failed["ragqa:faithfulness:passed"] == "false"
    assert failed["ragqa:faithfulness:threshold"] == "0.8"
    assert failed["ragqa:faithfulness:direction"] == "higher"
    assert suite_run.case("test_invented_details_are_caught").find("failure") is not None

    excluded = suite_run.props("test_panel_survives_a_judge_answering_garbage")
    assert excluded["ragqa:faithfulness:judge:judge-c"] == "excluded"
    assert excluded["ragqa:faithfulness:policy"] == "all"
    assert excluded["ragqa:faithfulness:passed"] == "true"

    hallucination = suite_run.props("test_shipping_answer_does_not_hallucinate_on_any_judge")
    assert hallucination["ragqa:hallucination:direction"] == "lower"
    assert hallucination["ragqa:hallucination:threshold"] == "0.2"


def test_marker_narrows_the_panel(suite_run: SuiteRun) -> None:
    props = suite_run.props("test_marker_picks_judges")
    judges = sorted(k.rsplit(":", 1)[-1] for k in props if ":judge:" in k)
    assert judges == ["judge-a", "judge-b"]


def test_results_jsonl_has_one_line_per_assertion_with_failures(suite_run: SuiteRun) -> None:
    assert len(suite_run.results) == 7
    assert sum(1 for r in suite_run.results if not r["passed"]) == 1
    garbage = next(r for r in suite_run.results if r["test"].endswith("test_panel_survives_a_judge_answering_garbage"))
    failure = next(j["failure"] for j in garbage["judges"] if j["judge_id"] == "judge-c")
    assert failure["error_type"] == "JudgeOutputError"
    assert failure["step"] == "statements"
    assert garbage["policy"] == "all" and garbage["passed"] is True and garbage["decided"] is True


def test_results_lines_are_the_one_record_shape_plus_the_verdict(suite_run: SuiteRun) -> None:
    verdict_fields = {"test", "threshold", "policy", "passed", "decided", "gate", "interval", "on_undecided", "flaky"}
    for line in suite_run.results:
        record = {k: v for k, v in line.items() if k not in verdict_fields}
        assert set(line) == set(record) | verdict_fields
        assert result_record(read_result_record(record)) == record  # exactly the shared shape, nothing else
    failed = next(r for r in suite_run.results if r["test"].endswith("test_invented_details_are_caught"))
    assert failed["metric"] == "faithfulness" and failed["sample_id"] == "What is your refund policy?"
    assert failed["threshold"] == 0.8 and failed["passed"] is False and failed["direction"] == "higher"
    assert failed["gate"] == "fail" and failed["flaky"] is False and failed["interval"]["n"] == 3
    assert [j["score"] for j in failed["judges"]] == pytest.approx([1 / 3, 2 / 3, 1 / 3])
    assert failed["aggregate"]["value"] == pytest.approx(4 / 9)


def test_results_path_that_is_a_directory_is_a_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = pytester.path
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    pass\n", encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "out").mkdir()
    proc = run_pytest_inprocess(pytester, monkeypatch, "-q", "--ragqa-results=out")
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage-error exit code
    assert "--ragqa-results out" in proc.stderr and "is a directory" in proc.stderr
    assert "Traceback" not in proc.stderr


LOCAL_SUITE = """
from ragqa import Sample

SAMPLE = Sample(
    id="capital",
    user_input="What is the capital of France?",
    response="Paris is the capital of France.",
    retrieved_contexts=["Paris is the capital and largest city of France."],
)


def test_plain(ragqa):
    result = ragqa.check_metric("faithfulness", SAMPLE, threshold=0.5)
    assert [o.judge_id for o in result.judges] == ["local-strict", "local-lenient"]


async def test_check_metric_inside_the_tests_running_loop(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.5)
    await ragqa.assert_metric("faithfulness", SAMPLE, threshold=0.5)
"""


def test_local_profile_works_outside_the_repository(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    tmp_path = pytester.path
    # no application.yaml here: the implicit settings file may be absent; the local profile is built in
    assert ROOT not in tmp_path.parents
    (tmp_path / "test_local.py").write_text(LOCAL_SUITE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n", encoding="utf-8")
    proc = run_pytest_inprocess(pytester, monkeypatch, "-q", "--ragqa-profile", "local")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    assert "ragqa: mean score per metric and judge" in proc.stdout


def test_plugin_is_inert_when_unused(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # a child: the outer session has imported the heavy modules already; --help needs no fresh process
    tmp_path = pytester.path
    (tmp_path / "test_plain.py").write_text(
        "import sys\n"
        "def test_plain():\n"
        "    heavy = {'ragqa.container', 'ragqa.judges.openai', 'langchain_openai', 'openai', 'dependency_injector'}\n"
        "    assert not heavy & set(sys.modules)\n",
        encoding="utf-8",
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    proc = run_pytest(tmp_path, "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ragqa:" not in proc.stdout
    help_proc = run_pytest_inprocess(pytester, monkeypatch, "--help")
    assert "--ragqa-config" in help_proc.stdout and "--ragqa-profile" in help_proc.stdout


# --- pure pieces ---------------------------------------------------------------------------------


def test_parse_properties_rebuilds_assertions() -> None:
    props = [
        ("other", "x"),
        ("ragqa:faithfulness:sample", "s1"),
        ("ragqa:faithfulness:aggregate", "0.750"),
        ("ragqa:faithfulness:passed", "true"),
        ("ragqa:faithfulness:judge:openai/gpt-4o-mini", "1.000"),
        ("ragqa:faithfulness:judge:ollama:llama3", "excluded"),
        ("ragqa:noise_sensitivity(mode=relevant):sample", "s2"),
        ("ragqa:noise_sensitivity(mode=relevant):aggregate", "nan"),
        ("ragqa:noise_sensitivity(mode=relevant):passed", "false"),
    ]
    first, second = parse_properties(props)
    assert first.metric == "faithfulness" and first.aggregate == 0.75 and first.passed is True
    assert first.judges == {"openai/gpt-4o-mini": 1.0, "ollama:llama3": None}
    assert second.metric == "noise_sensitivity(mode=relevant)" and second.passed is False
    assert second.aggregate != second.aggregate  # NaN


def test_summary_table_means_and_exclusions() -> None:
    rows = parse_properties(
        [
            ("ragqa:faithfulness:sample", "s1"),
            ("ragqa:faithfulness:aggregate", "0.5"),
            ("ragqa:faithfulness:passed", "false"),
            ("ragqa:faithfulness:judge:a", "0.5"),
            ("ragqa:faithfulness:judge:b", "excluded"),
            ("ragqa:faithfulness:sample", "s2"),
            ("ragqa:faithfulness:aggregate", "1.0"),
            ("ragqa:faithfulness:passed", "true"),
            ("ragqa:faithfulness:judge:a", "1.0"),
            ("ragqa:faithfulness:judge:b", "1.0"),
        ]
    )
    lines = summary_table(rows)
    assert lines[0].split() == ["metric", "n", "passed", "a", "b", "aggregate"]
    assert lines[1].split() == ["faithfulness", "2", "1/2", "0.750", "1.000", "(1", "excl)", "0.750"]
    assert summary_table([]) == []


def test_select_judges_by_id_and_pattern() -> None:
    judges = [ScriptedJudge(i, {}) for i in ("openai/gpt-4o-mini", "openai/gpt-4o", "google/gemini")]
    ev = PanelEvaluator(judges, [])
    assert [j.id for j in select_judges(ev, ["openai/*"]).judges] == ["openai/gpt-4o-mini", "openai/gpt-4o"]
    assert [j.id for j in select_judges(ev, ["google/gemini", "openai/gpt-4o"]).judges] == [
        "openai/gpt-4o",
        "google/gemini",
    ]
    with pytest.raises(ValueError, match="'anthropic/\\*' match no judge; the panel is openai/gpt-4o-mini"):
        select_judges(ev, ["anthropic/*"])
