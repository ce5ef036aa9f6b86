"""Judge agreement of one metric computed from column blocks of its score matrix (:func:`ragqa.agreement.agreement`).

A run of 300,000 samples ends with each metric's agreement; computed on the whole judges x samples
matrix, its working arrays (the finite values, their deviations, each pair's common scores and
ranks, the spreads) took several times the matrix. :func:`streamed_agreement` reads the matrix as
consecutive blocks of columns (samples) and computes every figure with the same numpy operations
on the same values in the same order, so the same floats, bit for bit:

- elementwise and per-column figures (each sample's count of scores, mean, spread; each value's
  deviation) on each block, as numpy computes them on the whole matrix column by column;
- every mean and sum over the samples as numpy's pairwise summation of the whole sequence
  (:func:`ragqa._pairwise.pairwise_sum`), fed block by block;
- counts, minima, maxima and the distinct values (exact in any order) block by block;
- the contested samples as the largest spreads kept across blocks (ties in sample order, as the
  stable sort of the whole matrix orders them).

Only a judge pair's Spearman correlation needs its two rows of ranks at once (numpy's correlation
multiplies them through BLAS, whose summation order cannot be rebuilt from blocks): one ``(2, m)``
array for the ``m`` samples the two judges both scored, one pair at a time. Krippendorff's alpha
by the ``krippendorff`` package (a small matrix, :data:`ragqa.agreement.PACKAGE_CELLS`) gets the
pairable columns as one matrix, as before.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from ragqa._pairwise import pairwise_mean, pairwise_sum, row_correlation
from ragqa.schema import Agreement, ContestedSample, JudgeBias, PairAgreement

__all__ = ["BLOCK", "Blocks", "matrix_blocks", "streamed_agreement"]

BLOCK = 65_536
"""Samples (columns) per block when the whole matrix is given."""

_Matrix = npt.NDArray[np.float64]
Blocks = Callable[[], Iterator[_Matrix]]
"""Starts a pass over a ``(judges, samples)`` score matrix: its ``(judges, k)`` column blocks, left to right."""


def matrix_blocks(matrix: _Matrix, size: int = BLOCK) -> Blocks:
    """The column blocks of a whole matrix (views, no copy)."""
    return lambda: (matrix[:, start : start + size] for start in range(0, matrix.shape[1], size))


class _Distinct:
    """Distinct values and how often each occurs, gathered block by block (``np.unique``'s over all of them)."""

    def __init__(self) -> None:
        self._counts: dict[float, int] = {}

    def add(self, values: _Matrix) -> None:
        distinct, counts = np.unique(values, return_counts=True)
        for value, count in zip(distinct.tolist(), counts.tolist(), strict=True):
            self._counts[value] = self._counts.get(value, 0) + count

    def arrays(self) -> tuple[_Matrix, npt.NDArray[np.intp]]:
        order = sorted(self._counts)
        return np.array(order, dtype=np.float64), np.array([self._counts[v] for v in order], dtype=np.intp)

    def __len__(self) -> int:
        return len(self._counts)


def _alpha(blocks: Blocks, n_judges: int, n_pairable: int, n_values: int) -> float:
    """:func:`ragqa.agreement.interval_alpha` of the pairable columns, from blocks (same steps, same floats)."""

    def values() -> Iterator[_Matrix]:  # pairable[~isnan(pairable)]: judge by judge, samples in order
        for j in range(n_judges):
            for block in blocks():
                row = block[j][(~np.isnan(block)).sum(axis=0) >= 2]
                yield row[~np.isnan(row)]

    mean = pairwise_mean(values(), n_values)
    ss_total = float(pairwise_sum(((v - mean) ** 2 for v in values()), n_values))
    if ss_total == 0:
        return math.nan

    def units() -> Iterator[_Matrix]:
        for block in blocks():
            m = (~np.isnan(block)).sum(axis=0)
            keep = m >= 2
            sub = np.ascontiguousarray(block[:, keep])
            m = m[keep]
            ss_units = np.nansum((sub - np.nanmean(sub, axis=0)) ** 2, axis=0)
            yield 2 * m * ss_units / (m - 1)

    observed = float(pairwise_sum(units(), n_pairable)) / n_values
    expected = 2 * ss_total / (n_values - 1)
    return 1 - observed / expected


def _pair(blocks: Blocks, a: int, b: int) -> tuple[int, float, float]:
    """Samples both judges scored, Spearman's rho and the mean absolute difference (as ``agreement``)."""
    ranks_a, ranks_b = _Distinct(), _Distinct()
    n = 0
    for block in blocks():
        both = ~np.isnan(block[a]) & ~np.isnan(block[b])
        x, y = block[a][both], block[b][both]
        n += x.size
        ranks_a.add(x)
        ranks_b.add(y)

    def differences() -> Iterator[_Matrix]:
        for block in blocks():
            both = ~np.isnan(block[a]) & ~np.isnan(block[b])
            yield np.abs(block[a][both] - block[b][both])

    mean_abs_diff = float(pairwise_mean(differences(), n)) if n else math.nan
    if n < 2 or len(ranks_a) < 2 or len(ranks_b) < 2:  # fewer than 2 or a constant judge (np.ptp == 0)
        return n, math.nan, mean_abs_diff
    pair = np.empty((2, n))
    tables = []
    for distinct in (ranks_a, ranks_b):  # the average ranks of ragqa.agreement._average_ranks, by distinct value
        values, counts = distinct.arrays()
        ends = np.cumsum(counts)
        tables.append((values, ends - (counts - 1) / 2.0))
    at = 0
    for block in blocks():
        both = ~np.isnan(block[a]) & ~np.isnan(block[b])
        k = int(both.sum())
        for row, judge in enumerate((a, b)):
            values, ranks = tables[row]
            pair[row, at : at + k] = ranks[np.searchsorted(values, block[judge][both])]
        at += k
    return n, row_correlation(pair), mean_abs_diff


def _bias(blocks: Blocks, judge: int) -> tuple[int, float]:
    """Samples and mean of (the judge's score - the other judges' mean) where it and another scored."""

    def diffs() -> Iterator[_Matrix]:
        for block in blocks():
            finite = ~np.isnan(block)
            counts = finite.sum(axis=0)
            sums = np.where(finite, block, 0.0).sum(axis=0)
            mask = finite[judge] & (counts >= 2)
            others_mean = (sums[mask] - block[judge, mask]) / (counts[mask] - 1)
            yield block[judge, mask] - others_mean

    n = sum(int((~np.isnan(block[judge]) & ((~np.isnan(block)).sum(axis=0) >= 2)).sum()) for block in blocks())
    return n, float(pairwise_mean(diffs(), n)) if n else math.nan


def _first_pass(blocks: Blocks, max_contested: int) -> tuple[_Distinct, int, int, list[tuple[float, int]]]:
    """The pairable values (distinct ones, count), the pairable samples and the largest spreads ``(spread, column)``."""
    distinct = _Distinct()
    n_pairable = n_values = 0
    best: list[tuple[float, int]] = []  # the largest first, ties in column order
    at = 0
    for block in blocks():
        pairable = (~np.isnan(block)).sum(axis=0) >= 2
        sub = block[:, pairable]
        values = sub[~np.isnan(sub)]
        distinct.add(values)
        n_pairable += int(pairable.sum())
        n_values += values.size
        if pairable.any():
            cols = np.flatnonzero(pairable)
            spreads = np.nanmax(sub, axis=0) - np.nanmin(sub, axis=0)
            top = np.argsort(-spreads, kind="stable")[:max_contested]
            merged = best + [(float(spreads[k]), at + int(cols[k])) for k in sorted(top.tolist())]
            order = np.argsort(-np.array([s for s, _ in merged]), kind="stable")[:max_contested]
            best = [merged[k] for k in order.tolist()]
        at += block.shape[1]
    return distinct, n_pairable, n_values, best


def streamed_agreement(
    blocks: Blocks,
    sample_ids: Sequence[str],
    judge_ids: Sequence[str],
    *,
    max_contested: int,
    package_cells: int,
    package_alpha: Callable[[_Matrix], float],
) -> Agreement:
    """:func:`ragqa.agreement.agreement` of the matrix ``blocks`` reads (two or more judges; same figures, bit for bit).

    Args:
        blocks: starts a pass over the ``(judges, samples)`` matrix's column blocks, NaN where a
            judge has no finite score; called several times.
        sample_ids: the matrix columns.
        judge_ids: the matrix rows, two or more.
        max_contested: contested samples kept.
        package_cells: above ``pairable samples x distinct values**2`` the closed form is used.
        package_alpha: the ``krippendorff`` package's alpha of a whole pairable matrix.

    Returns:
        The agreement, as :func:`ragqa.agreement.agreement` documents it.
    """
    n_judges = len(judge_ids)
    distinct, n_pairable, n_values, best = _first_pass(blocks, max_contested)
    if len(distinct) < 2:
        alpha = math.nan
    elif n_pairable * len(distinct) ** 2 > package_cells:
        alpha = _alpha(blocks, n_judges, n_pairable, n_values)
    else:  # the package's coincidence arrays are small: it gets the pairable columns whole
        whole = np.concatenate([block[:, (~np.isnan(block)).sum(axis=0) >= 2] for block in blocks()], axis=1)
        alpha = package_alpha(np.ascontiguousarray(whole))

    pairs = []
    for i in range(n_judges):
        for j in range(i + 1, n_judges):
            n, spearman, mean_abs_diff = _pair(blocks, i, j)
            pairs.append(
                PairAgreement(
                    judge_a=judge_ids[i], judge_b=judge_ids[j], n=n, spearman=spearman, mean_abs_diff=mean_abs_diff
                )
            )
    bias = []
    for i, jid in enumerate(judge_ids):
        n, value = _bias(blocks, i)
        bias.append(JudgeBias(judge_id=jid, n=n, bias=value))
    contested = [ContestedSample(sample_id=sample_ids[column], spread=spread) for spread, column in best if spread > 0]
    return Agreement(alpha=alpha, n_samples=n_pairable, pairs=pairs, bias=bias, contested=contested)
