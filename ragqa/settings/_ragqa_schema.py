"""The settings schema of ragqa's own section (``ragqa.*`` of ``application.yaml``): runs, limits, the jury.

Every model is frozen and forbids unknown fields, like those of :mod:`ragqa.settings._schema`
(the ``spring.*`` side: connections, models and their options, the resolved panel types), whose
base model it shares; :class:`RagqaSettings` is the section's root.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from ragqa.repeats import Reducer
from ragqa.schema import Language
from ragqa.settings._durations import PositiveDuration
from ragqa.settings._schema import Price, ProviderLimits, _Model

__all__ = [
    "AggregationSettings",
    "CacheSettings",
    "CascadeSettings",
    "CircuitBreakerSettings",
    "ConcurrencySettings",
    "JurySettings",
    "LimitsSettings",
    "OrderProbeSettings",
    "ProbeSettings",
    "RagqaSettings",
    "RunSettings",
]


class AggregationSettings(_Model):
    """``ragqa.aggregation``: how per-judge scores become the panel's aggregate."""

    strategy: Literal["mean", "median", "min", "max", "majority", "claim-vote", "dawid-skene"] = "mean"
    """How a sample's judges become its aggregate: a score strategy, or a vote per statement
    (``claim-vote``, ``dawid-skene``; see ``docs/jury.md``)."""
    quorum: int = Field(default=1, ge=1)
    """Minimum successful judges for an aggregate to exist."""


class CascadeSettings(_Model):
    """``ragqa.jury.cascade``: tier 1 scores everything, tier 2 only where tier 1 is unsure (``docs/jury.md``).

    The rule (:func:`ragqa.jury.cascade.escalation`; Jung et al., "Trust or Escalate", ICLR 2025)
    escalates a (sample, metric) when tier 1's judges fall on both sides of the threshold
    (``split``), their spread is above ``spread``, their aggregate lies within ``margin`` of the
    threshold, or (with repeats, ``interval``) its confidence interval contains the threshold. A
    metric without a threshold escalates by ``spread`` only.
    """

    enabled: bool = False
    """Whether the panel runs as a cascade."""
    tier_2: list[str] = Field(default_factory=list)
    """The judge ids of tier 2 (the expensive judges); every other judge is tier 1."""
    spread: float | None = Field(default=0.3, ge=0)
    """Escalate when tier 1's spread (max - min of its judges' scores) is above this; ``null``: off."""
    margin: float = Field(default=0.1, ge=0)
    """Escalate when tier 1's aggregate lies within this distance of the metric's threshold."""
    split: bool = True
    """Escalate when tier 1's judges fall on both sides of the threshold."""
    interval: bool = True
    """With repeats: escalate when the confidence interval of tier 1's values contains the threshold."""
    fit: str | None = None
    """A rule fitted by ``ragqa calibrate --fit-cascade`` (a JSON file); its spread, margin and split
    replace the three above, and the run's header names the data it was fitted on."""


class JurySettings(_Model):
    """``ragqa.jury``: the panel as a jury (``claim-vote`` and ``dawid-skene`` aggregation, the cascade)."""

    extractor: str | None = None
    """The judge id that extracts the statements once per sample for the whole panel; ``None``: the first judge."""
    cascade: CascadeSettings = Field(default_factory=CascadeSettings)
    """The cascade of judge tiers (``docs/jury.md``)."""


class OrderProbeSettings(_Model):
    """``ragqa.probe.order``: the order probe's sample share, seed and flag rate (see ``docs/panel.md``)."""

    share: float = Field(default=0.2, gt=0.0, le=1.0)
    """Share of the samples re-judged with their contexts reversed, in (0, 1]; chosen by a seeded hash of the id."""
    seed: int = 0
    """Seed of the selection: the same seed and ids always select the same samples."""
    max_change_rate: float = Field(default=0.1, ge=0.0, lt=1.0)
    """A judge whose share of changed verdicts exceeds this is flagged, in [0, 1)."""


class ProbeSettings(_Model):
    """``ragqa.probe``: bias probes a run makes beside its scores (never changing them)."""

    enabled: list[Literal["order"]] = Field(default_factory=list)
    """The probes every run makes (``[order]``); ``--probe order`` adds one for a run."""
    order: OrderProbeSettings = Field(default_factory=OrderProbeSettings)


class ConcurrencySettings(_Model):
    """``ragqa.concurrency``."""

    max_concurrent_samples: int = Field(default=16, ge=1)
    """Samples scored at once (judge calls are further bounded per provider)."""


class CacheSettings(_Model):
    """``ragqa.cache``: on-disk cache of finished judge calls (never keyed on the API key)."""

    enabled: bool = False
    directory: Path = Path(".ragqa-cache")


