"""Context recall and context entity recall through a judge."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ragqa.errors import SampleError
from ragqa.metrics import ContextEntityRecall, ContextRecall
from ragqa.metrics.base import MetricContext
from ragqa.prompts.base import Prompt
from ragqa.testing import FunctionJudge, ScriptedJudge, make_sample


def _classified(*attributed: int) -> dict[str, Any]:
    return {
        "classifications": [
            {"statement": f"sentence {i}", "reason": "scripted", "attributed": a} for i, a in enumerate(attributed)
        ]
    }


async def test_context_recall_share_of_attributed_sentences() -> None:
    judge = ScriptedJudge("j1", {"attribution": [_classified(1, 1, 0)]})
    sample = make_sample(retrieved_contexts=["first", "second"])
    result = await ContextRecall().score(sample, judge, MetricContext())
    assert result.value == pytest.approx(2 / 3)
    assert result.details["attributed"] == [1.0, 1.0, 0.0]
    assert "not found: sentence 2" in (result.reason or "")
    call = judge.calls[0]
    assert call.prompt == "attribution"
    assert call.data["context"] == "first\nsecond"  # RAGAS joins contexts with newlines
    assert call.data["answer"] == sample.reference
    assert len(judge.calls) == 1


async def test_context_recall_no_classification_is_nan() -> None:
    judge = ScriptedJudge("j1", {"attribution": [{"classifications": []}]})
    result = await ContextRecall().score(make_sample(), judge, MetricContext())
    assert math.isnan(result.value)
    assert "no classification" in (result.reason or "")


def test_context_recall_requires_reference() -> None:
    with pytest.raises(SampleError, match="reference"):
        ContextRecall().validate(make_sample(reference=None))


EIFFEL_REF = "The Eiffel Tower is located in Paris, France. It was completed in 1889 for the World's Fair."
EIFFEL_CTX = [
    "The Eiffel Tower, located in Paris, France, is one of the most iconic landmarks.",
    "Completed in 1889, it was constructed for the 1889 World's Fair.",
    "Millions of visitors are attracted to it each year.",
]


def entity_judge(by_text: dict[str, list[str]]) -> FunctionJudge:
    def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        assert prompt.name == "entities"
        return {"entities": by_text[data.text]}

    return FunctionJudge("j1", answer)


async def test_entity_recall_high_coverage_example() -> None:
    # spring-ai-ragas high-coverage example (seed 004): every reference entity is in the contexts
    judge = entity_judge(
        {
            EIFFEL_REF: ["Eiffel Tower", "Paris", "France", "1889", "World's Fair"],
            "\n".join(EIFFEL_CTX): ["Eiffel Tower", "Paris", "France", "1889", "World's Fair"],
        }
    )
    sample = make_sample(reference=EIFFEL_REF, retrieved_contexts=EIFFEL_CTX)
    result = await ContextEntityRecall().score(sample, judge, MetricContext())
    assert result.value == pytest.approx(5 / (5 + 1e-8))
    assert result.value >= 0.7
    assert len(judge.calls) == 2


async def test_entity_recall_poor_coverage_and_missing_listed() -> None:
    ref = "Albert Einstein was born in Ulm, Germany on March 14, 1879. He won the Nobel Prize in Physics in 1921."
    ctx = ["Physics is a fundamental science that studies matter and energy."]
    judge = entity_judge(
        {ref: ["Albert Einstein", "Ulm", "Germany", "March 14, 1879", "Nobel Prize in Physics", "1921"], ctx[0]: []}
    )
    result = await ContextEntityRecall().score(
        make_sample(reference=ref, retrieved_contexts=ctx), judge, MetricContext()
    )
    assert result.value == 0.0
    assert "missing: Albert Einstein, Ulm" in (result.reason or "")


async def test_entity_recall_no_reference_entities_is_zero() -> None:
    judge = entity_judge({"Nothing named here.": [], "ctx": ["Paris"]})
    result = await ContextEntityRecall().score(
        make_sample(reference="Nothing named here.", retrieved_contexts=["ctx"]), judge, MetricContext()
    )
    assert result.value == 0.0
    assert result.reason == "the reference has no entity"


def test_entity_recall_needs_no_question_or_response() -> None:
    ContextEntityRecall().validate(make_sample(user_input=None, response=None))
    with pytest.raises(SampleError, match="retrieved_contexts"):
        ContextEntityRecall().validate(make_sample(retrieved_contexts=None))
