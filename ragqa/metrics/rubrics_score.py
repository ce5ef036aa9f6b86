"""Rubrics score: the rubric level (1..5) the submission reaches, with or without a reference.

RAGAS ``RubricsScore`` (``metrics/_domain_specific_rubrics.py``, name ``domain_specific_rubrics``)
and ``InstanceRubrics`` (``_instance_specific_rubrics.py``): the judge reads a rubric
(``score1_description`` ... ``score5_description``) and answers ``{feedback, score}``; the score
is the **raw level**, not normalised (RAGAS and spring-ai-ragas both return it raw). Default
rubrics are RAGAS's: :data:`DEFAULT_WITH_REFERENCE_RUBRICS` when the sample has a reference,
:data:`DEFAULT_REFERENCE_FREE_RUBRICS` otherwise (RAGAS ``RubricsScoreWithReference`` /
``WithoutReference``). A sample's own ``rubrics`` field overrides the metric's rubric for that
sample (RAGAS's instance rubrics).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import ClassVar

from ragqa.errors import JudgeOutputError, SampleError
from ragqa.judges.base import Judge
from ragqa.metrics._criteria import SubmissionMetric, check_label, is_conversation, submission
from ragqa.metrics.base import Direction, MetricContext
from ragqa.prompts.criteria import RUBRICS_SCORE, RubricsScoreInput
from ragqa.schema import MetricScore, Sample

__all__ = [
    "DEFAULT_REFERENCE_FREE_RUBRICS",
    "DEFAULT_WITH_REFERENCE_RUBRICS",
    "RubricsScore",
    "rubric_levels",
    "rubrics_score",
]

DEFAULT_REFERENCE_FREE_RUBRICS: Mapping[str, str] = {
    "score1_description": "The response is entirely incorrect and fails to address any aspect of the user input.",
    "score2_description": (
        "The response contains partial accuracy but includes major errors or significant omissions that affect "
        "its relevance to the user input."
    ),
    "score3_description": (
        "The response is mostly accurate but lacks clarity, thoroughness, or minor details needed to fully address "
        "the user input."
    ),
    "score4_description": (
        "The response is accurate and clear, with only minor omissions or slight inaccuracies in addressing the "
        "user input."
    ),
    "score5_description": (
        "The response is completely accurate, clear, and thoroughly addresses the user input without any errors or "
        "omissions."
    ),
}
"""RAGAS's ``DEFAULT_REFERENCE_FREE_RUBRICS``, verbatim."""

DEFAULT_WITH_REFERENCE_RUBRICS: Mapping[str, str] = {
    "score1_description": (
        "The response is entirely incorrect, irrelevant, or does not align with the reference in any meaningful way."
    ),
    "score2_description": (
        "The response partially matches the reference but contains major errors, significant omissions, or "
        "irrelevant information."
    ),
    "score3_description": (
        "The response aligns with the reference overall but lacks sufficient detail, clarity, or contains minor "
        "inaccuracies."
    ),
    "score4_description": (
        "The response is mostly accurate, aligns closely with the reference, and contains only minor issues or "
        "omissions."
    ),
    "score5_description": (
        "The response is fully accurate, completely aligns with the reference, and is clear, thorough, and detailed."
    ),
}
"""RAGAS's ``DEFAULT_WITH_REFERENCE_RUBRICS``, verbatim."""

_KEY = re.compile(r"score(\d+)_description")
_LOW, _HIGH = 1, 5


def rubric_levels(rubrics: Mapping[str, str]) -> list[int]:
    """The levels a rubric defines, checked.

    Args:
        rubrics: ``scoreN_description -> text``.

    Returns:
        The levels N, ascending.

    Raises:
        ValueError: when the rubric is empty, a key is not ``scoreN_description``, a level is
            outside 1..5 or a description is blank.
    """
    if not rubrics:
        raise ValueError("rubrics must define at least one level (score1_description ... score5_description)")
    levels = []
    for key, text in rubrics.items():
        match = _KEY.fullmatch(str(key))
        if match is None:
            raise ValueError(f"rubric key {key!r} is not of the form scoreN_description (N = 1..5)")
        level = int(match.group(1))
        if not _LOW <= level <= _HIGH:
            raise ValueError(f"rubric key {key!r}: levels run from {_LOW} to {_HIGH}")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"rubric {key!r} has a blank description")
        levels.append(level)
    return sorted(levels)


