"""Faithfulness and hallucination on the seed worked examples (verdicts scripted as the write-ups state)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from factories import nli_answer

from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.metrics.base import MetricContext
from ragqa.schema import ContextChunk
from ragqa.testing import ScriptedJudge, make_sample


def _nli(statements: list[str], verdicts: list[int]) -> dict[str, Any]:
    return nli_answer(*verdicts, statements=statements, reason="scripted")


SB_CONTEXT = (
    "The First AFL–NFL World Championship Game, later known as Super Bowl I, was played on January 15, 1967, "
    "at the Los Angeles Memorial Coliseum."
)
SB_CLAIMS = ["The first Super Bowl was held on January 15, 1967.", "The first Super Bowl was held in Florida."]


async def test_first_super_bowl_faithfulness_is_half() -> None:
    judge = ScriptedJudge("j1", {"statements": [{"statements": SB_CLAIMS}], "nli": [_nli(SB_CLAIMS, [1, 0])]})
    sample = make_sample(
        user_input="When was the first Super Bowl held?",
        retrieved_contexts=[SB_CONTEXT],
        response="The first Super Bowl was held on January 15, 1967, in Florida.",
    )
    result = await Faithfulness().score(sample, judge, MetricContext())
    assert result.value == 0.5
    assert result.reason == "1 of 2 statements supported; unsupported: The first Super Bowl was held in Florida."
    assert judge.calls[1].data == {"context": SB_CONTEXT, "statements": SB_CLAIMS}


async def test_capital_of_brazil_hallucination_is_one() -> None:
    claim = ["The capital of Brazil is Florida."]
    judge = ScriptedJudge("j1", {"statements": [{"statements": claim}], "nli": [_nli(claim, [0])]})
    sample = make_sample(
        user_input="What is the capital of Brazil?",
        retrieved_contexts=["Brazil is a country in South America. Its capital is Brasília."],
        response="The capital of Brazil is Florida.",
    )
    ev = PanelEvaluator([judge], [Faithfulness(), Hallucination()])
    rows = await ev.score_sample(sample.model_copy(update={"id": "brazil"}))
    assert [r.aggregate.value for r in rows] == [0.0, 1.0]
    assert [r.direction for r in rows] == ["higher", "lower"]
    assert len(judge.calls) == 2  # both metrics share the two steps


async def test_promptfoo_context_faithfulness_example() -> None:
    # seed 003: "Paris, with 2.2 million residents, is France's capital." -> 0.5 (capital yes, population no)
    claims = ["Paris is the capital of France.", "Paris has 2.2 million residents."]
    judge = ScriptedJudge("j1", {"statements": [{"statements": claims}], "nli": [_nli(claims, [1, 0])]})
    sample = make_sample(
        user_input="What is the capital of France?",
        retrieved_contexts=["Paris is the capital of France."],
        response="Paris, with 2.2 million residents, is France's capital.",
    )
    assert (await Faithfulness().score(sample, judge, MetricContext())).value == 0.5


async def test_contexts_are_joined_with_newlines_and_chunks_count_as_contexts() -> None:
    claims = ["x"]
    judge = ScriptedJudge("j1", {"statements": [{"statements": claims}], "nli": [_nli(claims, [1])]})
    sample = make_sample(
        retrieved_contexts=None,
        context_chunks=[ContextChunk(text="a", relevant=True), ContextChunk(text="b", relevant=False)],
    )
    Faithfulness().validate(sample)
    await Faithfulness().score(sample, judge, MetricContext())
    assert judge.calls[1].data["context"] == "a\nb"


@pytest.mark.parametrize("metric", [Faithfulness(), Hallucination()])
async def test_no_statement_is_nan_for_both(metric: Any) -> None:
    judge = ScriptedJudge("j1", {"statements": [{"statements": []}]})
    result = await metric.score(make_sample(), judge, MetricContext())
    assert math.isnan(result.value)
    assert len(judge.calls) == 1


# --- where ragqa differs from RAGAS 0.4.3 (docs/metrics/faithfulness.md, "RAGAS compatibility") ---------------------


async def test_empty_contexts_are_refused_before_any_call_where_ragas_legacy_scores_zero() -> None:
    # RAGAS's legacy metric runs NLI against "" (about 0.0); its collections metric raises ValueError, as ragqa does
    judge = ScriptedJudge("j1", {})
    problems = PanelEvaluator([judge]).validate([make_sample(retrieved_contexts=[])], [Faithfulness()])
    assert [(p.field, p.metric) for p in problems] == [("retrieved_contexts", "faithfulness")]
    assert judge.calls == []


async def test_a_blank_context_is_judged_as_ragas_judges_it() -> None:
    claim = ["Paris is in France."]
    judge = ScriptedJudge("j1", {"statements": [{"statements": claim}], "nli": [_nli(claim, [0])]})
    result = await Faithfulness().score(make_sample(retrieved_contexts=["  "]), judge, MetricContext())
    assert result.value == 0.0 and judge.calls[1].data["context"] == "  "


async def test_blank_statements_are_dropped_where_ragas_sends_them_to_the_nli_call() -> None:
    said = ["Paris is in France.", "  ", ""]
    judge = ScriptedJudge("j1", {"statements": [{"statements": said}], "nli": [_nli(said[:1], [1])]})
    result = await Faithfulness().score(make_sample(), judge, MetricContext())
    assert result.value == 1.0 and judge.calls[1].data["statements"] == ["Paris is in France."]
    only_blank = ScriptedJudge("j1", {"statements": [{"statements": [" ", ""]}]})
    assert math.isnan((await Faithfulness().score(make_sample(), only_blank, MetricContext())).value)
    assert len(only_blank.calls) == 1  # no statement: no NLI call, NaN


async def test_a_verdict_of_2_is_the_judges_failure_where_ragas_counts_it_as_supported() -> None:
    claim = ["Paris is in France."]
    judge = ScriptedJudge("j1", {"statements": [{"statements": claim}], "nli": [_nli(claim, [2])]})
    row = await PanelEvaluator([judge]).score(make_sample(), Faithfulness())
    [outcome] = row.judges
    assert outcome.score is None and outcome.failure is not None
    assert outcome.failure.error_type == "JudgeOutputError" and outcome.failure.step == "nli"
    assert math.isnan(row.aggregate.value)
