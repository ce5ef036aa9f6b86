"""The pytest plugin's undecided verdicts, run the way users run them: ``pytest`` on a project (in this process).

The project's ``conftest.py`` overrides ``ragqa_evaluator`` with three scripted judges that score
the sample 1.0, 0.5 and 0.0: their mean 0.5 has the interval [0, 1] across the judges, so a
threshold of 0.6 is undecided, and 0.0 passes as it always did.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from _pytest_run import run_pytest_inprocess

CONFTEST = """
import pytest

from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness
from ragqa.testing import FunctionJudge

STATEMENTS = ["The first Super Bowl was held on January 15, 1967.", "It was held in Florida."]


def judge(judge_id, *verdicts):
    def answer(prompt, data):
        if prompt.name == "statements":
            return {"statements": STATEMENTS}
        return {"verdicts": [{"statement": s, "reason": "r", "verdict": v} for s, v in zip(STATEMENTS, verdicts)]}

    return FunctionJudge(judge_id, answer)


@pytest.fixture
def ragqa_evaluator():
    return PanelEvaluator([judge("j0", 1, 1), judge("j1", 1, 0), judge("j2", 0, 0)], [Faithfulness()])
"""

TESTS = """
import pytest

from ragqa.testing import make_sample

SAMPLE = make_sample(id="bowl", response="The first Super Bowl was held on January 15, 1967, in Florida.")


def test_split(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.6)


def test_clear(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.0)


@pytest.mark.ragqa(on_undecided="pass")
def test_marked(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.6)
"""

MESSAGE = "undecided: 0.500 [0.000, 1.000] against 0.6, add samples or repeats"


pytest_plugins = ("pytester",)  # the user's session runs in this process (Pytester.runpytest_inprocess)


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    (pytester.path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (pytester.path / "test_gate.py").write_text(TESTS, encoding="utf-8")
    return pytester.path


@pytest.fixture
def run_pytest(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Callable[..., CompletedProcess[str]]:
    """``pytest *args`` on the project, in this process."""
    return lambda cwd, *args: run_pytest_inprocess(pytester, monkeypatch, *args)


def test_an_undecided_assertion_fails_by_default_with_the_message(
    project: Path, run_pytest: Callable[..., CompletedProcess[str]]
) -> None:
    proc = run_pytest(project, "-q", "-rA")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "1 failed, 2 passed" in out
    # the short summary leads with the message (pytest cuts it at the terminal's width)
    assert "FAILED test_gate.py::test_split - faithfulness undecided: 0.500 [0.000, 1.000" in out
    assert f"faithfulness {MESSAGE} (mean of 3 judges), sample 'bowl'" in out or MESSAGE in out
    assert "faithfulness UNDECIDED on sample 'bowl'" in out  # the full message, with every judge's row
    assert "PASSED test_gate.py::test_clear" in out and "PASSED test_gate.py::test_marked" in out
    assert "faithfulness  3  2/3 (2 undecided)" in out  # the session's table: test_marked passed undecided


def test_on_undecided_warn_passes_with_a_warning(
    project: Path, run_pytest: Callable[..., CompletedProcess[str]]
) -> None:
    proc = run_pytest(project, "-q", "--ragqa-on-undecided", "warn")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout and "UndecidedWarning" in proc.stdout and MESSAGE in proc.stdout


def test_the_ini_option_and_the_settings_key_set_the_default(
    project: Path, run_pytest: Callable[..., CompletedProcess[str]]
) -> None:
    (project / "pytest.ini").write_text("[pytest]\nragqa_on_undecided = pass\n", encoding="utf-8")
    proc = run_pytest(project, "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout and "UndecidedWarning" not in proc.stdout
    (project / "pytest.ini").unlink()
    (project / "application.yaml").write_text("ragqa:\n  on-undecided: pass\n", encoding="utf-8")
    proc = run_pytest(project, "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
