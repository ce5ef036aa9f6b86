"""The columns a :class:`~ragqa.run.summary.RunSummary` keeps per metric and judge, and the views that read them.

The write side (:class:`JudgeColumns`, :class:`MetricColumns`: typed arrays by dataset position,
exact running sums) and the read side the summaries use at the end (:func:`score_matrix`,
:class:`ScoreChunks`, :func:`cube`, :class:`JudgeScores`, :func:`nan_mean_blocks`,
:class:`Labels`): each reads the arrays in place (``np.frombuffer``) or in blocks of samples, so the
end of a run never copies a metric's columns whole. The layout is documented in
:mod:`ragqa.run.summary`.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

import numpy as np
from numpy.typing import NDArray

from ragqa._ids import IdView
from ragqa._math import ExactSum
from ragqa.jury.item_patterns import CHUNK
from ragqa.run.rows import PRESENT as _PRESENT
from ragqa.run.rows import SCORED as _SCORED

__all__ = [
    "JudgeColumns",
    "JudgeScores",
    "Labels",
    "MetricColumns",
    "ScoreChunks",
    "cube",
    "floats",
    "implied",
    "metric_rows",
    "nan_mean_blocks",
    "nans",
    "score_matrix",
]


@dataclass
class JudgeColumns:
    """One judge's numbers on one metric: by sample position, or summed over the samples it judged."""

    status: bytearray
    score: array[float]  # float64, the score where the status is _SCORED (0.0 elsewhere)
    calls: int = 0
    prompt: int = 0
    completion: int = 0
    latency: ExactSum = field(default_factory=ExactSum)
    cost: ExactSum = field(default_factory=ExactSum)
    costed: int = 0  # outcomes with a cost
    judgements: int = 0  # repeat values, as summarize counts them
    # allocated with the first outcome whose repeat values are not its score alone (repeats > 1,
    # or a failed outcome that kept a score); until then each outcome's values are [score] or [nan]
    n_repeats: array[int] | None = None  # unsigned 32-bit
    repeats: list[array[float]] = field(default_factory=list)


@dataclass
class MetricColumns:
    """One metric's numbers: by sample position, and the spreads' exact sum."""

    flags: bytearray
    value: array[float]
    # the aggregation rule (index into RunSummary._rules): one for every result until a result
    # comes with another, then one byte per position
    base_rule: int | None = None
    rule: bytearray | None = None
    spread: ExactSum = field(default_factory=ExactSum)
    n_spread: int = 0  # spreads that are not NaN
    judges: list[JudgeColumns] = field(default_factory=list)


def floats(n: int) -> array[float]:
    """``n`` zeros as float64."""
    return array("d", bytes(8 * n))


def nans(n: int) -> array[float]:
    """``n`` NaNs as float64."""
    return array("d", [math.nan]) * n


def implied(value: float, outcome_status: int, values: Sequence[float]) -> bool:
    """Whether ``values`` are what the status and score alone give: ``[score]`` scored, ``[nan]`` otherwise."""
    if len(values) != 1:
        return False
    if outcome_status == _SCORED:
        return values[0] == value
    return math.isnan(values[0])


def metric_rows(columns: MetricColumns) -> NDArray[np.intp] | slice:
    """The positions with a result of this metric, in dataset order (every position: a slice, no copy)."""
    present = np.frombuffer(columns.flags, dtype=np.uint8) & _PRESENT
    if present.all():
        return slice(None)
    return np.flatnonzero(present)


def score_matrix(columns: MetricColumns, rows: NDArray[np.intp] | slice) -> NDArray[np.float64]:
    """The ``(n_judges, len(rows))`` scores of :meth:`~ragqa.run.summary.RunSummary.scores` on some positions.

    A judge's score where it scored and the score is finite, NaN elsewhere (NaN, failed, absent).
    """
    n_rows = len(range(len(columns.flags))[rows]) if isinstance(rows, slice) else len(rows)
    matrix = np.full((len(columns.judges), n_rows), np.nan)
    for j, column in enumerate(columns.judges):
        scored = np.frombuffer(column.status, dtype=np.uint8)[rows] == _SCORED
        values = np.frombuffer(column.score, dtype=np.float64)[rows][scored]
        matrix[j, scored] = np.where(np.isfinite(values), values, np.nan)
    return matrix


