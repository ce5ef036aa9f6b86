"""Context entity recall through a judge: the spring-ai-ragas examples and the RAGAS edge cases."""

from __future__ import annotations

from typing import Any

import pytest

from ragqa.errors import SampleError
from ragqa.metrics import ContextEntityRecall
from ragqa.metrics.base import MetricContext
from ragqa.prompts.base import Prompt
from ragqa.testing import FunctionJudge, make_sample

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
