"""A panel's per-item verdicts as counted patterns, read in chunks: the per-item fit without a per-item array.

The per-item reliability section (:func:`ragqa.jury.reliability.item_reliability`) fits
Dawid-Skene on each judge's pass/fail verdict per sample. Every figure it reports depends on a
sample only through its verdict pattern (one of at most ``3 ** n_judges``: pass, fail or no
verdict per judge), so a run of 300,000 samples needs the patterns and how many samples have
each (:func:`count_patterns`), read from consecutive chunks of the samples' verdicts, not an
array per sample. Only the judges' residual correlation needs each pair's residuals per sample
(Pearson's correlation over the samples both judges answered): :func:`pattern_residual_correlation`
builds those two rows, 16 bytes per sample, one pair at a time, and computes what
:func:`ragqa.jury.dawid_skene.residual_correlation` computes on the full verdict matrix, bit for
bit (the same numpy operations on the same values in the same order;
``tests/jury/test_item_patterns.py`` checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ragqa._pairwise import pairwise_var, row_correlation
from ragqa.jury.dawid_skene import DawidSkeneFit

__all__ = ["CHUNK", "ScoreChunks", "VerdictPatterns", "count_patterns", "pattern_residual_correlation"]

CHUNK = 16_384
"""Samples per chunk of :class:`ScoreChunks` sources (a chunk's working arrays, not the run's)."""

_Matrix = NDArray[np.float64]
VerdictRows = Callable[[], Iterator[_Matrix]]
"""Starts a pass over the items' verdicts: ``(k, n_judges)`` chunks of 0, 1 or NaN, in item order,
each item with at least one verdict."""


@runtime_checkable
class ScoreChunks(Protocol):
    """Each judge's scores on a metric's items, in item order, in consecutive chunks (e.g. a run's summary)."""

    def chunks(self) -> Iterator[_Matrix]:
        """``(n_judges, k)`` scores of the next ``k`` items (NaN: no verdict); each call starts at the first item."""
        ...


@dataclass(frozen=True)
class VerdictPatterns:
    """The distinct verdict rows of some items and how many items have each.

    Attributes:
        codes: ``(P,)`` each pattern's code, ascending (``sum_j v_j 3**j`` with NaN as 2: :func:`codes`).
        patterns: ``(P, n_judges)`` the rows, 0.0, 1.0 or NaN, in code order.
        counts: ``(P,)`` int64 items per pattern.
        n: items in all (``counts.sum()``).
    """

    codes: _Matrix
    patterns: _Matrix
    counts: NDArray[np.int64]
    n: int

    def index(self, rows: _Matrix) -> NDArray[np.intp]:
        """``(k,)`` each row's pattern index (the rows' patterns must be among :attr:`patterns`)."""
        return np.searchsorted(self.codes, codes(rows))


def codes(rows: _Matrix) -> _Matrix:
    """``(k,)`` a code per verdict row (``(k, n_judges)`` of 0, 1, NaN): distinct rows, distinct codes."""
    weights = np.power(3.0, np.arange(rows.shape[1]), dtype=np.float64)
    out: _Matrix = (np.where(np.isnan(rows), 2.0, rows) * weights).sum(axis=1)
    return out


def count_patterns(rows: VerdictRows, n_judges: int) -> VerdictPatterns:
    """Count the verdict patterns of every item one pass over ``rows`` gives (memory: one chunk and the patterns).

    Args:
        rows: starts a pass over the items' verdict rows (:data:`VerdictRows`).
        n_judges: the rows' width.

    Returns:
        The patterns in code order (as ``np.unique`` of every item's code orders them) and their counts.
    """
    counts: dict[float, int] = {}
    found: dict[float, _Matrix] = {}
    for chunk in rows():
        distinct, first, seen = np.unique(codes(chunk), return_index=True, return_counts=True)
        for code, at, count in zip(distinct.tolist(), first.tolist(), seen.tolist(), strict=True):
            counts[code] = counts.get(code, 0) + count
            found.setdefault(code, chunk[at])
    order = sorted(counts)
    return VerdictPatterns(
        codes=np.array(order, dtype=np.float64),
        patterns=np.array([found[c] for c in order], dtype=np.float64).reshape(len(order), n_judges),
        counts=np.array([counts[c] for c in order], dtype=np.int64),
        n=sum(counts.values()),
    )


def pattern_residual_correlation(rows: VerdictRows, patterns: VerdictPatterns, fit: DawidSkeneFit) -> _Matrix:
    """:func:`~ragqa.jury.dawid_skene.residual_correlation` of the items ``rows`` gives, for a fit on their patterns.

    Each item's residual is its pattern's (``y - E[y | fit]``, elementwise, so the same numbers);
    a pair's correlation is ``np.corrcoef``'s (:func:`ragqa._pairwise.row_correlation`), computed
    on the pair's two residual rows built in place (one ``(2, m)`` array for the ``m`` items both
    judges answered, one pair at a time).

    Args:
        rows: starts a pass over the items' verdict rows; called once per pair with 3 or more items.
        patterns: :func:`count_patterns` of those rows.
        fit: the Dawid-Skene fit with one posterior per pattern.

    Returns:
        ``(n_judges, n_judges)``: 1 on the diagonal; NaN where fewer than 3 items both answered
        or a residual is constant over them (its standard deviation is 0).
    """
    expected = fit.posterior[:, None] * fit.sensitivity + (1.0 - fit.posterior)[:, None] * (1.0 - fit.specificity)
    residual = patterns.patterns - expected
    n = patterns.patterns.shape[1]
    out = np.full((n, n), np.nan)
    for a in range(n):
        out[a, a] = 1.0
        for b in range(a + 1, n):
            both = ~np.isnan(residual[:, a]) & ~np.isnan(residual[:, b])
            m = int(patterns.counts[both].sum())
            if m < 3:
                continue
            pair = np.empty((2, m))
            at = 0
            for chunk in rows():
                index = patterns.index(chunk)
                index = index[both[index]]
                pair[0, at : at + index.size] = residual[index, a]
                pair[1, at : at + index.size] = residual[index, b]
                at += index.size
            if pairwise_var(pair[0]) == 0 or pairwise_var(pair[1]) == 0:  # np.std(row) == 0, without a temporary
                continue
            out[a, b] = out[b, a] = row_correlation(pair)
    return out
