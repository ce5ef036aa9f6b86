"""Per-metric summaries of a run, built as results stream in, without keeping the results.

A run of 100,000 samples cannot keep 100,000 :class:`~ragqa.schema.PanelResult` objects (each
with its judges' reasons and details) just to summarise them at the end. :class:`RunSummary`
keeps, per (sample, metric), only the numbers :func:`ragqa.report.summarize` reads by sample, in
typed arrays indexed by the sample's position in the dataset, and sums the rest as results arrive:

- per result: the aggregate's value (8 bytes) and one byte of flags (present, direction, quorum
  met, every judge failed, none scored); the aggregation rule once per metric, or one byte per
  result once a metric's results come with different rules;
- per (result, judge): whether the judge scored, returned NaN or failed (1 byte) and its score
  (8 bytes, float64); each repeat's value and the repeat count only once some result's values
  are not its score alone (``repeats > 1``: one float64 array per repeat index, 32-bit counts);
- summed per (metric, judge): calls and tokens (integers), latency and cost (exact running sums,
  :class:`ragqa._math.ExactSum`, which end as :func:`math.fsum` of the values whatever their
  order), the repeat values counted; per metric, the spreads' exact sum.

:meth:`RunSummary.summaries` then computes every figure in dataset order with the same
functions as :func:`~ragqa.report.summarize` (``nan_mean``, :func:`ragqa.report.summary.judge_usage`'s
exact sums, :func:`ragqa.agreement.agreement` on the same judges x samples matrix, read in blocks
of samples, :func:`ragqa.uncertainty.metric_intervals` on the same values, the variance
decomposition from blocks of the same cube: :mod:`ragqa.uncertainty.variance_stream`), so the
summaries equal those of a report built from all results, bit for bit, whatever order the results arrived in
(``tests/run/test_run_memory.py`` proves it, resumed runs included). Memory is about
``samples x metrics x (9 + 9 x judges)`` bytes with one repeat (``+ (4 + 8 x repeats) x judges`` with
more): 4.5 MB for 100,000 samples, one metric and four judges, against several hundred MB for the
results themselves. A pair (sample, metric) is added once, except one whose result had a judge
failure: those are kept whole, and a later result (``--retry-failed``) replaces it.

Results that have a judge failure are kept whole (:attr:`RunSummary.failed`): the console lists
failures and the exit code counts incomplete pairs.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ragqa.jury.item_patterns import CHUNK
from ragqa.report import JudgeSummary, MetricSummary, with_uncertainty
from ragqa.run.rows import ABSENT as _ABSENT
from ragqa.run.rows import ALL_FAILED as _ALL_FAILED
from ragqa.run.rows import FAILED as _FAILED
from ragqa.run.rows import LOWER as _LOWER
from ragqa.run.rows import NAN as _NAN
from ragqa.run.rows import PRESENT as _PRESENT
from ragqa.run.rows import QUORUM_MET as _QUORUM_MET
from ragqa.run.rows import SCORED as _SCORED
from ragqa.run.rows import UNSCORED as _UNSCORED
from ragqa.run.rows import JudgeRow, SummaryRow, summary_row
from ragqa.run.summary_columns import (
    JudgeColumns,
    JudgeScores,
    Labels,
    MetricColumns,
    ScoreChunks,
    cube,
    floats,
    implied,
    metric_rows,
    nan_mean_blocks,
    nans,
    score_matrix,
)
from ragqa.schema import DEFAULT_CONFIDENCE, PanelResult, Usage, check_confidence
from ragqa.uncertainty import calls_per_judgement, metric_intervals
from ragqa.uncertainty.variance_stream import CubeBlocks, blocked_decompose

__all__ = ["RunSummary"]

_DIRECTIONS: tuple[Literal["higher"], Literal["lower"]] = ("higher", "lower")
_CUBE_BLOCK = 8_192  # samples per block of the variance decomposition's cube (its working arrays are ~20 blocks)
_MAX_REPEATS = 2**32 - 1  # the repeat counts' array holds unsigned 32-bit numbers


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
        ValueError: for a confidence outside (0, 1); from :meth:`add`, for a position out of range,
            a metric not of the run, a pair added again that had no judge failure, or more than
            4,294,967,295 repeats.
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
        self._columns: list[MetricColumns | None] = [None] * len(self.metrics)
        self._given_labels = labels
        self._labels: list[str | None] = [None] * n_samples if labels is None else []
        self._rules: list[tuple[str, int]] = []
        self.count = 0
        """Results added (a result added twice for one position counts twice)."""
        self.failed: dict[tuple[int, int], PanelResult] = {}
        """Results with at least one judge failure, by (position, metric index)."""

    def _metric(self, index: int) -> MetricColumns:
        columns = self._columns[index]
        if columns is None:
            n = self.n_samples
            columns = MetricColumns(
                flags=bytearray(n),
                value=floats(n),
                judges=[JudgeColumns(status=bytearray(n), score=floats(n)) for _ in self.judge_ids],
            )
            self._columns[index] = columns
        return columns

    def _rule(self, strategy: str, quorum: int) -> int:
        rule = (strategy, quorum)
        if rule not in self._rules:
            self._rules.append(rule)
        return self._rules.index(rule)

    def add(self, position: int, result: PanelResult) -> None:
        """Record ``result`` of the sample at ``position`` (0-based dataset order).

        A pair (position, metric) is added once, except one whose result had a judge failure
        (:attr:`failed`, e.g. a pair scored again with ``--retry-failed``): a later add replaces it.
        The numbers are read through :func:`~ragqa.run.rows.summary_row` (:meth:`add_row`).

        Raises:
            ValueError: when ``position`` is out of range, the metric is not one of the run's, the
                pair was added before with no judge failure (its numbers are summed, not kept), or
                an outcome has more than 4,294,967,295 repeats.
        """
        self.add_row(position, summary_row(result), result)

    def add_row(self, position: int, row: SummaryRow, result: PanelResult | None = None) -> None:
        """:meth:`add` from the result's :data:`~ragqa.run.rows.SummaryRow` (a Ray worker's, :mod:`ragqa.run.rows`).

        ``add_row(p, summary_row(r), r)`` is ``add(p, r)``; ``result`` is needed only when a judge
        failed (it is kept in :attr:`failed`). Raises ``ValueError`` as :meth:`add`, and for a row
        with a judge failure given without its result.
        """
        sample_id, metric_key, flags, strategy, quorum, value, spread, failed, outcomes = row
        if not 0 <= position < self.n_samples:
            raise ValueError(f"position {position} is outside the dataset of {self.n_samples} sample(s)")
        metric = self._metric_index.get(metric_key)
        if metric is None:
            raise ValueError(f"result of metric {metric_key!r}, which is not one of {', '.join(self.metrics)}")
        if failed and result is None:
            raise ValueError(
                f"sample {sample_id!r}, metric {metric_key}: a result with a judge failure is kept whole; "
                "add the result, not its row alone"
            )
        columns = self._metric(metric)
        if columns.flags[position] & _PRESENT:
            old = self.failed.get((position, metric))
            if old is None:
                raise ValueError(
                    f"sample at position {position} already has a result of {metric_key} without a judge "
                    "failure; a run adds each (sample, metric) once"
                )
            self._retract(columns, summary_row(old))
        for outcome in outcomes:  # checked first: a refused result changes nothing
            if len(outcome[3]) > _MAX_REPEATS:
                raise ValueError(
                    f"sample {sample_id!r}, metric {metric_key}, judge {outcome[0]}: {len(outcome[3]):,} repeats, "
                    f"more than the {_MAX_REPEATS:,} a run summary counts; use fewer repeats"
                )
        if self._given_labels is None:
            self._labels[position] = sample_id
        columns.flags[position] = flags
        rule = self._rule(strategy, quorum)
        if columns.base_rule is None:
            columns.base_rule = rule
        if columns.rule is None and rule != columns.base_rule:
            columns.rule = bytearray([columns.base_rule]) * self.n_samples
        if columns.rule is not None:
            columns.rule[position] = rule
        columns.value[position] = value
        if not math.isnan(spread):
            columns.spread.add(spread)
            columns.n_spread += 1
        for judge in columns.judges:
            judge.status[position] = _ABSENT
            if judge.n_repeats is not None:
                judge.n_repeats[position] = 0
        for outcome in outcomes:
            j = self._judge_index.get(outcome[0])
            if j is None:
                continue
            judge = columns.judges[j]
            status, values = outcome[1], outcome[3]
            if status == _SCORED:
                judge.score[position] = outcome[2]
            judge.status[position] = status
            if judge.n_repeats is None and not implied(judge.score[position], status, values):
                self._explicit(judge)
            if judge.n_repeats is not None:
                while len(judge.repeats) < len(values):
                    judge.repeats.append(nans(self.n_samples))
                for k, repeat in enumerate(values):
                    judge.repeats[k][position] = repeat
                judge.n_repeats[position] = len(values)
            self._count(judge, outcome, 1)
        if failed:
            assert result is not None
            self.failed[(position, metric)] = result
        else:
            self.failed.pop((position, metric), None)
        self.count += 1

    def _explicit(self, judge: JudgeColumns) -> None:
        """Keep the judge's repeat values by position from now on, starting from those its statuses imply."""
        status = np.frombuffer(judge.status, dtype=np.uint8)
        first = np.where(status == _SCORED, np.frombuffer(judge.score, dtype=np.float64), np.nan)
        judge.repeats = [array("d", first.tobytes()), *judge.repeats[1:]]
        judge.n_repeats = array("I", (status != _ABSENT).astype(np.uint32).tobytes())

    @staticmethod
    def _count(judge: JudgeColumns, outcome: JudgeRow, sign: int) -> None:
        """Add (``sign`` 1) or take out (-1) an outcome's usage and repeat count from the judge's sums."""
        _, _, _, values, _, calls, prompt, completion, latency, cost = outcome
        judge.calls += sign * calls
        judge.prompt += sign * prompt
        judge.completion += sign * completion
        judge.judgements += sign * len(values)
        (judge.latency.add if sign > 0 else judge.latency.remove)(latency)
        if cost is not None:
            (judge.cost.add if sign > 0 else judge.cost.remove)(cost)
            judge.costed += sign

    def _retract(self, columns: MetricColumns, old: SummaryRow) -> None:
        """Take a replaced result's sums out (its by-position numbers are overwritten)."""
        if not math.isnan(old[6]):
            columns.spread.remove(old[6])
            columns.n_spread -= 1
        for outcome in old[8]:
            j = self._judge_index.get(outcome[0])
            if j is not None:
                self._count(columns.judges[j], outcome, -1)

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
                present = np.frombuffer(columns.flags, dtype=np.uint8) & _PRESENT
                first = int(present.argmax()) if present.size else 0
                if present.size and present[first]:
                    firsts.append((first, index))
        calls = judgements = 0
        for _, index in firsts:
            for judge in self._metric(index).judges:
                calls += judge.calls
                judgements += judge.judgements
        per_call = calls_per_judgement(calls, judgements)
        out = []
        for _, index in sorted(firsts):
            summary, (aggregates, per_judge, scores) = self._summary(index, metric_rows(self._metric(index)))
            bounds = self.ranges.get(summary.metric)
            if callable(scores):  # the cube in blocks of samples: the decomposition from them, never the whole cube
                n_judges = len(self.judge_ids)
                split = blocked_decompose(scores, len(aggregates), n_judges, calls_per_judgement=per_call)
                intervals = metric_intervals(
                    aggregates, per_judge, [], confidence=self.confidence, calls=per_call, bounds=bounds, split=split
                )
            else:
                intervals = metric_intervals(
                    aggregates, per_judge, scores, confidence=self.confidence, calls=per_call, bounds=bounds
                )
            del aggregates, per_judge, scores  # this metric's arrays go before the next metric's are built
            out.append(with_uncertainty(summary, intervals))
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
        return score_matrix(columns, metric_rows(columns))

    def score_chunks(self, metric: str, size: int = CHUNK) -> ScoreChunks:
        """:meth:`scores` of ``metric`` in chunks of ``size`` samples, read from the columns when iterated.

        Args:
            metric: a metric key of the run.
            size: samples (columns) per chunk, >= 1.

        Returns:
            A :class:`~ragqa.jury.item_patterns.ScoreChunks`: each :meth:`~ScoreChunks.chunks` call
            yields the ``(n_judges, k)`` blocks of :meth:`scores`, left to right, that together
            equal it (none for a metric without results).

        Raises:
            KeyError: for a metric not of the run.
            ValueError: for a ``size`` below 1.
        """
        if size < 1:
            raise ValueError(f"chunk size must be at least 1, got {size}")
        index = self._metric_index[metric]
        return ScoreChunks(lambda: self._columns[index], size)

    def _summary(
        self, index: int, rows: NDArray[np.intp] | slice
    ) -> tuple[
        MetricSummary,
        tuple[NDArray[np.float64], Sequence[NDArray[np.float64]], CubeBlocks | list[list[list[float]]]],
    ]:
        from ragqa.agreement import agreement

        metric = self.metrics[index]
        columns = self._columns[index]
        assert columns is not None
        flags = np.frombuffer(columns.flags, dtype=np.uint8)[rows]
        n_rows = len(flags)
        if columns.rule is None:
            assert columns.base_rule is not None  # a metric with a row has had a result
            rules = {self._rules[columns.base_rule]}
        else:
            rules = {self._rules[r] for r in np.unique(np.frombuffer(columns.rule, dtype=np.uint8)[rows]).tolist()}
        if len(rules) > 1:
            shown = ", ".join(f"{s} with quorum {q}" for s, q in sorted(rules))
            raise ValueError(f"results of {metric} were aggregated in different ways ({shown}); summarise one run")
        [(strategy, quorum)] = rules
        judges = []
        total = Usage()
        width = max(  # the most repeats of a judge on these rows, as score_cube makes it
            (
                int(np.frombuffer(c.n_repeats, dtype=np.uint32)[rows].max())
                if c.n_repeats is not None
                else int((np.frombuffer(c.status, dtype=np.uint8)[rows] != _ABSENT).any())
                for c in columns.judges
                if n_rows
            ),
            default=0,
        )
        width = width or 1
        for j, jid in enumerate(self.judge_ids):
            column = columns.judges[j]
            status = np.frombuffer(column.status, dtype=np.uint8)[rows]
            scored = status == _SCORED
            scores = np.frombuffer(column.score, dtype=np.float64)[rows]  # a view when every position has a result
            usage = Usage(
                calls=column.calls,
                prompt_tokens=column.prompt,
                completion_tokens=column.completion,
                latency_s=column.latency.value,
                cost=column.cost.value if column.costed else None,
            )
            total = total + usage
            judges.append(
                JudgeSummary(
                    judge_id=jid,
                    mean=nan_mean_blocks(scores, scored),
                    n_scored=int(scored.sum()),
                    n_nan=int((status == _NAN).sum()),
                    n_failed=int((status == _FAILED).sum()),
                    usage=usage,
                )
            )
            del status, scored, scores
        aggregates = np.frombuffer(columns.value, dtype=np.float64)[rows]
        n_scored = int((~np.isnan(aggregates)).sum())
        labels = Labels(self._given_labels if self._given_labels is not None else self._labels, rows, n_rows)
        summary = MetricSummary(
            metric=metric,
            direction=_DIRECTIONS[1 if flags[0] & _LOWER else 0],
            strategy=strategy,
            quorum=quorum,
            judges=judges,
            aggregate_mean=nan_mean_blocks(aggregates),
            mean_spread=columns.spread.value / columns.n_spread if columns.n_spread else math.nan,
            n_samples=n_rows,
            n_scored=n_scored,
            n_nan=n_rows - n_scored,
            n_below_quorum=int(((flags & _QUORUM_MET) == 0).sum()),
            n_all_failed=int(((flags & _ALL_FAILED) != 0).sum()),
            n_unscored=int(((flags & _UNSCORED) != 0).sum()),
            usage=total,
            # the judges x samples matrix is read in blocks of samples from the columns, never whole
            agreement=agreement(labels, self.judge_ids, ScoreChunks(lambda: self._columns[index], CHUNK).chunks),
        )
        # each judge's finite scores, made one judge at a time as the intervals ask (never all at once)
        per_judge = JudgeScores(columns.judges, rows)
        if n_scored == 1:  # the aggregate's interval then reads the one sample's repeats as lists (summarize's form)
            whole = cube(columns.judges, rows, n_rows, width)
            n_of = [
                np.frombuffer(c.n_repeats, dtype=np.uint32)[rows]
                if c.n_repeats is not None
                else (np.frombuffer(c.status, dtype=np.uint8)[rows] != _ABSENT).astype(np.uint32)
                for c in columns.judges
            ]
            listed = [[whole[i, j, : int(n_of[j][i])].tolist() for j in range(len(n_of))] for i in range(n_rows)]
            return summary, (aggregates, per_judge, listed)
        # the (samples, judges, repeats) cube of the variance decomposition, built block by block when read
        judge_columns = columns.judges

        def blocks() -> Iterator[NDArray[np.float64]]:
            for start in range(0, n_rows, _CUBE_BLOCK):
                stop = min(n_rows, start + _CUBE_BLOCK)
                part = slice(start, stop) if isinstance(rows, slice) else rows[start:stop]
                yield cube(judge_columns, part, stop - start, width)

        return summary, (aggregates, per_judge, blocks)
