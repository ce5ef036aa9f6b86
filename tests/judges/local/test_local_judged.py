"""The local judge's answers to the NVIDIA-style and general prompts, directly and through the fake server."""

from __future__ import annotations

import pytest
from factories import http_judge

from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalJudge
from ragqa.judges.local.answers_judged import context_relevance_rating, criterion_value, three_level
from ragqa.judges.openai import OpenAIJudge
from ragqa.metrics import (
    AnswerAccuracy,
    AspectCritic,
    ContextRelevance,
    ResponseGroundedness,
    RubricsScore,
    SimpleCriteriaScore,
)
from ragqa.metrics.base import Metric, MetricContext
from ragqa.metrics.context_relevance import context_relevance_score
from ragqa.prompts.criteria import SubmissionFields
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import FakeOpenAIServer, local_judge_responder, make_sample

pytestmark = pytest.mark.usefixtures("reset_srv")

SAMPLE = make_sample(
    user_input="How do I reset my VPN password?",
    response="Open the self-service portal and choose Reset VPN password. The new password works after 5 minutes.",
    reference="Reset the VPN password in the self-service portal; it is active after 5 minutes.",
    retrieved_contexts=[
        "VPN passwords are reset in the self-service portal under Reset VPN password.",
        "A new VPN password becomes active after 5 minutes.",
    ],
)

METRICS: list[Metric] = [
    AnswerAccuracy(),
    ContextRelevance(),
    ResponseGroundedness(),
    AspectCritic(),
    AspectCritic(name="harmfulness"),
    AspectCritic(name="conciseness", strictness=3),
    SimpleCriteriaScore(),
    RubricsScore(),
]


@pytest.mark.parametrize(("value", "rating"), [(0.9, 2), (0.75, 2), (0.5, 1), (0.25, 1), (0.1, 0)])
def test_three_levels_around_the_support_threshold(value: float, rating: int) -> None:
    assert three_level(value, 0.5) == rating


async def test_context_relevance_rating_is_the_local_relevance_of_the_contexts() -> None:
    assert (await context_relevance_rating("How do I reset my VPN password?", SAMPLE.contexts()))[0] == 2
    assert (await context_relevance_rating("How do I reset my VPN password?", ["The canteen opens at noon."]))[0] == 0
    assert (await context_relevance_rating("What?", ["anything"]))[0] == 1


@pytest.mark.parametrize(
    ("definition", "response", "route", "high"),
    [
        (
            "Does the submission cause or have the potential to cause harm?",
            "Mix bleach and ammonia to poison them.",
            "harm",
            True,
        ),
        ("Is the response free of harm?", "Mix bleach and ammonia to poison them.", "harm", False),
        ("Is the response polite?", "That is a stupid question.", "politeness", False),
        ("Is the response concise?", "Yes. " * 200, "conciseness", False),
        ("Is the answer correct with respect to the reference?", SAMPLE.response, "correctness", True),
        ("Does it sparkle?", SAMPLE.response, "generic", True),
    ],
)
def test_criteria_are_routed_by_keywords(definition: str, response: str, route: str, high: bool) -> None:
    judge = LocalJudge("l")
    data = SubmissionFields(user_input=SAMPLE.user_input, response=response, reference=SAMPLE.reference)
    value, reason = criterion_value(judge, data, definition)
    assert f"({route} check" in reason and reason.startswith("local approximation")
    assert (value >= 0.5) is high


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.key)
async def test_the_local_judge_scores_each_metric_in_range(metric: Metric) -> None:
    result = await PanelEvaluator([LocalJudge("l")]).score(SAMPLE, metric)
    low, high = metric.value_range
    assert result.aggregate.value is not None and low <= result.aggregate.value <= high
    assert result.failures == []


def _http_judge(srv: FakeOpenAIServer) -> OpenAIJudge:
    return http_judge(srv.base_url, id="judge-http", api_key="sk-test")


async def test_the_fake_server_answers_every_new_prompt_as_the_local_judge(srv: FakeOpenAIServer) -> None:
    srv.script("m", local_judge_responder(LocalJudgeSettings()))
    judge = _http_judge(srv)
    try:
        for metric in METRICS:
            over_http = await PanelEvaluator([judge]).score(SAMPLE, metric)
            local = await PanelEvaluator([LocalJudge("l", LocalJudgeSettings())]).score(SAMPLE, metric)
            assert over_http.failures == [], metric.key
            expected = local.aggregate.value
            if metric.key == "context_relevance":
                # JSON carries the integer ratings only (graded ratings are the local judge's, as
                # graded support is): over HTTP the score is the formula on those ratings
                details = local.judges[0].score.details  # type: ignore[union-attr]
                expected = context_relevance_score(details["template_1"]["rating"], details["template_2"]["rating"])
                assert expected != local.aggregate.value
            assert over_http.aggregate.value == expected, metric.key
    finally:
        await judge.aclose()
    assert srv.failures == []
    titles = {r.body["response_format"]["json_schema"]["schema"]["title"] for r in srv.requests}
    assert titles == {
        "AnswerAccuracy1Output",
        "AnswerAccuracy2Output",
        "ContextRelevance1Output",
        "ContextRelevance2Output",
        "ResponseGroundedness1Output",
        "ResponseGroundedness2Output",
        "AspectCriticOutput",
        "SimpleCriteriaOutput",
        "RubricsScoreOutput",
    }


async def test_the_rubric_example_dataset_uses_each_rubric_source_as_its_readme_says() -> None:
    from pathlib import Path

    from ragqa.datasets import load_dataset

    path = Path(__file__).resolve().parents[3] / "examples" / "datasets" / "rubric_leave_policy.jsonl"
    samples = load_dataset(path)
    metric = RubricsScore()
    for sample in samples:
        metric.validate(sample)
    sources = [metric.rubric_for(s)[1] for s in samples]
    assert sources.count("default with reference") == 4 and sources.count("default reference-free") == 1
    assert sources[5] == "sample" and samples[5].id == "rub-6"
    assert [s.metadata["intended_level"] for s in samples] == [5, 2, 5, 4, 1, 1]
    judge = LocalJudge("l")
    for sample in samples:
        result = await metric.score(sample, judge, MetricContext())
        assert 1 <= result.value <= 5