class CircuitBreakerSettings(_Model):
    """``ragqa.circuit-breaker``: stop calling a judge that is down, for a while, then probe it again.

    After ``failure_threshold`` consecutive failed calls of one judge that say it is down (a refused
    or reset connection, a timeout; not an HTTP answer such as a 5xx, which the retry block
    outlives), its next calls fail at once (no request) until ``cool_down`` has passed; then one
    probe call decides whether it closes, and the calls arriving meanwhile wait behind it. Each
    failed probe doubles the cool-down, up to ``max_cool_down``. A judge that hangs (its first
    timeouts come with no answer at all) opens it at once and its other calls are cut short.
    """

    failure_threshold: int = Field(default=5, ge=1)
    """Consecutive down-failures that open the breaker (>= 1)."""
    cool_down: PositiveDuration = timedelta(seconds=1)
    """How long an open breaker refuses calls before its first probe (> 0); doubled after each failed probe."""
    max_cool_down: PositiveDuration = timedelta(seconds=30)
    """The cap of the growing cool-down (>= ``cool_down``)."""

    @model_validator(mode="after")
    def _cap_not_below_start(self) -> CircuitBreakerSettings:
        if self.max_cool_down < self.cool_down:
            raise ValueError(
                f"max-cool-down ({self.max_cool_down.total_seconds():g}s) must not be shorter than "
                f"cool-down ({self.cool_down.total_seconds():g}s)"
            )
        return self


class RunSettings(_Model):
    """``ragqa.run``: limits of one evaluation run as a whole."""

    deadline: PositiveDuration | None = None
    """Wall-clock budget of the whole run (> 0); ``None`` = no deadline. Calls still pending when it
    passes fail as timeouts and are reported, never scored."""


class LimitsSettings(_Model):
    """``ragqa.limits``: input-size guards checked before any judge call."""

    max_contexts_per_sample: int = Field(default=100, ge=1)
    """Most retrieved/reference contexts one sample may carry (>= 1)."""
    max_text_chars: int = Field(default=200_000, ge=1)
    """Longest single text field or context chunk, in characters (>= 1)."""
    max_calls: int | None = Field(default=None, ge=1)
    """Refuse a run whose estimated judge calls exceed this (>= 1); ``None`` = no limit."""
    max_response_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """Largest answer body read from an HTTP judge or embedder, bytes (>= 1024); a larger answer is
    a ``JudgeOutputError`` and reading stops there, so memory does not grow with it."""


class RagqaSettings(_Model):
    """``ragqa``: ragqa's own section."""

    metrics: list[str] = Field(default_factory=lambda: ["faithfulness", "hallucination"])
    """Default metric set (registry names, see ``ragqa metrics``)."""
    metric_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Keyword options per metric name (``noise_sensitivity: {mode: irrelevant}``)."""
    aspects: dict[str, str] = Field(default_factory=dict)
    """User-defined aspects of ``aspect_critic``: name -> definition (a yes/no question); ``aspect_critic(name=x)``."""
    aggregation: AggregationSettings = Field(default_factory=AggregationSettings)
    jury: JurySettings = Field(default_factory=JurySettings)
    probe: ProbeSettings = Field(default_factory=ProbeSettings)
    language: Language = "en"
    """Prompt and report language."""
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    """Level of every confidence interval in reports (``0.95`` = 95 %; see ``docs/uncertainty.md``)."""
    call_plan: Literal["batched", "ragas"] = "batched"
    """How metrics ask their judges: ``batched`` (one call per step for all contexts, questions or texts)
    or ``ragas`` (RAGAS's prompts, one call per item); see ``docs/call-plan.md``."""
    repeats: int = Field(default=1, ge=1)
    """How many times every judge scores every (sample, metric), with independent calls (>= 1;
    Inspect AI's epochs); see ``docs/cli.md`` (Repeats)."""
    repeat_reducer: Reducer = "mean"
    """How a judge's repeats become its score: ``mean``, ``median``, or ``mode`` for binary metrics."""
    concurrency: ConcurrencySettings = Field(default_factory=ConcurrencySettings)
    providers: dict[str, ProviderLimits] = Field(default_factory=dict)
    """Limits per provider key (see :attr:`ResolvedChatModel.provider_key` and ``docs/configuration.md``)."""
    default_limits: ProviderLimits = Field(default_factory=ProviderLimits)
    """Limits of providers not listed in ``providers``."""
    cache: CacheSettings = Field(default_factory=CacheSettings)
    thresholds: dict[str, float] = Field(default_factory=dict)
    """Pass thresholds per metric key (used by the pytest plugin and CLI exit codes)."""
    on_undecided: Literal["fail", "pass", "warn"] = "fail"
    """What a threshold gate whose confidence interval contains the threshold counts as: ``fail``
    (exit 4, a failed test), ``pass``, or ``warn`` (pass with a warning); see ``docs/cli.md``."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Prices per model name (or judge id), per one million tokens."""
    circuit_breaker: CircuitBreakerSettings = Field(default_factory=CircuitBreakerSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)

    @model_validator(mode="before")
    @classmethod
    def _aspects_reach_aspect_critic(cls, data: Any) -> Any:
        """Pass ``aspects`` to ``aspect_critic`` as its ``aspects`` option (under any it sets itself)."""
        if not isinstance(data, dict) or not data.get("aspects"):
            return data
        options = dict(data.get("metric_options") or {})
        critic = dict(options.get("aspect_critic") or {})
        critic["aspects"] = {**data["aspects"], **(critic.get("aspects") or {})}
        return {**data, "metric_options": {**options, "aspect_critic": critic}}
