"""Fit the cascade's escalation rule on labelled data: the fewest tier-2 calls that keep agreement.

"Trust or Escalate" (Jung, Brahman and Choi, ICLR 2025, arXiv:2407.18370) calibrates when a cheap
judge is trusted on a labelled set so that the cascade's agreement with humans stays at a chosen
level. This is the same idea on ragqa's rule (:class:`ragqa.jury.cascade.CascadeRule`), searched on a
grid instead of with their fixed-sequence test (so without their finite-sample guarantee):

1. an audit run (``--cascade-audit``: every tier scored every sample) of a labelled dataset gives,
   per (sample, metric), tier 1's values, the full panel's aggregate, and the human verdict
   (label >= the pass label);
2. for every rule of the grid (``spread`` in {off, 0.1, ..., 1.0}, ``margin`` in {0, 0.025, ..., 0.3},
   ``split`` on or off), the cascade's verdict on each item is tier 1's aggregate's where the rule
   does not escalate and the full panel's where it does;
3. among the rules whose verdicts agree with the human labels on at least ``target`` of the items
   (default: the full panel's own agreement less ``tolerance``, 0.01), the one with the fewest tier-2
   calls wins (ties: the higher agreement, then the larger margin). When no rule reaches the target,
   the rule that escalates everything is returned (``reached`` False).

Tier 1's aggregate is taken as the run takes it: by the audit run's aggregation strategy and quorum
(``ragqa.aggregation``, recorded in each result's aggregate; :func:`ragqa.aggregate.aggregate`). A run
that votes per statement (``claim-vote``, ``dawid-skene``) is refused: its tier-1 aggregate needs the
metric's statements, which the fit does not rebuild. :func:`write_fit` writes the fit as the file
``ragqa.jury.cascade.fit`` reads (:func:`ragqa.jury.cascade.read_fit`); the run's header then names the
data it came from.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

from ragqa.aggregate import STRATEGIES, Strategy, aggregate
from ragqa.errors import ConfigError
from ragqa.jury.cascade import (
    FIT_FORMAT,
    CascadeRule,
    Reading,
    first_reason,
    interval_contains,
    read_item,
    tier_one,
    tier_two,
)
from ragqa.render.atomic import replace_text
from ragqa.report import Report
from ragqa.schema import PanelResult
from ragqa.thresholds import Direction, passes

__all__ = ["MARGINS", "SPREADS", "CascadeFit", "CascadeItem", "fit_body", "fit_cascade", "fit_report", "write_fit"]

SPREADS: tuple[float | None, ...] = (None, *(round(0.1 * i, 1) for i in range(1, 11)))
"""The spread limits the fit tries (``None``: the spread check off)."""
MARGINS: tuple[float, ...] = tuple(round(0.025 * i, 3) for i in range(13))
"""The margins the fit tries, 0 to 0.3."""


@dataclass(frozen=True)
class CascadeItem:
    """One labelled (sample, metric) of an audit run, as the fit needs it.

    Attributes:
        values: per tier-1 judge that scored, its value per repeat.
        tier1: tier 1's aggregate by the run's strategy and quorum (NaN when none scored, or below quorum).
        full: the full panel's aggregate.
        label: the human verdict (pass True), or ``None`` when the sample has no label.
        tier2_calls: tier 2's calls on the item (its provider calls, or its judgements when none).
        direction: the metric's direction.
        threshold: the metric's threshold; ``None``: the one given to :func:`fit_cascade`.
    """

    values: tuple[tuple[float, ...], ...]
    tier1: float
    full: float
    label: bool | None
    tier2_calls: int
    direction: Direction = "higher"
    threshold: float | None = None

    @classmethod
    def of(
        cls, result: PanelResult, *, tier2: Sequence[str], label: bool | None, threshold: float | None = None
    ) -> CascadeItem:
        """The item of one audit-run result (every judge of both tiers present).

        Tier 1's aggregate is that of the result's own strategy and quorum
        (:attr:`ragqa.schema.Aggregate.strategy`), computed over the tier-1 outcomes as the run's
        evaluator computes it when it decides an escalation.

        Raises:
            ConfigError: when the result was aggregated by a vote per statement (``claim-vote``,
                ``dawid-skene``); the message names ``ragqa.aggregation.strategy`` and the fix.
        """
        strategy = result.aggregate.strategy
        if strategy not in STRATEGIES:
            key = "ragqa.aggregation.strategy"
            raise ConfigError(
                f"cannot fit the cascade on {result.metric} of sample {result.sample_id!r}: it was aggregated by "
                f"{strategy!r}, a vote per statement the fit does not rebuild; set {key} to one of "
                f"{', '.join(STRATEGIES)} for the audit run (ragqa calibrate --fit-cascade)",
                key=key,
            )
        tier1 = tier_one(result.judges, tier2)
        second = tier_two(result.judges, tier2)
        calls = sum(o.usage.calls for o in second)
        return cls(
            values=tuple(tuple(o.repeat_values()) for o in tier1 if o.ok),
            tier1=aggregate(
                [o.score.value for o in tier1 if o.score is not None],
                n_failed=sum(1 for o in tier1 if not o.ok),
                strategy=cast(Strategy, strategy),
                quorum=result.aggregate.quorum,
            ).value,
            full=result.aggregate.value,
            label=label,
            tier2_calls=calls if calls else len(second),
            direction=result.direction,
            threshold=threshold,
        )


@dataclass(frozen=True)
class CascadeFit:
    """A fitted escalation rule and how it did on the labelled items.

    Attributes:
        rule: the rule.
        data: what it was fitted on (the dataset's name and the label field).
        threshold: the threshold the verdicts were read against (``None``: each item's own).
        n: labelled items used.
        target: the agreement with the labels a rule had to reach, in [0, 1].
        agreement: the fitted cascade's agreement with the labels, in [0, 1].
        full_agreement: the full panel's agreement with the labels, in [0, 1].
        tier2_share: the fitted cascade's tier-2 calls over the full panel's, in [0, 1].
        escalation_rate: the share of items it escalates, in [0, 1].
        reached: whether some rule reached ``target`` (else ``rule`` escalates everything).
    """

    rule: CascadeRule
    data: str
    threshold: float | None
    n: int
    target: float
    agreement: float
    full_agreement: float
    tier2_share: float
    escalation_rate: float
    reached: bool


def fit_cascade(
    items: Sequence[CascadeItem],
    *,
    threshold: float | None = None,
    target: float | None = None,
    tolerance: float = 0.01,
    data: str = "labelled data",
) -> CascadeFit:
    """Fit the rule on labelled items (the procedure and its source are in the module docstring).

    Args:
        items: the audit run's labelled items (items without a label or a full aggregate are left out).
        threshold: the pass threshold of items that carry none (:attr:`CascadeItem.threshold`).
        target: the agreement with the labels a rule must reach, in [0, 1]; ``None``: the full
            panel's agreement less ``tolerance``.
        tolerance: how much agreement below the full panel's the default target allows (>= 0).
        data: what the items come from, written into the fit (and so into the run's header).

    Returns:
        The :class:`CascadeFit`.

    Raises:
        ValueError: when no item has a label and a full aggregate, ``target`` is outside [0, 1], or an
            item has no threshold and none is given.
    """
    if any(i.threshold is None for i in items) and threshold is None:
        raise ValueError("an item has no threshold and fit_cascade was given none")
    items = [i if i.threshold is not None else dataclasses.replace(i, threshold=threshold) for i in items]
    used = [i for i in items if i.label is not None and math.isfinite(i.full)]
    if not used:
        raise ValueError("no labelled item with a full-panel aggregate to fit the cascade on; run with --cascade-audit")
    if target is not None and not 0.0 <= target <= 1.0:
        raise ValueError(f"target agreement must lie in [0, 1], got {target}")
    full_verdicts = [passes(i.full, _cut(i), i.direction) for i in used]
    full_agreement = sum(v == i.label for v, i in zip(full_verdicts, used, strict=True)) / len(used)
    goal = full_agreement - tolerance if target is None else target
    total = sum(i.tier2_calls for i in used) or 1
    # what escalation() reads of an item depends on no value of the grid: read once per item, then each
    # of the grid's 286 rules is a few comparisons per item (escalation() per item and rule: seconds)
    facts = [_facts(item) for item in used]
    best: tuple[float, float, float, CascadeRule, float] | None = None
    for spread, margin, split in itertools.product(SPREADS, MARGINS, (False, True)):
        rule = CascadeRule(spread=spread, margin=margin, split=split, interval=True)
        calls = agree = escalated = 0
        for fact in facts:
            up = _escalates(fact, spread, margin, split)
            agree += fact.agree_up if up else fact.agree_down
            calls += fact.tier2_calls if up else 0
            escalated += up
        share, agreement = calls / total, agree / len(used)
        if agreement + 1e-12 < goal:
            continue
        key = (share, -agreement, -margin)
        if best is None or key < best[:3]:
            best = (share, -agreement, -margin, rule, escalated / len(used))
    if best is None:
        everything = CascadeRule(spread=0.0, margin=math.inf, split=True)
        return CascadeFit(
            everything, data, threshold, len(used), goal, full_agreement, full_agreement, 1.0, 1.0, reached=False
        )
    share, neg_agreement, _, rule, rate = best
    return CascadeFit(rule, data, threshold, len(used), goal, -neg_agreement, full_agreement, share, rate, reached=True)


class _Facts(NamedTuple):
    """What the fit reads of one labelled item (:func:`_facts`), the same under every rule of the grid."""

    always: bool
    """It escalates under every fitted rule: ``unscored``, or the ``interval`` check (always on in a fit)."""
    reading: Reading
    """The rest of what :func:`~ragqa.jury.cascade.escalation` reads (:func:`~ragqa.jury.cascade.read_item`)."""
    agree_up: bool
    """The full panel's verdict agrees with the label (what escalating gives)."""
    agree_down: bool
    """Tier 1's verdict agrees with the label (what standing gives)."""
    tier2_calls: int
    """The tier-2 calls escalating costs."""


def _cut(item: CascadeItem) -> float:
    assert item.threshold is not None  # set by fit_cascade
    return item.threshold


def _facts(item: CascadeItem) -> _Facts:
    """What :func:`~ragqa.jury.cascade.escalation` reads of a labelled item, for any rule of the grid."""
    cut = _cut(item)
    reading = read_item(item.values, item.tier1, cut, item.direction)
    return _Facts(
        always=reading.unscored or interval_contains(item.values, cut),
        reading=reading,
        agree_up=passes(item.full, cut, item.direction) == item.label,
        agree_down=passes(item.tier1, cut, item.direction) == item.label,
        tier2_calls=item.tier2_calls,
    )


def _escalates(fact: _Facts, spread: float | None, margin: float, split: bool) -> bool:
    """Whether the rule ``(spread, margin, split, interval on)`` escalates the item of :func:`_facts`.

    :func:`~ragqa.jury.cascade.first_reason`, the checks :func:`~ragqa.jury.cascade.escalation`
    runs, on what :func:`_facts` read once.
    """
    return fact.always or first_reason(fact.reading, spread=spread, margin=margin, split=split) is not None


def fit_report(
    report: Report,
    labels: Mapping[str, float],
    *,
    pass_label: float,
    thresholds: Mapping[str, float],
    target: float | None = None,
    data: str = "labelled data",
) -> CascadeFit:
    """Fit the rule on an audit run of a labelled dataset (``ragqa calibrate --fit-cascade``).

    Args:
        report: the audit run's report (``--cascade-audit``; its summaries carry the cascade's tiers).
        labels: ``{sample id: label}``; a label ``>= pass_label`` passes.
        pass_label: the passing label.
        thresholds: per metric key, the threshold to read verdicts against when the run had none
            (e.g. the calibrated panel threshold).
        target: as :func:`fit_cascade`.
        data: what the labels come from (written into the fit).

    Returns:
        The :class:`CascadeFit` of :func:`fit_cascade` over the run's (sample, metric) items that have
        a threshold (the run's, else ``thresholds``'); items of samples without a label are left out.

    Raises:
        ValueError: as :func:`fit_cascade` (no labelled item, or ``target`` outside [0, 1]).
        ConfigError: when the run had no cascade audit (``ragqa.jury.cascade`` not enabled).
    """
    by_metric = {s.metric: s for s in report.summaries}
    cascades = [s.cascade for s in report.summaries if s.cascade is not None and s.cascade.audit]
    if not cascades:
        raise ConfigError(
            "--fit-cascade needs the cascade's tiers: enable ragqa.jury.cascade with its tier-2 judges",
            key="ragqa.jury.cascade.enabled",
        )
    items = []
    for result in report.results:
        summary = by_metric.get(result.metric)
        if summary is None or summary.cascade is None:
            continue
        cut = summary.cascade.threshold if summary.cascade.threshold is not None else thresholds.get(result.metric)
        label = labels.get(result.sample_id)
        if cut is None:
            continue
        verdict = None if label is None else label >= pass_label
        items.append(CascadeItem.of(result, tier2=cascades[0].tier2, label=verdict, threshold=cut))
    return fit_cascade(items, target=target, data=data)


def fit_body(fit: CascadeFit) -> dict[str, Any]:
    """``fit`` as the JSON object of its file (format :data:`FIT_FORMAT`), as :func:`write_fit` writes it.

    An infinite margin (the rule that escalates everything) is written as ``1e9``, which JSON can
    hold; every other value is kept as it is, so the object reads back from the file unchanged.
    """
    rule = fit.rule
    return {
        "format": FIT_FORMAT,
        "spread": rule.spread,
        "margin": rule.margin if math.isfinite(rule.margin) else 1e9,
        "split": rule.split,
        "interval": rule.interval,
        "data": fit.data,
        "threshold": fit.threshold,
        "n": fit.n,
        "target": fit.target,
        "agreement": fit.agreement,
        "full_agreement": fit.full_agreement,
        "tier2_share": fit.tier2_share,
        "escalation_rate": fit.escalation_rate,
        "reached": fit.reached,
    }


def write_fit(fit: CascadeFit, path: str | Path) -> Path:
    """Write :func:`fit_body` of ``fit`` as the JSON file ``ragqa.jury.cascade.fit`` reads, atomically.

    Returns:
        The path written.
    """
    target = Path(path)
    replace_text(target, json.dumps(fit_body(fit), indent=2) + "\n")
    return target