def cube(
    judges: Sequence[JudgeColumns], rows: NDArray[np.intp] | slice, n_rows: int, width: int
) -> NDArray[np.float64]:
    """The ``(n_rows, judges, width)`` repeat values of some positions, NaN where a judge has none (``score_cube``)."""
    cube = np.full((n_rows, len(judges), width), np.nan)
    for j, column in enumerate(judges):
        status = np.frombuffer(column.status, dtype=np.uint8)[rows]
        if column.n_repeats is None:  # one value per outcome: its score, NaN unless scored
            scored = status == _SCORED
            cube[scored, j, 0] = np.frombuffer(column.score, dtype=np.float64)[rows][scored]
            continue
        repeats = column.repeats[:width]
        if not repeats:
            continue
        n_repeats = np.frombuffer(column.n_repeats, dtype=np.uint32)[rows]
        # every repeat column holds one float per position: the span of positions the rows cover, joined
        # across the repeats, is a (repeats, span) block read in one step however many repeats there are
        # (a loop over 70,000 repeats took seconds); only the span is copied, never the whole columns
        size = len(repeats[0])
        lo, hi, local = _span(rows, size)
        # a span of every position is the columns themselves: joined without a view per repeat (70,000
        # repeats, read once per pass of the decomposition, spent seconds making and slicing the views)
        whole = lo == 0 and hi == size
        joined = b"".join(repeats if whole else (memoryview(repeat)[lo:hi] for repeat in repeats))
        values = np.frombuffer(joined, dtype=np.float64).reshape(len(repeats), hi - lo)[:, local].T
        cube[:, j, : len(repeats)] = np.where(n_repeats[:, None] > np.arange(len(repeats)), values, np.nan)
    return cube


def _span(rows: NDArray[np.intp] | slice, size: int) -> tuple[int, int, NDArray[np.intp] | slice]:
    """``(lo, hi, local)``: the positions ``lo:hi`` of ``size`` that ``rows`` covers, and ``rows`` within them.

    ``rows`` is a slice with a positive step or increasing positions (:func:`metric_rows`' forms).
    """
    if isinstance(rows, slice):
        covered = range(size)[rows]
        if not covered:
            return 0, 0, slice(0, 0)
        return covered[0], covered[-1] + 1, slice(0, covered[-1] + 1 - covered[0], covered.step)
    if rows.size == 0:
        return 0, 0, rows
    lo = int(rows[0])
    return lo, int(rows[-1]) + 1, rows - lo


class ScoreChunks:
    """One metric's scores in chunks of samples (:class:`ragqa.jury.item_patterns.ScoreChunks`)."""

    def __init__(self, columns: Callable[[], MetricColumns | None], size: int) -> None:
        self._columns = columns
        self._size = size

    def chunks(self) -> Iterator[NDArray[np.float64]]:
        """The ``(n_judges, k)`` blocks of the scores, left to right; each call starts again at the first sample."""
        columns = self._columns()
        if columns is None:
            return
        rows = metric_rows(columns)
        n_rows = len(columns.flags) if isinstance(rows, slice) else len(rows)
        for start in range(0, n_rows, self._size):
            stop = min(n_rows, start + self._size)
            part = slice(start, stop) if isinstance(rows, slice) else rows[start:stop]
            yield score_matrix(columns, part)


class JudgeScores(Sequence[NDArray[np.float64]]):
    """Each judge's finite scores on some rows (its scored positions), read from its columns when asked."""

    def __init__(self, judges: Sequence[JudgeColumns], rows: NDArray[np.intp] | slice) -> None:
        self._judges = judges
        self._rows = rows

    def __len__(self) -> int:
        return len(self._judges)

    @overload
    def __getitem__(self, index: int) -> NDArray[np.float64]: ...

    @overload
    def __getitem__(self, index: slice) -> list[NDArray[np.float64]]: ...

    def __getitem__(self, index: int | slice) -> NDArray[np.float64] | list[NDArray[np.float64]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        column = self._judges[index]
        status = np.frombuffer(column.status, dtype=np.uint8)[self._rows]
        scores: NDArray[np.float64] = np.frombuffer(column.score, dtype=np.float64)[self._rows][status == _SCORED]
        return scores


def nan_mean_blocks(values: NDArray[np.float64], keep: NDArray[np.bool_] | None = None) -> float:
    """:func:`ragqa._math.nan_mean` of ``values[keep]`` (all by default), read in blocks, without a copy of them.

    ``math.fsum`` is exact, so its sum of every value fed block by block is the same float as of
    one array of them (and as ``nan_mean``'s of a list).
    """
    mask = ~np.isnan(values) if keep is None else keep & ~np.isnan(values)
    n = int(mask.sum())
    if not n:
        return math.nan
    blocks = (values[start : start + CHUNK][mask[start : start + CHUNK]] for start in range(0, values.size, CHUNK))
    return math.fsum(itertools.chain.from_iterable(blocks)) / n


class Labels(IdView):
    """The ids of some positions (``rows``) of the run's ids, read when asked (the contested samples)."""

    def __init__(self, labels: Sequence[str | None], rows: NDArray[np.intp] | slice, n_rows: int) -> None:
        self._labels = labels
        self._rows = rows
        self._n = n_rows

    def __len__(self) -> int:
        return self._n

    def _one(self, index: int) -> str:
        position = index if isinstance(self._rows, slice) else int(self._rows[index])
        return self._labels[position] or ""
