"""Statement-level response relevancy: the share of the response's statements relevant to the question.

The LLM-based "Response Relevancy" of the RAG generator metrics write-up (DeepEval's answer
relevancy has the same shape): decompose the response into statements (the same call as
faithfulness, so it is shared), then one call judging each statement's relevance to the
question::

    score = relevant statements / statements
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from ragqa._math import count_of, mean_or_nan
from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Judge
from ragqa.metrics._steps import RESPONSE_STATEMENTS, extract_statements
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.prompts.statement_relevance import STATEMENT_RELEVANCE, StatementRelevanceInput
from ragqa.schema import MetricScore, Sample

__all__ = ["ResponseRelevancyLLM", "statement_relevancy_score"]


def statement_relevancy_score(verdicts: Sequence[float]) -> float:
    """Share of relevant statements.

    Args:
        verdicts: ``float[A]``, one relevance verdict per response statement (0/1 for LLM
            judges).

    Returns:
        ``sum(verdicts) / A`` in [0, 1], higher is better; NaN when there is no statement.
    """
    return mean_or_nan(verdicts)


class ResponseRelevancyLLM(Metric):
    """Share of the response's statements that are relevant to the question (no embeddings).

    - Fields: ``user_input``, ``response``.
    - Range 0..1, higher is better.
    - Judge calls per sample: 2 (1 when the response has no statement); the statements call is
      shared with faithfulness, hallucination and noise sensitivity.
    - NaN when the response makes no statement.
    - Raises :class:`~ragqa.errors.JudgeOutputError` when the verdict count differs from the
      statement count, other :class:`~ragqa.errors.JudgeError` on failures.
    """

    name: ClassVar[str] = "response_relevancy_llm"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response")
    description: ClassVar[str] = "Share of response statements relevant to the question (LLM verdicts)"
    calls_per_sample: ClassVar[str] = "2 (1 if no statements); statements shared with faithfulness"
    default_threshold: ClassVar[float | None] = 0.7

    def shared_steps(self, sample: Sample) -> frozenset[str]:
        """The response's statements, shared with other metrics."""
        return frozenset({RESPONSE_STATEMENTS})

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        question = sample.user_input or ""
        statements = await extract_statements(judge, question, sample.response or "", context.language)
        if not statements:
            return MetricScore(value=math.nan, reason="the response makes no statement", details={"statements": []})
        out = await judge.ask(
            STATEMENT_RELEVANCE,
            StatementRelevanceInput(question=question, statements=statements),
            language=context.language,
        )
        if len(out.verdicts) != len(statements):
            raise JudgeOutputError(
                f"judge returned {len(out.verdicts)} verdicts for {len(statements)} statements",
                judge_id=judge.id,
                step=STATEMENT_RELEVANCE.name,
                raw=out.model_dump_json(),
            )
        values = [v.value for v in out.verdicts]
        value = statement_relevancy_score(values)
        off_topic = [s for s, v in zip(statements, values, strict=True) if v < 0.5]
        reason = f"{count_of(values)} of {len(statements)} statements relevant to the question"
        if off_topic:
            reason += f"; off-topic: {'; '.join(off_topic)}"
        return MetricScore(
            value=value,
            reason=reason,
            details={"statements": statements, "verdicts": values, "reasons": [v.reason for v in out.verdicts]},
        )
