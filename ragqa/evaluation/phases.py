"""The phases of one sample's scoring around asking the panel: the cascade's tiers and the order probe.

Under a cascade (:mod:`ragqa.jury.cascade`) tier 1 is asked first and tier 2 only for the metrics
whose tier-1 outcome the cascade's rule escalates (:func:`tier_positions`, :func:`escalated`).
With the order probe on (:mod:`ragqa.jury.probe`), the judges that scored each metric are probed
after the scores (:func:`probe_order`), which never change. Used by
:meth:`PanelEvaluator._score_sample <ragqa.evaluation.PanelEvaluator>`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ragqa.judges.base import Judge
from ragqa.jury.cascade import Cascade, tier_one
from ragqa.jury.panel import voting_judges
from ragqa.jury.probe import OrderProbe
from ragqa.metrics.base import Metric, MetricContext
from ragqa.schema import Aggregate, JudgeOutcome, PanelResult, Sample

__all__ = ["escalated", "probe_order", "tier_positions"]


def tier_positions(
    cascade: Cascade | None, judge_ids: Sequence[str], asked: Mapping[str, Sequence[int]]
) -> tuple[dict[str, list[int]], set[int]]:
    """The panel positions asked first per metric key, and tier 2's positions.

    Args:
        cascade: the run's cascade when it escalates (not in audit mode), else ``None``.
        judge_ids: the panel's judge ids, in panel order.
        asked: per metric key, the panel positions to ask (those without a kept outcome).

    Returns:
        ``asked`` less tier 2's positions, and tier 2's positions (both all/empty without a cascade).
    """
    tier2 = set(cascade.tiers(judge_ids)[1]) if cascade is not None else set()
    return {k: [i for i in v if i not in tier2] for k, v in asked.items()}, tier2


def escalated(
    cascade: Cascade,
    judged: Sequence[Metric],
    asked: Mapping[str, Sequence[int]],
    tier2: set[int],
    outcomes: Callable[[Metric], list[JudgeOutcome]],
    combine: Callable[[Metric, Sequence[JudgeOutcome]], Aggregate],
) -> dict[str, list[int]]:
    """Tier 2's panel positions to ask per metric key: those of ``asked`` where the cascade escalates.

    Args:
        cascade: the run's cascade.
        judged: the metrics that need a judge.
        asked: per metric key, the panel positions to ask.
        tier2: tier 2's panel positions.
        outcomes: a metric's outcomes so far, in panel order (kept and tier 1's).
        combine: the run's aggregate of a metric's outcomes.

    Returns:
        Per metric key, tier 2's positions in ``asked`` when :meth:`Cascade.decide
        <ragqa.jury.cascade.Cascade.decide>` gives a reason on tier 1's outcomes and aggregate, else empty.
    """
    later = {}
    for metric in judged:
        tier1 = tier_one(outcomes(metric), cascade.tier2)
        reason = cascade.decide(metric.key, metric.direction, tier1, combine(metric, tier1).value)
        later[metric.key] = [i for i in asked[metric.key] if i in tier2] if reason is not None else []
    return later


async def probe_order(
    probe: OrderProbe,
    sample: Sample,
    chosen: Sequence[Metric],
    results: Sequence[PanelResult],
    shared: Sequence[Judge],
    extractor: int | None,
    context: MetricContext,
    deadline: float | None,
) -> None:
    """Probe the judges that scored each metric of ``sample`` (:meth:`ragqa.jury.probe.OrderProbe.probe`).

    Args:
        probe: the run's order probe (its tally is updated).
        sample: the sample.
        chosen: its metrics.
        results: its panel results, one per metric (the scores the probe never changes).
        shared: the run's first-repeat shared judges, in panel order (their memory holds the verdicts).
        extractor: the extractor's panel position when the panel votes per statement, else ``None``.
        context: the run's metric context.
        deadline: the event-loop time at which the run must end, or ``None``.
    """
    # the judges that scored each metric (under a cascade, tier 2 only where it was asked)
    present = {r.metric: {o.judge_id for o in r.judges} for r in results}

    def judges_for(metric: Metric) -> list[Judge]:
        judges = voting_judges(shared, metric, extractor) if extractor is not None else shared
        return [j for j in judges if j.id in present[metric.key]]

    await probe.probe(sample, chosen, results, judges_for, context, deadline)
