"""Tool call accuracy: did the agent call the expected tools, in order, with the expected arguments?

RAGAS ``ToolCallAccuracy`` (``metrics/_tool_call_accuracy.py``, 0.4.x), no judge:

- predicted calls = every ``tool_calls`` entry of the ai messages, in conversation order;
- both lists empty: 1.0; no predicted call: 0.0; no reference call but predicted ones: 0.0;
- ``strict_order=False`` sorts both lists by ``(name, arg name, str(arg value), ...)`` first;
- ``aligned`` = the name sequences are equal (strict) or equal once sorted;
- ``score = sum(argscore(ref_i, pred_i) for zipped pairs with the same name) / len(ref)``, where
  ``argscore`` is the share of the reference's arguments whose ``str(value)`` the prediction
  matches exactly (RAGAS's ``ExactMatch``), 1.0 when both have no argument and 0.0 when only
  the reference has none;
- a coverage penalty ``min(len(pred), len(ref)) / len(ref)`` when fewer calls were predicted;
- the result is ``score * aligned``: any missing or extra call makes the sequences unaligned,
  so the score is 0.0 (RAGAS issue #2582 discusses this).

Argument values are compared as Python ``str`` does, like RAGAS (``5`` matches ``"5"``, ``true``
from JSON is ``"True"``). With ``arg_comparison="levenshtein"`` each argument scores RAGAS's
``NonLLMStringSimilarity`` (Levenshtein) instead: ``1 - normalized_distance(str(ref), str(pred))``,
computed with ``rapidfuzz``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, get_args

from rapidfuzz.distance import Levenshtein

from ragqa.errors import SampleError
from ragqa.judges.base import Judge
from ragqa.messages import ToolCall, tool_calls_of
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.schema import MetricScore, Sample

__all__ = [
    "ArgComparison",
    "ToolCallAccuracy",
    "argument_score",
    "call_text",
    "check_tool_call_fields",
    "sequence_aligned",
    "tool_call_accuracy_score",
]

ArgComparison = Literal["exact", "levenshtein"]
"""How one argument value is compared: RAGAS's ``ExactMatch`` (default) or ``NonLLMStringSimilarity``."""


def _value_score(predicted: Any, reference: Any, comparison: ArgComparison) -> float:
    if comparison == "levenshtein":
        return 1.0 - float(Levenshtein.normalized_distance(str(reference), str(predicted)))
    return 1.0 if str(predicted) == str(reference) else 0.0


def argument_score(
    predicted: Mapping[str, Any], reference: Mapping[str, Any], comparison: ArgComparison = "exact"
) -> float:
    """Share of the reference's arguments that the predicted call gives with the same value.

    RAGAS ``ToolCallAccuracy._get_arg_score``: with ``ExactMatch`` (``comparison="exact"``) a value
    scores ``str(pred[k]) == str(ref[k])``; with ``"levenshtein"`` it scores
    ``1 - normalized Levenshtein distance`` of the two strings. Arguments the reference lacks are
    ignored; a reference argument the prediction lacks scores 0.

    Returns:
        A value in [0, 1]: 1.0 when both are empty, 0.0 when only the reference is empty,
        else the mean value score over the reference's arguments.
    """
    if not reference and not predicted:
        return 1.0
    if not reference:
        return 0.0
    matched = sum(_value_score(predicted[k], v, comparison) for k, v in reference.items() if k in predicted)
    return matched / len(reference)


def _sort_key(call: ToolCall) -> tuple[str, ...]:
    """RAGAS ``_sorted_key_for_tool_call``: the name, then each argument name and ``str(value)``, by name."""
    key = [call.name]
    for name in sorted(call.args):
        key += [name, str(call.args[name])]
    return tuple(key)


def sequence_aligned(predicted: Sequence[str], reference: Sequence[str], *, strict_order: bool = True) -> bool:
    """Whether the tool-name sequences match: equal (strict) or equal once sorted (RAGAS ``is_sequence_aligned``)."""
    if strict_order:
        return list(predicted) == list(reference)
    return sorted(predicted) == sorted(reference)


def tool_call_accuracy_score(
    predicted: Sequence[ToolCall],
    reference: Sequence[ToolCall],
    *,
    strict_order: bool = True,
    arg_comparison: ArgComparison = "exact",
) -> float:
    """RAGAS's tool call accuracy of ``predicted`` against ``reference`` (see the module docstring).

    Args:
        predicted: the calls the agent made, in order.
        reference: the expected calls, in order.
        strict_order: compare in order (RAGAS's default); False compares both lists sorted.
        arg_comparison: ``exact`` (RAGAS's default) or ``levenshtein`` (see :func:`argument_score`).

    Returns:
        A value in [0, 1], higher is better; never NaN.
    """
    if not predicted and not reference:
        return 1.0
    if not predicted or not reference:
        return 0.0
    pred, ref = list(predicted), list(reference)
    if not strict_order:
        pred, ref = sorted(pred, key=_sort_key), sorted(ref, key=_sort_key)
    aligned = sequence_aligned([c.name for c in pred], [c.name for c in ref], strict_order=strict_order)
    score = sum(
        argument_score(p.args, r.args, arg_comparison) for r, p in zip(ref, pred, strict=False) if r.name == p.name
    )
    score /= len(ref)
    compared = min(len(pred), len(ref))
    if compared < len(ref):
        score *= compared / len(ref)
    return score * int(aligned)


