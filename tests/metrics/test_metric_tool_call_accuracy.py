"""Tool call accuracy against RAGAS's rules: golden values from RAGAS's own tests and docs, edge cases."""

from __future__ import annotations

from typing import Any

import pytest

from ragqa.errors import ConfigError, SampleError
from ragqa.messages import ToolCall
from ragqa.metrics import ToolCallAccuracy, build_metric
from ragqa.metrics.base import MetricContext
from ragqa.metrics.tool_call_accuracy import argument_score, sequence_aligned, tool_call_accuracy_score
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge


def _calls(*pairs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(name=n, args=a) for n, a in pairs]


SEARCH = ("search", {"query": "python"})
FILTER = ("filter", {"type": "recent"})

# (predicted, reference, strict_order, RAGAS's score). Cases from RAGAS's tests/unit/test_tool_call_accuracy.py
# (0.3.x/0.4.x: strict sequence, zip pairs, coverage penalty) and the ToolCallAccuracy docs page.
GOLDEN: list[tuple[list[ToolCall], list[ToolCall], bool, float]] = [
    (_calls(SEARCH, FILTER), _calls(SEARCH, FILTER), True, 1.0),  # perfect match
    ([], _calls(SEARCH), True, 0.0),  # no predicted call
    (_calls(FILTER, SEARCH), _calls(SEARCH, FILTER), True, 0.0),  # sequence misaligned
    (_calls(SEARCH, FILTER), _calls(SEARCH), True, 0.0),  # more predicted: lengths differ
    (_calls(SEARCH), _calls(SEARCH, FILTER), True, 0.0),  # fewer predicted
    (  # partial argument match: (0.5 + 1.0) / 2
        _calls(("search", {"query": "python", "limit": 5}), FILTER),
        _calls(("search", {"query": "python", "limit": 10}), FILTER),
        True,
        0.75,
    ),
    (_calls(("wrong_tool", {"query": "python"})), _calls(SEARCH), True, 0.0),  # wrong name
    ([], [], True, 1.0),  # both empty
    (_calls(("unexpected", {})), [], True, 0.0),  # reference empty, predictions exist
    (_calls(FILTER, SEARCH), _calls(SEARCH, FILTER), False, 1.0),  # flexible order
    (  # docs: weather then conversion, in order
        _calls(("weather_check", {"location": "New York"}), ("temperature_conversion", {"temperature_fahrenheit": 75})),
        _calls(("weather_check", {"location": "New York"}), ("temperature_conversion", {"temperature_fahrenheit": 75})),
        True,
        1.0,
    ),
    (  # docs: the reference in the other order
        _calls(("weather_check", {"location": "New York"}), ("temperature_conversion", {"temperature_fahrenheit": 75})),
        _calls(("temperature_conversion", {"temperature_fahrenheit": 75}), ("weather_check", {"location": "New York"})),
        True,
        0.0,
    ),
    (  # same names in another order: aligned, but zipped arguments differ
        _calls(("w", {"city": "Osaka"}), ("w", {"city": "Tokyo"})),
        _calls(("w", {"city": "Tokyo"}), ("w", {"city": "Osaka"})),
        True,
        0.0,
    ),
    (  # ... and sorted by (name, args) they pair up
        _calls(("w", {"city": "Osaka"}), ("w", {"city": "Tokyo"})),
        _calls(("w", {"city": "Tokyo"}), ("w", {"city": "Osaka"})),
        False,
        1.0,
    ),
    (_calls(("t", {"n": 5})), _calls(("t", {"n": "5"})), True, 1.0),  # str(5) == "5", as RAGAS compares
    (_calls(("t", {"a": 1, "extra": 2})), _calls(("t", {"a": 1})), True, 1.0),  # extra arguments ignored
    (_calls(("t", {"a": 1})), _calls(("t", {"a": 1, "b": 2, "c": 3})), True, 1 / 3),  # missing arguments
    (_calls(("t", {"a": 1})), _calls(("t", {})), True, 0.0),  # reference has no arguments, prediction has
    (_calls(("t", {})), _calls(("t", {})), True, 1.0),  # neither has arguments
]


@pytest.mark.parametrize(("predicted", "reference", "strict", "expected"), GOLDEN)
def test_ragas_golden_values(
    predicted: list[ToolCall], reference: list[ToolCall], strict: bool, expected: float
) -> None:
    assert tool_call_accuracy_score(predicted, reference, strict_order=strict) == pytest.approx(expected, abs=1e-12)


def test_osaka_tokyo_in_strict_order_is_half() -> None:
    """The shipped agent-10: same names in another order are aligned; each zipped pair matches only ``day``."""
    predicted = _calls(("w", {"city": "Osaka", "day": "tomorrow"}), ("w", {"city": "Tokyo", "day": "tomorrow"}))
    reference = _calls(("w", {"city": "Tokyo", "day": "tomorrow"}), ("w", {"city": "Osaka", "day": "tomorrow"}))
    assert tool_call_accuracy_score(predicted, reference) == 0.5
    assert tool_call_accuracy_score(predicted, reference, strict_order=False) == 1.0


