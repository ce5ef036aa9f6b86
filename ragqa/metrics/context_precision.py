"""Context precision: are the useful retrieved contexts ranked first?

RAGAS ``LLMContextPrecisionWithReference`` / ``ContextPrecision`` (``metrics/_context_precision.py``;
the response-based variant is RAGAS's ``LLMContextPrecisionWithoutReference`` /
``ContextUtilization``). One usefulness verdict per context, in retrieval order, then average
precision with RAGAS's epsilon::

    AP = sum_k v_k * precision@k / (sum_k v_k + 1e-10),   precision@k = (sum_{i<=k} v_i) / k

so K useful contexts out of K score ``K / (K + 1e-10)``, never exactly 1.0 (RAGAS issue #2909).

Call plans: ``ragas`` asks one usefulness call per context (N calls); ``batched`` asks every
context's verdict in one :data:`~ragqa.prompts.context_usefulness_batch.CONTEXT_USEFULNESS_BATCH`
call (same verdicts, each context judged on its own, same maths).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, get_args

from ragqa._math import average_precision
from ragqa.errors import SampleError
from ragqa.judges.base import Judge
from ragqa.metrics._batched import Judged, judge_usefulness
from ragqa.metrics.base import CallPlan, ClaimVote, Direction, Metric, MetricContext, VoteLayout
from ragqa.prompts.context_usefulness import CONTEXT_USEFULNESS, ContextUsefulnessInput
from ragqa.schema import MetricScore, Sample

__all__ = [
    "RAGAS_AP_EPS",
    "ContextPrecision",
    "PrecisionMode",
    "context_precision_score",
    "precision_reason",
    "resolve_mode",
    "vote_layout",
]

PrecisionMode = Literal["reference", "response", "auto"]
"""What the contexts are judged useful for: the reference, the response, or the reference when present."""

RAGAS_AP_EPS = 1e-10
"""RAGAS's denominator epsilon for average precision."""


def context_precision_score(verdicts: Sequence[float], *, eps: float = RAGAS_AP_EPS) -> float:
    """Average precision of usefulness verdicts in retrieval order (RAGAS's formula and epsilon).

    Args:
        verdicts: ``float[N]``, v_k in {0, 1} (graded values in [0, 1] from the local judge are
            used as weights), rank 1 first.
        eps: denominator epsilon; RAGAS's 1e-10 by default, 0.0 for the textbook AP.

    Returns:
        AP in [0, 1], higher is better; 0.0 when nothing is useful or there are no contexts
        (RAGAS legacy).
    """
    return average_precision(verdicts, eps=eps)


def _voted(lists: Sequence[Sequence[float]]) -> float:
    return context_precision_score(lists[0])


def vote_layout(details: Mapping[str, Any]) -> VoteLayout | None:
    """The per-context verdicts one judge's score votes with (``claim-vote``): keys ``context 1`` .. ``context N``.

    Args:
        details: the judge's :attr:`~ragqa.schema.MetricScore.details` (``verdicts``: ``float[N]``
            in retrieval order).

    Returns:
        One list of N verdicts and :func:`context_precision_score` of the voted list (the
        contexts are the sample's own, so nothing is extracted); ``None`` without verdicts.
    """
    verdicts = details.get("verdicts")
    if not isinstance(verdicts, list):
        return None
    keys = [f"context {k}" for k in range(1, len(verdicts) + 1)]
    return [(keys, [float(v) for v in verdicts])], _voted


def resolve_mode(mode: PrecisionMode, sample: Sample) -> Literal["reference", "response"]:
    """The effective mode: ``auto`` is ``reference`` when the sample has a non-blank reference."""
    if mode != "auto":
        return mode
    return "reference" if sample.reference is not None and sample.reference.strip() else "response"


def precision_reason(verdicts: Sequence[float], used: str) -> str:
    """The reason of a context precision score, true to the verdicts it was computed from.

    With 0/1 verdicts (LLM judges): ``"2 of 3 contexts useful for the reference, at ranks 1, 3"``.
    With graded verdicts (the local judge's usefulness in [0, 1]) a count of values >= 0.5 would
    contradict the score (``1 of 3 contexts useful`` beside 0.83), so the graded usefulness of
    every context is listed in rank order: ``"usefulness (graded) of the 3 contexts for the
    reference, by rank: 0.91, 0.40, 0.12"``.

    Args:
        verdicts: ``float[N]`` in [0, 1], in retrieval order.
        used: the mode used, ``reference`` or ``response``.

    Returns:
        The reason.
    """
    if all(v in (0.0, 1.0) for v in verdicts):
        useful = [i for i, v in enumerate(verdicts, start=1) if v == 1.0]
        return f"{len(useful)} of {len(verdicts)} contexts useful for the {used}" + (
            f", at ranks {', '.join(map(str, useful))}" if useful else ""
        )
    ranked = ", ".join(f"{v:.2f}" for v in verdicts)
    return f"usefulness (graded) of the {len(verdicts)} contexts for the {used}, by rank: {ranked}"


