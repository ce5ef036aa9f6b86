"""Per-metric summaries of a run, built as results stream in, without keeping the results.

A run of 100,000 samples cannot keep 100,000 :class:`~ragqa.schema.PanelResult` objects (each
with its judges' reasons and details) just to summarise them at the end. :class:`RunSummary`
keeps, per (sample, metric), only the numbers :func:`ragqa.report.summarize` reads, in typed
arrays indexed by the sample's position in the dataset (about 8 bytes per number):

- per result: the aggregate's value and spread, whether the quorum was met, whether every judge
  failed, the direction and the aggregation rule;
- per (result, judge): whether the judge scored, returned NaN or failed, its score, its usage
  (calls, prompt and completion tokens, latency, cost), and each repeat's value (one array per
  repeat index, allocated when a result first has that many repeats).

:meth:`RunSummary.summaries` then computes every figure in dataset order with the same
functions as :func:`~ragqa.report.summarize` (``nan_mean``, the :class:`~ragqa.schema.Usage`
sums in the same order, :func:`ragqa.agreement.agreement` on the same judges x samples matrix,
:func:`ragqa.uncertainty.metric_intervals` on the same values), so the summaries equal those of a
report built from all results, bit for bit, whatever order the results arrived in
(``tests/run/test_run_memory.py`` proves it, resumed runs included). Memory is about
``samples x metrics x (21 + (58 + 8 x repeats) x judges)`` bytes: 29 MB for 100,000 samples, one
metric and four judges with one repeat, against several hundred for the results themselves.

Results that have a judge failure are kept whole (:attr:`RunSummary.failed`): the console lists
failures and the exit code counts incomplete pairs.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ragqa._math import nan_mean
from ragqa.report import JudgeSummary, MetricSummary, with_uncertainty
from ragqa.schema import DEFAULT_CONFIDENCE, PanelResult, Usage, check_confidence
from ragqa.uncertainty import calls_per_judgement, metric_intervals

__all__ = ["RunSummary"]

_ABSENT, _FAILED, _NAN, _SCORED = 0, 1, 2, 3
_DIRECTIONS: tuple[Literal["higher"], Literal["lower"]] = ("higher", "lower")


@dataclass
class _JudgeColumns:
    """One judge's numbers on one metric, by sample position."""

    status: bytearray
    score: array[float]
    calls: array[int]
    prompt: array[int]
    completion: array[int]
    latency: array[float]
    cost: array[float]
    has_cost: bytearray
    n_repeats: array[int]
    repeats: list[array[float]] = field(default_factory=list)


@dataclass
class _MetricColumns:
    """One metric's numbers, by sample position."""

    present: bytearray
    direction: bytearray
    rule: bytearray
    value: array[float]
    spread: array[float]
    quorum_met: bytearray
    all_failed: bytearray
    unscored: bytearray
    judges: list[_JudgeColumns] = field(default_factory=list)


def _floats(n: int) -> array[float]:
    return array("d", bytes(8 * n))


def _ints(n: int) -> array[int]:
    return array("q", bytes(8 * n))


def _nans(n: int) -> array[float]:
    return array("d", [math.nan]) * n