def test_helpers() -> None:
    assert argument_score({}, {}) == 1.0
    assert argument_score({"a": 1}, {}) == 0.0
    assert argument_score({"a": True}, {"a": "True"}) == 1.0
    assert sequence_aligned(["a", "b", "c"], ["a", "c", "b"]) is False
    assert sequence_aligned(["a", "b", "c"], ["a", "c", "b"], strict_order=False) is True
    assert sequence_aligned([], []) is True


def _sample(**fields: Any) -> Sample:
    base: dict[str, Any] = {
        "id": "t1",
        "messages": [
            {"type": "human", "content": "search python, recent only"},
            {"type": "ai", "content": "First", "tool_calls": [{"name": "search", "args": {"query": "python"}}]},
            {"type": "tool", "content": "3 results"},
            {"type": "ai", "content": "Second", "tool_calls": [{"name": "filter", "args": {"type": "old"}}]},
            {"type": "tool", "content": "1 result"},
        ],
        "reference_tool_calls": [
            {"name": "search", "args": {"query": "python"}},
            {"name": "filter", "args": {"type": "recent"}},
        ],
    }
    base.update(fields)
    return Sample(**base)


async def test_metric_reads_calls_across_ai_messages_and_asks_no_judge() -> None:
    judge = ScriptedJudge("j1", {})
    result = await ToolCallAccuracy().score(_sample(), judge, MetricContext())
    assert result.value == 0.5
    assert judge.calls == []
    assert result.details["aligned"] is True
    assert result.details["argument_scores"] == [1.0, 0.0]
    assert "arguments differ in: filter(type='old')" in (result.reason or "")


async def test_metric_reasons_for_edge_cases() -> None:
    judge = ScriptedJudge("j1", {})
    none_expected = await ToolCallAccuracy().score(
        _sample(messages=[{"type": "human", "content": "hi"}], reference_tool_calls=[]), judge, MetricContext()
    )
    assert (none_expected.value, none_expected.reason) == (1.0, "no tool call expected and none made")
    unordered = await ToolCallAccuracy().score(
        _sample(
            reference_tool_calls=[
                {"name": "filter", "args": {"type": "old"}},
                {"name": "search", "args": {"query": "python"}},
            ]
        ),
        judge,
        MetricContext(),
    )
    assert unordered.value == 0.0
    assert "made [search, filter], expected [filter, search]" in (unordered.reason or "")


def test_validation_allows_empty_reference_but_not_missing() -> None:
    metric = ToolCallAccuracy()
    metric.validate(_sample(reference_tool_calls=[]))
    with pytest.raises(SampleError, match="reference_tool_calls") as info:
        metric.validate(_sample(reference_tool_calls=None))
    assert info.value.sample_id == "t1"
    with pytest.raises(SampleError, match="messages"):
        metric.validate(_sample(messages=None))


def test_options_and_keys() -> None:
    assert ToolCallAccuracy().key == "tool_call_accuracy"
    assert build_metric("tool_call_accuracy", {"strict_order": False}).key == "tool_call_accuracy(strict_order=false)"
    assert ToolCallAccuracy.needs_judge is False
    assert ToolCallAccuracy().estimate_calls(_sample()) == 0
    with pytest.raises(ConfigError, match="strict_order"):
        build_metric("tool_call_accuracy", {"strict_order": "yes"})


def test_levenshtein_argument_comparison_gives_partial_credit() -> None:
    """RAGAS's ``arg_comparison_metric = NonLLMStringSimilarity()``: 1 - normalized Levenshtein distance."""
    made = _calls(("weather_check", {"location": "new york", "unit": "C"}))
    expected = _calls(("weather_check", {"location": "New York", "unit": "C"}))
    assert tool_call_accuracy_score(made, expected) == 0.5  # exact: one of two arguments
    assert tool_call_accuracy_score(made, expected, arg_comparison="levenshtein") == (0.75 + 1.0) / 2  # N->n, Y->y
    assert argument_score({"n": 12}, {"n": 13}, "levenshtein") == 0.5
    metric = build_metric("tool_call_accuracy", {"strict_order": False, "arg_comparison": "levenshtein"})
    assert metric.key == "tool_call_accuracy(strict_order=false, arg_comparison=levenshtein)"
    assert build_metric("tool_call_accuracy", {"arg_comparison": "levenshtein"}).key == (
        "tool_call_accuracy(arg_comparison=levenshtein)"
    )
    with pytest.raises(ConfigError, match="arg_comparison must be"):
        build_metric("tool_call_accuracy", {"arg_comparison": "fuzzy"})
