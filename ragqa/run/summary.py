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
from numpy.typing import NDArray

from ragqa._ids import IdView
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
    n_repeats: array[int]  # unsigned 16-bit: at most 65,535 repeats
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
        labels: every sample's id by position (the run's, e.g. :class:`~ragqa._ids.CompactIds`),
            so the summary keeps none of its own; ``None``: each result's ``sample_id`` is kept.

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
        labels: Sequence[str] | None = None,
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
        self._given_labels = labels
        self._labels: list[str | None] = [None] * n_samples if labels is None else []
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
                        n_repeats=array("H", bytes(2 * n)),
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
        if self._given_labels is None:
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

        One metric's values are built at a time, as arrays (never a Python object per sample), so
        the memory they take at the end is a few arrays of one metric.

        Returns:
            One summary per metric with at least one result, in first-seen dataset order.

        Raises:
            ValueError: when one metric's results were aggregated with different strategies or
                quorums (as :func:`~ragqa.report.summarize`).
        """
        firsts = []
        for index, columns in enumerate(self._columns):
            if columns is not None:
                present = np.frombuffer(columns.present, dtype=np.uint8)
                first = int(present.argmax()) if present.size else 0
                if present.size and present[first]:
                    firsts.append((first, index))
        calls = judgements = 0
        for _, index in firsts:
            columns = self._metric(index)
            rows = self._rows(columns)
            for judge in columns.judges:
                judged = np.frombuffer(judge.status, dtype=np.uint8)[rows] != _ABSENT
                calls += int(np.frombuffer(judge.calls, dtype=np.int64)[rows][judged].sum())
                judgements += int(np.frombuffer(judge.n_repeats, dtype=np.uint16)[rows][judged].astype(np.int64).sum())
        per_call = calls_per_judgement(calls, judgements)
        out = []
        for _, index in sorted(firsts):
            summary, values = self._summary(index, self._rows(self._metric(index)))
            out.append(
                with_uncertainty(
                    summary,
                    metric_intervals(
                        *values, confidence=self.confidence, calls=per_call, bounds=self.ranges.get(summary.metric)
                    ),
                )
            )
        return out

    def scores(self, metric: str) -> NDArray[np.float64]:
        """Each judge's score on ``metric`` per sample, as :meth:`summaries` builds it for agreement.

        Args:
            metric: a metric key of the run.

        Returns:
            ``(n_judges, n_samples_with_a_result)`` float64, judges in panel order and samples in
            dataset order; NaN where the judge failed, returned NaN or was not asked. Empty (0
            columns) for a metric without results.

        Raises:
            KeyError: for a metric not of the run.
        """
        columns = self._columns[self._metric_index[metric]]
        if columns is None:
            return np.full((len(self.judge_ids), 0), np.nan)
        rows = self._rows(columns)
        matrix = np.full((len(self.judge_ids), len(rows)), np.nan)
        for j, column in enumerate(columns.judges):
            scored = np.frombuffer(column.status, dtype=np.uint8)[rows] == _SCORED
            values = np.frombuffer(column.score, dtype=np.float64)[rows][scored]
            matrix[j, scored] = np.where(np.isfinite(values), values, np.nan)
        return matrix

    @staticmethod
    def _rows(columns: _MetricColumns) -> NDArray[np.intp]:
        """The positions with a result of this metric, in dataset order."""
        return np.flatnonzero(np.frombuffer(columns.present, dtype=np.uint8))

    def _summary(
        self, index: int, rows: NDArray[np.intp]
    ) -> tuple[
        MetricSummary,
        tuple[NDArray[np.float64], list[NDArray[np.float64]], NDArray[np.float64] | list[list[list[float]]]],
    ]:
        from ragqa.agreement import agreement

        metric = self.metrics[index]
        columns = self._columns[index]
        assert columns is not None
        rule_of = np.frombuffer(columns.rule, dtype=np.uint8)[rows]
        rules = {self._rules[r] for r in np.unique(rule_of).tolist()}
        if len(rules) > 1:
            shown = ", ".join(f"{s} with quorum {q}" for s, q in sorted(rules))
            raise ValueError(f"results of {metric} were aggregated in different ways ({shown}); summarise one run")
        [(strategy, quorum)] = rules
        judges = []
        per_judge = []
        total = Usage()
        matrix = np.full((len(self.judge_ids), len(rows)), np.nan)
        width = max(  # the most repeats of a judge on these rows, as score_cube makes it
            (int(np.frombuffer(c.n_repeats, dtype=np.uint16)[rows].max()) for c in columns.judges if len(rows)),
            default=0,
        )
        width = width or 1
        cube = np.full((len(rows), len(self.judge_ids), width), np.nan)
        for j, jid in enumerate(self.judge_ids):
            column = columns.judges[j]
            status = np.frombuffer(column.status, dtype=np.uint8)[rows]
            n_repeats = np.frombuffer(column.n_repeats, dtype=np.uint16)[rows]
            for k, repeat in enumerate(column.repeats[:width]):
                values = np.frombuffer(repeat, dtype=np.float64)[rows]
                cube[:, j, k] = np.where(n_repeats > k, values, np.nan)
            judged = status != _ABSENT
            n_nan = int((status == _NAN).sum())
            n_failed = int((status == _FAILED).sum())
            calls = int(np.frombuffer(column.calls, dtype=np.int64)[rows][judged].sum())
            prompt = int(np.frombuffer(column.prompt, dtype=np.int64)[rows][judged].sum())
            completion = int(np.frombuffer(column.completion, dtype=np.int64)[rows][judged].sum())
            latency = 0.0
            cost: float | None = None
            for p in rows[judged].tolist() if len(rows) else ():  # in dataset order, as summarize adds them
                latency = latency + column.latency[p]
                own = column.cost[p] if column.has_cost[p] else None
                cost = None if cost is None and own is None else (cost or 0.0) + (own or 0.0)
            scored = status == _SCORED
            scores = np.frombuffer(column.score, dtype=np.float64)[rows][scored]
            matrix[j, scored] = np.where(np.isfinite(scores), scores, np.nan)
            usage = Usage(calls=calls, prompt_tokens=prompt, completion_tokens=completion, latency_s=latency, cost=cost)
            total = total + usage
            per_judge.append(scores)
            judges.append(
                JudgeSummary(
                    judge_id=jid,
                    mean=_nan_mean(scores),
                    n_scored=int(scores.size),
                    n_nan=n_nan,
                    n_failed=n_failed,
                    usage=usage,
                )
            )
        aggregates = np.frombuffer(columns.value, dtype=np.float64)[rows]
        n_scored = int((~np.isnan(aggregates)).sum())
        labels = _Labels(self._given_labels if self._given_labels is not None else self._labels, rows)
        summary = MetricSummary(
            metric=metric,
            direction=_DIRECTIONS[columns.direction[int(rows[0])]],
            strategy=strategy,
            quorum=quorum,
            judges=judges,
            aggregate_mean=_nan_mean(aggregates),
            mean_spread=_nan_mean(np.frombuffer(columns.spread, dtype=np.float64)[rows]),
            n_samples=len(rows),
            n_scored=n_scored,
            n_nan=len(rows) - n_scored,
            n_below_quorum=int((np.frombuffer(columns.quorum_met, dtype=np.uint8)[rows] == 0).sum()),
            n_all_failed=int(np.frombuffer(columns.all_failed, dtype=np.uint8)[rows].sum()),
            n_unscored=int(np.frombuffer(columns.unscored, dtype=np.uint8)[rows].sum()),
            usage=total,
            agreement=agreement(labels, self.judge_ids, matrix),
        )
        if n_scored == 1:  # the aggregate's interval then reads the one sample's repeats as lists (summarize's form)
            n_of = [np.frombuffer(c.n_repeats, dtype=np.uint16)[rows] for c in columns.judges]
            listed = [[cube[i, j, : int(n_of[j][i])].tolist() for j in range(len(n_of))] for i in range(len(rows))]
            return summary, (aggregates, per_judge, listed)
        return summary, (aggregates, per_judge, cube)


def _nan_mean(values: NDArray[np.float64]) -> float:
    """:func:`ragqa._math.nan_mean` of an array, without a Python float per value (``fsum`` is exact: same result)."""
    finite = values[~np.isnan(values)]
    return math.fsum(finite) / finite.size if finite.size else math.nan


class _Labels(IdView):
    """The ids of some positions (``rows``) of the run's ids, read when asked (the contested samples)."""

    def __init__(self, labels: Sequence[str | None], rows: NDArray[np.intp]) -> None:
        self._labels = labels
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    def _one(self, index: int) -> str:
        return self._labels[int(self._rows[index])] or ""
