"""Shapes of results: per-judge outcomes (score, reason, tokens, failure) and the panel's aggregate.

Results keep, per judge, the score, the reason, the intermediate steps, tokens, latency and any
failure, so the report can show every judge next to the aggregate. Part of :mod:`ragqa.schema`,
which re-exports every name.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragqa.score_details import StatementDetails, statement_details

__all__ = [
    "Aggregate",
    "JudgeFailure",
    "JudgeOutcome",
    "MetricScore",
    "PanelResult",
    "RepeatOutcome",
    "Usage",
]


class Usage(BaseModel):
    """Tokens, calls and latency of judge calls; adds up with ``+``.

    Cost is in the currency of the configured price table (``None`` when no price is known).
    """

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    """Number of judge (or embedding) requests that reached a provider (cache hits excluded; a run's
    hits and misses are in :attr:`ragqa.report.Report.cache`)."""
    prompt_tokens: int = 0
    """Input tokens reported by the provider."""
    completion_tokens: int = 0
    """Output tokens reported by the provider."""
    latency_s: float = 0.0
    """Sum of request latencies in seconds (not wall time: calls may overlap)."""
    cost: float | None = None
    """Cost from the price table, or ``None`` when no price is configured for the model."""

    def __add__(self, other: Usage) -> Usage:
        """Sum two usages; cost stays ``None`` only when both are ``None``."""
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            latency_s=self.latency_s + other.latency_s,
            cost=cost,
        )

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class MetricScore(BaseModel):
    """What one metric computed for one sample with one judge.

    ``value`` is in the metric's range, or NaN when the metric is undefined for this sample
    (for example faithfulness of a response with no statements). NaN means "unscored", never 0.
    """

    model_config = ConfigDict(extra="forbid")

    value: float
    """The score, or NaN when undefined for this sample."""
    reason: str | None = None
    """A short human-readable explanation."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Intermediate steps (statements, verdicts, matrices), JSON-serialisable. What assertions and
    reports read from them is typed: :attr:`statement_details`, :attr:`failed_statements`."""

    @property
    def is_nan(self) -> bool:
        """True when the value is NaN (unscored)."""
        return math.isnan(self.value)

    @property
    def statement_details(self) -> StatementDetails:
        """The statements this score checked, their per-statement values and the failing ones.

        Read from :attr:`details` by the one contract of :mod:`ragqa.score_details` (never
        serialised: the results file keeps the details as the metric wrote them).
        """
        return statement_details(self.details)

    @property
    def failed_statements(self) -> list[str]:
        """The statements the judge found failing (unsupported, incorrect, counted against), in order; may be empty."""
        return self.statement_details.failed


class JudgeFailure(BaseModel):
    """A judge that failed on one sample and metric; excluded from the aggregate."""

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    """The failing judge."""
    metric: str
    """The metric being computed."""
    sample_id: str
    """The sample being scored."""
    step: str | None = None
    """The prompt/step that failed (``statements``, ``nli``...), when known."""
    error_type: str
    """The ragqa error class name (``JudgeTimeout``, ``JudgeOutputError``...)."""
    message: str
    """The cause, without secrets."""
    raw: str | None = None
    """The judge's raw output, when it was unparseable."""


class RepeatOutcome(BaseModel):
    """One repeat (epoch) of one judge on one sample and metric: a score or a failure, plus usage.

    Only present when a run judges every (sample, metric, judge) more than once (``repeats > 1``);
    the owning :class:`JudgeOutcome` then holds the score reduced over its repeats.
    """

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0)
    """The repeat's index, 0-based (repeat 0 is the call a single-repeat run makes)."""
    score: MetricScore | None = None
    """The repeat's score, or ``None`` when it failed."""
    failure: JudgeFailure | None = None
    """Why the repeat failed, or ``None``."""
    latency_s: float = 0.0
    """Wall time of this repeat's metric computation, seconds."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and calls spent by this repeat."""


class JudgeOutcome(BaseModel):
    """One judge's result for one sample and metric: a score or a failure, plus usage.

    With repeats (``repeats > 1``), ``score`` is the reduction of the repeats' scores and
    ``repeats`` keeps every repeat; with one repeat, ``repeats`` is empty and nothing else changes.
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    """The judge (chat model id)."""
    score: MetricScore | None = None
    """The score, or ``None`` when the judge failed."""
    failure: JudgeFailure | None = None
    """Why the judge failed, or ``None``."""
    latency_s: float = 0.0
    """Wall time of this judge's whole metric computation, seconds."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and calls spent by this judge on this metric and sample."""
    repeats: list[RepeatOutcome] = Field(default_factory=list)
    """Every repeat's outcome in index order when the run judged more than once; else empty."""

    def repeat_values(self) -> list[float]:
        """Return this judge's score per repeat, NaN for a failed or unscored repeat.

        Returns:
            One value per repeat (index order); ``[score.value]`` (or ``[nan]`` on failure) when
            the run had a single repeat.
        """
        if not self.repeats:
            return [self.score.value if self.score is not None else float("nan")]
        return [r.score.value if r.score is not None else float("nan") for r in self.repeats]

    @property
    def ok(self) -> bool:
        """True when the judge produced a score (possibly NaN)."""
        return self.failure is None and self.score is not None


class Aggregate(BaseModel):
    """The panel's combined score for one sample and metric (see :mod:`ragqa.aggregate`)."""

    model_config = ConfigDict(extra="forbid")

    value: float
    """Aggregate over judges that scored (NaN when none did, or the quorum is not met)."""
    strategy: str
    """The aggregation strategy (``mean``, ``median``, ``min``, ``max``, ``majority``, ``claim-vote``,
    ``dawid-skene``)."""
    spread: float
    """max - min of the judges' non-NaN scores (0 with one judge, NaN with none)."""
    n_ok: int
    """Judges with a non-NaN score."""
    n_nan: int
    """Judges that ran but returned NaN (metric undefined for them)."""
    n_failed: int
    """Judges that failed (excluded)."""
    quorum: int
    """Minimum successful judges required for an aggregate."""
    quorum_met: bool
    """Whether ``n_ok >= quorum``."""


class PanelResult(BaseModel):
    """One metric on one sample across the whole panel.

    Every output writes it in one JSON shape, :func:`ragqa.render.records.result_record` (schema:
    ``ragqa/schemas/result-record.schema.json``), read back by
    :func:`ragqa.render.records.read_result_record`.
    """

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    """The sample."""
    metric: str
    """The metric's name (with its mode, e.g. ``noise_sensitivity(mode=relevant)``)."""
    direction: Literal["higher", "lower"]
    """Whether higher or lower scores are better."""
    judges: list[JudgeOutcome]
    """Every judge's outcome, in panel order."""
    aggregate: Aggregate
    """The combined score."""

    def by_judge(self) -> dict[str, float]:
        """Return ``{judge_id: value}`` for judges that produced a score (NaN kept)."""
        return {o.judge_id: o.score.value for o in self.judges if o.score is not None}

    @property
    def failures(self) -> list[JudgeFailure]:
        """Failures of excluded judges."""
        return [o.failure for o in self.judges if o.failure is not None]
