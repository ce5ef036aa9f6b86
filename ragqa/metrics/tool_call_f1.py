"""Tool call F1: set overlap of the tool calls made and the expected ones, order ignored.

RAGAS ``ToolCallF1`` (``metrics/_tool_call_f1.py``, 0.4.x), no judge:

- a call is the pair ``(name, args)``; nested dicts, lists and sets in the arguments are made
  hashable (dict -> frozenset of items, list/tuple -> tuple, set -> frozenset), so two calls are
  equal when the name and every argument value are equal (Python ``==``: ``75 == 75.0``, but
  ``75 != "75"``, unlike tool call accuracy's ``str`` comparison);
- ``expected`` = the set of ``reference_tool_calls``; ``actual`` = the set of every ``tool_calls``
  entry of the ai messages. Both are **sets**: a call made twice counts once;
- ``tp = |actual ∩ expected|``, ``fp = |actual − expected|``, ``fn = |expected − actual|``;
- ``precision = tp / (tp + fp)`` (0.0 when nothing was called), ``recall = tp / (tp + fn)``
  (0.0 when nothing was expected), ``f1 = 2pr / (p + r)`` (0.0 when both are 0);
- the result is rounded to 4 decimals, as RAGAS rounds it.

Unlike :mod:`ragqa.metrics.tool_call_accuracy`, one wrong or extra call lowers the score instead
of zeroing it, and order never matters. Both lists empty scores 0.0 (RAGAS's rule: no true
positive); tool call accuracy gives 1.0 there.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

from ragqa.judges.base import Judge
from ragqa.messages import ToolCall, tool_calls_of
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.metrics.tool_call_accuracy import call_text, check_tool_call_fields
from ragqa.schema import MetricScore, Sample

__all__ = ["ToolCallF1", "hashable_call", "precision_recall_f1", "tool_call_f1_counts", "tool_call_f1_score"]


def _hashable(value: Any) -> Hashable:
    """RAGAS ``_make_hashable``: dict -> frozenset of items, list/tuple -> tuple, set -> frozenset."""
    if isinstance(value, dict):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(_hashable(v) for v in value)
    hashable: Hashable = value
    return hashable


def hashable_call(call: ToolCall) -> tuple[str, Hashable]:
    """The call as RAGAS's set element: ``(name, frozenset of (argument, hashable value))``."""
    return call.name, _hashable(call.args)


def tool_call_f1_counts(predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> tuple[int, int, int]:
    """True positives, false positives and false negatives of the two call **sets**.

    Args:
        predicted: the calls the agent made (duplicates count once).
        reference: the expected calls (duplicates count once).

    Returns:
        ``(tp, fp, fn)``, each >= 0.
    """
    actual = {hashable_call(c) for c in predicted}
    expected = {hashable_call(c) for c in reference}
    return len(actual & expected), len(actual - expected), len(expected - actual)


def precision_recall_f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """RAGAS's precision, recall and F1 from set counts (``ToolCallF1._multi_turn_ascore``).

    Returns:
        ``(precision, recall, f1)``, each in [0, 1], F1 rounded to 4 decimals as RAGAS rounds
        it; a ratio with a zero denominator is 0.0, never NaN.
    """
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return precision, recall, round(f1, 4)


def tool_call_f1_score(predicted: Sequence[ToolCall], reference: Sequence[ToolCall]) -> float:
    """RAGAS's tool call F1 of ``predicted`` against ``reference`` (see the module docstring).

    Returns:
        A value in [0, 1], higher is better, rounded to 4 decimals; 0.0 when either set is
        empty (no true positive is possible); never NaN.
    """
    return precision_recall_f1(*tool_call_f1_counts(predicted, reference))[2]


class ToolCallF1(Metric):
    """F1 of the set of tool calls made against the set expected (RAGAS ``ToolCallF1``).

    - Fields: ``messages`` (the ai messages' ``tool_calls`` are the calls made) and
      ``reference_tool_calls`` (may be ``[]``).
    - Range 0..1, higher is better, 4 decimals. No judge: every judge of the panel gets the same
      score. Order is ignored; a call must match name and every argument value exactly.
    - Never NaN; both lists empty scores 0.0 (RAGAS).

    The result key is ``tool_call_f1``; details carry ``tp``, ``fp``, ``fn``, ``precision``,
    ``recall`` and the unmatched calls on each side.
    """

    name: ClassVar[str] = "tool_call_f1"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("messages", "reference_tool_calls")
    description: ClassVar[str] = "F1 of the tool calls made against the expected ones, in any order (no judge)"
    calls_per_sample: ClassVar[str] = "0"
    needs_judge: ClassVar[bool] = False
    default_threshold: ClassVar[float | None] = 1.0

    def validate(self, sample: Sample) -> None:
        """Check ``messages`` (non-empty) and that ``reference_tool_calls`` is given (``[]`` allowed).

        Raises:
            SampleError: naming the sample, the field and the fix.
        """
        check_tool_call_fields(sample, self.key)

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample``; the judge is not asked (see the class docstring)."""
        predicted = tool_calls_of(sample.messages or [])
        reference = list(sample.reference_tool_calls or [])
        actual = {hashable_call(c) for c in predicted}
        expected = {hashable_call(c) for c in reference}
        tp, fp, fn = len(actual & expected), len(actual - expected), len(expected - actual)
        precision, recall, value = precision_recall_f1(tp, fp, fn)
        extra = list(dict.fromkeys(call_text(c) for c in predicted if hashable_call(c) not in expected))
        missing = list(dict.fromkeys(call_text(c) for c in reference if hashable_call(c) not in actual))
        reason = f"{tp} of {tp + fn} expected call(s) made, {fp} other call(s); f1 {value:.4f}"
        if missing:
            reason += f"; missing: {'; '.join(missing)}"
        if extra:
            reason += f"; not expected: {'; '.join(extra)}"
        return MetricScore(
            value=value,
            reason=reason,
            details={
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "precision": precision,
                "recall": recall,
                "missing_calls": missing,
                "unexpected_calls": extra,
            },
        )
