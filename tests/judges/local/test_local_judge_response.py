"""The local judge's answers to the response metrics' prompts: offline, through the fake server, through the cache."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from factories import http_judge

from ragqa.cache import CachingJudge, JudgeCache
from ragqa.judges.local import HANDLERS, LocalEmbedder, LocalJudge
from ragqa.judges.local.answers_response import GradedCorrectnessOutput, atomic_claims
from ragqa.judges.openai import OpenAIJudge
from ragqa.metrics import AnswerCorrectness, FactualCorrectness, SemanticSimilarity
from ragqa.metrics.base import Metric, MetricContext
from ragqa.prompts.base import Prompt
from ragqa.prompts.correctness import CORRECTNESS, CorrectnessInput
from ragqa.testing import FakeOpenAIServer, FunctionJudge, local_judge_responder, make_sample

pytestmark = pytest.mark.usefixtures("reset_srv")

EINSTEIN = (
    "Albert Einstein was a German theoretical physicist. He developed the theory of relativity and also "
    "contributed to the development of quantum mechanics."
)
SAMPLE = make_sample(
    id="einstein",
    user_input="Who was Albert Einstein?",
    response="Albert Einstein was a German physicist. He developed the theory of relativity in 1905 in Paris.",
    reference=EINSTEIN,
)
METRICS: list[Metric] = [
    FactualCorrectness(),
    FactualCorrectness(mode="precision", atomicity="high"),
    FactualCorrectness(mode="recall", coverage="high"),
    AnswerCorrectness(),
    AnswerCorrectness(weights=[1, 0]),
]


def test_the_local_judge_answers_every_new_prompt() -> None:
    assert {"claim_decomposition", "correctness_classifier"} <= set(HANDLERS)


def test_claim_decomposition_splits_clauses_only_at_high_atomicity() -> None:
    assert atomic_claims(EINSTEIN, "low") == [
        "Albert Einstein was a German theoretical physicist.",
        "He developed the theory of relativity and also contributed to the development of quantum mechanics.",
    ]
    assert atomic_claims("Albert Einstein developed relativity and also contributed to quantum mechanics.", "high") == [
        "Albert Einstein developed relativity.",
        "Albert Einstein contributed to quantum mechanics.",
    ]
    assert atomic_claims("Thanks! Hope this helps.", "high") == []


async def test_correctness_classifier_sorts_statements_and_grades_the_counts() -> None:
    judge = LocalJudge("local")
    out = await judge.ask(
        CORRECTNESS,
        CorrectnessInput(
            question="What is the boiling point of water?",
            answer=["Water boils at 100 degrees Celsius at sea level.", "Water boils at 50 degrees on Mars."],
            ground_truth=[
                "Water boils at 100 degrees Celsius at sea level.",
                "The boiling point of water changes with altitude.",
            ],
        ),
    )
    assert isinstance(out, GradedCorrectnessOutput)
    assert [c.statement for c in out.TP] == ["Water boils at 100 degrees Celsius at sea level."]
    assert [c.statement for c in out.FP] == ["Water boils at 50 degrees on Mars."]
    assert [c.statement for c in out.FN] == ["The boiling point of water changes with altitude."]
    assert all(c.reason.startswith("local approximation") for c in [*out.TP, *out.FP, *out.FN])
    tp, fp, fn = out.counts()
    assert tp == pytest.approx(sum(out.answer_support)) and tp + fp == pytest.approx(2.0)
    assert 0 < fn < 2 and out.answer_support[0] == 1.0


async def test_profile_local_scores_every_response_metric_offline() -> None:
    judge, context = LocalJudge("local"), MetricContext(embedders=[LocalEmbedder("hash", "hashing")])
    for metric in [*METRICS, SemanticSimilarity(), SemanticSimilarity(threshold=0.75)]:
        score = await metric.score(SAMPLE, judge, context)
        metric.check_score(score, judge_id="local")
        assert math.isfinite(score.value), metric.key
    f1 = await FactualCorrectness().score(SAMPLE, judge, context)
    assert 0 < f1.value < 1  # Paris and 1905 are not in the reference; quantum mechanics is not in the response


def _http(srv: FakeOpenAIServer) -> OpenAIJudge:
    return http_judge(
        srv.base_url, "http-judge", id="http", api_key="sk-test-not-secret", timeout_s=10, temperature=0.0
    )


def _binary_local() -> FunctionJudge:
    """The local judge's answers as an LLM would send them: validated against the prompt, graded support dropped."""
    local = LocalJudge("source")

    async def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        return (await local.ask(prompt, data)).model_dump(mode="json")

    return FunctionJudge("binary", answer)


async def test_the_fake_server_answers_through_the_local_judge(srv: FakeOpenAIServer) -> None:
    srv.script("http-judge", local_judge_responder())
    http = _http(srv)
    context = MetricContext(embedders=[LocalEmbedder("hash", "hashing")])
    try:
        for metric in METRICS:
            over_http = await metric.score(SAMPLE, http, context)
            direct = await metric.score(SAMPLE, _binary_local(), context)
            assert over_http.value == direct.value, metric.key
            assert over_http.details == direct.details, metric.key
    finally:
        await http.aclose()
    prompts = " ".join(str(r.body.get("response_format", "")) for r in srv.requests_for("http-judge"))
    assert "ClaimDecompositionOutput" in prompts and "CorrectnessOutput" in prompts
    assert srv.failures == []


async def test_a_warm_cache_restores_graded_answers_exactly(tmp_path: Path) -> None:
    context = MetricContext(embedders=[LocalEmbedder("hash", "hashing")])

    async def run() -> tuple[list[Any], int]:
        cache = JudgeCache(tmp_path)
        try:
            judge = CachingJudge(LocalJudge("local"), cache)
            scores = [await m.score(SAMPLE, judge, context) for m in METRICS]
            return [s.model_dump() for s in scores], cache.misses
        finally:
            cache.close()

    cold, cold_misses = await run()
    warm, warm_misses = await run()
    assert cold_misses > 0 and warm_misses == 0  # the warm run asked the judge nothing
    assert warm == cold
    graded = [d["details"]["tp"] for d in cold if d["details"]["tp"] != int(d["details"]["tp"])]
    assert graded, "expected a graded (non-integer) TP from the local judge"
