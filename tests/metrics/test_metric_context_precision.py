"""Context precision through a judge: modes, validation, AP with RAGAS's epsilon, concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from _concurrency import PeakCounter

from ragqa.errors import SampleError
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import ContextPrecision, build_metric
from ragqa.metrics.base import MetricContext
from ragqa.prompts.base import Prompt
from ragqa.testing import FunctionJudge, ScriptedJudge, make_sample

# spring-ai-ragas "poor ordering" example (seed 004): irrelevant context first
QC_CONTEXTS = [
    "The price of groceries has increased this year.",
    "Quantum computers use quantum bits (qubits).",
    "Quantum computing leverages superposition and entanglement.",
]



def usefulness_judge(useful: set[str], delay_s: float = 0.0) -> FunctionJudge:
    async def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        assert prompt.name == "context_usefulness"
        if delay_s:
            await asyncio.sleep(delay_s)
        return {"reason": "scripted", "verdict": int(data.context in useful)}

    return FunctionJudge("j1", answer)


async def test_poor_ordering_response_mode() -> None:
    judge = usefulness_judge(set(QC_CONTEXTS[1:]))
    sample = make_sample(
        user_input="What is quantum computing?",
        response="Quantum computing uses quantum mechanical phenomena.",
        reference=None,
        retrieved_contexts=QC_CONTEXTS,
    )
    result = await ContextPrecision("response").score(sample, judge, MetricContext())
    # AP of [0, 1, 1] = (1/2 + 2/3) / 2, with RAGAS's epsilon
    assert result.value == pytest.approx((0.5 + 2 / 3) / (2 + 1e-10), abs=1e-15)
    assert result.value <= 0.7  # the spring-ai-ragas example's expectation
    assert result.details["mode"] == "response"
    assert [c.data["answer"] for c in judge.calls] == [sample.response] * 3
    assert [c.data["context"] for c in judge.calls] == QC_CONTEXTS  # retrieval order


async def test_auto_uses_reference_when_present_else_response() -> None:
    judge = usefulness_judge({"c1"})
    with_ref = make_sample(retrieved_contexts=["c1", "c2"], reference="the reference", response="the response")
    result = await ContextPrecision().score(with_ref, judge, MetricContext())
    assert result.details["mode"] == "reference"
    assert judge.calls[0].data["answer"] == "the reference"
    assert result.value == pytest.approx(1 / (1 + 1e-10))

    no_ref = make_sample(retrieved_contexts=["c1", "c2"], reference=None, response="the response")
    result = await ContextPrecision().score(no_ref, judge, MetricContext())
    assert result.details["mode"] == "response"


def test_validation_depends_on_mode() -> None:
    no_ref = make_sample(reference=None)
    ContextPrecision("response").validate(no_ref)
    ContextPrecision().validate(no_ref)  # auto falls back to the response
    with pytest.raises(SampleError, match="'reference'"):
        ContextPrecision("reference").validate(no_ref)
    with pytest.raises(SampleError, match="'reference' or a 'response'"):
        ContextPrecision().validate(make_sample(reference=None, response=None))
    with pytest.raises(SampleError, match="retrieved_contexts"):
        ContextPrecision().validate(make_sample(retrieved_contexts=[]))
    with pytest.raises(ValueError):
        ContextPrecision("both")  # type: ignore[arg-type]


def test_keys_and_registry() -> None:
    assert ContextPrecision().key == "context_precision"
    assert ContextPrecision("reference").key == "context_precision(mode=reference)"
    assert build_metric("context_precision", {"mode": "response"}).key == "context_precision(mode=response)"


async def test_all_useful_never_exactly_one_and_none_useful_zero() -> None:
    contexts = ["a", "b", "c", "d"]
    result = await ContextPrecision().score(
        make_sample(retrieved_contexts=contexts), usefulness_judge(set(contexts)), MetricContext()
    )
    assert result.value == pytest.approx(0.999999999975, abs=1e-15)
    result = await ContextPrecision().score(
        make_sample(retrieved_contexts=contexts), usefulness_judge(set()), MetricContext()
    )
    assert result.value == 0.0


async def test_per_context_calls_are_concurrent() -> None:
    contexts = [f"c{i}" for i in range(5)]
    counter = PeakCounter()

    async def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        await counter.hold()
        return {"reason": "scripted", "verdict": int(data.context == "c0")}

    await ContextPrecision().score(
        make_sample(retrieved_contexts=contexts), FunctionJudge("j1", answer), MetricContext()
    )
    assert counter.peak == 5  # one call per context, all at once (serial would be 1)


async def test_a_failed_usefulness_call_fails_that_judge_only() -> None:
    good = ScriptedJudge("good", {"context_usefulness": [{"reason": "r", "verdict": 1}] * 2})
    bad = ScriptedJudge("bad", {"context_usefulness": [{"reason": "r", "verdict": 1}, {"verdict": 7}]})
    result = await PanelEvaluator([good, bad], [ContextPrecision()]).score(make_sample(), ContextPrecision())
    assert result.by_judge() == {"good": pytest.approx(1 / (1 + 1e-10))}
    assert result.failures[0].judge_id == "bad"
    assert result.failures[0].error_type == "JudgeOutputError"
