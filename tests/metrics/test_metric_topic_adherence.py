"""Topic adherence against RAGAS's formula (epsilons 1e-10), through a scripted judge, and its edge cases."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ragqa.errors import ConfigError, JudgeOutputError, SampleError
from ragqa.messages import render_conversation
from ragqa.metrics import TopicAdherence, build_metric
from ragqa.metrics.base import MetricContext
from ragqa.metrics.topic_adherence import topic_adherence_score
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge

T, F = True, False

# (answered, on_topic) -> RAGAS's (precision, recall, f1), computed with TopicAdherenceScore's formula:
# P = TP/(TP+FP+1e-10), R = TP/(TP+FN+1e-10), F1 = 2PR/(P+R+1e-10).
GOLDEN: list[tuple[list[bool], list[bool], tuple[float, float, float]]] = [
    ([T, T, F, F], [T, F, T, F], (0.499999999975, 0.499999999975, 0.499999999925)),
    ([T, T, T], [T, T, T], (0.9999999999666667, 0.9999999999666667, 0.9999999999166667)),
    ([T, T, T], [T, T, F], (0.6666666666444444, 0.99999999995, 0.79999999992)),
    ([F, F], [T, T], (0.0, 0.0, 0.0)),  # every on-topic question refused
    ([T, F], [F, F], (0.0, 0.0, 0.0)),  # answered off-topic, refused off-topic
    ([T, T, T, F], [T, T, F, T], (0.6666666666444444, 0.6666666666444444, 0.6666666665944444)),
]


@pytest.mark.parametrize(("answered", "on_topic", "expected"), GOLDEN)
def test_ragas_golden_values(answered: list[bool], on_topic: list[bool], expected: tuple[float, float, float]) -> None:
    got = tuple(topic_adherence_score(answered, on_topic, mode) for mode in ("precision", "recall", "f1"))
    assert got == pytest.approx(expected, rel=0, abs=1e-15)


def test_no_topic_is_nan_and_ragged_input_is_refused() -> None:
    assert math.isnan(topic_adherence_score([], []))
    with pytest.raises(ValueError, match="2 answered flags for 1"):
        topic_adherence_score([T, T], [T])


MESSAGES: list[dict[str, Any]] = [
    {"type": "human", "content": "Will it rain in London tomorrow?"},
    {"type": "ai", "tool_calls": [{"name": "forecast", "args": {"city": "London"}}]},
    {"type": "tool", "content": "light rain"},
    {"type": "ai", "content": "Yes, light rain."},
    {"type": "human", "content": "Who will win the world cup?"},
    {"type": "ai", "content": "Sorry, I can only help with weather."},
    {"type": "human", "content": "And stock tips?"},
    {"type": "ai", "content": "Buy index funds."},
]


def _sample(**fields: Any) -> Sample:
    base: dict[str, Any] = {"id": "t1", "messages": MESSAGES, "reference_topics": ["weather"]}
    base.update(fields)
    return Sample(**base)


def _judge(topics: list[str], refused: list[bool], classified: list[bool]) -> ScriptedJudge:
    return ScriptedJudge(
        "j1",
        {
            "topic_extraction": [{"topics": topics}],
            "topic_refusal": [{"refused_to_answer": r} for r in refused],
            "topic_classification": [{"classifications": classified}],
        },
    )


@pytest.mark.parametrize(
    ("mode", "expected"), [("precision", 0.499999999975), ("recall", 0.9999999999), ("f1", 0.6666666665777777)]
)
async def test_metric_scores_through_the_judge(mode: Any, expected: float) -> None:
    judge = _judge(["London rain", "world cup", "stock tips"], [F, T, F], [T, F, F])
    result = await TopicAdherence(mode=mode).score(_sample(), judge, MetricContext())
    assert result.value == expected
    transcript = render_conversation(_sample().messages or [])
    assert judge.calls[0].data == {"user_input": transcript}
    assert [c.data["topic"] for c in judge.calls_to("topic_refusal")] == ["London rain", "world cup", "stock tips"]
    assert judge.calls_to("topic_classification")[0].data == {
        "reference_topics": ["weather"],
        "topics": ["London rain", "world cup", "stock tips"],
    }
    assert result.details == {
        "mode": mode,
        "topics": ["London rain", "world cup", "stock tips"],
        "answered": [T, F, T],
        "on_topic": [T, F, F],
    }
    assert "answered off-topic: stock tips" in (result.reason or "")
    assert len(judge.calls) == 3 + 2


async def test_no_topic_is_nan_with_one_call() -> None:
    judge = _judge([" ", ""], [], [])
    result = await TopicAdherence().score(_sample(), judge, MetricContext())
    assert math.isnan(result.value)
    assert len(judge.calls) == 1


async def test_classification_count_must_match_the_topics() -> None:
    judge = _judge(["a", "b"], [F, F], [T])
    with pytest.raises(JudgeOutputError, match="1 classifications for 2 topics") as info:
        await TopicAdherence().score(_sample(), judge, MetricContext())
    assert info.value.step == "topic_classification"


async def test_more_topics_than_max_topics_is_a_failure_not_a_truncation() -> None:
    judge = _judge(["a", "b", "c"], [], [])
    with pytest.raises(JudgeOutputError, match="3 topics, more than max_topics=2") as info:
        await TopicAdherence(max_topics=2).score(_sample(), judge, MetricContext())
    assert info.value.step == "topic_extraction"
    assert TopicAdherence(max_topics=2).estimate_calls(_sample()) == 4


def test_validation_and_options() -> None:
    with pytest.raises(SampleError, match="reference_topics"):
        TopicAdherence().validate(_sample(reference_topics=None))
    with pytest.raises(SampleError, match="messages"):
        TopicAdherence().validate(_sample(messages=None))
    assert TopicAdherence().key == "topic_adherence(mode=f1)"
    assert build_metric("topic_adherence", {"mode": "recall"}).key == "topic_adherence(mode=recall)"
    with pytest.raises(ConfigError, match="mode must be"):
        build_metric("topic_adherence", {"mode": "accuracy"})
    with pytest.raises(ConfigError, match="max_topics"):
        build_metric("topic_adherence", {"max_topics": 0})
