"""The cascade: the cheap judges (tier 1) score everything, the expensive ones (tier 2) only where unsure.

Under ``ragqa.jury.cascade`` the panel is split in two tiers: ``tier-2`` names the expensive judges,
every other judge is tier 1. For each (sample, metric) the evaluator asks tier 1 first; the item
*escalates* to tier 2 when tier 1 is unsure by the rule of :func:`escalation`. An escalated item's
aggregate is taken over every judge of both tiers; a non-escalated one's over tier 1 alone, and the
tier-2 judges are absent from its result (not asked: neither a score nor a failure).

The rule follows the idea of "Trust or Escalate: LLM Judges with Provable Guarantees for Human
Agreement" (Jung, Brahman and Choi, ICLR 2025, arXiv:2407.18370): trust the cheap judge where it is
confident and escalate to a stronger one where it is not. Jung et al. measure confidence by the
cheap judges' agreement when sampled repeatedly ("simulated annotators"); here the tier-1 judges
are the annotators, so their disagreement (spread, verdicts on both sides of the threshold), how
close their aggregate lies to the threshold, and (with repeats) whether its confidence interval
contains the threshold play that part. Their calibration of the escalation threshold on labelled
data is :func:`ragqa.calibration.cascade.fit_cascade` (``ragqa calibrate --fit-cascade``).

:class:`CascadeTally` gathers a run's per-tier calls and cost, its escalation rate and, in an
audit run (``--cascade-audit``: every tier scores every item), how often the cascade's pass/fail
verdicts agree with the full panel's and which share of tier 2's calls the cascade would have made.
Pure Python; numpy is imported only for the interval rule with repeats.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, NamedTuple, get_args

from ragqa._math import finite_mean, mean_or_nan, nan_padded
from ragqa.errors import ConfigError
from ragqa.metrics.base import Metric
from ragqa.report import CascadeSummary, MetricSummary
from ragqa.schema import DEFAULT_CONFIDENCE, Aggregate, JudgeOutcome, PanelResult, Usage
from ragqa.settings import CascadeSettings
from ragqa.thresholds import passes, straddles

__all__ = [
    "FIT_FORMAT",
    "Cascade",
    "CascadeRule",
    "CascadeTally",
    "Reading",
    "Reason",
    "cascade_of",
    "escalation",
    "first_reason",
    "interval_contains",
    "read_fit",
    "read_item",
    "tier_one",
    "tier_two",
]

Reason = Literal["unscored", "split", "spread", "margin", "interval"]
"""Why an item escalated, in the order :func:`escalation` checks: tier 1 has no finite score; its
judges fall on both sides of the threshold; their spread is above the limit; their aggregate lies
within the margin of the threshold; its confidence interval contains the threshold."""

REASONS: tuple[Reason, ...] = get_args(Reason)
"""The reasons in :data:`Reason`'s order (the order the report lists them in)."""


@dataclass(frozen=True)
class CascadeRule:
    """When a (sample, metric) escalates from tier 1 to tier 2 (see :func:`escalation`).

    After Jung et al., "Trust or Escalate", ICLR 2025 (arXiv:2407.18370): escalate where the cheap
    judges are not confident.

    Attributes:
        spread: escalate when tier 1's spread (max - min of its judges' finite scores, metric units)
            is above this; ``None`` turns the check off. The only check for a metric without a threshold.
        margin: escalate when tier 1's aggregate lies within this distance of the threshold
            (``|aggregate - threshold| <= margin``, metric units, >= 0).
        split: escalate when tier 1's judges fall on both sides of the threshold (some pass, some fail).
        interval: with repeats, escalate when the confidence interval of tier 1's values (judges as
            clusters, :func:`ragqa.uncertainty.sample_interval`) contains the threshold.
    """

    spread: float | None = 0.3
    margin: float = 0.1
    split: bool = True
    interval: bool = True

    def __post_init__(self) -> None:
        """Reject a negative spread or margin.

        Raises:
            ValueError: naming the field.
        """
        if self.spread is not None and not self.spread >= 0:
            raise ValueError(f"cascade spread must be >= 0 or None, got {self.spread}")
        if not self.margin >= 0:
            raise ValueError(f"cascade margin must be >= 0, got {self.margin}")

    @classmethod
    def of(cls, data: Mapping[str, object]) -> CascadeRule:
        """The rule of a JSON object: a fit file (:func:`read_fit`) or a results header (:meth:`Cascade.from_header`).

        Args:
            data: ``spread`` (a number, or ``None`` for off), ``margin`` (a number), ``split`` and,
                optionally, ``interval`` (default true); other keys are ignored.

        Raises:
            KeyError: when ``spread``, ``margin`` or ``split`` is missing.
            ValueError: when a number is not one, or is negative.
        """
        spread = data["spread"]
        return cls(
            spread=None if spread is None else float(str(spread)),
            margin=float(str(data["margin"])),
            split=bool(data["split"]),
            interval=bool(data.get("interval", True)),
        )