def rubrics_score(level: int, levels: list[int]) -> float:
    """The score of a rubric level: the raw level (RAGAS and spring-ai-ragas do not normalise).

    Args:
        level: the level the judge gave.
        levels: the rubric's levels.

    Returns:
        ``float(level)`` in [1, 5]; higher is better.

    Raises:
        ValueError: when ``level`` is not one of ``levels``.
    """
    if level not in levels:
        raise ValueError(f"level {level} is not one of the rubric's levels {levels}")
    return float(level)


class RubricsScore(SubmissionMetric):
    """The rubric level (1..5) the submission reaches, by one judge call.

    - Fields: ``response``; ``user_input``, the contexts, ``reference`` and ``reference_contexts``
      are shown when present; optional ``rubrics`` (the sample's own rubric, overriding the metric's).
      A sample with ``messages`` is judged as a conversation (RAGAS's multi-turn form: the
      rendered conversation as ``user_input``, no reference, the reference-free default rubric).
    - Range 1..5, the raw level (not scaled to 0..1, as RAGAS and spring-ai-ragas), higher is better.
    - Judge calls per sample: 1.
    - Raises :class:`~ragqa.errors.JudgeOutputError` when the judge gives a level the rubric
      does not define, and other :class:`~ragqa.errors.JudgeError` on failures.

    Args:
        name: a name for a custom rubric, shown in the key ``rubrics_score(name=...)``.
        rubrics: the rubric (``score1_description`` ... ``score5_description``); default RAGAS's,
            with or without reference by sample.

    Raises:
        ValueError: for a malformed rubric or name (the registry reports it as a ConfigError).
    """

    name: ClassVar[str] = "rubrics_score"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("response",)
    description: ClassVar[str] = "Rubric level 1..5 the response reaches (raw level), with or without reference"
    calls_per_sample: ClassVar[str] = "1"
    value_range: ClassVar[tuple[float, float]] = (float(_LOW), float(_HIGH))
    default_threshold: ClassVar[float | None] = 3.0

    def __init__(self, name: str | None = None, rubrics: Mapping[str, str] | None = None) -> None:
        """Create the metric (see the class docstring)."""
        self.rubric_name = None if name is None else check_label(name, "name")
        if rubrics is not None:
            rubric_levels(rubrics)
        self.rubrics = dict(rubrics) if rubrics is not None else None

    @property
    def key(self) -> str:
        """``rubrics_score``, or ``rubrics_score(name=<name>)`` for a named rubric."""
        return self.name if self.rubric_name is None else f"{self.name}(name={self.rubric_name})"

    def rubric_for(self, sample: Sample) -> tuple[dict[str, str], str]:
        """The rubric used for ``sample`` and where it comes from.

        Returns:
            ``(rubric, source)``; source is ``sample``, ``metric``, ``default with reference`` or
            ``default reference-free``.
        """
        if sample.rubrics:
            return dict(sample.rubrics), "sample"
        if self.rubrics is not None:
            return dict(self.rubrics), "metric"
        if sample.reference is not None and not is_conversation(sample):
            return dict(DEFAULT_WITH_REFERENCE_RUBRICS), "default with reference"
        return dict(DEFAULT_REFERENCE_FREE_RUBRICS), "default reference-free"

    def validate(self, sample: Sample) -> None:
        """Check the fields, and the sample's own ``rubrics`` when it has one.

        Raises:
            SampleError: naming the sample, the field and the fix.
        """
        super().validate(sample)
        if sample.rubrics is not None:
            try:
                rubric_levels(sample.rubrics)
            except ValueError as exc:
                raise SampleError(f"{exc}", sample_id=sample.label, field="rubrics", metric=self.key) from exc

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        rubric, source = self.rubric_for(sample)
        levels = rubric_levels(rubric)
        out = await judge.ask(
            RUBRICS_SCORE, RubricsScoreInput(rubrics=rubric, **submission(sample)), language=context.language
        )
        try:
            value = rubrics_score(out.score, levels)
        except ValueError as exc:
            raise JudgeOutputError(
                f"judge gave {exc}", judge_id=judge.id, step=RUBRICS_SCORE.name, raw=out.model_dump_json()
            ) from exc
        return MetricScore(
            value=value,
            reason=f"level {out.score} of {levels[-1]} ({source} rubric): {out.feedback}",
            details={"level": out.score, "levels": levels, "rubric_source": source, "feedback": out.feedback},
        )
