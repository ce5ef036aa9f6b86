"""Typed metric details: what assertions read from a score (its statements, their verdicts, the failing
ones) is declared once (ragqa/score_details.py) and reached on the score, and the built-in statement
metrics keep that contract; the results file keeps the details exactly as the metric wrote them."""

from __future__ import annotations

import json
import math

import pytest

import ragqa
from ragqa.assertions import failed_statements
from ragqa.render.records import result_record
from ragqa.schema import MetricScore
from ragqa.score_details import FAILED_KEYS, StatementDetails, statement_details

GROUNDED = "The office opens at nine."
INVENTED = "The office serves free lunch on the moon."
SAMPLE = {
    "id": "office",
    "user_input": "When does the office open?",
    "response": f"{GROUNDED} {INVENTED}",
    "reference": GROUNDED,
    "retrieved_contexts": ["The office opens at nine. It has a kitchen."],
}


@pytest.mark.parametrize(
    ("details", "failed"),
    [
        ({"statements": ["a", "b"], "verdicts": [1, 0]}, ["b"]),
        ({"statements": ["a", "b"], "verdicts": [0.4, 0.5]}, ["a"]),
        ({"statements": ["a", "b"], "counted": [1, 0], "verdicts": [0, 0]}, ["a"]),  # counted wins
        ({"statements": ["a", "b"], "verdicts": [0, 0], "unsupported": ["x"]}, ["x"]),  # the explicit list wins
        ({"incorrect": [{"statement": "p"}, {"text": "q"}, {"other": "r"}, 3]}, ["p", "q"]),
        ({"statements": ["a", "b"], "verdicts": [True, None]}, []),  # not numbers: never failing
        ({"statements": ["a", "b"], "verdicts": [0]}, []),  # not parallel: ignored
        ({"statements": "a", "verdicts": [0]}, []),
        ({}, []),
    ],
)
def test_the_one_reading_of_failing_statements(details: dict[str, object], failed: list[str]) -> None:
    score = MetricScore(value=0.5, details=details)
    assert score.failed_statements == failed == failed_statements(score) == statement_details(details).failed


def test_every_explicit_key_is_read_first_present_first() -> None:
    for key in FAILED_KEYS:
        assert statement_details({key: ["s"], "statements": ["t"], "verdicts": [0]}).failed == ["s"]
    assert statement_details({"failed_statements": ["one"], "unsupported": ["two"]}).failed == ["one"]


def test_the_typed_view_is_not_serialised() -> None:
    score = MetricScore(value=0.5, details={"statements": ["a"], "verdicts": [0.0]})
    assert score.statement_details == StatementDetails(statements=["a"], verdicts=[0.0], failed=["a"])
    assert set(score.model_dump()) == {"value", "reason", "details"}
    assert json.loads(score.model_dump_json()) == {"value": 0.5, "reason": None, "details": score.details}


@pytest.fixture(scope="module")
def report() -> ragqa.Report:
    metrics = ["faithfulness", "hallucination", "noise_sensitivity", "factual_correctness", "response_relevancy_llm"]
    return ragqa.evaluate([SAMPLE], metrics=metrics, profile="local")


def test_built_in_statement_metrics_keep_the_contract(report: ragqa.Report) -> None:
    seen = {}
    for result in report.results:
        for outcome in result.judges:
            assert outcome.score is not None, outcome.failure
            view = outcome.score.statement_details
            if "statements" in outcome.score.details:
                assert view.statements, result.metric
                assert view.verdicts is not None or view.counted is not None, result.metric  # parallel, numeric
            written = [v for v in (view.verdicts or []) + (view.counted or []) if not math.isnan(v)]
            assert all(0.0 <= v <= 1.0 for v in written), result.metric
            seen[result.metric] = view.failed
    assert INVENTED in seen["faithfulness"] and GROUNDED not in seen["faithfulness"]
    assert INVENTED in seen["hallucination"]
    assert set(seen) >= {"faithfulness", "hallucination"}


def test_records_keep_the_details_as_written(report: ragqa.Report) -> None:
    for result in report.results:
        record = result_record(result)
        for written, outcome in zip(record["judges"], result.judges, strict=True):
            assert outcome.score is not None
            assert written["details"] == outcome.score.details  # as the metric wrote them, nothing added
            assert "statement_details" not in json.dumps(written) and "failed_statements" not in json.dumps(written)
