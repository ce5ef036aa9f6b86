"""Response groundedness (NVIDIA-style): how well the retrieved contexts support the response, by two templates.

RAGAS ``ResponseGroundedness`` (legacy ``nv_response_groundedness`` in ``metrics/_nv_metrics.py``;
collections ``response_groundedness/metric.py``): the contexts are joined by newlines; the judge
rates the response (the "assertion") 0 (not supported), 1 (partially) or 2 (fully) with two
differently worded templates; each rating is divided by 2 and the two are averaged. Shortcuts with
no judge call: 0.0 when the response or the joined contexts are blank; 1.0 when the stripped
response equals the joined contexts or is contained in them (legacy RAGAS and spring-ai-ragas; the
collections rewrite dropped this shortcut).
"""

from __future__ import annotations

from typing import ClassVar

from ragqa.judges.base import Judge
from ragqa.metrics._rating import DEFAULT_MAX_RETRIES, ask_templates, average_ratings, check_max_retries, rated_score
from ragqa.metrics.base import CallPlan, Direction, Metric, MetricContext
from ragqa.metrics.context_relevance import RELEVANCE_RATINGS
from ragqa.prompts.nvidia import RESPONSE_GROUNDEDNESS_1, RESPONSE_GROUNDEDNESS_2, ResponseGroundednessInput
from ragqa.schema import MetricScore, Sample

__all__ = ["ResponseGroundedness", "response_groundedness_score", "response_groundedness_shortcut"]


def response_groundedness_score(rating_1: int | None, rating_2: int | None) -> float:
    """Response groundedness from the two templates' ratings.

    Args:
        rating_1: template 1's rating in {0, 1, 2}, or ``None`` when it gave no valid rating.
        rating_2: template 2's rating, likewise.

    Returns:
        ``(rating_1 / 2 + rating_2 / 2) / 2`` in [0, 1] (higher is better); the one scaled rating
        when the other is ``None``; NaN when both are ``None``.
    """
    nan = float("nan")
    return average_ratings(nan if rating_1 is None else rating_1 / 2, nan if rating_2 is None else rating_2 / 2)


def response_groundedness_shortcut(response: str, contexts: list[str]) -> tuple[float, str] | None:
    """RAGAS's (legacy) score without a judge call, or ``None`` when the judge must be asked.

    Returns:
        ``(0.0, reason)`` when the response or the joined contexts are blank; ``(1.0, reason)``
        when the stripped response equals the stripped joined contexts or is a substring of them
        (case-sensitive, as RAGAS); else ``None``.
    """
    r, c = response.strip(), "\n".join(contexts).strip()
    if not r or not c:
        return 0.0, "the response or the contexts are blank"
    if r == c:
        return 1.0, "the response is the contexts themselves"
    if r in c:
        return 1.0, "the response is quoted verbatim from the contexts"
    return None


class ResponseGroundedness(Metric):
    """How well the retrieved contexts support the response, rated by two templates (NVIDIA / RAGAS).

    - Fields: ``response``, ``retrieved_contexts`` (or ``context_chunks``).
    - Range 0..1 in steps of 0.25, higher is better.
    - Judge calls per sample: 2 (0 on a shortcut; more only when a rating is invalid, at most
      ``2 * max_retries``).
    - 0.0 or 1.0 without a call on RAGAS's shortcuts (see :func:`response_groundedness_shortcut`);
      NaN when neither template gives a valid rating.
    - Raises :class:`~ragqa.errors.JudgeError` when a call fails other than by an unparseable answer.

    Args:
        max_retries: attempts per template while its rating is invalid (RAGAS default 5, >= 1).
    """

    name: ClassVar[str] = "response_groundedness"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("response", "retrieved_contexts")
    description: ClassVar[str] = "Support of the response by the retrieved contexts, two rating templates averaged"
    calls_per_sample: ClassVar[str] = "2 (0 on a shortcut; more only when a rating is invalid)"
    default_threshold: ClassVar[float | None] = 0.5

    def __init__(self, *, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        """Create the metric (see the class docstring for ``max_retries``)."""
        self.max_retries = check_max_retries(max_retries)

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """2, or 0 when a shortcut applies."""
        return 0 if response_groundedness_shortcut(sample.response or "", sample.contexts()) else 2

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        response, contexts = sample.response or "", sample.contexts()
        shortcut = response_groundedness_shortcut(response, contexts)
        if shortcut is not None:
            value, why = shortcut
            return MetricScore(value=value, reason=f"{why}: {value:g} without a judge call", details={"shortcut": why})
        joined = "\n".join(contexts)

        def make_input(n: int) -> ResponseGroundednessInput:
            return ResponseGroundednessInput(response=response, context=joined, attempt=n)

        ratings = await ask_templates(
            judge,
            [(RESPONSE_GROUNDEDNESS_1, make_input), (RESPONSE_GROUNDEDNESS_2, make_input)],
            allowed=RELEVANCE_RATINGS,
            scale=2,
            max_retries=self.max_retries,
            language=context.language,
        )
        return rated_score(response_groundedness_score(ratings[0].rating, ratings[1].rating), ratings)
