"""Simple criteria score: an integer score 0..5 of the submission on a user-defined criterion.

RAGAS ``SimpleCriteriaScore`` (``metrics/_simple_criteria.py``): the judge answers ``{reason,
score}`` for a criterion definition, with the reference when the sample has one; the score is
the raw integer; ``strictness`` calls are voted by majority (RAGAS's ``Counter.most_common``;
RAGAS itself makes one call, see :mod:`ragqa.metrics.aspect_critic`).

Differences: RAGAS leaves the scale to the definition (any integer); here the prompt fixes 0..5
(spring-ai-ragas's default ``minScore``/``maxScore``) so that the range, thresholds and panel
means mean something. spring-ai-ragas normalises to 0..1 and takes the median of the calls;
ragqa keeps RAGAS's raw integer and majority.
"""

from __future__ import annotations

from typing import ClassVar

from ragqa.judges.base import Judge
from ragqa.metrics._criteria import (
    SubmissionMetric,
    ask_votes,
    check_label,
    majority_vote,
    odd_strictness,
    submission,
)
from ragqa.metrics.base import CallPlan, Direction, MetricContext
from ragqa.prompts.criteria import SIMPLE_CRITERIA, SIMPLE_CRITERIA_MAX, SimpleCriteriaInput
from ragqa.schema import MetricScore, Sample

__all__ = ["DEFAULT_CRITERION", "SimpleCriteriaScore", "simple_criteria_score"]

DEFAULT_CRITERION = (
    "How well does the response answer the user input: correct (agreeing with the reference when one is given), "
    "complete and to the point?"
)
"""The criterion used when none is given (RAGAS has none: its ``definition`` is required)."""


def simple_criteria_score(scores: list[int]) -> float:
    """The criterion's score from the scores of the ``strictness`` calls.

    Args:
        scores: one integer score in 0..5 per call, in call order (non-empty).

    Returns:
        The most common score (first seen on a tie) as a float in [0, 5]; higher is better.
    """
    return float(majority_vote(scores))


class SimpleCriteriaScore(SubmissionMetric):
    """An integer score 0..5 on a user-defined criterion, by majority of ``strictness`` calls.

    - Fields: ``response``; ``user_input``, the contexts, ``reference`` and
      ``reference_contexts`` are shown when present ("with reference" when the sample has one).
      A sample with ``messages`` is judged as a conversation (RAGAS's multi-turn form: the
      rendered conversation as ``user_input``, and ``reference`` when present).
    - Range 0..5 (the raw integer, not normalised), higher is better.
    - Judge calls per sample: ``strictness`` (default 1; an even value is raised by one).
    - Raises :class:`~ragqa.errors.JudgeError` when a call fails; a score outside 0..5 is an
      invalid answer (:class:`~ragqa.errors.JudgeOutputError`).

    Args:
        name: the criterion's name, shown in the key ``simple_criteria_score(name=...)``.
        definition: the criterion (default :data:`DEFAULT_CRITERION`).
        strictness: self-consistency calls (>= 1; even -> +1).
    """

    name: ClassVar[str] = "simple_criteria_score"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("response",)
    description: ClassVar[str] = "Integer score 0..5 on a user-defined criterion (majority vote)"
    calls_per_sample: ClassVar[str] = "strictness (default 1)"
    value_range: ClassVar[tuple[float, float]] = (0.0, float(SIMPLE_CRITERIA_MAX))
    default_threshold: ClassVar[float | None] = 3.0

    def __init__(self, name: str = "quality", definition: str = DEFAULT_CRITERION, *, strictness: int = 1) -> None:
        """Create the metric (see the class docstring).

        Raises:
            ValueError: for a bad name, a blank definition or a bad strictness.
        """
        self.criterion = check_label(name, "name")
        if not isinstance(definition, str) or not definition.strip():
            raise ValueError("definition must be a non-blank criterion")
        self.definition = definition
        self.strictness = odd_strictness(strictness)

    @property
    def key(self) -> str:
        """``simple_criteria_score(name=<name>)``, plus ``strictness`` when above 1."""
        extra = f", strictness={self.strictness}" if self.strictness > 1 else ""
        return f"{self.name}(name={self.criterion}{extra})"

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """``strictness`` calls."""
        return self.strictness

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        fields = submission(sample, conversation_reference=True)
        outs = await ask_votes(
            judge,
            SIMPLE_CRITERIA,
            lambda n: SimpleCriteriaInput(name=self.criterion, definition=self.definition, attempt=n, **fields),
            self.strictness,
            context.language,
        )
        scores = [o.score for o in outs]
        value = simple_criteria_score(scores)
        if len(scores) == 1:
            reason = f"{self.criterion}: {value:g}/{SIMPLE_CRITERIA_MAX}; {outs[0].reason}"
        else:
            votes = scores.count(int(value))
            reason = f"{self.criterion}: {value:g}/{SIMPLE_CRITERIA_MAX} by {votes} of {len(scores)} votes"
        return MetricScore(
            value=value,
            reason=reason,
            details={
                "criterion": self.criterion,
                "definition": self.definition,
                "with_reference": sample.reference is not None,
                "scores": scores,
                "reasons": [o.reason for o in outs],
            },
        )
