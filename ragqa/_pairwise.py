"""numpy's sums and correlation of long arrays, fed in pieces: the same floats, without the whole array at once.

``np.sum`` (and ``np.mean``, ``np.std``, ``np.var``) of a contiguous float64 array adds its values
by pairwise summation (numpy's ``pairwise_sum``: blocks of at most 128 values added in 8
accumulators, longer runs split in two at half the length rounded down to a multiple of 8, the
two halves' sums added; Higham, "The accuracy of floating point summation", SIAM J. Sci. Comput.
14(4), 1993). The result depends only on the values and their order, so
:func:`pairwise_sum` computes it from consecutive pieces of the array, calling ``np.add.reduce``
itself on every run of at most :data:`LEAF` values of that tree: the same float, bit for bit
(``tests/test_pairwise.py`` checks it on random arrays of up to millions of values), while
holding one leaf at a time. A run of 300,000 samples computes its summaries' means and spreads
this way from its typed columns instead of full-size copies.

:func:`row_correlation` is ``np.corrcoef(x, y)[0, 1]`` of a ``(2, n)`` array's rows with
``np.cov``'s steps done in place: its product goes through ``np.dot`` (BLAS), whose summation
order cannot be rebuilt from pieces, so the two rows are the one full-size array it needs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
from numpy.typing import NDArray

__all__ = ["LEAF", "pairwise_mean", "pairwise_sum", "pairwise_var", "row_correlation"]

LEAF = 1 << 16
"""Most values handed to ``np.add.reduce`` at once (a node of numpy's tree; any size >= 128 gives the same sum)."""

_Array = NDArray[np.float64]


class _Feed:
    """The values of consecutive pieces, taken in runs of a given length."""

    def __init__(self, pieces: Iterable[_Array]) -> None:
        self._pieces: Iterator[_Array] = iter(pieces)
        self._buffer: _Array = np.empty(0)
        self._at = 0

    def take(self, k: int) -> _Array:
        parts = []
        while k:
            if self._at == self._buffer.size:
                self._buffer = np.ascontiguousarray(next(self._pieces), dtype=np.float64).ravel()
                self._at = 0
                continue
            got = min(k, self._buffer.size - self._at)
            parts.append(self._buffer[self._at : self._at + got])
            self._at += got
            k -= got
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def pairwise_sum(pieces: Iterable[_Array], n: int) -> np.float64:
    """``np.sum`` of the concatenation of ``pieces`` (``n`` float64 values in all), bit for bit.

    Args:
        pieces: float64 arrays (any shape, read in C order) whose values, in order, are the array
            summed; empty pieces are skipped.
        n: how many values the pieces hold in all (the pieces may hold more; those are not read).

    Returns:
        The sum as numpy gives it for the whole contiguous array (0.0 for ``n = 0``).

    Raises:
        StopIteration: when the pieces hold fewer than ``n`` values.
    """
    return _node(_Feed(pieces), n)


def _node(feed: _Feed, k: int) -> np.float64:
    """The sum of the next ``k`` values as numpy's tree adds them (a module function: no closure cycle keeps blocks)."""
    if k <= LEAF:
        leaf: np.float64 = np.add.reduce(feed.take(k)) if k else np.float64(0.0)
        return leaf
    half = k // 2
    half -= half % 8  # numpy's split (loops_utils.h: n2 = n / 2; n2 -= n2 % 8)
    total: np.float64 = _node(feed, half) + _node(feed, k - half)
    return total


def pairwise_mean(pieces: Iterable[_Array], n: int) -> np.float64:
    """``np.mean`` of the concatenation of ``pieces`` (``n`` values): :func:`pairwise_sum` over ``n``; NaN for none."""
    if n == 0:
        return np.float64(np.nan)
    mean: np.float64 = pairwise_sum(pieces, n) / np.float64(n)
    return mean


def pairwise_var(values: _Array, ddof: int = 0) -> np.float64:
    """``np.var(values, ddof=ddof)`` of a 1-D float64 array, bit for bit, without its array of squared deviations.

    numpy's steps: the mean (pairwise sum over ``n``), each value's squared deviation from it, their
    pairwise sum over ``n - ddof`` (NaN or infinity for ``n - ddof <= 0``, as numpy, which warns).
    """
    n = values.size

    def blocks() -> Iterator[_Array]:
        return (values[start : start + LEAF] for start in range(0, n, LEAF))

    mean = pairwise_sum(blocks(), n) / np.float64(n) if n else np.float64(np.nan)
    squares = pairwise_sum((np.square(block - mean) for block in blocks()), n)
    with np.errstate(divide="ignore", invalid="ignore"):
        var: np.float64 = squares / np.float64(max(n - ddof, 0))
    return var


def row_correlation(pair: _Array) -> float:
    """``np.corrcoef(pair[0], pair[1])[0, 1]`` by ``np.cov``'s and ``np.corrcoef``'s steps, ``pair`` centred in place.

    Args:
        pair: ``(2, n)`` C-contiguous float64, ``n >= 2``; overwritten (each row minus its mean).

    Returns:
        Pearson's correlation of the two rows, clipped to [-1, 1] (NaN where a row is constant).
    """
    pair -= pair.mean(axis=1)[:, None]
    c = np.dot(pair, pair.T.conj())
    c *= np.true_divide(1, pair.shape[1] - 1)
    stddev = np.sqrt(np.diag(c).real)
    with np.errstate(divide="ignore", invalid="ignore"):
        c /= stddev[:, None]
        c /= stddev[None, :]
    np.clip(c.real, -1, 1, out=c.real)
    return float(c[0, 1])
