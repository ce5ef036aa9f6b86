"""Context recall: the share of the reference's sentences the retrieved contexts support.

RAGAS ``LLMContextRecall`` / ``ContextRecall`` (``metrics/_context_recall.py``): one call with the
contexts joined by newlines and the reference; the judge splits the reference into sentences and
classifies each as attributable (1) or not (0); score = attributed / classified.

Under ``claim-vote`` (:attr:`~ragqa.metrics.base.MetricContext.claim_vote`) the split and the
classification are asked apart, so the panel can share the split: the reference's statements
(the statements prompt, made once per sample by the panel's extractor) and each judge's verdicts
on them against the joined contexts (the NLI prompt that faithfulness asks, "can the statement be
inferred from the context", RAGAS's attribution question). Each judge then makes 2 calls, of which
the panel shares one. The local judge answers both ways with the same numbers (its attribution is
the support of each of the reference's statements); an LLM judge may split the reference
differently from how it splits it inside the attribution call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from ragqa._math import count_of, mean_or_nan
from ragqa.judges.base import Judge
from ragqa.metrics._steps import REFERENCE_STATEMENTS, extract_statements, judge_statements
from ragqa.metrics.base import CallPlan, ClaimVote, Direction, Metric, MetricContext
from ragqa.prompts.attribution import ATTRIBUTION, AttributionInput
from ragqa.prompts.statements import STATEMENTS
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
    - Judge calls per sample: 1 (2 under ``claim-vote``, the first made once for the panel; see
      the module docstring).
    - NaN when the judge returns no classification (an empty reference breakdown).
    - Raises :class:`~ragqa.errors.JudgeError` when the call fails.
    """

    name: ClassVar[str] = "context_recall"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "reference", "retrieved_contexts")
    description: ClassVar[str] = "Share of reference sentences attributable to the retrieved contexts"
    calls_per_sample: ClassVar[str] = "1"
    default_threshold: ClassVar[float | None] = 0.7
    claim_vote: ClaimVote | None = ClaimVote(
        extraction_prompt=STATEMENTS.name,
        steps=(REFERENCE_STATEMENTS,),
        lists=(("statements", "attributed"),),
        formula=lambda lists: context_recall_score(lists[0]),
    )

    def vote_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """2 under claim-vote: the reference's statements (shared by the panel) and one NLI call."""
        return 2

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        if context.claim_vote:
            return await self._score_split(sample, judge, context)
        out = await judge.ask(
            ATTRIBUTION,
            AttributionInput(
                question=sample.user_input or "", context="\n".join(sample.contexts()), answer=sample.reference or ""
            ),
            language=context.language,
        )
        return _scored(
            [c.statement for c in out.classifications],
            [c.value for c in out.classifications],
            [c.reason for c in out.classifications],
        )

    async def _score_split(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score with the split and the classification asked apart (claim-vote, see the module docstring)."""
        lang = context.language
        statements = await extract_statements(judge, sample.user_input or "", sample.reference or "", lang)
        verdicts = await judge_statements(judge, "\n".join(sample.contexts()), statements, lang)
        # the shared statements, not the judge's echo of them, key the vote
        return _scored(statements, [v.value for v in verdicts], [v.reason for v in verdicts])


def _scored(statements: Sequence[str], values: Sequence[float], reasons: Sequence[str]) -> MetricScore:
    """The score, reason and details of one classification per reference sentence."""
    value = context_recall_score(values)
    missing = [s for s, v in zip(statements, values, strict=True) if v < 0.5]
    if math.isnan(value):
        reason = "the judge returned no classification of the reference"
    else:
        reason = f"{count_of(values)} of {len(values)} reference sentences attributed to the contexts"
        if missing:
            reason += f"; not found: {'; '.join(missing)}"
    return MetricScore(
        value=value,
        reason=reason,
        details={"statements": list(statements), "attributed": list(values), "reasons": list(reasons)},
    )
