"""The jury parts of a metric's summary (pydantic, JSON-serialisable): reliability and the cascade.

:class:`JuryReliability` (with one :class:`JudgeReliability` per judge) is the panel as a jury,
each judge's reliability estimated without labels (Dawid-Skene, :mod:`ragqa.jury.reliability`);
:class:`CascadeSummary` is the cascade's calls per tier and escalations (:mod:`ragqa.jury.cascade`).
They are fields of :class:`ragqa.report.MetricSummary`; :mod:`ragqa.report.model` and
:mod:`ragqa.report` re-export them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragqa.schema import Interval, Usage

__all__ = ["CascadeSummary", "JudgeReliability", "JuryReliability"]


class JudgeReliability(BaseModel):
    """One judge's reliability on one metric's verdicts, estimated without labels (Dawid-Skene).

    Each interval is a seeded cluster bootstrap over samples (a sample's statements resampled
    together; per item, each sample is its own cluster); see :mod:`ragqa.jury.reliability`.

    Attributes:
        judge_id: the judge.
        sensitivity: P(judge says "supported" | the statement is), in [0, 1]; per item,
            P(judge passes the sample | it truly passes).
        specificity: P(judge says "not supported" | it is not), in [0, 1]; per item,
            P(judge fails the sample | it truly fails).
        accuracy: the judge's expected share of right verdicts, in [0, 1].
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    sensitivity: Interval
    specificity: Interval
    accuracy: Interval


class JuryReliability(BaseModel):
    """The panel as a jury on one metric: each judge's estimated reliability and how they err together.

    Computed by :func:`ragqa.jury.reliability.estimate_reliability` over the run's per-statement
    verdicts (the shared statements of a ``claim-vote`` or ``dawid-skene`` run; ``unit`` is
    ``statement``), or by :func:`ragqa.jury.reliability.item_reliability` over each judge's
    pass/fail gate verdict per sample (its score against the metric's threshold, in a run whose
    aggregate is not a vote; ``unit`` is ``item``).

    Attributes:
        method: ``dawid-skene`` (Dawid and Skene 1979, binary, EM).
        unit: what one verdict is about: ``statement`` (a judge's "supported" on one statement) or
            ``item`` (a judge's pass on one sample: its score meets ``threshold``).
        threshold: per item, the metric's threshold the verdicts were taken at (``>=`` for
            higher-is-better metrics, ``<=`` for lower-is-better ones); ``None`` per statement, and
            per item when the metric has no threshold in the run: then nothing is estimated (no
            judges, no verdicts) and the report says so in one line.
        n_statements: verdict units with at least one verdict: statements, or per item samples.
        n_samples: samples those units come from (the bootstrap's clusters).
        prevalence: estimated share of supported statements (per item: of passing samples), in [0, 1].
        converged: whether EM converged within its iteration limit.
        judges: one entry per judge, in panel order.
        correlations: pairwise residual correlations, ``[judge_a, judge_b, r]`` in panel order
            (r in [-1, 1], NaN when undefined); a high value breaks the model's independence.
        warnings: plain-language warnings (judges that err together, EM not converged).
        voted_mean: mean over samples of the metric on the Dawid-Skene voted verdicts
            (posterior > 0.5), NaN when no sample has statements; per item, the share of samples
            the Dawid-Skene verdicts pass.
        majority_mean: the same on the per-statement majority (the per-sample aggregates); per
            item, the share of samples the judges' majority passes (a tie: the first judge's verdict).
        n_changed: statements (per item: samples) whose Dawid-Skene verdict differs from the majority's.
    """

    model_config = ConfigDict(extra="forbid")

    method: str = "dawid-skene"
    unit: Literal["statement", "item"] = "statement"
    threshold: float | None = None
    n_statements: int
    n_samples: int
    prevalence: float
    converged: bool
    judges: list[JudgeReliability] = Field(default_factory=list)
    correlations: list[tuple[str, str, float]] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    voted_mean: float = float("nan")
    majority_mean: float = float("nan")
    n_changed: int = 0


class CascadeSummary(BaseModel):
    """The cascade on one metric (``ragqa.jury.cascade``): calls and cost per tier, escalations, audit.

    Computed by :class:`ragqa.jury.cascade.CascadeTally`. Tier-2 judges that were not asked on an item
    are absent from its result (not a score, not a failure), so their ``scored`` counts are lower.

    Attributes:
        tier1: the tier-1 judge ids; tier2: the tier-2 ones (panel order).
        threshold: the metric's threshold the rule reads, or ``None`` (spread check only).
        spread, margin, split, interval: the escalation rule (:class:`ragqa.jury.cascade.CascadeRule`).
        source: where the rule's values came from (``settings``, or the labelled data of a fit).
        n_items: samples of the metric; n_escalated: those escalated to tier 2 (in an audit run,
            those the cascade would have escalated).
        reasons: escalations per reason (``unscored``, ``split``, ``spread``, ``margin``, ``interval``).
        tier1_usage: tier 1's calls, tokens and cost; tier2_usage: tier 2's (in an audit run, on the
            escalated items only: what the cascade would have spent).
        tier1_judgements, tier2_judgements: (sample, judge) computations of each tier, counted as
            the usages are (a local judge's or a cached call's cost nothing but are counted here).
        audit: every tier scored every item (``--cascade-audit``).
        full_tier2_usage: an audit run's tier-2 usage on every item (the full panel's), else ``None``.
        n_compared: audit samples with a threshold and a full-panel aggregate; agreement: share of
            them whose cascade pass/fail verdict equals the full panel's, in [0, 1] (NaN without).
        mean_abs_diff: audit: mean |cascade aggregate - full aggregate|, metric units (NaN without).
        tier2_share: audit: the cascade's tier-2 calls over the full panel's, in [0, 1] (NaN otherwise);
            tier2_share_basis: ``calls`` (provider calls) or ``judgements`` (when the judges made no
            provider call, e.g. local or cached judges: (sample, judge) computations instead).
    """

    model_config = ConfigDict(extra="forbid")

    tier1: list[str]
    tier2: list[str]
    threshold: float | None = None
    spread: float | None = None
    margin: float = 0.0
    split: bool = True
    interval: bool = True
    source: str = "settings"
    n_items: int = 0
    n_escalated: int = 0
    reasons: dict[str, int] = Field(default_factory=dict)
    tier1_usage: Usage = Field(default_factory=Usage)
    tier2_usage: Usage = Field(default_factory=Usage)
    tier1_judgements: int = 0
    tier2_judgements: int = 0
    audit: bool = False
    full_tier2_usage: Usage | None = None
    n_compared: int = 0
    agreement: float = float("nan")
    mean_abs_diff: float = float("nan")
    tier2_share: float = float("nan")
    tier2_share_basis: Literal["calls", "judgements"] = "calls"

    @property
    def escalation_rate(self) -> float:
        """``n_escalated / n_items`` in [0, 1] (NaN without items)."""
        return self.n_escalated / self.n_items if self.n_items else float("nan")
