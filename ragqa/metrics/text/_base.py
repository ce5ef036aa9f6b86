"""What every text metric shares: no judge, ``response`` against ``reference``, a key of its options.

A text metric's score depends only on the sample's two strings: no judge is asked and no
embedding model is used. The :class:`~ragqa.evaluation.PanelEvaluator` scores a metric with
``needs_judge`` False once per sample and shows that outcome under each judge of the panel (the
same value, usage counted once); :meth:`TextMetric.score` never reads the judge,
and the run's estimate counts no call for it (:meth:`~ragqa.metrics.base.Metric.estimate_calls`
is 0 when ``needs_judge`` is False).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from ragqa.judges.base import Judge
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.schema import MetricScore, Sample

__all__ = ["TextMetric", "TextScore", "check_choice", "check_positive_int"]

T = TypeVar("T")

TextScore = tuple[float, dict[str, Any]]
"""A text metric's value and its details (JSON-serialisable intermediate numbers)."""


def check_choice(option: str, value: object, choices: Sequence[T]) -> T:
    """Return the one of ``choices`` equal to ``value``.

    Raises:
        ValueError: naming the option and the accepted values.
    """
    for choice in choices:
        if choice == value:
            return choice
    raise ValueError(f"{option} must be one of {', '.join(map(str, choices))}, not {value!r}")


def check_positive_int(option: str, value: Any, *, minimum: int = 1) -> int:
    """Return ``value`` when it is an int >= ``minimum`` (bools refused).

    Raises:
        ValueError: naming the option and the minimum.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{option} must be an integer >= {minimum}, not {value!r}")
    return value


class TextMetric(Metric):
    """Base of the metrics that compare ``response`` with ``reference`` without a judge.

    Subclasses set the class attributes, keep their options as attributes, list them in
    :meth:`options` (with :attr:`defaults`) and implement :meth:`compute`. Both fields must be
    present and non-blank (checked before any scoring, like every metric's fields): a missing
    or empty string is what spring-ai-ragas scores ``null``.
    """

    needs_judge: ClassVar[bool] = False
    required_fields: ClassVar[tuple[str, ...]] = ("response", "reference")
    calls_per_sample: ClassVar[str] = "0"
    direction: ClassVar[Direction] = "higher"
    defaults: ClassVar[Mapping[str, Any]] = {}
    """Each option's default value, in the order the key lists them."""

    def options(self) -> dict[str, Any]:
        """The metric's options by name (the constructor's keyword arguments)."""
        return {name: getattr(self, name) for name in self.defaults}

    @property
    def key(self) -> str:
        """The name, plus every option that differs from its default (``rouge_score(rouge_type=rouge1)``)."""
        changed = [f"{k}={_shown(v)}" for k, v in self.options().items() if v != self.defaults[k]]
        return f"{self.name}({', '.join(changed)})" if changed else self.name

    @abstractmethod
    def compute(self, response: str, reference: str) -> TextScore:
        """Score ``response`` against ``reference`` (pure).

        Returns:
            The value in :attr:`value_range` (NaN when undefined) and its details.
        """

    def explain(self, value: float, details: Mapping[str, Any]) -> str:
        """A one-line reason: key, value and numeric details (``rouge_score = 0.5000 (precision 0.5714, ...)``)."""
        shown = [f"{k.replace('_', ' ')} {v:.4f}" for k, v in details.items() if isinstance(v, float)]
        return f"{self.key} = {value:.4f}" + (f" ({', '.join(shown)})" if shown else "")

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample``; the judge and the context are not used (the same value for every judge).

        Raises:
            ragqa.errors.SampleError: never for a validated sample (both fields are strings).
        """
        response = sample.response or ""
        reference = sample.reference or ""
        value, details = self.compute(response, reference)
        return MetricScore(value=value, reason=self.explain(value, details), details={**details, "judge_free": True})


def _shown(value: Any) -> str:
    """An option value as the key writes it (YAML scalars: ``true``, ``3``, ``0.5``, ``rougeL``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