@dataclass(frozen=True)
class Cascade:
    """A run's cascade: which judges are tier 2, the escalation rule, the thresholds it is read against.

    Attributes:
        tier2: the tier-2 judge ids (every other judge of the panel is tier 1).
        rule: the escalation rule.
        thresholds: ``{metric key: threshold}`` (the run's thresholds); a metric without one
            escalates by the spread check alone (and by ``unscored``).
        audit: every tier scores every item (a plain full-panel run) and the report compares the
            cascade's verdicts with the full panel's.
        source: where the rule's values came from (a fit's data, or ``settings``), for the header.
    """

    tier2: tuple[str, ...]
    rule: CascadeRule = field(default_factory=CascadeRule)
    thresholds: Mapping[str, float] = field(default_factory=dict)
    audit: bool = False
    source: str = "settings"

    def check(self, judge_ids: Sequence[str], *, extractor: str | None = None) -> None:
        """Check the cascade against the panel.

        Args:
            judge_ids: the panel's judge ids.
            extractor: the claim-vote extractor's id, when the panel votes per statement.

        Raises:
            ConfigError: a tier-2 id that is no judge of the panel, no tier-2 judge, no tier-1 judge
                left, or a tier-2 extractor (it would be asked on every sample).
        """
        key = "ragqa.jury.cascade.tier-2"
        unknown = [t for t in self.tier2 if t not in judge_ids]
        if unknown:
            raise ConfigError(
                f"{key} names {', '.join(unknown)}, not a judge of the panel; use some of {', '.join(judge_ids)}",
                key=key,
            )
        if not self.tier2:
            raise ConfigError(f"{key} is empty: name the expensive judges the cascade escalates to", key=key)
        if all(j in self.tier2 for j in judge_ids):
            raise ConfigError(f"{key} names every judge; leave at least one judge in tier 1", key=key)
        if extractor is not None and extractor in self.tier2:
            raise ConfigError(
                f"the claim-vote extractor {extractor!r} is a tier-2 judge, so it would be asked on every sample; "
                "choose a tier-1 judge as ragqa.jury.extractor",
                key="ragqa.jury.extractor",
            )

    def describe(self) -> dict[str, object]:
        """The cascade as the run's header writes it: tier 2, the rule, where its values came from, audit."""
        rule = self.rule
        return {
            "tier2": list(self.tier2),
            "spread": rule.spread,
            "margin": rule.margin,
            "split": rule.split,
            "interval": rule.interval,
            "source": self.source,
            "audit": self.audit,
        }

    def header(self) -> dict[str, object]:
        """The cascade as the results file's header keeps it: :meth:`describe` and the ``thresholds``.

        The thresholds are kept so that ``ragqa report`` can rebuild the cascade section
        (:meth:`from_header`); they are not part of :meth:`describe`, which the run's config
        fingerprint reads (a resumed run's fingerprint stays that of its start).
        """
        return {**self.describe(), "thresholds": dict(self.thresholds)}

    @classmethod
    def from_header(cls, data: Mapping[str, object]) -> Cascade:
        """The cascade of a results file's header ``cascade`` (as :meth:`header` writes it).

        Files written before the header kept ``thresholds`` give a cascade without thresholds: its
        escalations are then recomputed by the ``spread`` check alone (see :func:`escalation`).

        Raises:
            KeyError, TypeError, ValueError: when a field is missing or of the wrong kind.
        """
        thresholds = data.get("thresholds") or {}
        if not isinstance(thresholds, Mapping):
            raise TypeError(f"cascade thresholds must be an object, got {thresholds!r}")
        tier2 = data["tier2"]
        if not isinstance(tier2, list):
            raise TypeError(f"cascade tier2 must be a list, got {tier2!r}")
        return cls(
            tier2=tuple(str(t) for t in tier2),
            rule=CascadeRule.of(data),
            thresholds={str(k): float(str(v)) for k, v in thresholds.items()},
            audit=bool(data.get("audit", False)),
            source=str(data.get("source", "settings")),
        )

    def tiers(self, judge_ids: Sequence[str]) -> tuple[list[int], list[int]]:
        """The panel positions of tier 1 and of tier 2, each in panel order."""
        return (
            [i for i, j in enumerate(judge_ids) if j not in self.tier2],
            [i for i, j in enumerate(judge_ids) if j in self.tier2],
        )

    def decide(
        self, metric: str, direction: Literal["higher", "lower"], tier1: Sequence[JudgeOutcome], value: float
    ) -> Reason | None:
        """Why ``metric`` on one sample escalates, or ``None`` (see :func:`escalation`).

        Args:
            metric: the metric key (its threshold is looked up in :attr:`thresholds`).
            direction: the metric's direction.
            tier1: tier 1's outcomes of the item.
            value: tier 1's aggregate of the item.
        """
        values = [o.repeat_values() for o in tier1 if o.ok]
        return escalation(values, value, self.thresholds.get(metric), direction, self.rule)


