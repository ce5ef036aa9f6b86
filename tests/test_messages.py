"""Multi-turn samples: typed messages, the checks at load (message, field and fix named), RAGAS's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ragqa.datasets import load_dataset, samples_from_records
from ragqa.errors import DatasetError
from ragqa.messages import (
    AIMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
    last_human_message,
    parse_messages,
    render_conversation,
    tool_calls_of,
)
from ragqa.run.api import samples_from_data
from ragqa.schema import Sample

CONVERSATION: list[dict[str, Any]] = [
    {"type": "human", "content": "What's the weather like in New York right now?"},
    {"type": "ai", "content": "", "tool_calls": [{"name": "weather_check", "args": {"location": "New York"}}]},
    {"type": "tool", "content": "75°F and sunny"},
    {"type": "ai", "content": "It is 75°F and sunny."},
    {"type": "human", "content": "Can you translate that to Celsius?"},
    {
        "type": "ai",
        "content": "Let me convert that.",
        "tool_calls": [{"name": "temperature_conversion", "args": {"temperature_fahrenheit": 75}}],
    },
    {"type": "tool", "content": "75°F is approximately 23.9°C"},
    {"type": "ai", "content": "75°F is approximately 23.9°C."},
]


def test_messages_are_typed_and_calls_read_in_order() -> None:
    messages = parse_messages(CONVERSATION)
    assert [type(m) for m in messages[:3]] == [HumanMessage, AIMessage, ToolMessage]
    assert tool_calls_of(messages) == [
        ToolCall(name="weather_check", args={"location": "New York"}),
        ToolCall(name="temperature_conversion", args={"temperature_fahrenheit": 75}),
    ]
    assert last_human_message(messages) == "Can you translate that to Celsius?"
    assert Sample(id="s", messages=messages).question() == "Can you translate that to Celsius?"
    assert Sample(id="s", user_input="q", messages=messages).question() == "q"


def test_render_conversation_is_ragas_pretty_repr() -> None:
    text = render_conversation(parse_messages(CONVERSATION[:4]))
    assert text == (
        "Human: What's the weather like in New York right now?\n"
        "Tools:\n"
        "  weather_check: {'location': 'New York'}\n"
        "ToolOutput: 75°F and sunny\n"
        "AI: It is 75°F and sunny."
    )


def test_roles_user_and_assistant_are_read_as_human_and_ai() -> None:
    messages = parse_messages(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [{"name": "t"}]},
            {"role": "tool", "content": "out"},
        ]
    )
    assert [m.type for m in messages] == ["human", "ai", "tool"]
    assert isinstance(messages[1], AIMessage) and messages[1].content == ""
    assert tool_calls_of(messages) == [ToolCall(name="t", args={})]


def test_parallel_tool_outputs_may_follow_one_ai_message() -> None:
    """RAGAS rejects the second of two tool outputs; ragqa accepts tool messages after one calling ai message."""
    messages = parse_messages(
        [
            {"type": "human", "content": "weather in Tokyo and Osaka"},
            {
                "type": "ai",
                "tool_calls": [{"name": "w", "args": {"c": "Tokyo"}}, {"name": "w", "args": {"c": "Osaka"}}],
            },
            {"type": "tool", "content": "rain"},
            {"type": "tool", "content": "sun"},
        ]
    )
    assert len(messages) == 4


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([{"type": "system", "content": "x"}], "message 1 has type 'system'; use human, ai or tool"),
        ([{"content": "x"}], "message 1 has no 'type'; give human, ai or tool"),
        ([{"type": "human", "role": "user", "content": "x"}], "message 1 has both 'type' and 'role'"),
        (["hello"], 'message 1 is a string; write it as {"type": "human", "content": "..."}'),
        ([{"type": "human"}], "message 1 (human) has no 'content'; give its text as a string"),
        ([{"type": "tool", "content": 3}], "message 1 (tool) has 'content' a number"),
        (
            [{"type": "human", "content": "q"}, {"type": "tool", "content": "out"}],
            "message 2 is a tool message, but no ai message with tool_calls comes before it",
        ),
        (
            [{"type": "human", "content": "q"}, {"type": "ai", "content": "a"}, {"type": "tool", "content": "out"}],
            "message 3 is a tool message, but no ai message with tool_calls",
        ),
        (
            [{"type": "human", "content": "q", "tool_calls": [{"name": "t"}]}],
            "message 1 is a human message with 'tool_calls'; only ai messages call tools",
        ),
        (
            [{"type": "ai", "tool_calls": [{"name": "t", "args": "city=Paris"}]}],
            "message 1, tool call 1 ('t'): 'args' is a string, not an object",
        ),
        ([{"type": "ai", "tool_calls": [{"args": {}}]}], "message 1, tool call 1 has no 'name'"),
        ([{"type": "ai", "tool_calls": [{"name": " "}]}], "a tool call needs a non-blank name"),
        ([{"type": "ai", "tool_calls": [{"name": "t", "arguments": {}}]}], "unknown key(s) 'arguments'"),
        ([{"type": "ai", "tool_calls": {"name": "t"}}], "expected a list of"),
        ([], "the conversation is empty"),
        ("Human: hi", "expected a list of messages"),
    ],
)
def test_bad_conversations_name_the_message_and_the_fix(messages: Any, problem: str) -> None:
    with pytest.raises(DatasetError) as info:
        samples_from_records([{"id": "c1", "messages": messages}])
    assert problem in str(info.value)
    assert info.value.sample_id == "c1"
    assert info.value.field == "messages"


def test_python_samples_are_checked_too() -> None:
    with pytest.raises(ValidationError, match="message 2 is a tool message"):
        Sample(messages=[{"type": "human", "content": "q"}, {"type": "tool", "content": "x"}])


def test_bad_reference_tool_calls_name_the_call_and_the_fix() -> None:
    with pytest.raises(DatasetError) as info:
        samples_from_records(
            [{"id": "c1", "messages": CONVERSATION, "reference_tool_calls": [{"name": "t", "args": [1]}]}]
        )
    assert "tool call 1 ('t'): 'args' is a list, not an object" in str(info.value)
    assert info.value.field == "reference_tool_calls"


def test_ragas_multi_turn_shape_user_input_as_messages(tmp_path: Path) -> None:
    """RAGAS's MultiTurnSample JSON (user_input is the list of messages, metadata null) loads as messages."""
    ragas_dump = [{**m, "metadata": None} for m in CONVERSATION]
    record = {  # MultiTurnSample.model_dump(): every field, None where unset
        "user_input": ragas_dump,
        "reference": None,
        "reference_tool_calls": [{"name": "weather_check", "args": {"location": "NY"}}],
        "rubrics": None,
        "reference_topics": None,
    }
    path = tmp_path / "multi.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (sample,) = load_dataset(path)
    assert sample.user_input is None
    assert sample.messages is not None and len(sample.messages) == len(CONVERSATION)
    assert sample.reference_tool_calls == [ToolCall(name="weather_check", args={"location": "NY"})]
    json_path = tmp_path / "multi.json"
    json_path.write_text(json.dumps([record]), encoding="utf-8")
    assert load_dataset(json_path) == [sample.model_copy(update={"id": "item 1"})]


