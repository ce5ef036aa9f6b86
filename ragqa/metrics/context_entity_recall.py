"""Context entity recall: the share of the reference's entities that the retrieved contexts mention.

RAGAS legacy ``ContextEntityRecall`` (``metrics/_context_entities_recall.py``): entities of the
reference and of the contexts joined by newlines (two calls), then::

    score = |set(context_entities) & set(reference_entities)| / (len(reference_entities) + 1e-8)

Matching is exact and case-sensitive, as in RAGAS. [DIFF] The denominator is the length of the
reference entity *list* (duplicates count), as RAGAS legacy (``evaluate()``); RAGAS collections
divide by the *set* size, and spring-ai-ragas also lower-cases and trims entities and divides by
the set size without epsilon. With a judge that lists each entity once (as the prompt asks) the
three agree up to the epsilon.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from ragqa.judges.base import Judge
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.prompts.entities import ENTITIES, EntitiesInput
from ragqa.schema import MetricScore, Sample

__all__ = ["RAGAS_ENTITY_EPS", "ContextEntityRecall", "entity_recall_score"]

RAGAS_ENTITY_EPS = 1e-8
"""RAGAS's denominator epsilon for entity recall."""


def entity_recall_score(
    reference_entities: Sequence[str], context_entities: Sequence[str], *, eps: float = RAGAS_ENTITY_EPS
) -> float:
    """Recall of the reference's entities in the contexts' entities (RAGAS legacy formula).

    Args:
        reference_entities: entities of the reference, as returned (duplicates count in the
            denominator).
        context_entities: entities of the joined contexts.
        eps: denominator epsilon (RAGAS: 1e-8).

    Returns:
        ``|set(ctx) & set(ref)| / (len(ref) + eps)`` in [0, 1), higher is better; 0.0 when the
        reference has no entity (0 / 1e-8).
    """
    common = set(context_entities) & set(reference_entities)
    return len(common) / (len(reference_entities) + eps)


class ContextEntityRecall(Metric):
    """Whether the retrieved contexts mention the people, places, dates... of the reference.

    - Fields: ``reference``, ``retrieved_contexts`` (or ``context_chunks``).
    - Range 0..1, higher is better (never exactly 1: ``K/(K+1e-8)``).
    - Judge calls per sample: 2 (reference entities, context entities), concurrent.
    - Never NaN: no reference entity gives 0.0 (RAGAS).
    - Raises :class:`~ragqa.errors.JudgeError` when a call fails (the local judge may raise
      :class:`~ragqa.errors.JudgeUnsupported`).
    """

    name: ClassVar[str] = "context_entity_recall"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("reference", "retrieved_contexts")
    description: ClassVar[str] = "Share of reference entities that also appear in the retrieved contexts"
    calls_per_sample: ClassVar[str] = "2 (concurrent)"
    default_threshold: ClassVar[float | None] = 0.7

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        ref, ctx = await asyncio.gather(
            judge.ask(ENTITIES, EntitiesInput(text=sample.reference or ""), language=context.language),
            judge.ask(ENTITIES, EntitiesInput(text="\n".join(sample.contexts())), language=context.language),
        )
        value = entity_recall_score(ref.entities, ctx.entities)
        common = set(ctx.entities) & set(ref.entities)
        missing = [e for e in dict.fromkeys(ref.entities) if e not in common]
        if not ref.entities:
            reason = "the reference has no entity"
        else:
            reason = f"{len(common)} of {len(set(ref.entities))} reference entities found in the contexts"
            if missing:
                reason += f"; missing: {', '.join(missing)}"
        return MetricScore(
            value=value,
            reason=reason,
            details={
                "reference_entities": list(ref.entities),
                "context_entities": list(ctx.entities),
                "common_entities": sorted(common),
            },
        )
