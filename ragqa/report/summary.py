"""The per-metric summaries of a run (pure): judges' means, failures, agreement and uncertainty.

:func:`summarize` computes the :class:`~ragqa.report.model.MetricSummary` of every metric of a
list of panel results at once; the streaming run builds the same summaries column by column
(:mod:`ragqa.run.summary`) and ends with :func:`with_uncertainty` too, and the tests pin their
equality.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ragqa._math import nan_mean
from ragqa.report.model import JudgeSummary, MetricSummary, with_uncertainty
from ragqa.schema import DEFAULT_CONFIDENCE, PanelResult, Usage

__all__ = ["judge_usage", "summarize"]


def summarize(
    results: Sequence[PanelResult],
    judge_ids: Sequence[str],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    ranges: Mapping[str, tuple[float, float]] | None = None,
) -> list[MetricSummary]:
    """Summarise per metric and judge, with the judges' agreement and the uncertainty of each mean (pure).

    Args:
        results: panel results of a run.
        judge_ids: the panel, in display order.
        confidence: level of the confidence intervals, in (0, 1).
        ranges: each metric key's closed score range (``Metric.value_range``; for keys only,
            :func:`ragqa.metrics.value_ranges`): its intervals are clamped to it. A metric without
            one is not clamped.

    Returns:
        One summary per metric, in first-seen order.

    Raises:
        ValueError: when one metric's results were aggregated with different strategies or
            quorums (results of different runs mixed): one summary cannot describe them.

    Agreement between judges (:mod:`ragqa.agreement`: Krippendorff's alpha, pairwise Spearman and
    mean absolute difference, bias, contested samples) is filled in for every metric when the panel
    has two or more judges, ``None`` otherwise. Intervals and the variance decomposition come from
    :func:`ragqa.uncertainty.metric_intervals` (with the judge calls per judgement of the whole
    run, :func:`ragqa.uncertainty.calls_per_judgement`), put on each summary by
    :func:`with_uncertainty`.
    """
    # numpy-backed, imported here so that ``import ragqa`` (and the CLI's start) stays without numpy
    from ragqa.agreement import metric_agreement
    from ragqa.uncertainty import calls_per_judgement, metric_intervals

    by_metric: dict[str, list[PanelResult]] = {}
    for r in results:
        by_metric.setdefault(r.metric, []).append(r)
    summaries = []
    cubes = []
    judgements = 0
    for metric, rows in by_metric.items():
        rules = {(r.aggregate.strategy, r.aggregate.quorum) for r in rows}
        if len(rules) > 1:
            shown = ", ".join(f"{s} with quorum {q}" for s, q in sorted(rules))
            raise ValueError(f"results of {metric} were aggregated in different ways ({shown}); summarise one run")
        [(strategy, quorum)] = rules
        judges = []
        total = Usage()
        per_judge: list[list[float]] = []
        cube: list[list[list[float]]] = [[[] for _ in judge_ids] for _ in rows]
        for j, jid in enumerate(judge_ids):
            scores: list[float] = []
            n_nan = n_failed = 0
            usages: list[Usage] = []
            for i, row in enumerate(rows):
                for o in row.judges:
                    if o.judge_id != jid:
                        continue
                    usages.append(o.usage)
                    cube[i][j] = o.repeat_values()
                    judgements += len(cube[i][j])
                    if o.failure is not None or o.score is None:
                        n_failed += 1
                    elif math.isnan(o.score.value):
                        n_nan += 1
                    else:
                        scores.append(o.score.value)
            usage = judge_usage(usages)
            total = total + usage
            per_judge.append(scores)
            judges.append(
                JudgeSummary(
                    judge_id=jid,
                    mean=nan_mean(scores),
                    n_scored=len(scores),
                    n_nan=n_nan,
                    n_failed=n_failed,
                    usage=usage,
                )
            )
        aggregates = [r.aggregate.value for r in rows]
        n_scored = sum(1 for a in aggregates if not math.isnan(a))
        cubes.append((aggregates, per_judge, cube))
        summaries.append(
            MetricSummary(
                metric=metric,
                direction=rows[0].direction,
                strategy=strategy,
                quorum=quorum,
                judges=judges,
                aggregate_mean=nan_mean(aggregates),
                mean_spread=nan_mean([r.aggregate.spread for r in rows]),
                n_samples=len(rows),
                n_scored=n_scored,
                n_nan=len(rows) - n_scored,
                n_below_quorum=sum(1 for r in rows if not r.aggregate.quorum_met),
                n_all_failed=sum(1 for r in rows if _all_failed(r)),
                n_unscored=sum(1 for r in rows if r.aggregate.n_ok == 0),
                usage=total,
                agreement=metric_agreement(rows, judge_ids),
            )
        )
    per_call = calls_per_judgement(sum(s.usage.calls for s in summaries), judgements)
    return [
        with_uncertainty(
            summary,
            metric_intervals(
                aggregates,
                per_judge,
                cube,
                confidence=confidence,
                calls=per_call,
                bounds=(ranges or {}).get(summary.metric),
            ),
        )
        for summary, (aggregates, per_judge, cube) in zip(summaries, cubes, strict=True)
    ]


def judge_usage(usages: Sequence[Usage]) -> Usage:
    """One judge's usage on one metric: calls and tokens summed, latency and cost with :func:`math.fsum`.

    The float sums are exact, then rounded once, so they do not depend on the order of the
    results (a streaming run adds them as they arrive: :class:`ragqa._math.ExactSum`). The cost
    is ``None`` when no outcome has one; outcomes without a cost add nothing to it.
    """
    costs = [u.cost for u in usages if u.cost is not None]
    return Usage(
        calls=sum(u.calls for u in usages),
        prompt_tokens=sum(u.prompt_tokens for u in usages),
        completion_tokens=sum(u.completion_tokens for u in usages),
        latency_s=math.fsum(u.latency_s for u in usages),
        cost=math.fsum(costs) if costs else None,
    )


def _all_failed(result: PanelResult) -> bool:
    """True when every judge of ``result`` failed (at least one judge, none scored, none NaN)."""
    agg = result.aggregate
    return agg.n_failed > 0 and agg.n_ok + agg.n_nan == 0
