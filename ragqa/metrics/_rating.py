"""The NVIDIA-style rating step: one template asked until its rating is valid, and the two-template average.

RAGAS ``metrics/collections/{answer_accuracy,context_relevance,response_groundedness}/metric.py``:
``_get_judge_rating`` asks a template up to ``max_retries`` times (default 5) while the rating is
outside the template's scale or the answer cannot be parsed, and gives NaN when every attempt
failed; ``_average_scores`` averages the two templates' scaled ratings, or keeps the one that is
not NaN, or gives NaN when both are NaN.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Judge
from ragqa.prompts.base import Prompt
from ragqa.prompts.nvidia import Rating
from ragqa.schema import Language, MetricScore

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "TemplateRating",
    "ask_rating",
    "ask_templates",
    "average_ratings",
    "check_max_retries",
    "describe",
    "rated_score",
]

DEFAULT_MAX_RETRIES = 5
"""RAGAS's ``max_retries`` of the NVIDIA metrics: attempts per template, the first included."""


@dataclass
class TemplateRating:
    """What one template gave after its attempts.

    Attributes:
        template: the prompt's name (``context_relevance_1``).
        rating: the valid rating, or ``None`` when every attempt was invalid.
        scale: the top of the template's scale (2, or 4 for answer accuracy).
        invalid: what each invalid attempt returned (``"rating 7"`` or the parse error), in order.
        graded: the finer rating on the same scale, in [0, ``scale``], when the answer carried
            one (a graded judge's ``value`` differs from its integer ``rating``); else ``None``.
    """

    template: str
    rating: int | None
    scale: int
    invalid: list[str] = field(default_factory=list)
    graded: float | None = None

    @property
    def value(self) -> float:
        """The rating scaled to [0, 1], or NaN when no attempt was valid.

        ``graded / scale`` when the judge sent a graded rating (the local judge), else
        ``rating / scale``.
        """
        if self.rating is None:
            return math.nan
        return (self.rating if self.graded is None else self.graded) / self.scale

    @property
    def attempts(self) -> int:
        """Judge calls this template took (invalid ones plus the valid one)."""
        return len(self.invalid) + (0 if self.rating is None else 1)

    def details(self) -> dict[str, Any]:
        """The template's rating, scaled value, attempts, invalid answers and any graded rating, JSON-serialisable."""
        out: dict[str, Any] = {
            "rating": self.rating,
            "value": None if self.rating is None else self.value,
            "attempts": self.attempts,
            "invalid": list(self.invalid),
        }
        if self.graded is not None:
            out["graded_rating"] = self.graded
        return out


def check_max_retries(max_retries: int) -> int:
    """Validate the ``max_retries`` option.

    Raises:
        ValueError: when it is not an integer >= 1 (the registry turns it into a ConfigError).
    """
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 1:
        raise ValueError(f"max_retries must be an integer >= 1, got {max_retries!r}")
    return max_retries


async def ask_rating(
    judge: Judge,
    prompt: Prompt[Any, Any],
    make_input: Callable[[int], BaseModel],
    *,
    allowed: Collection[int],
    scale: int,
    max_retries: int,
    language: Language,
) -> TemplateRating:
    """Ask one template until it gives a rating in ``allowed``, at most ``max_retries`` times.

    Each attempt is a distinct call: ``make_input(attempt)`` puts the attempt number (1, 2, ...)
    into the input, so neither the shared-call layer nor a cache answers a retry with the invalid
    answer it is retrying.

    Args:
        judge: the judge to ask.
        prompt: one of the templates of :mod:`ragqa.prompts.nvidia`.
        make_input: builds the template's input for an attempt number.
        allowed: the valid ratings (``{0, 1, 2}`` or ``{0, 2, 4}``).
        scale: the top of the scale, the divisor of :attr:`TemplateRating.value`.
        max_retries: attempts at most (>= 1).
        language: the prompt language.

    Returns:
        The template's rating, or ``rating=None`` when every attempt gave a rating outside
        ``allowed`` or an answer the judge could not parse (RAGAS: NaN for this template). When
        the answer's ``value`` is a graded rating (the local judge's, in [0, ``scale``]) it is
        kept as :attr:`TemplateRating.graded`; a graded value outside the scale makes the attempt
        invalid.

    Raises:
        ragqa.errors.JudgeError: any failure other than an unparseable answer (timeout, HTTP,
            unsupported prompt): the judge failed, it did not rate (a difference from RAGAS,
            which turns every exception into NaN; see the metric pages).
    """
    out = TemplateRating(template=prompt.name, rating=None, scale=scale)
    for attempt in range(1, max_retries + 1):
        try:
            answer = await judge.ask(prompt, make_input(attempt), language=language)
        except JudgeOutputError as exc:
            out.invalid.append(f"unparseable: {exc}")
            continue
        if not isinstance(answer, Rating):  # every template's output model is a Rating
            raise JudgeOutputError(
                f"{prompt.name} answered {type(answer).__name__}, not a rating", judge_id=judge.id, step=prompt.name
            )
        graded = answer.value
        if answer.rating in allowed and math.isfinite(graded) and 0 <= graded <= scale:
            out.rating = answer.rating
            out.graded = None if graded == answer.rating else graded
            return out
        out.invalid.append(f"rating {answer.rating}" + ("" if graded == answer.rating else f" (graded {graded})"))
    return out


