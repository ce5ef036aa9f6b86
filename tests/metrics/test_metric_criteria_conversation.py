"""The general metrics on a conversation: RAGAS's multi-turn form of AspectCritic, SimpleCriteriaScore and
RubricsScore (the rendered conversation as ``user_input``), with scripted and local judges."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from ragqa.datasets import load_dataset
from ragqa.errors import SampleError
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalJudge
from ragqa.messages import AIMessage, HumanMessage, ToolCall, ToolMessage, conversation_parts, render_conversation
from ragqa.metrics import AspectCritic, RubricsScore, SimpleCriteriaScore
from ragqa.metrics.base import MetricContext
from ragqa.metrics.rubrics_score import DEFAULT_REFERENCE_FREE_RUBRICS
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "examples" / "datasets" / "agent_conversations.jsonl"


def _conversation(reference: str | None = "The table is booked.") -> Sample:
    return Sample(
        id="c1",
        messages=[
            HumanMessage(content="Book a table at Golden Dragon for 8pm."),
            AIMessage(content="Booking it.", tool_calls=[ToolCall(name="book", args={"name": "Golden Dragon"})]),
            ToolMessage(content="Booked: Golden Dragon, 8pm, table 4."),
            AIMessage(content="Your table at Golden Dragon is booked for 8pm."),
        ],
        reference=reference,
    )


def test_conversation_parts_reads_back_every_shipped_conversation() -> None:
    for sample in load_dataset(AGENT):
        messages = sample.messages or []
        parts = conversation_parts(render_conversation(messages))
        assert parts["human"] == [m.content for m in messages if isinstance(m, HumanMessage)], sample.id
        assert parts["ai"] == [m.content for m in messages if isinstance(m, AIMessage) and m.content], sample.id
        assert parts["tool"] == [m.content for m in messages if isinstance(m, ToolMessage)], sample.id


def test_conversation_parts_keeps_multi_line_contents() -> None:
    text = render_conversation([HumanMessage(content="two\nlines"), AIMessage(content="a\n  b")])
    assert conversation_parts(text) == {"human": ["two\nlines"], "ai": ["a\n  b"], "tool": []}


async def test_aspect_critic_sends_the_rendered_conversation_and_nothing_else() -> None:
    judge = ScriptedJudge("j", {"aspect_critic": [{"reason": "ok", "verdict": 1}]})
    sample = _conversation()
    assert (await AspectCritic(name="coherence").score(sample, judge, MetricContext())).value == 1.0
    [call] = judge.calls
    assert call.data["user_input"] == render_conversation(sample.messages or [])
    assert call.data["response"] is None and call.data["retrieved_contexts"] is None
    assert call.data["reference"] is None  # RAGAS's multi-turn AspectCritic passes no reference


async def test_simple_criteria_sends_the_conversation_with_its_reference() -> None:
    judge = ScriptedJudge("j", {"simple_criteria": [{"reason": "ok", "score": 4}]})
    sample = _conversation()
    assert (await SimpleCriteriaScore().score(sample, judge, MetricContext())).value == 4.0
    [call] = judge.calls
    assert call.data["user_input"] == render_conversation(sample.messages or [])
    assert call.data["reference"] == "The table is booked."


async def test_rubrics_use_the_reference_free_rubric_on_a_conversation() -> None:
    judge = ScriptedJudge("j", {"rubrics_score": [{"feedback": "fine", "score": 5}]})
    sample = _conversation()
    result = await RubricsScore().score(sample, judge, MetricContext())
    [call] = judge.calls
    assert result.value == 5.0 and result.details["rubric_source"] == "default reference-free"
    assert call.data["rubrics"] == DEFAULT_REFERENCE_FREE_RUBRICS and call.data["reference"] is None


@pytest.mark.parametrize("metric", [AspectCritic(), SimpleCriteriaScore(), RubricsScore()])
def test_a_conversation_needs_no_response_but_one_or_the_other_is_required(metric: Any) -> None:
    metric.validate(_conversation())
    with pytest.raises(SampleError) as info:
        metric.validate(Sample(id="x", user_input="q", retrieved_contexts=["c"]))
    assert info.value.field == "response" and "'messages'" in str(info.value)


async def test_the_local_judge_scores_every_shipped_conversation() -> None:
    samples = load_dataset(AGENT)
    metrics = [AspectCritic(name="coherence"), AspectCritic(name="harmfulness"), SimpleCriteriaScore(), RubricsScore()]
    report = await PanelEvaluator([LocalJudge("local")], metrics).evaluate(samples)
    assert len(report.results) == len(samples) * len(metrics)
    for result in report.results:
        assert not result.failures, (result.sample_id, result.metric)
        value = result.aggregate.value
        assert not math.isnan(value), (result.sample_id, result.metric)


async def test_the_local_judge_reads_the_agents_turns_as_the_response() -> None:
    polite, rude = _conversation(None), _conversation(None)
    rude = rude.model_copy(
        update={"id": "c2", "messages": [*(rude.messages or [])[:-1], AIMessage(content="Booked, stupid. Shut up.")]}
    )
    metric = AspectCritic(name="politeness", definition="Is the agent polite and respectful to the user?")
    report = await PanelEvaluator([LocalJudge("local")], [metric]).evaluate([polite, rude])
    assert [r.aggregate.value for r in report.results] == [1.0, 0.0]
