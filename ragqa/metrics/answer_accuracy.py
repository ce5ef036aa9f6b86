"""Answer accuracy (NVIDIA-style): how well the response agrees with the reference, by two rating templates.

RAGAS ``AnswerAccuracy`` (``metrics/collections/answer_accuracy/metric.py``; legacy ``nv_accuracy`` in
``metrics/_nv_metrics.py``): the judge rates the response against the reference on 0, 2 or 4 with
two differently worded templates; each rating is divided by 4 and the two are averaged
(:func:`~ragqa.metrics._rating.average_ratings`). A rating outside {0, 2, 4} is asked again, up to
``max_retries`` times, then counts as NaN for that template.
"""

from __future__ import annotations

from typing import ClassVar

from ragqa.judges.base import Judge
from ragqa.metrics._rating import DEFAULT_MAX_RETRIES, ask_templates, average_ratings, check_max_retries, rated_score
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.prompts.nvidia import ANSWER_ACCURACY_1, ANSWER_ACCURACY_2, AnswerAccuracy2Input, AnswerAccuracyInput
from ragqa.schema import MetricScore, Sample

__all__ = ["ACCURACY_RATINGS", "AnswerAccuracy", "answer_accuracy_score"]

ACCURACY_RATINGS = frozenset({0, 2, 4})
"""The valid ratings of both answer-accuracy templates (RAGAS: 0 wrong, 2 partial, 4 equivalent)."""


def answer_accuracy_score(rating_1: int | None, rating_2: int | None) -> float:
    """Answer accuracy from the two templates' ratings.

    Args:
        rating_1: template 1's rating in {0, 2, 4}, or ``None`` when it gave no valid rating.
        rating_2: template 2's rating, likewise.

    Returns:
        ``(rating_1 / 4 + rating_2 / 4) / 2`` in [0, 1] (higher is better); the one scaled rating
        when the other is ``None``; NaN when both are ``None`` (RAGAS ``_average_scores``).
    """
    nan = float("nan")
    return average_ratings(nan if rating_1 is None else rating_1 / 4, nan if rating_2 is None else rating_2 / 4)


class AnswerAccuracy(Metric):
    """Agreement of the response with the reference, rated by two templates (NVIDIA / RAGAS).

    - Fields: ``user_input``, ``response``, ``reference``.
    - Range 0..1 in steps of 0.25, higher is better.
    - Judge calls per sample: 2 (one per template; more when a rating is invalid, at most
      ``2 * max_retries``).
    - NaN when neither template gives a valid rating in ``max_retries`` attempts.
    - Raises :class:`~ragqa.errors.JudgeError` when a call fails other than by an unparseable answer.

    Args:
        max_retries: attempts per template while its rating is invalid (RAGAS default 5, >= 1).
    """

    name: ClassVar[str] = "answer_accuracy"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response", "reference")
    description: ClassVar[str] = "Agreement of the response with the reference, two rating templates averaged"
    calls_per_sample: ClassVar[str] = "2 (more only when a rating is invalid)"
    default_threshold: ClassVar[float | None] = 0.5

    def __init__(self, *, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        """Create the metric (see the class docstring for ``max_retries``)."""
        self.max_retries = check_max_retries(max_retries)

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        question, response, reference = sample.user_input or "", sample.response or "", sample.reference or ""
        first, second = await ask_templates(
            judge,
            [
                (
                    ANSWER_ACCURACY_1,
                    lambda n: AnswerAccuracyInput(
                        query=question, user_answer=response, reference_answer=reference, attempt=n
                    ),
                ),
                (
                    ANSWER_ACCURACY_2,
                    lambda n: AnswerAccuracy2Input(
                        query=question, reference_answer=reference, user_answer=response, attempt=n
                    ),
                ),
            ],
            allowed=ACCURACY_RATINGS,
            scale=4,
            max_retries=self.max_retries,
            language=context.language,
        )
        return rated_score(answer_accuracy_score(first.rating, second.rating), [first, second])
