"""Shapes of the uncertainty of a score: confidence intervals and the decomposition of their variance.

Part of :mod:`ragqa.schema`, which re-exports every name; computed by :mod:`ragqa.uncertainty`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_CONFIDENCE",
    "AdviceOption",
    "Decomposition",
    "Interval",
    "Lever",
    "VarianceComponents",
    "check_confidence",
]


Lever = Literal["samples", "judges", "repeats"]
"""What can be added to a run to narrow an interval (:class:`AdviceOption`)."""

DEFAULT_CONFIDENCE = 0.95
"""Confidence level of every interval unless configured (``--confidence``, ``ragqa.confidence``)."""


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` when it is a level strictly between 0 and 1.

    Raises:
        ValueError: for a value outside (0, 1) (for example 95 instead of 0.95) or NaN.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence!r}")
    return confidence


class Interval(BaseModel):
    """A two-sided confidence interval around an estimate, e.g. a metric's aggregate.

    ``low <= estimate <= high`` for the usual methods; all three are in the metric's units.
    ``method`` names how it was computed (for example ``clustered-se`` or ``cluster-bootstrap``,
    see :mod:`ragqa.uncertainty`), ``confidence`` is the nominal coverage in (0, 1), and ``n`` the
    number of independent units (clusters, usually samples) it rests on.
    """

    model_config = ConfigDict(extra="forbid")

    estimate: float
    """The point estimate the interval surrounds."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    confidence: float = Field(gt=0.0, lt=1.0)
    """Nominal coverage, e.g. 0.95."""
    method: str
    """How the interval was computed."""
    n: int = Field(ge=0)
    """Independent units (clusters) behind it."""

    def contains(self, value: float) -> bool:
        """Return True when ``low <= value <= high`` (the bounds count as inside)."""
        return self.low <= value <= self.high

    @property
    def half_width(self) -> float:
        """Half the interval's width, ``(high - low) / 2``, in the metric's units."""
        return (self.high - self.low) / 2


class VarianceComponents(BaseModel):
    """Variance of one metric's scores split into samples, judges, sample x judge and repeats.

    Model (crossed two-way random effects with replication): ``y[i, j, k] = mu + s_i + b_j +
    (sb)_ij + e_ijk`` for sample ``i``, judge ``j``, repeat ``k``, each effect independent with
    mean 0 and the variance named below, in squared metric units. ``None`` means the design cannot
    estimate that component (one judge: no judge variance; one repeat: repeats not separated from
    the interaction). Estimated by :func:`ragqa.uncertainty.variance_components`.

    Attributes:
        samples: variance between samples' true scores (what the eval measures), ``sigma_s^2``.
        judges: variance between judges' overall leniency (their main effects), ``sigma_b^2``.
        interaction: sample x judge variance (judges ranking samples differently), ``sigma_sb^2``;
            with one repeat it also holds the repeat variance (see :attr:`confounded`).
        repeats: variance of one judge's repeated scores of one sample (residual), ``sigma_e^2``;
            0 for a deterministic judge.
        n_samples: samples used (those with a score from every judge kept).
        n_judges: judges used (those with at least one score).
        repeats_per_cell: harmonic mean of finite repeats per (sample, judge) cell used (>= 1).
        n_dropped: samples left out because a kept judge has no finite score for them.
        n_judges_dropped: judges with scores left out because they scored too few samples (see
            :func:`ragqa.uncertainty.variance_components`).
        truncated: components whose estimate was negative and was set to 0.
        confounded: pairs the design cannot separate, as ``"interaction+repeats"`` (one repeat:
            :attr:`interaction` holds both) or ``"samples+interaction"`` (one judge: :attr:`samples`
            holds both).
        method: the estimator's name.
    """

    model_config = ConfigDict(extra="forbid")

    samples: float | None
    judges: float | None
    interaction: float | None
    repeats: float | None
    n_samples: int = Field(ge=0)
    n_judges: int = Field(ge=0)
    repeats_per_cell: float
    n_dropped: int = Field(default=0, ge=0)
    n_judges_dropped: int = Field(default=0, ge=0)
    truncated: list[str] = Field(default_factory=list)
    confounded: list[str] = Field(default_factory=list)
    method: str = "anova-unweighted-means"


class AdviceOption(BaseModel):
    """One way to halve an aggregate's interval: more samples, more judges or more repeats.

    Halving the interval's half-width means quartering the variance of the mean (the half-width is
    proportional to its square root).

    Attributes:
        lever: ``samples``, ``judges`` or ``repeats``.
        possible: True when adding this lever alone can halve the interval, False when it cannot
            (the variance it averages away is too small a share), ``None`` when the design cannot
            tell (the component it acts on was not estimated: one repeat, or one judge).
        target: the number of samples, judges or repeats (per judge) needed in all, or ``None``.
        extra_judgements: extra (sample, judge, repeat) metric computations that takes, or ``None``.
        extra_calls: those times the judge calls per computation, or ``None`` when unknown.
    """

    model_config = ConfigDict(extra="forbid")

    lever: Lever
    possible: bool | None
    target: int | None = None
    extra_judgements: int | None = None
    extra_calls: int | None = None


class Decomposition(BaseModel):
    """Where one metric's aggregate variance comes from, and what would halve its interval.

    Attributes:
        components: the variance components (:func:`ragqa.uncertainty.variance_components`).
        share: each component's share of the per-sample aggregate's variance under the fixed-panel
            model (:func:`ragqa.uncertainty.aggregate_variance`), keys ``samples``, ``interaction``, ``repeats``
            (each in [0, 1], summing to 1; a component the design cannot estimate has no key, its
            variance is in the one it is confounded with); empty when the variance is unknown or 0.
        advice: how to halve the interval (:func:`ragqa.uncertainty.halving_advice`): samples, judges, repeats.
        repeats: repeats per judge the run used (the largest count of any cell).
        calls_per_judgement: judge calls per (sample, judge, repeat) this run spent, or ``None``.
    """

    model_config = ConfigDict(extra="forbid")

    components: VarianceComponents
    share: dict[str, float] = Field(default_factory=dict)
    advice: list[AdviceOption] = Field(default_factory=list)
    repeats: int = Field(default=1, ge=1)
    calls_per_judgement: float | None = None
