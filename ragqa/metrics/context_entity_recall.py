"""Context entity recall: the share of the reference's entities that the retrieved contexts mention.

RAGAS legacy ``ContextEntityRecall`` (``metrics/_context_entities_recall.py``): entities of the
reference and of the contexts joined by newlines (two calls), then::

    score = |set(context_entities) & set(reference_entities)| / (len(reference_entities) + 1e-8)

Matching is exact and case-sensitive, as in RAGAS. [DIFF] The denominator is the length of the
reference entity *list* (duplicates count), as RAGAS legacy (``evaluate()``); RAGAS collections
divide by the *set* size, and spring-ai-ragas also lower-cases and trims entities and divides by
the set size without epsilon. With a judge that lists each entity once (as the prompt asks) the
three agree up to the epsilon.

Call plans: ``ragas`` asks the two extractions as two calls; ``batched`` asks both texts in one
:data:`~ragqa.prompts.entities_batch.ENTITIES_BATCH` call (each text's entities on its own, same
maths).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from ragqa.judges.base import Judge
from ragqa.metrics._batched import extract_entity_lists
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
    - Judge calls per sample: 2 (reference entities, context entities), concurrent, with the
      ``ragas`` call plan; 1 with ``batched`` (both texts in one call).
    - Never NaN: no reference entity gives 0.0 (RAGAS).
    - Raises :class:`~ragqa.errors.JudgeError` when a call fails (the local judge may raise
      :class:`~ragqa.errors.JudgeUnsupported`).
    """

    name: ClassVar[str] = "context_entity_recall"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("reference", "retrieved_contexts")
    description: ClassVar[str] = "Share of reference entities that also appear in the retrieved contexts"
    calls_per_sample: ClassVar[str] = "2 (concurrent)"
    batched_calls_per_sample: ClassVar[str | None] = "1 (both texts in one call)"
    default_threshold: ClassVar[float | None] = 0.7

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        texts = [sample.reference or "", "\n".join(sample.contexts())]
        fallback: list[str] = []
        if context.call_plan == "batched":
            batch = await extract_entity_lists(judge, texts, context.language)
            ref_entities, ctx_entities = batch.items
            fallback = batch.fallback
        else:
            ref, ctx = await asyncio.gather(
                *(judge.ask(ENTITIES, EntitiesInput(text=t), language=context.language) for t in texts)
            )
            ref_entities, ctx_entities = list(ref.entities), list(ctx.entities)
        value = entity_recall_score(ref_entities, ctx_entities)
        common = set(ctx_entities) & set(ref_entities)
        missing = [e for e in dict.fromkeys(ref_entities) if e not in common]
        if not ref_entities:
            reason = "the reference has no entity"
        else:
            reason = f"{len(common)} of {len(set(ref_entities))} reference entities found in the contexts"
            if missing:
                reason += f"; missing: {', '.join(missing)}"
        details: dict[str, object] = {
            "reference_entities": ref_entities,
            "context_entities": ctx_entities,
            "common_entities": sorted(common),
        }
        if fallback:
            details["batched_fallback"] = fallback
        return MetricScore(value=value, reason=reason, details=details)
