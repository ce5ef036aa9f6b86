"""The NVIDIA-style rating step: one template asked until its rating is valid, and the two-template average.

RAGAS ``metrics/collections/{answer_accuracy,context_relevance,response_groundedness}/metric.py``:
``_get_judge_rating`` asks a template up to ``max_retries`` times (default 5) while the rating is
outside the template's scale or the answer cannot be parsed, and gives NaN when every attempt
failed; ``_average_scores`` averages the two templates' scaled ratings, or keeps the one that is
not NaN, or gives NaN when both are NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Judge
from ragqa.prompts.base import Prompt
from ragqa.prompts.nvidia import Rating
from ragqa.schema import Language

__all__ = ["DEFAULT_MAX_RETRIES", "TemplateRating", "ask_rating", "average_ratings", "check_max_retries", "describe"]

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
    """

    template: str
    rating: int | None
    scale: int
    invalid: list[str] = field(default_factory=list)

    @property
    def value(self) -> float:
        """The rating scaled to [0, 1] (``rating / scale``), or NaN when no attempt was valid."""
        return math.nan if self.rating is None else self.rating / self.scale

    @property
    def attempts(self) -> int:
        """Judge calls this template took (invalid ones plus the valid one)."""
        return len(self.invalid) + (0 if self.rating is None else 1)

    def details(self) -> dict[str, Any]:
        """The template's rating, scaled value, attempts and invalid answers, JSON-serialisable."""
        return {
            "rating": self.rating,
            "value": None if self.rating is None else self.value,
            "attempts": self.attempts,
            "invalid": list(self.invalid),
        }


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
        ``allowed`` or an answer the judge could not parse (RAGAS: NaN for this template).

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
        if answer.rating in allowed:
            out.rating = answer.rating
            return out
        out.invalid.append(f"rating {answer.rating}")
    return out


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


def describe(ratings: list[TemplateRating]) -> str:
    """A reason listing each template's rating (``template 1 rated 2/2; template 2 gave no valid rating ...``)."""
    parts = []
    for i, r in enumerate(ratings, start=1):
        if r.rating is None:
            parts.append(f"template {i} gave no valid rating in {r.attempts} attempt(s) ({'; '.join(r.invalid)})")
        else:
            retried = f" after {len(r.invalid)} invalid answer(s)" if r.invalid else ""
            parts.append(f"template {i} rated {r.rating}/{r.scale}{retried}")
    return "; ".join(parts)
