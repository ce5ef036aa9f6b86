"""Hallucination: the share of the response's statements the retrieved contexts do not support.

The complement of faithfulness over the same steps ("RAG generator metrics" write-up;
spring-ai-ragas): ``1 - faithfulness``. Lower is better. Shares its judge calls with
:mod:`ragqa.metrics.faithfulness`, so running both costs no extra call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from ragqa.judges.base import Judge
from ragqa.metrics._steps import RESPONSE_NLI, RESPONSE_STATEMENTS
from ragqa.metrics.base import ClaimVote, Direction, Metric, MetricContext
from ragqa.metrics.faithfulness import explain, faithfulness_score, supported_statements
from ragqa.prompts.statements import STATEMENTS
from ragqa.schema import MetricScore, Sample

__all__ = ["Hallucination", "hallucination_score"]


def hallucination_score(verdicts: Sequence[float]) -> float:
    """Share of unsupported statements.

    Args:
        verdicts: one value per statement in [0, 1] (LLM judges: 0 or 1).

    Returns:
        ``1 - mean(verdicts)`` in [0, 1]; NaN when there are no statements. Lower is better.
    """
    faithful = faithfulness_score(verdicts)
    return faithful if math.isnan(faithful) else 1.0 - faithful


class Hallucination(Metric):
    """Hallucination rate of the response against the retrieved contexts.

    - Fields: ``user_input``, ``response``, ``retrieved_contexts`` (or ``context_chunks``).
    - Range 0..1, lower is better (0 = nothing unsupported).
    - Judge calls per sample: 2 (1 when no statements), shared with faithfulness.
    - NaN when the response makes no statement.
    """

    name: ClassVar[str] = "hallucination"
    direction: ClassVar[Direction] = "lower"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response", "retrieved_contexts")
    description: ClassVar[str] = "Share of response statements not supported by the retrieved contexts"
    calls_per_sample: ClassVar[str] = "2 (1 if no statements); shared with faithfulness"
    default_threshold: ClassVar[float | None] = 0.2
    claim_vote: ClaimVote | None = ClaimVote(
        extraction_prompt=STATEMENTS.name,
        steps=(RESPONSE_STATEMENTS,),
        lists=(("statements", "verdicts"),),
        formula=lambda lists: hallucination_score(lists[0]),
    )

    def shared_steps(self, sample: Sample) -> frozenset[str]:
        """The response's statements and their verdicts against the contexts, shared with other metrics."""
        return frozenset({RESPONSE_STATEMENTS, RESPONSE_NLI})

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        statements, verdicts = await supported_statements(sample, judge, context)
        reason, details = explain(statements, verdicts, unsupported_first=True)
        return MetricScore(value=hallucination_score([v.value for v in verdicts]), reason=reason, details=details)
