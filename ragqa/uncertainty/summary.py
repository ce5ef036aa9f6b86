"""A metric summary's uncertainty from a run's numbers: intervals, variance split, cost per judgement.

:func:`metric_intervals` is what :func:`ragqa.report.summarize` and the streamed
:class:`ragqa.run.summary.RunSummary` compute for each metric, from the same numbers in the same
order, so both give the same summaries bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ragqa._math import nan_padded
from ragqa.schema import Decomposition, Interval
from ragqa.uncertainty.intervals import mean_interval, sample_interval
from ragqa.uncertainty.variance import decompose, score_cube

__all__ = ["calls_per_judgement", "metric_intervals"]


def calls_per_judgement(calls: int, judgements: int) -> float | None:
    """Judge calls per judgement: per (sample, metric, judge, repeat) metric computation of a run.

    Args:
        calls: provider calls of the run (:attr:`ragqa.schema.Usage.calls`; cache hits excluded).
        judgements: (sample, metric, judge, repeat) computations attempted, failed ones included.

    Returns:
        ``calls / judgements``; ``None`` when the run made no provider call (a warm cache, judge-free
        metrics) or judged nothing, since the cost of more judgements is then unknown.
    """
    if calls <= 0 or judgements <= 0:
        return None
    return calls / judgements


def metric_intervals(
    aggregates: Sequence[float] | NDArray[np.float64],
    judge_scores: Sequence[Sequence[float] | NDArray[np.float64]],
    scores: Sequence[Sequence[Sequence[float]]] | NDArray[np.float64],
    *,
    confidence: float,
    calls: float | None,
    bounds: tuple[float, float] | None = None,
    split: Decomposition | None = None,
) -> tuple[Interval | None, list[Interval | None], Decomposition | None]:
    """One metric's intervals and variance decomposition (pure).

    The aggregate's interval is :func:`~ragqa.uncertainty.mean_interval` (clustered standard error,
    samples as clusters) of the per-sample aggregates; with one sample aggregated, that sample's
    interval across its judges x repeats (:func:`~ragqa.uncertainty.sample_interval`, the interval
    an assertion or a ``ragqa test`` case gates on), so one sample gets the same gate from every
    entry point. Each judge's of its finite per-sample scores;
    both clamped to ``bounds`` when given. The decomposition is :func:`~ragqa.uncertainty.decompose`
    of every judge's repeat values.

    Args:
        aggregates: the per-sample aggregates (NaN where none), in sample order.
        judge_scores: per judge, its finite per-sample scores.
        scores: per sample, per judge (same order), its repeat values (``[]`` when it did not judge
            the sample, NaN for a failed repeat; :func:`~ragqa.uncertainty.score_cube`).
        confidence: the intervals' level, in (0, 1).
        calls: judge calls per judgement of the run (:func:`calls_per_judgement`), for the advice's cost.
        bounds: the metric's closed range (``Metric.value_range``), or ``None`` not to clamp.
        split: the decomposition of ``scores`` when computed already (a run's, from blocks of its
            cube: :func:`ragqa.uncertainty.variance_stream.blocked_decompose`); ``scores`` is then
            read only for the one-sample aggregate interval.

    Returns:
        ``(aggregate interval, judge intervals in order, decomposition)``; an interval is ``None``
        with fewer than two finite values, the decomposition with fewer than two samples scored
        by the judges it uses.

    Raises:
        ValueError: for a confidence outside (0, 1).
    """
    judges = [mean_interval(values, confidence=confidence, bounds=bounds) for values in judge_scores]
    decomposition = split if split is not None else decompose(score_cube(scores), calls_per_judgement=calls)
    return (
        _aggregate_interval(aggregates, scores, confidence=confidence, bounds=bounds),
        judges,
        decomposition if decomposition.components.n_samples >= 2 else None,
    )


def _aggregate_interval(
    aggregates: Sequence[float] | NDArray[np.float64],
    scores: Sequence[Sequence[Sequence[float]]] | NDArray[np.float64],
    *,
    confidence: float,
    bounds: tuple[float, float] | None,
) -> Interval | None:
    """The aggregate's interval: across samples, or across judges x repeats when one sample has an aggregate."""
    finite = np.flatnonzero(~np.isnan(np.asarray(aggregates, dtype=float)))[:2].tolist()  # one, or more
    if len(finite) == 1 and finite[0] < len(scores):
        if isinstance(scores, np.ndarray):  # a cube: a judge's row ends at its last value (RunSummary passes lists)
            cells = [
                row[: int(np.flatnonzero(~np.isnan(row)).max()) + 1]
                for row in scores[finite[0]]
                if (~np.isnan(row)).any()
            ]
            rows = [list(map(float, cell)) for cell in cells]
        else:
            rows = [list(values) for values in scores[finite[0]] if len(values)]
        padded = nan_padded(rows)
        return sample_interval(padded, confidence=confidence, bounds=bounds) if padded else None
    return mean_interval(aggregates, confidence=confidence, bounds=bounds)
