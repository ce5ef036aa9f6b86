"""Allure: with ``allure-pytest`` installed, each ragqa assertion attaches the panel table and the per-judge JSON.

A small suite runs in this process (``Pytester.runpytest_inprocess``) with ``--alluredir`` and the
offline ``local`` panel; the attachments are read back from Allure's result files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _pytest_run import run_pytest_inprocess

from ragqa.assertions import score_metric
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness
from ragqa.pytest_plugin import attach_to_allure
from ragqa.run.loop import run_sync
from ragqa.testing import ScriptedJudge, make_sample

SUITE = """
from ragqa import Sample

SAMPLE = Sample(
    id="capital",
    user_input="What is the capital of France?",
    response="Paris is the capital of France. It has 90 million people.",
    retrieved_contexts=["Paris is the capital and largest city of France."],
)


def test_passes(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.4)


def test_fails(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.9)


def test_plain():
    assert True
"""


def _results(folder: Path) -> dict[str, dict[str, Any]]:
    results = {}
    for path in folder.glob("*-result.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        results[data["name"]] = data
    return results


pytest_plugins = ("pytester",)  # the user's session runs in this process


@pytest.mark.slow
def test_each_assertion_attaches_the_panel_table_and_the_judges(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("allure_pytest", reason="allure-pytest is not installed (the dev extra installs it)")
    tmp_path = pytester.path
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    proc = run_pytest_inprocess(
        pytester, monkeypatch, "-q", "--ragqa-profile", "local", "--alluredir", "allure-results"
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed, 2 passed" in proc.stdout
    results = _results(tmp_path / "allure-results")
    assert set(results) == {"test_passes", "test_fails", "test_plain"}
    assert results["test_plain"].get("attachments", []) == []
    for name, status in (("test_passes", "passed"), ("test_fails", "failed")):
        result = results[name]
        assert result["status"] == status
        attachments = {a["name"]: a for a in result["attachments"]}
        assert set(attachments) == {"ragqa faithfulness on capital: panel", "ragqa faithfulness on capital: judges"}
        panel = attachments["ragqa faithfulness on capital: panel"]
        judges = attachments["ragqa faithfulness on capital: judges"]
        assert panel["type"] == "text/plain" and judges["type"] == "application/json"
        text = (tmp_path / "allure-results" / panel["source"]).read_text(encoding="utf-8")
        assert f"faithfulness {status.upper()} on sample 'capital'" in text
        assert "local-strict" in text and "local-lenient" in text and "aggregate:" in text
        record = json.loads((tmp_path / "allure-results" / judges["source"]).read_text(encoding="utf-8"))
        assert record["test"] == f"test_suite.py::{name}"
        assert record["passed"] is (status == "passed")
        assert [j["judge_id"] for j in record["judges"]] == ["local-strict", "local-lenient"]
        assert all(0.0 <= j["score"] <= 1.0 and j["reason"] and j["details"] for j in record["judges"])
        assert record["aggregate"]["value"] == pytest.approx(sum(j["score"] for j in record["judges"]) / 2)
        for judge in record["judges"]:  # the text table shows each judge's score and reason too
            assert judge["reason"].splitlines()[0] in text


def test_nothing_is_attached_when_allure_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = ScriptedJudge(
        "judge-a",
        {
            "statements": [{"statements": ["a"]}],
            "nli": [{"verdicts": [{"statement": "a", "reason": "r", "verdict": 1}]}],
        },
    )
    evaluator = PanelEvaluator([judge], [Faithfulness()])
    verdict = run_sync(score_metric(evaluator, "faithfulness", make_sample(), threshold=0.5))
    monkeypatch.setitem(sys.modules, "allure", None)  # import allure -> ImportError
    assert attach_to_allure(verdict) is False
