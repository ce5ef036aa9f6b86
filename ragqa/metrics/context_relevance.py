"""Context relevance (NVIDIA-style): whether the retrieved contexts can answer the question, by two templates.

RAGAS ``ContextRelevance`` (``metrics/collections/context_relevance/metric.py``; legacy
``nv_context_relevance``): the contexts are joined by newlines; the judge rates 0 (not relevant),
1 (partially) or 2 (relevant) with two differently worded templates; each rating is divided by 2
and the two are averaged. A graded judge (the offline local judge) also sends a finer rating on
the same 0..2 scale, which the same formula averages (so its scores rank finely). Shortcuts with
no judge call, as RAGAS: 0.0 when the question or the joined contexts are blank, when they are
equal, or when the joined contexts are contained in the question.
"""

from __future__ import annotations

from typing import ClassVar

from ragqa.judges.base import Judge
from ragqa.metrics._rating import DEFAULT_MAX_RETRIES, ask_templates, average_ratings, check_max_retries, rated_score
from ragqa.metrics.base import CallPlan, Direction, Metric, MetricContext
from ragqa.prompts.nvidia import CONTEXT_RELEVANCE_1, CONTEXT_RELEVANCE_2, ContextRelevanceInput
from ragqa.schema import MetricScore, Sample

__all__ = ["RELEVANCE_RATINGS", "ContextRelevance", "context_relevance_score", "context_relevance_shortcut"]

RELEVANCE_RATINGS = frozenset({0, 1, 2})
"""The valid ratings of the 0/1/2 templates (context relevance and response groundedness)."""


def context_relevance_score(rating_1: float | None, rating_2: float | None) -> float:
    """Context relevance from the two templates' ratings.

    Args:
        rating_1: template 1's rating in {0, 1, 2} (a graded judge's in [0, 2]), or ``None`` when
            it gave no valid rating.
        rating_2: template 2's rating, likewise.

    Returns:
        ``(rating_1 / 2 + rating_2 / 2) / 2`` in [0, 1] (higher is better); the one scaled rating
        when the other is ``None``; NaN when both are ``None``.
    """
    nan = float("nan")
    return average_ratings(nan if rating_1 is None else rating_1 / 2, nan if rating_2 is None else rating_2 / 2)


def context_relevance_shortcut(question: str, contexts: list[str]) -> str | None:
    """Why RAGAS scores 0.0 without asking, or ``None`` when the judge must be asked.

    Returns:
        A reason when the question or the joined contexts are blank, when they are equal after
        stripping, or when the joined contexts are contained in the question; else ``None``.
    """
    q, c = question.strip(), "\n".join(contexts).strip()
    if not q or not c:
        return "the question or the contexts are blank"
    if q == c:
        return "the contexts are the question itself"
    if c in q:
        return "the contexts are contained in the question"
    return None


class ContextRelevance(Metric):
    """How relevant the retrieved contexts are to the question, rated by two templates (NVIDIA / RAGAS).

    - Fields: ``user_input``, ``retrieved_contexts`` (or ``context_chunks``).
    - Range 0..1, higher is better: in steps of 0.25 from integer ratings (LLM judges),
      continuous from a graded judge's ratings (the offline local judge sends a graded rating
      in [0, 2] with each integer one; the same formula averages them).
    - Judge calls per sample: 2 (0 on a shortcut; more only when a rating is invalid, at most
      ``2 * max_retries``).
    - 0.0 without a call on RAGAS's shortcuts (see :func:`context_relevance_shortcut`); NaN
      when neither template gives a valid rating.
    - Raises :class:`~ragqa.errors.JudgeError` when a call fails other than by an unparseable answer.

    Args:
        max_retries: attempts per template while its rating is invalid (RAGAS default 5, >= 1).
    """

    name: ClassVar[str] = "context_relevance"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "retrieved_contexts")
    description: ClassVar[str] = "Relevance of the retrieved contexts to the question, two rating templates averaged"
    calls_per_sample: ClassVar[str] = "2 (0 on a shortcut; more only when a rating is invalid)"
    default_threshold: ClassVar[float | None] = 0.5

    def __init__(self, *, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        """Create the metric (see the class docstring for ``max_retries``)."""
        self.max_retries = check_max_retries(max_retries)

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """2, or 0 when a shortcut applies."""
        return 0 if context_relevance_shortcut(sample.user_input or "", sample.contexts()) else 2

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        question, contexts = sample.user_input or "", sample.contexts()
        shortcut = context_relevance_shortcut(question, contexts)
        if shortcut is not None:
            return MetricScore(value=0.0, reason=f"{shortcut}: 0 without a judge call", details={"shortcut": shortcut})
        joined = "\n".join(contexts)

        def make_input(n: int) -> ContextRelevanceInput:
            return ContextRelevanceInput(user_input=question, context=joined, attempt=n)

        ratings = await ask_templates(
            judge,
            [(CONTEXT_RELEVANCE_1, make_input), (CONTEXT_RELEVANCE_2, make_input)],
            allowed=RELEVANCE_RATINGS,
            scale=2,
            max_retries=self.max_retries,
            language=context.language,
        )
        # context_relevance_score's formula on each template's scaled (graded, if sent) rating
        return rated_score(average_ratings(ratings[0].value, ratings[1].value), ratings)
