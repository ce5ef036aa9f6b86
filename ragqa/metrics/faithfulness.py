"""Faithfulness: the share of the response's statements that the retrieved contexts support.

RAGAS ``Faithfulness`` (``metrics/_faithfulness.py``): statements = decompose(user_input,
response); verdicts = NLI(retrieved_contexts joined by newlines, statements) in one call; score =
supported / judged. No statements -> NaN (no second call).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from ragqa._math import count_of, mean_or_nan
from ragqa.judges.base import Judge
from ragqa.metrics._steps import RESPONSE_NLI, RESPONSE_STATEMENTS, extract_statements, judge_statements
from ragqa.metrics.base import ClaimVote, Direction, Metric, MetricContext
from ragqa.prompts.nli import StatementVerdict
from ragqa.prompts.statements import STATEMENTS
from ragqa.schema import MetricScore, Sample

__all__ = ["Faithfulness", "explain", "faithfulness_score", "supported_statements"]


def faithfulness_score(verdicts: Sequence[float]) -> float:
    """Share of supported statements.

    Args:
        verdicts: one value per statement in [0, 1] (LLM judges: 0 or 1).

    Returns:
        ``sum(verdicts) / len(verdicts)`` in [0, 1]; NaN when there are no statements.
        Higher is better.
    """
    return mean_or_nan(verdicts)


async def supported_statements(
    sample: Sample, judge: Judge, context: MetricContext
) -> tuple[list[str], list[StatementVerdict]]:
    """The step pair faithfulness and hallucination share: statements, then their verdicts.

    Returns:
        ``(statements, verdicts)``, equal lengths; both empty when the response has no statement.
    """
    statements = await extract_statements(judge, sample.user_input or "", sample.response or "", context.language)
    verdicts = await judge_statements(judge, "\n".join(sample.contexts()), statements, context.language)
    return statements, verdicts


def explain(
    statements: Sequence[str], verdicts: Sequence[StatementVerdict], *, unsupported_first: bool
) -> tuple[str, dict[str, object]]:
    """The reason and the intermediate steps shared by faithfulness and hallucination.

    Args:
        statements: the response's statements.
        verdicts: one verdict per statement (same order).
        unsupported_first: word the reason as "k of n unsupported" (hallucination) instead of
            "k of n supported" (faithfulness).

    Returns:
        ``(reason, details)``; details hold ``statements``, ``verdicts`` (values in [0, 1]) and
        ``reasons``, and ``unsupported`` lists the statements with a value below 0.5.
    """
    unsupported = [s for s, v in zip(statements, verdicts, strict=True) if v.value < 0.5]
    if not statements:
        reason = "the response makes no statement"
    elif unsupported_first:
        reason = f"{count_of([1.0 - v.value for v in verdicts])} of {len(statements)} statements unsupported"
    else:
        reason = f"{count_of([v.value for v in verdicts])} of {len(statements)} statements supported"
    if unsupported:
        reason += f"; unsupported: {'; '.join(unsupported)}"
    details: dict[str, object] = {
        "statements": list(statements),
        "verdicts": [v.value for v in verdicts],
        "reasons": [v.reason for v in verdicts],
        "unsupported": unsupported,
    }
    return reason, details


class Faithfulness(Metric):
    """Faithfulness of the response to the retrieved contexts.

    - Fields: ``user_input``, ``response``, ``retrieved_contexts`` (or ``context_chunks``).
    - Range 0..1, higher is better (1 = every statement supported).
    - Judge calls per sample: 2 (1 when the response has no statements).
    - NaN when the response makes no statement.
    - Raises :class:`~ragqa.errors.JudgeError` subclasses on judge failures, including a verdict
      count that differs from the statement count.
    """

    name: ClassVar[str] = "faithfulness"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response", "retrieved_contexts")
    description: ClassVar[str] = "Share of response statements supported by the retrieved contexts"
    calls_per_sample: ClassVar[str] = "2 (1 if no statements)"
    default_threshold: ClassVar[float | None] = 0.8
    claim_vote: ClaimVote | None = ClaimVote(
        extraction_prompt=STATEMENTS.name,
        steps=(RESPONSE_STATEMENTS,),
        lists=(("statements", "verdicts"),),
        formula=lambda lists: faithfulness_score(lists[0]),
    )

    def shared_steps(self, sample: Sample) -> frozenset[str]:
        """The response's statements and their verdicts against the contexts, shared with other metrics."""
        return frozenset({RESPONSE_STATEMENTS, RESPONSE_NLI})

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        statements, verdicts = await supported_statements(sample, judge, context)
        reason, details = explain(statements, verdicts, unsupported_first=False)
        return MetricScore(value=faithfulness_score([v.value for v in verdicts]), reason=reason, details=details)