FIT_FORMAT = "ragqa-cascade-fit/1"
"""The ``format`` of a fitted rule's JSON file (written by ``ragqa calibrate --fit-cascade``)."""


def read_fit(path: str | Path) -> tuple[CascadeRule, str]:
    """Read a fitted escalation rule: ``(rule, source)``, the source naming the data it was fitted on.

    The file is a JSON object with ``format`` :data:`FIT_FORMAT`, ``spread`` (number or null),
    ``margin``, ``split``, ``interval`` and ``data`` (what it was fitted on), as
    :func:`ragqa.calibration.cascade.fit_cascade` writes it.

    Raises:
        ConfigError: when the file cannot be read or is not such a rule (the message names the file and the fix).
    """
    key = "ragqa.jury.cascade.fit"
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(raw, dict) or raw.get("format") != FIT_FORMAT:
            raise ValueError(f"its format is not {FIT_FORMAT}")
        rule = CascadeRule.of(raw)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{key}: cannot use {path} as a fitted cascade rule ({exc}); write one with ragqa calibrate --fit-cascade",
            key=key,
        ) from exc
    return rule, f"fitted on {raw.get('data', '?')} ({Path(path).name})"


def cascade_of(settings: CascadeSettings) -> Cascade | None:
    """The cascade of ``ragqa.jury.cascade``, or ``None`` when it is not enabled.

    Raises:
        ConfigError: when enabled with no tier-2 judge, or a fit file that cannot be read (:func:`read_fit`).
    """
    if not settings.enabled:
        return None
    if not settings.tier_2:
        raise ConfigError(
            "ragqa.jury.cascade is enabled but tier-2 is empty: name the expensive judges the cascade escalates to",
            key="ragqa.jury.cascade.tier-2",
        )
    if settings.fit is not None:
        rule, source = read_fit(settings.fit)
    else:
        rule = CascadeRule(
            spread=settings.spread, margin=settings.margin, split=settings.split, interval=settings.interval
        )
        source = "settings"
    return Cascade(tier2=tuple(settings.tier_2), rule=rule, source=source)


