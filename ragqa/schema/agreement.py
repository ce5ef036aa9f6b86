"""Shapes of how judges agree: pairwise agreement, per-judge bias, contested samples, order probes.

Part of :mod:`ragqa.schema`, which re-exports every name; computed by :mod:`ragqa.agreement` and
the order probe.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragqa.schema.results import Usage

__all__ = [
    "Agreement",
    "ContestedSample",
    "JudgeBias",
    "JudgeOrderConsistency",
    "OrderConsistency",
    "OrderProbeResult",
    "PairAgreement",
]


class PairAgreement(BaseModel):
    """How two judges agree on one metric, over the samples both scored (finite values only).

    Attributes:
        judge_a: the first judge (panel order).
        judge_b: the second judge.
        n: samples both judges scored.
        spearman: Spearman's rank correlation, -1..1 (NaN when undefined: fewer than 2 samples or
            a constant judge); ``scipy.stats.spearmanr``.
        mean_abs_diff: mean absolute difference of their scores, in the metric's units (>= 0).
    """

    model_config = ConfigDict(extra="forbid")

    judge_a: str
    judge_b: str
    n: int
    spearman: float
    mean_abs_diff: float


class JudgeBias(BaseModel):
    """One judge's mean signed difference from the panel mean of the other judges' scores, per sample.

    Attributes:
        judge_id: the judge.
        n: samples where the judge and at least one other judge scored.
        bias: mean of (judge's score - mean of the other judges' scores); positive = more lenient
            for a higher-is-better metric.
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    n: int
    bias: float


class ContestedSample(BaseModel):
    """A sample on which the judges disagree most (largest spread = max - min of their finite scores, > 0)."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    spread: float


class Agreement(BaseModel):
    """Judge agreement on one metric across the run (needs two or more judges).

    Attributes:
        alpha: Krippendorff's alpha, interval level, across judges (samples x judges, NaN =
            missing); 1 = perfect agreement, 0 = chance, NaN when undefined (``krippendorff``).
        n_samples: samples with at least two judges' finite scores.
        pairs: every judge pair, in panel order.
        bias: every judge's bias against the others.
        contested: the samples with the largest spread, largest first (at most 5).
    """

    model_config = ConfigDict(extra="forbid")

    alpha: float
    n_samples: int
    pairs: list[PairAgreement] = Field(default_factory=list)
    bias: list[JudgeBias] = Field(default_factory=list)
    contested: list[ContestedSample] = Field(default_factory=list)


# -- the order probe (``--probe order``): position consistency per judge ----------------------------


class OrderConsistency(BaseModel):
    """One judge's position consistency on one metric under the order probe (:mod:`ragqa.jury.probe`).

    Attributes:
        metric: the metric's result key (``faithfulness``, ``context_precision``...).
        n_samples: probed samples with at least one verdict compared for this judge.
        n_items: verdicts compared: one per context (context precision, mapped back to its
            original position) or per statement (faithfulness, the same statements).
        n_changed: compared verdicts that differ once the contexts are reversed (0/1 verdicts;
            graded ones are read as >= 0.5).
        n_samples_changed: samples with at least one changed verdict.
        n_failed: probed samples whose reversed-order scoring failed for this judge (not compared).
        consistency: ``1 - n_changed / n_items`` in [0, 1], higher is better; NaN with no item.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str
    n_samples: int = 0
    n_items: int = 0
    n_changed: int = 0
    n_samples_changed: int = 0
    n_failed: int = 0
    consistency: float = float("nan")

    @field_validator("consistency", mode="before")
    @classmethod
    def _null_is_nan(cls, value: Any) -> Any:
        """JSON's ``null`` (how a results file writes NaN) reads back as NaN."""
        return math.nan if value is None else value


class JudgeOrderConsistency(BaseModel):
    """One judge's position consistency over every probed metric (verdicts pooled).

    Attributes:
        judge_id: the judge.
        n_items: verdicts compared, all probed metrics together.
        n_changed: of them, those that changed with the contexts reversed.
        consistency: ``1 - n_changed / n_items`` in [0, 1] (NaN with no item); position
            consistency as in Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and
            Chatbot Arena" (https://arxiv.org/abs/2306.05685), taken per verdict.
        flagged: True when the share of changed verdicts exceeds the probe's ``max_change_rate``.
        metrics: the per-metric figures, in the run's metric order.
        usage: calls, tokens and cost of this judge's probe calls (not in any metric's usage).
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    n_items: int = 0
    n_changed: int = 0
    consistency: float = float("nan")
    flagged: bool = False
    metrics: list[OrderConsistency] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    @field_validator("consistency", mode="before")
    @classmethod
    def _null_is_nan(cls, value: Any) -> Any:
        """JSON's ``null`` (how a results file writes NaN) reads back as NaN."""
        return math.nan if value is None else value


class OrderProbeResult(BaseModel):
    """What the order probe found: each judge's position consistency with the contexts reversed.

    The probe re-judges context precision and faithfulness on a seeded share of the samples with
    the retrieved contexts in reversed order, and compares the verdicts (see ``docs/panel.md``,
    "Order bias probe"). It never changes a score of the run.

    Attributes:
        share: the share of samples selected, in (0, 1].
        seed: the seed of the selection (a sample is selected by a hash of the seed and its id).
        max_change_rate: a judge whose share of changed verdicts exceeds it is flagged, in [0, 1).
        n_selected: samples of the run the selection picked.
        n_samples: of them, the samples probed (two or more contexts, a probed metric scored).
        metrics: the probed metric keys, in run order.
        judges: one entry per judge, in panel order.
        usage: the probe's calls, tokens and cost, all judges together (counted in the run's usage).
        notes: plain-language notes (a metric not probed and why).
    """

    model_config = ConfigDict(extra="forbid")

    share: float
    seed: int
    max_change_rate: float
    n_selected: int = 0
    n_samples: int = 0
    metrics: list[str] = Field(default_factory=list)
    judges: list[JudgeOrderConsistency] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    notes: list[str] = Field(default_factory=list)

    @property
    def flagged(self) -> list[str]:
        """The ids of the flagged judges, in panel order."""
        return [j.judge_id for j in self.judges if j.flagged]
