"""Agent goal accuracy through a judge: two calls, the verdict is the score, modes with and without reference."""

from __future__ import annotations

from typing import Any

import pytest

from ragqa.errors import ConfigError, SampleError
from ragqa.messages import render_conversation
from ragqa.metrics import AgentGoalAccuracy, build_metric
from ragqa.metrics.base import MetricContext
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge

MESSAGES: list[dict[str, Any]] = [
    {"type": "human", "content": "Book a table at the best Chinese restaurant for 8pm"},
    {
        "type": "ai",
        "content": "Booking.",
        "tool_calls": [{"name": "restaurant_book", "args": {"name": "Golden Dragon"}}],
    },
    {"type": "tool", "content": "Table booked at Golden Dragon for 8pm."},
    {"type": "ai", "content": "Your table at Golden Dragon is booked for 8pm."},
]
INFERRED = {"user_goal": "Book a Chinese restaurant table for 8pm.", "end_state": "Golden Dragon booked for 8pm."}


def _sample(**fields: Any) -> Sample:
    base: dict[str, Any] = {"id": "g1", "messages": MESSAGES, "reference": "A table is booked for 8pm."}
    base.update(fields)
    return Sample(**base)


@pytest.mark.parametrize("verdict", [0, 1])
async def test_with_reference_compares_the_reference_with_the_end_state(verdict: int) -> None:
    judge = ScriptedJudge(
        "j1", {"goal_outcome": [INFERRED], "outcome_comparison": [{"reason": "r", "verdict": verdict}]}
    )
    result = await AgentGoalAccuracy().score(_sample(), judge, MetricContext())
    assert result.value == float(verdict)
    assert [c.prompt for c in judge.calls] == ["goal_outcome", "outcome_comparison"]
    assert judge.calls[0].data == {"workflow": render_conversation(_sample().messages or [])}
    assert judge.calls[1].data == {
        "desired_outcome": "A table is booked for 8pm.",
        "arrived_outcome": INFERRED["end_state"],
    }
    assert result.details["mode"] == "with_reference"
    assert result.reason == f"the reference outcome was {'achieved' if verdict else 'not achieved'}: r"


async def test_without_reference_compares_the_inferred_goal() -> None:
    judge = ScriptedJudge("j1", {"goal_outcome": [INFERRED], "outcome_comparison": [{"reason": "r", "verdict": 1}]})
    metric = AgentGoalAccuracy(mode="without_reference")
    result = await metric.score(_sample(), judge, MetricContext(language="ru"))
    assert result.value == 1.0
    assert judge.calls[1].data["desired_outcome"] == INFERRED["user_goal"]
    assert {c.language for c in judge.calls} == {"ru"}
    assert metric.key == "agent_goal_accuracy(mode=without_reference)"


async def test_auto_mode_uses_the_reference_only_when_there_is_one() -> None:
    judge = ScriptedJudge("j1", {"goal_outcome": [INFERRED], "outcome_comparison": [{"reason": "r", "verdict": 0}]})
    result = await AgentGoalAccuracy().score(_sample(reference="  "), judge, MetricContext())
    assert result.details["mode"] == "without_reference"
    assert judge.calls[1].data["desired_outcome"] == INFERRED["user_goal"]


def test_validation_and_options() -> None:
    AgentGoalAccuracy().validate(_sample(reference=None))
    with pytest.raises(SampleError, match="use mode without_reference") as info:
        AgentGoalAccuracy(mode="with_reference").validate(_sample(reference=None))
    assert (info.value.sample_id, info.value.field) == ("g1", "reference")
    with pytest.raises(SampleError, match="messages"):
        AgentGoalAccuracy().validate(_sample(messages=None))
    with pytest.raises(ConfigError, match="mode must be"):
        build_metric("agent_goal_accuracy", {"mode": "reference"})
    assert AgentGoalAccuracy().estimate_calls(_sample()) == 2
    assert AgentGoalAccuracy().key == "agent_goal_accuracy"


async def test_verdict_outside_0_1_is_a_judge_failure() -> None:
    from ragqa.errors import JudgeOutputError

    judge = ScriptedJudge("j1", {"goal_outcome": [INFERRED], "outcome_comparison": [{"reason": "r", "verdict": 2}]})
    with pytest.raises(JudgeOutputError):
        await AgentGoalAccuracy().score(_sample(), judge, MetricContext())