class RunSummary:
    """Accumulates a run's results by dataset position; :meth:`summaries` gives the per-metric summaries.

    Args:
        judge_ids: the panel, in display order (the summaries' judges).
        metrics: the run's metric keys, in order (a result of another metric is refused).
        n_samples: samples in the dataset; positions are ``0 .. n_samples - 1``.
        confidence: level of the summaries' confidence intervals, in (0, 1).
        ranges: each metric key's closed score range, to clamp its intervals to (as
            :func:`~ragqa.report.summarize`).

    Raises:
        ValueError: for a confidence outside (0, 1); from :meth:`add`, for a position out of range
            or a metric not of the run.
    """

    def __init__(
        self,
        judge_ids: Sequence[str],
        metrics: Sequence[str],
        n_samples: int,
        *,
        confidence: float = DEFAULT_CONFIDENCE,
        ranges: Mapping[str, tuple[float, float]] | None = None,
    ) -> None:
        """Start empty; a metric's arrays are allocated with its first result."""
        self.confidence = check_confidence(confidence)
        self.ranges = dict(ranges or {})
        self.judge_ids = tuple(judge_ids)
        self.metrics = tuple(metrics)
        self.n_samples = n_samples
        self._metric_index = {key: i for i, key in enumerate(self.metrics)}
        self._judge_index = {jid: i for i, jid in enumerate(self.judge_ids)}
        self._columns: list[_MetricColumns | None] = [None] * len(self.metrics)
        self._labels: list[str | None] = [None] * n_samples
        self._rules: list[tuple[str, int]] = []
        self.count = 0
        """Results added (a result added twice for one position counts twice)."""
        self.failed: dict[tuple[int, int], PanelResult] = {}
        """Results with at least one judge failure, by (position, metric index)."""

    def _metric(self, index: int) -> _MetricColumns:
        columns = self._columns[index]
        if columns is None:
            n = self.n_samples
            columns = _MetricColumns(
                present=bytearray(n),
                direction=bytearray(n),
                rule=bytearray(n),
                value=_floats(n),
                spread=_floats(n),
                quorum_met=bytearray(n),
                all_failed=bytearray(n),
                unscored=bytearray(n),
                judges=[
                    _JudgeColumns(
                        status=bytearray(n),
                        score=_floats(n),
                        calls=_ints(n),
                        prompt=_ints(n),
                        completion=_ints(n),
                        latency=_floats(n),
                        cost=_floats(n),
                        has_cost=bytearray(n),
                        n_repeats=_ints(n),
                    )
                    for _ in self.judge_ids
                ],
            )
            self._columns[index] = columns
        return columns

    def _rule(self, strategy: str, quorum: int) -> int:
        rule = (strategy, quorum)
        if rule not in self._rules:
            self._rules.append(rule)
        return self._rules.index(rule)

    def add(self, position: int, result: PanelResult) -> None:
        """Record ``result`` of the sample at ``position`` (0-based dataset order); a later add replaces it.

        Raises:
            ValueError: when ``position`` is out of range or the metric is not one of the run's.
        """
        if not 0 <= position < self.n_samples:
            raise ValueError(f"position {position} is outside the dataset of {self.n_samples} sample(s)")
        metric = self._metric_index.get(result.metric)
        if metric is None:
            raise ValueError(f"result of metric {result.metric!r}, which is not one of {', '.join(self.metrics)}")
        columns = self._metric(metric)
        agg = result.aggregate
        self._labels[position] = result.sample_id
        columns.present[position] = 1
        columns.direction[position] = _DIRECTIONS.index(result.direction)
        columns.rule[position] = self._rule(agg.strategy, agg.quorum)
        columns.value[position] = agg.value
        columns.spread[position] = agg.spread
        columns.quorum_met[position] = agg.quorum_met
        columns.all_failed[position] = agg.n_failed > 0 and agg.n_ok + agg.n_nan == 0
        columns.unscored[position] = agg.n_ok == 0
        for judge in columns.judges:
            judge.status[position] = _ABSENT
            judge.n_repeats[position] = 0
        failed = False
        for outcome in result.judges:
            j = self._judge_index.get(outcome.judge_id)
            failed = failed or outcome.failure is not None
            if j is None:
                continue
            judge = columns.judges[j]
            if outcome.failure is not None or outcome.score is None:
                judge.status[position] = _FAILED
            elif math.isnan(outcome.score.value):
                judge.status[position] = _NAN
            else:
                judge.status[position] = _SCORED
                judge.score[position] = outcome.score.value
            values = outcome.repeat_values()
            while len(judge.repeats) < len(values):
                judge.repeats.append(_nans(self.n_samples))
            for k, value in enumerate(values):
                judge.repeats[k][position] = value
            judge.n_repeats[position] = len(values)
            usage = outcome.usage
            judge.calls[position] = usage.calls
            judge.prompt[position] = usage.prompt_tokens
            judge.completion[position] = usage.completion_tokens
            judge.latency[position] = usage.latency_s
            judge.has_cost[position] = usage.cost is not None
            judge.cost[position] = usage.cost if usage.cost is not None else 0.0
        if failed:
            self.failed[(position, metric)] = result
        else:
            self.failed.pop((position, metric), None)
        self.count += 1

    def failed_results(self) -> list[PanelResult]:
        """The results with a judge failure, in dataset order (sample, then metric)."""
        return [self.failed[key] for key in sorted(self.failed)]

    def summaries(self) -> list[MetricSummary]:
        """The summaries :func:`ragqa.report.summarize` gives for the same results in dataset order.

        Returns:
            One summary per metric with at least one result, in first-seen dataset order.

        Raises:
            ValueError: when one metric's results were aggregated with different strategies or
                quorums (as :func:`~ragqa.report.summarize`).
        """
        firsts = []
        for index, columns in enumerate(self._columns):
            if columns is not None:
                rows = [p for p in range(self.n_samples) if columns.present[p]]
                if rows:
                    firsts.append((rows[0], index, rows))
        built = [self._summary(index, rows) for _, index, rows in sorted(firsts)]
        judgements = sum(
            judge.n_repeats[p]
            for _, index, rows in firsts
            for judge in self._metric(index).judges
            for p in rows
            if judge.status[p] != _ABSENT
        )
        per_call = calls_per_judgement(sum(summary.usage.calls for summary, _ in built), judgements)
        return [
            with_uncertainty(
                summary,
                metric_intervals(
                    *values, confidence=self.confidence, calls=per_call, bounds=self.ranges.get(summary.metric)
                ),
            )
            for summary, values in built
        ]

    def _summary(
        self, index: int, rows: list[int]
    ) -> tuple[MetricSummary, tuple[list[float], list[list[float]], list[list[list[float]]]]]:
        from ragqa.agreement import agreement

        metric = self.metrics[index]
        columns = self._columns[index]
        assert columns is not None
        rules = {self._rules[columns.rule[p]] for p in rows}
        if len(rules) > 1:
            shown = ", ".join(f"{s} with quorum {q}" for s, q in sorted(rules))
            raise ValueError(f"results of {metric} were aggregated in different ways ({shown}); summarise one run")
        [(strategy, quorum)] = rules
        judges = []
        per_judge = []
        total = Usage()
        matrix = np.full((len(self.judge_ids), len(rows)), np.nan)
        cube: list[list[list[float]]] = [[] for _ in rows]
        for j, jid in enumerate(self.judge_ids):
            column = columns.judges[j]
            scores: list[float] = []
            n_nan = n_failed = calls = prompt = completion = 0
            latency = 0.0
            cost: float | None = None
            for col, p in enumerate(rows):
                status = column.status[p]
                cube[col].append([column.repeats[k][p] for k in range(column.n_repeats[p])])
                if status == _ABSENT:
                    continue
                calls += column.calls[p]
                prompt += column.prompt[p]
                completion += column.completion[p]
                latency = latency + column.latency[p]
                own = column.cost[p] if column.has_cost[p] else None
                cost = None if cost is None and own is None else (cost or 0.0) + (own or 0.0)
                if status == _FAILED:
                    n_failed += 1
                elif status == _NAN:
                    n_nan += 1
                else:
                    value = column.score[p]
                    scores.append(value)
                    if math.isfinite(value):
                        matrix[j, col] = value
            usage = Usage(calls=calls, prompt_tokens=prompt, completion_tokens=completion, latency_s=latency, cost=cost)
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
        aggregates = [columns.value[p] for p in rows]
        n_scored = sum(1 for a in aggregates if not math.isnan(a))
        labels = [self._labels[p] or "" for p in rows]
        summary = MetricSummary(
            metric=metric,
            direction=_DIRECTIONS[columns.direction[rows[0]]],
            strategy=strategy,
            quorum=quorum,
            judges=judges,
            aggregate_mean=nan_mean(aggregates),
            mean_spread=nan_mean([columns.spread[p] for p in rows]),
            n_samples=len(rows),
            n_scored=n_scored,
            n_nan=len(rows) - n_scored,
            n_below_quorum=sum(1 for p in rows if not columns.quorum_met[p]),
            n_all_failed=sum(1 for p in rows if columns.all_failed[p]),
            n_unscored=sum(1 for p in rows if columns.unscored[p]),
            usage=total,
            agreement=agreement(labels, self.judge_ids, matrix),
        )
        return summary, (aggregates, per_judge, cube)