def test_user_input_list_and_messages_together_are_refused() -> None:
    with pytest.raises(DatasetError, match="both 'user_input' and 'messages' give 'messages'"):
        samples_from_records([{"id": "c", "user_input": CONVERSATION, "messages": CONVERSATION}])


def test_dataframe_with_messages_and_ragas_shape() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        [
            {"id": "a", "messages": CONVERSATION, "reference_topics": ["weather"]},
            {"id": "b", "user_input": CONVERSATION[:4], "reference_tool_calls": [{"name": "weather_check"}]},
            {"id": "c", "user_input": "a single-turn question", "response": "an answer"},
        ]
    )
    samples, _ = samples_from_data(frame)
    assert [len(s.messages or []) for s in samples] == [8, 4, 0]
    assert samples[1].reference_tool_calls == [ToolCall(name="weather_check")]
    assert samples[2].user_input == "a single-turn question"


def test_csv_messages_column_holds_json(tmp_path: Path) -> None:
    path = tmp_path / "multi.csv"
    import csv

    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "messages", "reference_tool_calls"])
        writer.writerow(["r1", json.dumps(CONVERSATION), json.dumps([{"name": "weather_check", "args": {}}])])
    (sample,) = load_dataset(path)
    assert sample.messages is not None and len(sample.messages) == 8


def test_samples_round_trip_through_python_records() -> None:
    (sample,) = samples_from_records([{"id": "a", "messages": CONVERSATION}])
    again, _ = samples_from_data([sample])
    assert again == [sample]


def test_a_message_longer_than_max_text_chars_is_refused_before_any_call() -> None:
    from ragqa.metrics import TopicAdherence
    from ragqa.run.validate import Limits, validate_run

    long = Sample(id="long", messages=[{"type": "human", "content": "x" * 50}], reference_topics=["t"])
    validation = validate_run([long], [TopicAdherence()], Limits(max_text_chars=10))
    (problem,) = validation.problems
    assert (problem.sample_id, problem.field) == ("long", "messages")
    assert "message 1 has 50 characters, more than ragqa.limits.max-text-chars (10)" in str(problem)
    assert validation.invalid == {("long", "topic_adherence(mode=f1)")}
