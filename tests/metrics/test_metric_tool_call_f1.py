"""Tool call F1 against RAGAS: golden values computed by RAGAS 0.4.3's own ``ToolCallF1`` on the same calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragqa.errors import SampleError
from ragqa.evaluation import PanelEvaluator
from ragqa.messages import AIMessage, HumanMessage, ToolCall
from ragqa.metrics import METRICS, ToolCallAccuracy, ToolCallF1
from ragqa.metrics.tool_call_accuracy import tool_call_accuracy_score
from ragqa.metrics.tool_call_f1 import tool_call_f1_counts, tool_call_f1_score
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge

ROOT = Path(__file__).resolve().parents[2]


def _calls(*pairs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(name=n, args=a) for n, a in pairs]


W = ("weather_check", {"location": "New York"})
C = ("temperature_conversion", {"temperature_fahrenheit": 75})
B = ("weather_check", {"location": "Boston"})
LOWER = ("weather_check", {"location": "new york"})
E = ("email", {"to": "a"})

# (made, expected, RAGAS 0.4.3 ToolCallF1.multi_turn_ascore on the same calls)
GOLDEN: dict[str, tuple[list[ToolCall], list[ToolCall], float]] = {
    "extra call": (_calls(W, B, C), _calls(W, C), 0.8),
    "missing call": (_calls(W), _calls(W, C), 0.6667),
    "wrong argument": (_calls(LOWER, C), _calls(W, C), 0.5),
    "order ignored": (_calls(C, W), _calls(W, C), 1.0),
    "both empty": ([], [], 0.0),
    "none made": ([], _calls(W), 0.0),
    "none expected": (_calls(W), [], 0.0),
    "duplicate made counts once": (_calls(W, W, C), _calls(W, C), 1.0),
    "float equals int": (_calls(("t", {"f": 75.0})), _calls(("t", {"f": 75})), 1.0),
    "string is not int": (_calls(("t", {"f": "75"})), _calls(("t", {"f": 75})), 0.0),
    "nested arguments, key order ignored": (
        _calls(("s", {"q": {"a": [1, 2]}, "tags": ["x", "y"]})),
        _calls(("s", {"tags": ["x", "y"], "q": {"a": [1, 2]}})),
        1.0,
    ),
    "list order matters inside arguments": (
        _calls(("s", {"tags": ["y", "x"]})),
        _calls(("s", {"tags": ["x", "y"]})),
        0.0,
    ),
    "three of four": (_calls(W, C, E), _calls(W, C, E, ("f", {})), 0.8571),
}


@pytest.mark.parametrize("case", list(GOLDEN))
def test_score_equals_ragas(case: str) -> None:
    made, expected, ragas = GOLDEN[case]
    assert tool_call_f1_score(made, expected) == ragas


def test_counts_are_set_counts() -> None:
    assert tool_call_f1_counts(_calls(W, B, C), _calls(W, C)) == (2, 1, 0)
    assert tool_call_f1_counts(_calls(W, W), _calls(W, C)) == (1, 0, 1)


def _conversation(made: list[ToolCall], expected: list[ToolCall] | None, sample_id: str = "s1") -> Sample:
    messages: list[Any] = [HumanMessage(content="Weather in New York in Celsius?")]
    if made:
        messages.append(AIMessage(content="", tool_calls=made))
    messages.append(AIMessage(content="It is 24 C."))
    return Sample(id=sample_id, messages=messages, reference_tool_calls=expected)


async def test_panel_copies_the_score_to_every_judge_without_asking_them() -> None:
    judges = [ScriptedJudge("a", {}), ScriptedJudge("b", {})]
    report = await PanelEvaluator(judges, [ToolCallF1()]).evaluate([_conversation(_calls(W, B, C), _calls(W, C))])
    result = report.results[0]
    assert result.by_judge() == {"a": 0.8, "b": 0.8}
    assert result.aggregate.value == 0.8
    score = result.judges[0].score
    assert score is not None
    assert score.details["tp"] == 2 and score.details["fp"] == 1 and score.details["fn"] == 0
    assert "weather_check(location='Boston')" in score.reason


def test_partial_credit_where_tool_call_accuracy_gives_zero() -> None:
    made, expected = _calls(W, B, C), _calls(W, C)
    assert tool_call_accuracy_score(made, expected) == 0.0
    assert tool_call_f1_score(made, expected) == 0.8


@pytest.mark.parametrize(("field", "sample"), [
    ("messages", Sample(id="x", response="no conversation", reference_tool_calls=[])),
    ("reference_tool_calls", _conversation(_calls(W), None, "x")),
])
def test_missing_fields_are_sample_errors_naming_the_field(field: str, sample: Sample) -> None:
    with pytest.raises(SampleError) as info:
        ToolCallF1().validate(sample)
    assert info.value.field == field and info.value.sample_id == "x"


def test_registered_next_to_tool_call_accuracy() -> None:
    names = list(METRICS)
    assert METRICS["tool_call_f1"] is ToolCallF1
    assert names.index("tool_call_f1") == names.index(ToolCallAccuracy.name) + 1


def test_worked_example_on_the_page() -> None:
    page = (ROOT / "docs" / "metrics" / "tool_call_f1.md").read_text(encoding="utf-8")
    assert f"score is **{tool_call_f1_score(_calls(W, B, C), _calls(W, C))}**" in page
    assert f"scores this conversation **{tool_call_accuracy_score(_calls(W, B, C), _calls(W, C))}**" in page
    assert f"score is **{tool_call_f1_score(_calls(W), _calls(W, C))}**" in page
    assert f"score is **{tool_call_f1_score(_calls(LOWER, C), _calls(W, C))}**" in page
