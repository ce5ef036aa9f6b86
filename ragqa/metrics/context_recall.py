"""Context recall: the share of the reference's sentences the retrieved contexts support.

RAGAS ``LLMContextRecall`` / ``ContextRecall`` (``metrics/_context_recall.py``): one call with the
contexts joined by newlines and the reference; the judge splits the reference into sentences and
classifies each as attributable (1) or not (0); score = attributed / classified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from ragqa._math import count_of, mean_or_nan
from ragqa.judges.base import Judge
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.prompts.attribution import ATTRIBUTION, AttributionInput
from ragqa.schema import MetricScore, Sample

__all__ = ["ContextRecall", "context_recall_score"]


def context_recall_score(attributed: Sequence[float]) -> float:
    """Share of reference sentences attributed to the contexts.

    Args:
        attributed: ``float[S]``, one classification per reference sentence (0/1 for LLM
            judges; graded values from the local judge).

    Returns:
        ``sum(attributed) / S`` in [0, 1], higher is better; NaN when the judge returned no
        classification (RAGAS: NaN with a warning).
    """
    return mean_or_nan(attributed)


class ContextRecall(Metric):
    """How much of the reference the retrieved contexts cover.

    - Fields: ``user_input``, ``reference``, ``retrieved_contexts`` (or ``context_chunks``).
    - Range 0..1, higher is better.
    - Judge calls per sample: 1.
    - NaN when the judge returns no classification (an empty reference breakdown).
    - Raises :class:`~ragqa.errors.JudgeError` when the call fails.
    """

    name: ClassVar[str] = "context_recall"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "reference", "retrieved_contexts")
    description: ClassVar[str] = "Share of reference sentences attributable to the retrieved contexts"
    calls_per_sample: ClassVar[str] = "1"
    default_threshold: ClassVar[float | None] = 0.7

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        out = await judge.ask(
            ATTRIBUTION,
            AttributionInput(
                question=sample.user_input or "", context="\n".join(sample.contexts()), answer=sample.reference or ""
            ),
            language=context.language,
        )
        values = [c.value for c in out.classifications]
        value = context_recall_score(values)
        missing = [c.statement for c in out.classifications if c.value < 0.5]
        if math.isnan(value):
            reason = "the judge returned no classification of the reference"
        else:
            reason = f"{count_of(values)} of {len(values)} reference sentences attributed to the contexts"
            if missing:
                reason += f"; not found: {'; '.join(missing)}"
        return MetricScore(
            value=value,
            reason=reason,
            details={
                "statements": [c.statement for c in out.classifications],
                "attributed": values,
                "reasons": [c.reason for c in out.classifications],
            },
        )