class ContextPrecision(Metric):
    """Ranking quality of the retrieved contexts: useful contexts should come first.

    - Fields: ``user_input``, ``retrieved_contexts`` (or ``context_chunks``), and ``reference``
      (mode ``reference``), ``response`` (mode ``response``) or either (mode ``auto``: the
      reference when present, as spring-ai-ragas).
    - Range 0..1, higher is better. RAGAS-compatible: all useful gives ``K/(K+1e-10)``.
    - Judge calls per sample: N (one per context, all concurrent) with the ``ragas`` call plan, 1
      with the ``batched`` plan (every context in one call).
    - Never NaN (no useful context gives 0.0).
    - Under ``claim-vote`` the panel votes on each context's usefulness and the average precision
      runs on the voted verdicts (:func:`vote_layout`; nothing is extracted, every judge makes
      its own calls).
    - Raises :class:`~ragqa.errors.JudgeError` when a usefulness call fails.

    Args:
        mode: ``auto`` (default), ``reference`` or ``response``. The result key is
            ``context_precision`` for ``auto`` and ``context_precision(mode=<mode>)`` otherwise.
    """

    name: ClassVar[str] = "context_precision"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts")
    description: ClassVar[str] = "Average precision of the contexts judged useful for the reference (or response)"
    calls_per_sample: ClassVar[str] = "N (one per context, concurrent)"
    batched_calls_per_sample: ClassVar[str | None] = "1 (every context in one call)"
    default_threshold: ClassVar[float | None] = 0.7
    claim_vote: ClaimVote | None = ClaimVote(
        extraction_prompt=None, steps=(), lists=(("", "verdicts"),), formula=_voted, layout=vote_layout
    )

    def __init__(self, mode: PrecisionMode = "auto") -> None:
        """Create the metric.

        Raises:
            ValueError: for an unknown mode.
        """
        if mode not in get_args(PrecisionMode):
            raise ValueError(f"mode must be 'reference', 'response' or 'auto', not {mode!r}")
        self.mode: PrecisionMode = mode

    @property
    def key(self) -> str:
        """``context_precision``, or ``context_precision(mode=<mode>)`` for an explicit mode."""
        return self.name if self.mode == "auto" else f"{self.name}(mode={self.mode})"

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """One call per context (``N``) with the ``ragas`` plan, 1 with ``batched`` (see :meth:`calls_formula`)."""
        return 1 if plan == "batched" else len(sample.contexts())

    def validate(self, sample: Sample) -> None:
        """Check the common fields, then the answer field the mode needs.

        Raises:
            SampleError: naming the missing field; in ``auto`` mode when neither ``reference``
                nor ``response`` is present.
        """
        super().validate(sample)
        needed = resolve_mode(self.mode, sample)
        value = getattr(sample, needed)
        if value is None or not value.strip():
            hint = "add a 'reference' or a 'response'" if self.mode == "auto" else f"add a {needed!r} value"
            raise SampleError(
                f"missing or empty; {hint} (context precision judges each context against it)",
                sample_id=sample.label,
                field=needed,
                metric=self.key,
            )

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        used = resolve_mode(self.mode, sample)
        answer = (sample.reference if used == "reference" else sample.response) or ""
        contexts = sample.contexts()
        fallback: list[str] = []
        outputs: Sequence[Judged]
        if context.call_plan == "batched":
            batch = await judge_usefulness(judge, sample.user_input or "", answer, contexts, context.language)
            outputs, fallback = batch.items, batch.fallback
        else:
            outputs = await asyncio.gather(
                *(
                    judge.ask(
                        CONTEXT_USEFULNESS,
                        ContextUsefulnessInput(question=sample.user_input or "", context=c, answer=answer),
                        language=context.language,
                    )
                    for c in contexts
                )
            )
        verdicts = [o.value for o in outputs]
        value = context_precision_score(verdicts)
        reason = precision_reason(verdicts, used)
        details: dict[str, object] = {"mode": used, "verdicts": verdicts, "reasons": [o.reason for o in outputs]}
        if fallback:
            details["batched_fallback"] = fallback
        return MetricScore(value=value, reason=reason, details=details)