def tier_one(outcomes: Sequence[JudgeOutcome], tier2: Sequence[str]) -> list[JudgeOutcome]:
    """The outcomes of tier-1 judges (those not in ``tier2``), in their order."""
    return [o for o in outcomes if o.judge_id not in tier2]


def tier_two(outcomes: Sequence[JudgeOutcome], tier2: Sequence[str]) -> list[JudgeOutcome]:
    """The outcomes of tier-2 judges (those in ``tier2``), in their order; :func:`tier_one` has the rest."""
    return [o for o in outcomes if o.judge_id in tier2]


def escalation(
    values: Sequence[Sequence[float]],
    aggregate: float,
    threshold: float | None,
    direction: Literal["higher", "lower"],
    rule: CascadeRule,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Reason | None:
    """Whether tier 1 is unsure of one (sample, metric), and why: the escalation rule of the cascade.

    "Trust or Escalate" (Jung, Brahman and Choi, ICLR 2025, arXiv:2407.18370): a cheap judge's
    verdict is trusted where the judges are confident and escalated to a stronger judge otherwise.
    The checks, in order (the first that fires is the reason):

    1. ``unscored``: no tier-1 judge has a finite score;
    2. ``split`` (with a threshold and ``rule.split``): tier-1 judges (or repeats) on both sides of it;
    3. ``spread`` (``rule.spread`` not ``None``): max - min of the judges' scores above ``rule.spread``;
    4. ``margin`` (with a threshold): ``|aggregate - threshold| <= rule.margin``;
    5. ``interval`` (with a threshold, ``rule.interval`` and repeats): the confidence interval of tier
       1's values, judges as clusters (:func:`ragqa.uncertainty.sample_interval`), contains it.

    A metric without a threshold has no verdict to be unsure of: only ``unscored`` and ``spread`` apply.

    Args:
        values: per tier-1 judge that scored, its value per repeat (one value without repeats; NaN unscored).
        aggregate: tier 1's aggregate of the item (NaN when none).
        threshold: the metric's pass threshold, or ``None``.
        direction: ``higher`` or ``lower`` is better.
        rule: the escalation rule.
        confidence: level of the interval check, in (0, 1).

    Returns:
        The reason, or ``None`` when tier 1's aggregate stands.
    """
    reading = read_item(values, aggregate, threshold, direction)
    reason = first_reason(reading, spread=rule.spread, margin=rule.margin, split=rule.split)
    if (
        reason is None
        and threshold is not None
        and rule.interval
        and interval_contains(values, threshold, confidence=confidence)
    ):
        return "interval"
    return reason


class Reading(NamedTuple):
    """What the first four checks of :func:`escalation` read of one item: the same under every rule."""

    unscored: bool
    """No tier-1 judge has a finite score, or the aggregate is NaN."""
    straddled: bool
    """Tier 1's values (judges and repeats) lie on both sides of the threshold; ``False`` without one."""
    width: float
    """max - min of the judges' finite mean scores, in the metric's units (NaN when unscored)."""
    distance: float | None
    """``|aggregate - threshold|`` in the metric's units; ``None`` without a threshold."""


def read_item(
    values: Sequence[Sequence[float]], aggregate: float, threshold: float | None, direction: Literal["higher", "lower"]
) -> Reading:
    """What :func:`escalation` reads of one item before it looks at a rule.

    A fit that tries many rules on the same items reads each item once
    (:func:`ragqa.calibration.cascade.fit_cascade`) and decides with :func:`first_reason`.

    Args:
        values: per tier-1 judge that scored, its value per repeat (NaN unscored), in the metric's units.
        aggregate: tier 1's aggregate of the item (NaN when none).
        threshold: the metric's pass threshold, or ``None``.
        direction: ``higher`` or ``lower`` is better (which side of the threshold passes).

    Returns:
        The item's :class:`Reading`.
    """
    finite = [m for m in (finite_mean(v) for v in values) if math.isfinite(m)]
    unscored = not finite or math.isnan(aggregate)
    straddled = threshold is not None and straddles([x for v in values for x in v], threshold, direction)
    width = max(finite) - min(finite) if finite else math.nan
    return Reading(unscored, straddled, width, None if threshold is None else abs(aggregate - threshold))


def first_reason(reading: Reading, *, spread: float | None, margin: float, split: bool) -> Reason | None:
    """The first of :func:`escalation`'s checks 1 to 4 that fires on ``reading``, or ``None``.

    Args:
        reading: what :func:`read_item` read of the item (widths and distances in the metric's units).
        spread: the rule's largest tolerated width (``None``: no spread check).
        margin: the rule's margin around the threshold, in the metric's units.
        split: whether the rule escalates a straddled item.

    Returns:
        ``unscored``, ``split``, ``spread`` or ``margin``; ``None`` when none fires (the ``interval``
        check, which needs the values, is :func:`escalation`'s).
    """
    if reading.unscored:
        return "unscored"
    if split and reading.straddled:
        return "split"
    if spread is not None and reading.width > spread:
        return "spread"
    if reading.distance is not None and reading.distance <= margin:
        return "margin"
    return None


def interval_contains(
    values: Sequence[Sequence[float]], threshold: float, *, confidence: float = DEFAULT_CONFIDENCE
) -> bool:
    """The ``interval`` check of :func:`escalation`: tier 1's confidence interval contains ``threshold``.

    The interval is :func:`ragqa.uncertainty.sample_interval` over tier 1's values, judges as
    clusters (a judge with fewer repeats is padded with NaN). It depends on neither the rule's
    spread nor its margin, so a fit over many rules computes it once per item.

    Args:
        values: per tier-1 judge that scored, its value per repeat (NaN unscored).
        threshold: the metric's pass threshold, in its units.
        confidence: the interval's level, in (0, 1).

    Returns:
        True when some judge has repeats and the interval exists and contains ``threshold``;
        False without repeats (no interval to read).
    """
    if not any(len(v) > 1 for v in values):
        return False
    from ragqa.uncertainty import sample_interval  # numpy, imported by a cascade with repeats only

    interval = sample_interval(nan_padded(values), confidence=confidence)
    return interval is not None and interval.contains(threshold)


Combine = Callable[[Metric, Sequence[JudgeOutcome]], Aggregate]
"""The evaluator's aggregate of one metric's outcomes (its strategy and quorum)."""


class _Counts:
    def __init__(self) -> None:
        self.items = 0
        self.escalated = 0
        self.reasons: dict[str, int] = {}
        self.usage1 = Usage()
        self.usage2 = Usage()
        self.usage2_escalated = Usage()
        self.judged1 = 0
        self.judged2 = 0
        self.judged2_escalated = 0
        self.compared = 0
        self.agree = 0
        self.abs_diff: list[float] = []


class CascadeTally:
    """A run's cascade numbers per metric: calls and cost per tier, escalations, and the audit's agreement.

    Fed every result as it is made (:meth:`add`), like the jury's collector; :meth:`attach` puts a
    :class:`~ragqa.report.CascadeSummary` on each metric's summary. The escalation of a result is
    recomputed from its tier-1 outcomes by the same rule the evaluator used, so results read back
    from a file (``--resume``) count as made now.

    In an audit run every judge scored every item; the tally then also takes the cascade's
    aggregate (tier 1's alone where the rule does not escalate, the full panel's where it does) and
    compares its verdict with the full panel's against the metric's threshold.

    Args:
        cascade: the run's cascade.
        metrics: the run's metrics.
        judge_ids: the panel, in order.
        combine: the evaluator's aggregate of a metric's outcomes (to recompute tier 1's aggregate).
    """

    def __init__(self, cascade: Cascade, metrics: Sequence[Metric], judge_ids: Sequence[str], combine: Combine) -> None:
        """Start empty (no I/O)."""
        self.cascade = cascade
        self._metrics = {m.key: m for m in metrics}
        self._ids = list(judge_ids)
        self._combine = combine
        self._counts: dict[str, _Counts] = {}

    def add(self, result: PanelResult) -> None:
        """Count one (sample, metric) result; metrics that need no judge are not counted."""
        metric = self._metrics.get(result.metric)
        if metric is None or not metric.needs_judge:
            return
        c = self._counts.setdefault(result.metric, _Counts())
        tier2 = self.cascade.tier2
        first = tier_one(result.judges, tier2)
        second = tier_two(result.judges, tier2)
        value = self._combine(metric, first).value if second else result.aggregate.value
        reason = self.cascade.decide(result.metric, result.direction, first, value)
        escalated = reason is not None if self.cascade.audit else bool(second)
        c.items += 1
        c.usage1 = sum((o.usage for o in first), Usage()) + c.usage1
        used2 = sum((o.usage for o in second), Usage())
        c.usage2 = c.usage2 + used2
        c.judged1 += len(first)
        c.judged2 += len(second)
        if escalated:
            c.escalated += 1
            c.reasons[reason or "unscored"] = c.reasons.get(reason or "unscored", 0) + 1
            c.usage2_escalated = c.usage2_escalated + used2
            c.judged2_escalated += len(second)
        if not self.cascade.audit:
            return
        cascaded = result.aggregate.value if escalated else value
        full = result.aggregate.value
        if math.isfinite(cascaded) and math.isfinite(full):
            c.abs_diff.append(abs(cascaded - full))
        threshold = self.cascade.thresholds.get(result.metric)
        if threshold is not None and math.isfinite(full):
            c.compared += 1
            c.agree += passes(cascaded, threshold, result.direction) == passes(full, threshold, result.direction)

    def summary(self, metric: str) -> CascadeSummary | None:
        """The cascade section of ``metric``, or ``None`` when no result of it was counted."""
        c = self._counts.get(metric)
        if c is None:
            return None
        tier1, tier2 = self.cascade.tiers(self._ids)
        rule = self.cascade.rule
        by_calls = c.usage2.calls > 0
        share = (
            (c.usage2_escalated.calls / c.usage2.calls if by_calls else c.judged2_escalated / c.judged2)
            if self.cascade.audit and c.judged2
            else math.nan
        )
        return CascadeSummary(
            tier1=[self._ids[i] for i in tier1],
            tier2=[self._ids[i] for i in tier2],
            threshold=self.cascade.thresholds.get(metric),
            spread=rule.spread,
            margin=rule.margin,
            split=rule.split,
            interval=rule.interval,
            source=self.cascade.source,
            n_items=c.items,
            n_escalated=c.escalated,
            reasons={r: c.reasons[r] for r in REASONS if r in c.reasons},
            tier1_usage=c.usage1,
            tier2_usage=c.usage2 if not self.cascade.audit else c.usage2_escalated,
            tier1_judgements=c.judged1,
            tier2_judgements=c.judged2 if not self.cascade.audit else c.judged2_escalated,
            audit=self.cascade.audit,
            full_tier2_usage=c.usage2 if self.cascade.audit else None,
            n_compared=c.compared,
            agreement=c.agree / c.compared if c.compared else math.nan,
            mean_abs_diff=mean_or_nan(c.abs_diff),
            tier2_share=share,
            tier2_share_basis="calls" if by_calls else "judgements",
        )

    def attach(self, summaries: Sequence[MetricSummary], *_: object) -> list[MetricSummary]:
        """``summaries`` with :attr:`~ragqa.report.MetricSummary.cascade` set where the tally has numbers."""
        out = []
        for s in summaries:
            found = self.summary(s.metric)
            out.append(s.model_copy(update={"cascade": found}) if found is not None else s)
        return out