def call_text(call: ToolCall) -> str:
    """A call as the reasons show it: ``name(arg='value', n=5)`` (arguments in the call's order, ``repr`` values)."""
    return f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.args.items())})"


def check_tool_call_fields(sample: Sample, metric_key: str) -> None:
    """Check what the tool-call metrics read: a non-empty ``messages`` and a ``reference_tool_calls`` (``[]`` allowed).

    Args:
        sample: the sample.
        metric_key: the metric's result key, named in the error.

    Raises:
        SampleError: naming the sample, the field and the fix.
    """
    if not sample.messages:
        raise SampleError(
            'missing or empty; add the conversation as [{"type": "human", "content": "..."}, ...]',
            sample_id=sample.label,
            field="messages",
            metric=metric_key,
        )
    if sample.reference_tool_calls is None:
        raise SampleError(
            'missing; add the expected calls as [{"name": "tool", "args": {...}}] ([] when none is expected)',
            sample_id=sample.label,
            field="reference_tool_calls",
            metric=metric_key,
        )


class ToolCallAccuracy(Metric):
    """Whether the agent made the expected tool calls with the expected arguments.

    - Fields: ``messages`` (the ai messages' ``tool_calls`` are the predicted calls) and
      ``reference_tool_calls`` (may be ``[]``: no call expected).
    - Range 0..1, higher is better. No judge: every judge of the panel gets the same score.
    - 0.0 whenever a call is missing or extra, or the order differs (with ``strict_order``).
    - Never NaN.

    Args:
        strict_order: compare the calls in order (default, as RAGAS); False compares them as
            sorted lists (parallel calls).
        arg_comparison: ``exact`` (default, RAGAS's ``ExactMatch``) or ``levenshtein`` (RAGAS's
            ``NonLLMStringSimilarity``: partial credit for near values).

    The result key is ``tool_call_accuracy``, plus the options that differ from the defaults:
    ``tool_call_accuracy(strict_order=false)``, ``tool_call_accuracy(arg_comparison=levenshtein)``.
    """

    name: ClassVar[str] = "tool_call_accuracy"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("messages", "reference_tool_calls")
    description: ClassVar[str] = "Expected tool calls made in order with the expected arguments (no judge)"
    calls_per_sample: ClassVar[str] = "0"
    needs_judge: ClassVar[bool] = False
    default_threshold: ClassVar[float | None] = 1.0

    def __init__(self, strict_order: bool = True, arg_comparison: ArgComparison = "exact") -> None:
        """Create the metric.

        Raises:
            ValueError: when ``strict_order`` is not a boolean or ``arg_comparison`` is unknown.
        """
        if not isinstance(strict_order, bool):
            raise ValueError(f"strict_order must be true or false, not {strict_order!r}")
        if arg_comparison not in get_args(ArgComparison):
            raise ValueError(f"arg_comparison must be 'exact' or 'levenshtein', not {arg_comparison!r}")
        self.strict_order = strict_order
        self.arg_comparison: ArgComparison = arg_comparison

    @property
    def key(self) -> str:
        """``tool_call_accuracy``, plus the options that differ from the defaults in parentheses."""
        options = [] if self.strict_order else ["strict_order=false"]
        if self.arg_comparison != "exact":
            options.append(f"arg_comparison={self.arg_comparison}")
        return f"{self.name}({', '.join(options)})" if options else self.name

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
        value = tool_call_accuracy_score(
            predicted, reference, strict_order=self.strict_order, arg_comparison=self.arg_comparison
        )
        pred, ref = predicted, reference
        if not self.strict_order:
            pred, ref = sorted(pred, key=_sort_key), sorted(ref, key=_sort_key)
        aligned = sequence_aligned([c.name for c in pred], [c.name for c in ref], strict_order=self.strict_order)
        pairs = [
            argument_score(p.args, r.args, self.arg_comparison) if r.name == p.name else 0.0
            for r, p in zip(ref, pred, strict=False)
        ]
        if not predicted and not reference:
            reason = "no tool call expected and none made"
        elif not predicted:
            reason = f"no tool call made; {len(reference)} expected"
        elif not reference:
            reason = f"{len(predicted)} tool call(s) made where none was expected"
        elif not aligned:
            order = "in order" if self.strict_order else "in any order"
            reason = (
                f"the tool sequence differs from the expected one ({order}): made "
                f"[{', '.join(c.name for c in predicted)}], expected [{', '.join(c.name for c in reference)}]"
            )
        else:
            wrong = [call_text(p) for p, s in zip(pred, pairs, strict=False) if s < 1.0]
            reason = f"{len(reference)} expected call(s) made; argument match {value:.2f}"
            if wrong:
                reason += f"; arguments differ in: {'; '.join(wrong)}"
        return MetricScore(
            value=value,
            reason=reason,
            details={
                "predicted_calls": [c.model_dump(mode="json") for c in predicted],
                "reference_calls": [c.model_dump(mode="json") for c in reference],
                "strict_order": self.strict_order,
                "arg_comparison": self.arg_comparison,
                "aligned": aligned,
                "argument_scores": pairs,
            },
        )