async def ask_templates(
    judge: Judge,
    asks: Sequence[tuple[Prompt[Any, Any], Callable[[int], BaseModel]]],
    *,
    allowed: Collection[int],
    scale: int,
    max_retries: int,
    language: Language,
) -> list[TemplateRating]:
    """Ask every template at once (they are independent calls), each as :func:`ask_rating` does.

    Args:
        judge: the judge to ask.
        asks: ``(template, make_input)`` per template, in the template order.
        allowed: the valid ratings, as :func:`ask_rating` (the same for every template).
        scale: the top of the scale, as :func:`ask_rating`.
        max_retries: attempts per template at most (>= 1).
        language: the prompt language.

    Returns:
        One :class:`TemplateRating` per template, in the order of ``asks``.

    Raises:
        ragqa.errors.JudgeError: as :func:`ask_rating`.
    """
    return list(
        await asyncio.gather(
            *(
                ask_rating(
                    judge,
                    prompt,
                    make_input,
                    allowed=allowed,
                    scale=scale,
                    max_retries=max_retries,
                    language=language,
                )
                for prompt, make_input in asks
            )
        )
    )


def rated_score(value: float, ratings: Sequence[TemplateRating]) -> MetricScore:
    """A two-template metric's score: ``value``, :func:`describe` as the reason, and each template's details.

    Returns:
        The :class:`~ragqa.schema.MetricScore` with ``details`` ``{"template_1": ..., "template_2": ...}``
        (:meth:`TemplateRating.details`, numbered in the order of ``ratings``).
    """
    return MetricScore(
        value=value,
        reason=describe(ratings),
        details={f"template_{i}": r.details() for i, r in enumerate(ratings, start=1)},
    )


def average_ratings(first: float, second: float) -> float:
    """RAGAS's ``_average_scores`` of the two templates' scaled ratings.

    Args:
        first: template 1's rating scaled to [0, 1], or NaN when it gave none.
        second: template 2's, likewise.

    Returns:
        ``(first + second) / 2`` when both are numbers; the one that is a number when the other
        is NaN; NaN when both are NaN. In [0, 1], higher is better.
    """
    if math.isnan(first):
        return second
    if math.isnan(second):
        return first
    return (first + second) / 2.0


def describe(ratings: Sequence[TemplateRating]) -> str:
    """A reason listing each template's rating (``template 1 rated 2/2; template 2 gave no valid rating ...``).

    A graded rating is shown with two decimals and marked: ``template 1 rated 1.63/2 (graded)``.
    """
    parts = []
    for i, r in enumerate(ratings, start=1):
        if r.rating is None:
            parts.append(f"template {i} gave no valid rating in {r.attempts} attempt(s) ({'; '.join(r.invalid)})")
        else:
            retried = f" after {len(r.invalid)} invalid answer(s)" if r.invalid else ""
            rated = f"{r.rating}/{r.scale}" if r.graded is None else f"{r.graded:.2f}/{r.scale} (graded)"
            parts.append(f"template {i} rated {rated}{retried}")
    return "; ".join(parts)
