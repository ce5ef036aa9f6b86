"""Response relevancy (generated questions + every embedder) and the statement-level LLM relevancy."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest
from _concurrency import PeakCounter

from ragqa._math import cosine
from ragqa.errors import JudgeError
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness, ResponseRelevancy, ResponseRelevancyLLM
from ragqa.metrics.base import MetricContext
from ragqa.prompts.base import Prompt
from ragqa.testing import FunctionJudge, ScriptedJudge, StaticEmbedder, make_sample

Q = "When was the first Super Bowl?"
G1, G2, G3 = (
    "When did the first Super Bowl occur?",
    "What was the date of the first Super Bowl?",
    "On which day was the first Super Bowl held?",
)
# the write-up's illustrative vectors (seed 001)
VECTORS = {Q: [0.9, 0.4, 0.1], G1: [0.85, 0.38, 0.09], G2: [0.88, 0.39, 0.11], G3: [0.87, 0.41, 0.10]}


def _gen(question: str, noncommittal: int = 0) -> dict[str, Any]:
    return {"question": question, "noncommittal": noncommittal}


def _ctx(*embedders: Any) -> MetricContext:
    return MetricContext(embedders=embedders)


async def test_super_bowl_generated_questions_mean_cosine() -> None:
    judge = ScriptedJudge("j1", {"question_generation": [_gen(G1), _gen(G2), _gen(G3)]})
    embedder = StaticEmbedder("e1", VECTORS)
    sample = make_sample(user_input=Q, response="The first Super Bowl was held on Jan 15, 1967.")
    result = await ResponseRelevancy().score(sample, judge, _ctx(embedder))
    expected = sum(cosine(VECTORS[Q], VECTORS[g]) for g in (G1, G2, G3)) / 3
    assert result.value == pytest.approx(expected)
    assert result.value > 0.98
    assert [c.data["attempt"] for c in judge.calls] == [1, 2, 3]  # distinct calls, never merged
    assert embedder.calls == [[Q, G1, G2, G3]]  # one batched embedding call


async def test_every_embedder_is_used_and_the_score_is_their_mean() -> None:
    judge = ScriptedJudge("j1", {"question_generation": [_gen(G1)]})
    e1 = StaticEmbedder("e1", {Q: [1.0, 0.0], G1: [1.0, 0.0]})
    e2 = StaticEmbedder("e2", {Q: [1.0, 0.0], G1: [0.0, 1.0]})
    result = await ResponseRelevancy(strictness=1).score(make_sample(user_input=Q), judge, _ctx(e1, e2))
    assert result.value == 0.5
    assert result.details["embedders"] == {
        "e1": {"score": 1.0, "cosines": [1.0]},
        "e2": {"score": 0.0, "cosines": [0.0]},
    }


async def test_all_noncommittal_is_zero_without_embedding_but_one_committal_keeps_the_score() -> None:
    embedder = StaticEmbedder("e1", VECTORS)
    judge = ScriptedJudge("j1", {"question_generation": [_gen(G1, 1), _gen(G2, 1), _gen(G3, 1)]})
    result = await ResponseRelevancy().score(make_sample(user_input=Q), judge, _ctx(embedder))
    assert result.value == 0.0
    assert embedder.calls == []

    judge = ScriptedJudge("j1", {"question_generation": [_gen(G1, 1), _gen(G2, 0), _gen(G3, 1)]})
    result = await ResponseRelevancy().score(make_sample(user_input=Q), judge, _ctx(embedder))
    assert result.value > 0.98  # RAGAS's np.all gate
    assert "2 of 3 generations flagged noncommittal" in (result.reason or "")


async def test_blank_questions_nan_and_dropped() -> None:
    embedder = StaticEmbedder("e1", VECTORS)
    judge = ScriptedJudge("j1", {"question_generation": [_gen(" "), _gen("")]})
    result = await ResponseRelevancy(strictness=2).score(make_sample(user_input=Q), judge, _ctx(embedder))
    assert math.isnan(result.value)

    judge = ScriptedJudge("j1", {"question_generation": [_gen(""), _gen(G1)]})
    result = await ResponseRelevancy(strictness=2).score(make_sample(user_input=Q), judge, _ctx(embedder))
    assert result.value == pytest.approx(cosine(VECTORS[Q], VECTORS[G1]))
    assert embedder.calls[-1] == [Q, G1]


class BrokenEmbedder:
    id = "broken"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("connection reset")


class ShortEmbedder:
    id = "short"

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0]]


@pytest.mark.parametrize(
    ("embedder", "error"), [(BrokenEmbedder(), "JudgeError"), (ShortEmbedder(), "JudgeOutputError")]
)
async def test_embedder_failure_is_a_judge_failure(embedder: Any, error: str) -> None:
    judge = ScriptedJudge("j1", {"question_generation": [_gen(G1)] * 3})
    ev = PanelEvaluator([judge], [ResponseRelevancy()], embedders=[embedder])
    result = await ev.score(make_sample(user_input=Q), ResponseRelevancy())
    assert result.failures[0].error_type == error
    assert result.failures[0].step == "embed"


async def test_no_embedder_is_rejected() -> None:
    ev = PanelEvaluator([ScriptedJudge("j1", {})], [ResponseRelevancy()])
    assert ev.validate([make_sample()])  # the evaluator refuses before any call
    with pytest.raises(JudgeError):
        await ResponseRelevancy().score(make_sample(), ScriptedJudge("j1", {}), MetricContext())


def test_strictness_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ResponseRelevancy(strictness=0)
    assert ResponseRelevancy.needs_embeddings



async def test_question_generation_calls_are_concurrent() -> None:
    counter = PeakCounter()

    async def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        await counter.hold()
        return _gen(G1)

    await ResponseRelevancy(strictness=4).score(
        make_sample(user_input=Q), FunctionJudge("j1", answer), _ctx(StaticEmbedder("e1", VECTORS))
    )
    assert counter.peak == 4  # the strictness-many generations run at once (serial would be 1)


# --- statement-level LLM relevancy (seed 001, "Response Relevancy (LLM based)") ---------------

BRAZIL_Q = "What is the capital city of Brazil?"
BRAZIL_RESP = (
    "The capital city of Brazil is Brasília. It replaced Rio de Janeiro as the capital in 1960. "
    "Florida is a state in the USA."
)
BRAZIL_STATEMENTS = [
    "The capital city of Brazil is Brasília.",
    "Brasília replaced Rio de Janeiro as the capital of Brazil in 1960.",
    "Florida is a state in the USA.",
]


def _relevance(*verdicts: int) -> dict[str, Any]:
    return {
        "verdicts": [
            {"statement": s, "reason": "scripted", "verdict": v}
            for s, v in zip(BRAZIL_STATEMENTS, verdicts, strict=False)
        ]
    }


async def test_brazil_statement_relevancy_two_thirds() -> None:
    judge = ScriptedJudge(
        "j1", {"statements": [{"statements": BRAZIL_STATEMENTS}], "statement_relevance": [_relevance(1, 1, 0)]}
    )
    sample = make_sample(user_input=BRAZIL_Q, response=BRAZIL_RESP)
    result = await ResponseRelevancyLLM().score(sample, judge, MetricContext())
    assert result.value == pytest.approx(2 / 3)
    assert "off-topic: Florida is a state in the USA." in (result.reason or "")
    assert judge.calls[1].data == {"question": BRAZIL_Q, "statements": BRAZIL_STATEMENTS}


async def test_statement_relevancy_edge_cases() -> None:
    judge = ScriptedJudge("j1", {"statements": [{"statements": []}]})
    result = await ResponseRelevancyLLM().score(make_sample(), judge, MetricContext())
    assert math.isnan(result.value)
    assert len(judge.calls) == 1

    ragged = ScriptedJudge(
        "j1", {"statements": [{"statements": BRAZIL_STATEMENTS}], "statement_relevance": [_relevance(1, 1)]}
    )
    result_row = await PanelEvaluator([ragged], [ResponseRelevancyLLM()]).score(make_sample(), ResponseRelevancyLLM())
    assert result_row.failures[0].error_type == "JudgeOutputError"
    assert result_row.failures[0].step == "statement_relevance"


async def test_statement_relevancy_shares_the_statements_call_with_faithfulness() -> None:
    judge = ScriptedJudge(
        "j1",
        {
            "statements": [{"statements": BRAZIL_STATEMENTS}],
            "statement_relevance": [_relevance(1, 1, 0)],
            "nli": [
                {"verdicts": [{"statement": s, "reason": "r", "verdict": 1} for s in BRAZIL_STATEMENTS]},
            ],
        },
    )
    sample = make_sample(id="b", user_input=BRAZIL_Q, response=BRAZIL_RESP)
    rows = await PanelEvaluator([judge], []).score_sample(sample, [Faithfulness(), ResponseRelevancyLLM()])
    assert [r.aggregate.value for r in rows] == [1.0, pytest.approx(2 / 3)]
    assert [c.prompt for c in judge.calls].count("statements") == 1
