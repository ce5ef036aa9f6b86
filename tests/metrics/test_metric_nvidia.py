"""NVIDIA-style metrics: RAGAS's two-template average, retries on invalid ratings, shortcuts, panel."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ragqa.errors import JudgeTimeout
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.base import SharedCallJudge
from ragqa.metrics import AnswerAccuracy, ContextRelevance, ResponseGroundedness, build_metric
from ragqa.metrics._rating import average_ratings
from ragqa.metrics.answer_accuracy import answer_accuracy_score
from ragqa.metrics.base import MetricContext
from ragqa.metrics.context_relevance import context_relevance_score
from ragqa.metrics.response_groundedness import response_groundedness_score
from ragqa.testing import CountingJudge, ScriptedJudge, make_sample

NAN = math.nan


def _r(*ratings: Any) -> list[Any]:
    return [{"rating": r} if isinstance(r, int) else r for r in ratings]


# RAGAS collections `_average_scores(r1 / scale, r2 / scale)`; None = the template gave no valid rating.
ACCURACY_GOLDEN = [
    ((4, 4), 1.0),
    ((4, 2), 0.75),
    ((2, 2), 0.5),
    ((2, 0), 0.25),
    ((0, 0), 0.0),
    ((None, 4), 1.0),
    ((2, None), 0.5),
    ((None, None), NAN),
]
RELEVANCE_GOLDEN = [
    ((2, 2), 1.0),
    ((2, 1), 0.75),
    ((1, 1), 0.5),
    ((1, 0), 0.25),
    ((0, 0), 0.0),
    ((None, 1), 0.5),
    ((2, None), 1.0),
    ((None, None), NAN),
]


@pytest.mark.parametrize(("ratings", "expected"), ACCURACY_GOLDEN)
def test_answer_accuracy_golden_values(ratings: tuple[int | None, int | None], expected: float) -> None:
    value = answer_accuracy_score(*ratings)
    assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected)


@pytest.mark.parametrize(("ratings", "expected"), RELEVANCE_GOLDEN)
def test_relevance_and_groundedness_golden_values(ratings: tuple[int | None, int | None], expected: float) -> None:
    for fn in (context_relevance_score, response_groundedness_score):
        value = fn(*ratings)
        assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected)


def test_average_keeps_the_template_that_rated() -> None:
    assert average_ratings(0.5, NAN) == 0.5
    assert average_ratings(NAN, 0.0) == 0.0
    assert math.isnan(average_ratings(NAN, NAN))


async def test_answer_accuracy_asks_both_templates_reference_first_in_the_second() -> None:
    judge = ScriptedJudge("j", {"answer_accuracy_1": _r(4), "answer_accuracy_2": _r(2)})
    sample = make_sample()
    result = await AnswerAccuracy().score(sample, judge, MetricContext())
    assert result.value == pytest.approx(0.75)
    assert [c.prompt for c in judge.calls] == ["answer_accuracy_1", "answer_accuracy_2"]
    first, second = (c.data for c in judge.calls)
    assert list(first) == ["query", "user_answer", "reference_answer", "attempt"]
    assert list(second) == ["query", "reference_answer", "user_answer", "attempt"]  # RAGAS legacy order, labels kept
    assert first["user_answer"] == second["user_answer"] == sample.response
    assert result.details["template_1"] == {"rating": 4, "value": 1.0, "attempts": 1, "invalid": []}
    assert result.reason == "template 1 rated 4/4; template 2 rated 2/4"


async def test_an_invalid_rating_is_asked_again_as_a_distinct_call() -> None:
    scripted = ScriptedJudge("j", {"context_relevance_1": _r(7, 1), "context_relevance_2": _r(2)})
    counting = CountingJudge(scripted)
    shared = SharedCallJudge(counting)
    result = await ContextRelevance().score(make_sample(), shared, MetricContext())
    assert result.value == pytest.approx((0.5 + 1.0) / 2)
    assert counting.calls == 3  # the retry was not merged with the invalid first attempt
    assert [c.data["attempt"] for c in scripted.calls_to("context_relevance_1")] == [1, 2]
    assert result.details["template_1"]["invalid"] == ["rating 7"]
    assert "after 1 invalid answer" in (result.reason or "")


async def test_a_template_with_no_valid_rating_leaves_the_other_as_the_score() -> None:
    judge = ScriptedJudge(
        "j",
        {"response_groundedness_1": _r(5, {"verdict": 1}), "response_groundedness_2": _r(1)},
    )
    result = await ResponseGroundedness(max_retries=2).score(
        make_sample(response="It was held in 1967 in Los Angeles."), judge, MetricContext()
    )
    assert result.value == 0.5  # RAGAS: the template that rated
    assert len(judge.calls_to("response_groundedness_1")) == 2  # max_retries attempts, no more
    assert result.details["template_1"]["rating"] is None
    assert result.details["template_1"]["invalid"][0] == "rating 5"
    assert result.details["template_1"]["invalid"][1].startswith("unparseable")


async def test_no_valid_rating_from_either_template_is_nan() -> None:
    judge = ScriptedJudge("j", {"answer_accuracy_1": _r(3), "answer_accuracy_2": _r(1)})
    result = await AnswerAccuracy(max_retries=1).score(make_sample(), judge, MetricContext())
    assert math.isnan(result.value)
    assert "template 1 gave no valid rating" in (result.reason or "")


async def test_a_judge_that_fails_to_answer_is_a_failure_not_a_nan() -> None:
    judge = ScriptedJudge("j", {"context_relevance_1": [JudgeTimeout("no answer in 5 s")]})
    with pytest.raises(JudgeTimeout):
        await ContextRelevance().score(make_sample(), judge, MetricContext())


@pytest.mark.parametrize(
    ("question", "contexts", "why"),
    [
        ("What is X?", ["   ", ""], "blank"),
        ("What is X?", ["What is X?"], "the question itself"),
        ("Explain X given that X is a letter.", ["X is a letter."], "contained in the question"),
    ],
)
async def test_context_relevance_shortcuts_score_zero_without_a_call(
    question: str, contexts: list[str], why: str
) -> None:
    judge = ScriptedJudge("j", {})
    sample = make_sample(user_input=question, retrieved_contexts=contexts)
    metric = ContextRelevance()
    assert metric.estimate_calls(sample) == 0
    result = await metric.score(sample, judge, MetricContext())
    assert result.value == 0.0 and judge.calls == []
    assert why in (result.reason or "")


@pytest.mark.parametrize(
    ("metric", "field"), [(ContextRelevance(), "user_input"), (ResponseGroundedness(), "response")]
)
@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_question_or_response_is_refused_before_any_call_where_ragas_scores_zero(
    metric: Any, field: str, blank: str
) -> None:
    judge = ScriptedJudge("j", {})
    problems = PanelEvaluator([judge]).validate([make_sample(**{field: blank})], [metric])
    assert [(p.field, p.metric) for p in problems] == [(field, metric.key)]
    assert judge.calls == []


@pytest.mark.parametrize(
    ("response", "contexts", "expected"),
    [
        ("Paris is the capital.", ["Paris is the capital."], 1.0),
        ("the capital", ["Paris is the capital.", "Rome is another."], 1.0),
        ("Paris is the capital.", ["  "], 0.0),
    ],
)
async def test_response_groundedness_shortcuts(response: str, contexts: list[str], expected: float) -> None:
    judge = ScriptedJudge("j", {})
    sample = make_sample(response=response, retrieved_contexts=contexts)
    assert ResponseGroundedness().estimate_calls(sample) == 0
    result = await ResponseGroundedness().score(sample, judge, MetricContext())
    assert result.value == expected and judge.calls == []


async def test_contexts_are_joined_by_newlines_as_ragas_does() -> None:
    judge = ScriptedJudge("j", {"context_relevance_1": _r(2), "context_relevance_2": _r(2)})
    sample = make_sample(retrieved_contexts=["a b", "c d"])
    assert ContextRelevance().estimate_calls(sample) == 2
    await ContextRelevance().score(sample, judge, MetricContext())
    assert [c.data["context"] for c in judge.calls] == ["a b\nc d", "a b\nc d"]


async def test_each_judge_rates_and_the_panel_aggregates() -> None:
    a = ScriptedJudge("a", {"context_relevance_1": _r(2), "context_relevance_2": _r(2)})
    b = ScriptedJudge("b", {"context_relevance_1": _r(1), "context_relevance_2": _r(0)})
    result = await PanelEvaluator([a, b]).score(make_sample(), ContextRelevance())
    assert result.by_judge() == {"a": 1.0, "b": 0.25}
    assert result.aggregate.value == pytest.approx(0.625)
    assert result.aggregate.n_ok == 2


async def test_the_two_templates_are_never_merged_by_the_shared_call_layer() -> None:
    scripted = ScriptedJudge("j", {"response_groundedness_1": _r(2), "response_groundedness_2": _r(0)})
    counting = CountingJudge(scripted)
    result = await ResponseGroundedness().score(
        make_sample(response="It was in 1967."), SharedCallJudge(counting), MetricContext()
    )
    assert counting.calls == 2 and result.value == 0.5


def test_max_retries_must_be_positive() -> None:
    from ragqa.errors import ConfigError

    with pytest.raises(ConfigError, match="max_retries"):
        build_metric("answer_accuracy", {"max_retries": 0})
