"""Many Dawid-Skene fits at once: a bootstrap's replicates, side by side, with the single fit's numbers.

Both reliability sections (:mod:`ragqa.jury.reliability`) bootstrap the binary Dawid-Skene model
(Dawid and Skene 1979, :mod:`ragqa.jury.dawid_skene`): the per-item one on the same verdict
patterns (at most ``3 ** n_judges`` rows) with a different count per pattern in each replicate
(:func:`fit_dawid_skene_batch`), the per-statement one on each replicate's resampled clusters'
rows stacked (:func:`fit_dawid_skene_resamples`). Both run the replicates' EM side by side, one
numpy operation per step for every replicate still iterating (a replicate axis next to the row
axis), instead of one Python-level EM per replicate.

Each replicate's numbers are those of :func:`ragqa.jury.dawid_skene.fit_dawid_skene`, bit for bit
(rates, prevalence, iterations, convergence, log-likelihood, and the posterior of a pattern
batch): every step is the same IEEE operation on the same values in the same order.
Elementwise operations (``+ - * /``, ``np.maximum``/``np.minimum``, ``np.log``/``np.exp`` on
contiguous arrays) give each element the value they give it alone; the prevalence's logarithm
is ``math.log`` per replicate as in the single fit. The sums keep their order: a column sum adds
the rows one after the other in both (the rows are the reduction's outer axis and the judges,
two or more, its inner one; with one judge numpy would sum the single fit's column pairwise, so
the batches need two; a resample's padding adds 0.0); a sum along a replicate's own rows is
numpy's pairwise sum of those rows in both; a row's ``verdicts @ log(rates)`` is the single
fit's BLAS ``gemv`` call on the same rows (numpy's stacked ``matmul`` for patterns, one call per
replicate for resamples of three or more judges, whose order of a row's terms can depend on the
number of rows; with two judges a row has at most two non-zero terms, the same sum in any order).
Each replicate stops at its own iteration, with the single fit's test (Python's ``max`` of the
three changes, NaN included, emulated). ``tests/jury/test_dawid_skene_batch.py`` compares them
on random cases (2 to 4 judges, missing verdicts, zero counts, fits that converge and fits that
hit the iteration cap, groups of every size).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragqa.jury.dawid_skene import _EPS, DawidSkeneFit, _as_verdicts, majority_posterior

__all__ = ["DawidSkeneBatch", "DawidSkeneRates", "fit_dawid_skene_batch", "fit_dawid_skene_resamples"]

_FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class DawidSkeneRates:
    """The rates of ``n_fits`` Dawid-Skene fits of ``n_judges`` judges; row ``b`` is fit ``b``.

    Attributes:
        sensitivity: ``(n_fits, n_judges)`` P(judge says 1 | true class 1).
        specificity: ``(n_fits, n_judges)`` P(judge says 0 | true class 0).
        prevalence: ``(n_fits,)`` P(true class is 1).
        iterations: ``(n_fits,)`` int64 EM iterations each fit ran.
        converged: ``(n_fits,)`` bool, whether each fit met the tolerance.
        log_likelihood: ``(n_fits,)`` the observed-data log-likelihood at each fit.
    """

    sensitivity: _FloatArray
    specificity: _FloatArray
    prevalence: _FloatArray
    iterations: NDArray[np.int64]
    converged: NDArray[np.bool_]
    log_likelihood: _FloatArray

    @property
    def accuracy(self) -> _FloatArray:
        """``(n_fits, n_judges)`` each judge's expected accuracy per fit (:attr:`DawidSkeneFit.accuracy`'s formula)."""
        prevalence = self.prevalence[:, None]
        out: _FloatArray = prevalence * self.sensitivity + (1.0 - prevalence) * self.specificity
        return out


@dataclass(frozen=True)
class DawidSkeneBatch(DawidSkeneRates):
    """``n_fits`` weighted Dawid-Skene fits of the same ``n_patterns`` verdict rows, with their posteriors.

    Attributes:
        posterior: ``(n_fits, n_patterns)`` P(true class is 1 | verdicts) per fit and row; the
            other attributes are :class:`DawidSkeneRates`'.
    """

    posterior: _FloatArray

    def fit(self, b: int) -> DawidSkeneFit:
        """Fit ``b`` as a :class:`~ragqa.jury.dawid_skene.DawidSkeneFit` (the same numbers)."""
        return DawidSkeneFit(
            self.posterior[b].copy(),
            self.sensitivity[b].copy(),
            self.specificity[b].copy(),
            float(self.prevalence[b]),
            int(self.iterations[b]),
            bool(self.converged[b]),
            float(self.log_likelihood[b]),
        )


@dataclass(frozen=True)
class _Patterns:
    """The patterns split once: ``ones``, ``zeros`` and ``seen`` as 0.0/1.0 floats, ``(n_patterns, n_judges)``."""

    ones: _FloatArray
    zeros: _FloatArray
    seen: _FloatArray

    @classmethod
    def of(cls, matrix: _FloatArray) -> _Patterns:
        seen = ~np.isnan(matrix)
        return cls(np.where(seen, matrix, 0.0), np.where(seen, 1.0 - matrix, 0.0), seen.astype(np.float64))


def _column_sums(weighted: _FloatArray, cells: _FloatArray) -> _FloatArray:
    """``(n_fits, n_judges)``: per fit, ``sum_p weighted[b, p] * cells[p, j]``, the patterns added in order.

    The product is laid out ``(n_patterns, n_fits, n_judges)`` so that the reduced axis is the
    outer one, as in the single fit's ``(n_patterns, n_judges)`` column sum: one pattern after the
    other into each output cell.
    """
    out: _FloatArray = np.add.reduce(weighted.T[:, :, None] * cells[:, None, :], axis=0)
    return out


def _m_step(
    data: _Patterns, weights: _FloatArray, total: _FloatArray, posterior: _FloatArray, smoothing: float
) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
    p1 = weights * posterior  # (n_fits, n_patterns), an item of weight w counts w times
    p0 = weights * (1.0 - posterior)
    sensitivity = (_column_sums(p1, data.ones) + smoothing) / (_column_sums(p1, data.seen) + 2 * smoothing)
    specificity = (_column_sums(p0, data.zeros) + smoothing) / (_column_sums(p0, data.seen) + 2 * smoothing)
    with np.errstate(invalid="ignore", divide="ignore"):
        prevalence = np.where(total != 0, (p1.sum(axis=1) + smoothing) / (total + 2 * smoothing), 0.5)
    return (
        np.minimum(np.maximum(sensitivity, _EPS), 1 - _EPS),
        np.minimum(np.maximum(specificity, _EPS), 1 - _EPS),
        np.minimum(np.maximum(prevalence, _EPS), 1 - _EPS),
    )


def _per_pattern(cells: _FloatArray, logs: _FloatArray) -> _FloatArray:
    """``(n_fits, n_patterns)``: ``cells @ logs[b]`` per fit, one matrix-vector product each (stacked ``matmul``)."""
    out: _FloatArray = np.matmul(cells, logs[:, :, None])[:, :, 0]
    return out


def _e_step(
    data: _Patterns, weights: _FloatArray, sens: _FloatArray, spec: _FloatArray, prevalence: _FloatArray
) -> tuple[_FloatArray, _FloatArray]:
    log_prev = np.array([math.log(p) for p in prevalence.tolist()])[:, None]
    log_not = np.array([math.log(1.0 - p) for p in prevalence.tolist()])[:, None]
    log_1 = log_prev + _per_pattern(data.ones, np.log(sens)) + _per_pattern(data.zeros, np.log(1.0 - sens))
    log_0 = log_not + _per_pattern(data.ones, np.log(1.0 - spec)) + _per_pattern(data.zeros, np.log(spec))
    top = np.maximum(log_1, log_0)
    norm = top + np.log(np.exp(log_1 - top) + np.exp(log_0 - top))
    return np.exp(log_1 - norm), (weights * norm).sum(axis=1)


def _largest_change(*changes: _FloatArray) -> _FloatArray:
    """Python's ``max(a, b, c)`` per fit: a later value replaces the result only when it is greater (NaN never is)."""
    out = changes[0]
    for change in changes[1:]:
        out = np.where(change > out, change, out)
    return out


_Data = TypeVar("_Data")
_Rates = tuple[_FloatArray, _FloatArray, _FloatArray]
"""``(sensitivity, specificity, prevalence)`` of the fits still iterating: ``(k, n_judges)`` twice and ``(k,)``."""


def _iterate(
    data: _Data,
    rates: _Rates,
    step: Callable[[_Data, _Rates], _Rates],
    take: Callable[[_Data, NDArray[np.bool_]], _Data],
    max_iterations: int,
    tolerance: float,
) -> tuple[_Rates, NDArray[np.int64], NDArray[np.bool_]]:
    """EM from ``rates`` for every fit, each stopping as :func:`~ragqa.jury.dawid_skene.fit_dawid_skene` stops.

    ``step(data, rates)`` is one E-step and M-step of the fits ``data`` holds; ``take(data,
    keep)`` keeps the fits where ``keep`` is true. Returns each fit's last rates, iterations and
    convergence, in the fits' order.
    """
    n_fits = rates[2].shape[0]
    iterations = np.full(n_fits, max_iterations, dtype=np.int64)
    converged = np.zeros(n_fits, dtype=np.bool_)
    final = rates  # each fit's rates, filled in as it stops
    sens, spec, prevalence = rates
    active = np.arange(n_fits)
    for iteration in range(1, max_iterations + 1):
        new_sens, new_spec, new_prev = step(data, (sens, spec, prevalence))
        change = _largest_change(
            np.maximum.reduce(np.abs(new_sens - sens), axis=1, initial=0.0),
            np.maximum.reduce(np.abs(new_spec - spec), axis=1, initial=0.0),
            np.abs(new_prev - prevalence),
        )
        sens, spec, prevalence = new_sens, new_spec, new_prev
        done = change < tolerance
        if iteration == max_iterations:
            done[:] = True
        if not done.any():
            continue
        stopped = active[done]
        for out, value in zip(final, (sens, spec, prevalence), strict=True):
            out[stopped] = value[done]
        iterations[stopped] = iteration
        converged[stopped] = (change < tolerance)[done]
        keep = ~done
        if not keep.any():
            break
        active, data = active[keep], take(data, keep)
        sens, spec, prevalence = sens[keep], spec[keep], prevalence[keep]
    return final, iterations, converged


def fit_dawid_skene_batch(
    patterns: ArrayLike,
    weights: ArrayLike,
    *,
    max_iterations: int = 200,
    tolerance: float = 1e-6,
    smoothing: float = 1.0,
) -> DawidSkeneBatch:
    """``fit_dawid_skene(patterns, weights=weights[b], ...)`` for every row ``b`` of ``weights``, at once.

    The binary Dawid-Skene model by EM from the majority vote (Dawid and Skene 1979), as
    :func:`ragqa.jury.dawid_skene.fit_dawid_skene`, whose numbers each fit gives bit for bit.

    Args:
        patterns: ``(n_patterns, n_judges)`` verdict rows of 0, 1 or NaN (no verdict), at least one.
        weights: ``(n_fits, n_patterns)`` non-negative counts per fit and row (e.g. each bootstrap
            replicate's items per pattern).
        max_iterations: EM iterations at most per fit (>= 1).
        tolerance: a fit stops when no rate or the prevalence moves by more than this.
        smoothing: pseudo-count of the symmetric Beta prior on every rate (>= 0).

    Returns:
        The :class:`DawidSkeneBatch`, one row per row of ``weights``.

    Raises:
        ValueError: for a bad ``patterns`` array, none or of fewer than two judges (with one, numpy's
            column sums add in another order), weights of the wrong shape or negative,
            ``max_iterations < 1`` or a negative ``smoothing``.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    if smoothing < 0:
        raise ValueError(f"smoothing must be >= 0, got {smoothing}")
    matrix = _as_verdicts(patterns)
    if matrix.shape[0] == 0 or matrix.shape[1] < 2:
        raise ValueError(f"patterns must hold at least one verdict row of two or more judges, got {matrix.shape}")
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != matrix.shape[0] or np.any(~(w >= 0)):
        raise ValueError(f"weights must be (n_fits, {matrix.shape[0]}) non-negative counts, got shape {w.shape}")
    data = _Patterns.of(matrix)
    total = w.sum(axis=1)
    start = np.broadcast_to(majority_posterior(matrix), w.shape)

    def step(counts: tuple[_FloatArray, _FloatArray], rates: _Rates) -> _Rates:
        posterior, _ = _e_step(data, counts[0], *rates)
        return _m_step(data, counts[0], counts[1], posterior, smoothing)

    (sens, spec, prevalence), iterations, converged = _iterate(
        (w, total),
        _m_step(data, w, total, start, smoothing),
        step,
        lambda counts, keep: (counts[0][keep], counts[1][keep]),
        max_iterations,
        tolerance,
    )
    posterior, log_likelihood = _e_step(data, w, sens, spec, prevalence)
    return DawidSkeneBatch(sens, spec, prevalence, iterations, converged, log_likelihood, posterior)


MAX_ROWS = 1 << 16
"""Rows (replicates x their largest verdict matrix) fitted side by side at most, so memory stays bounded."""


@dataclass(frozen=True)
class _Stack:
    """Some resamples' verdict matrices side by side, each padded to the longest, rows first.

    ``ones``, ``zeros`` and ``seen`` are ``(n_rows, n_fits, n_judges)``: 1.0 where that fit's row
    has a 1, a 0 or either (0.0 on the padding); ``sizes`` the ``(n_fits,)`` real rows of each;
    ``own`` (more than two judges only) each fit's ``ones`` and ``zeros`` as its own
    ``(size, n_judges)`` arrays, for its matrix-vector products.
    """

    ones: _FloatArray
    zeros: _FloatArray
    seen: _FloatArray
    sizes: NDArray[np.intp]
    own: list[tuple[_FloatArray, _FloatArray]]

    @classmethod
    def of(cls, matrices: Sequence[_FloatArray]) -> _Stack:
        sizes = np.array([m.shape[0] for m in matrices], dtype=np.intp)
        padded = np.full((int(sizes.max()), len(matrices), matrices[0].shape[1]), np.nan)
        for b, m in enumerate(matrices):
            padded[: m.shape[0], b] = m
        seen = ~np.isnan(padded)
        own = []
        if padded.shape[2] > 2:
            for m in matrices:
                mine = ~np.isnan(m)
                own.append((np.where(mine, m, 0.0), np.where(mine, 1.0 - m, 0.0)))
        ones, zeros = np.where(seen, padded, 0.0), np.where(seen, 1.0 - padded, 0.0)
        return cls(ones, zeros, seen.astype(np.float64), sizes, own)

    def take(self, keep: NDArray[np.bool_]) -> _Stack:
        own = [pair for pair, kept in zip(self.own, keep.tolist(), strict=False) if kept]
        return _Stack(self.ones[:, keep], self.zeros[:, keep], self.seen[:, keep], self.sizes[keep], own)

    def row_sums(self, values: _FloatArray) -> _FloatArray:
        """``(n_fits,)`` each fit's sum of ``values[:size, b]``: the pairwise sum of its own rows, as in one fit."""
        rows = np.ascontiguousarray(values.T)  # each fit's values contiguous, summed along the row as a 1-D sum is
        if np.all(self.sizes == rows.shape[1]):
            same: _FloatArray = rows.sum(axis=1)
            return same
        return np.array([rows[b, :size].sum() for b, size in enumerate(self.sizes.tolist())])


def _stack_dot(stack: _Stack, which: int, logs: _FloatArray) -> _FloatArray:
    """``(n_rows, n_fits)``: each fit's cells (``which`` 0: ones, 1: zeros) ``@ logs[b]``, as one fit computes it.

    With two judges a row's product has at most two non-zero terms (a verdict times a log), whose
    sum is the same in any order, so it is computed elementwise; with more judges BLAS's ``gemv``
    adds them in an order that can depend on the number of rows, so each fit makes the single
    fit's call on its own rows.
    """
    cells = stack.zeros if which else stack.ones
    if cells.shape[2] == 2:
        two: _FloatArray = cells[:, :, 0] * logs[:, 0] + cells[:, :, 1] * logs[:, 1]
        return two
    out = np.zeros(cells.shape[:2])
    for b, (pair, size) in enumerate(zip(stack.own, stack.sizes.tolist(), strict=True)):
        out[:size, b] = pair[which] @ logs[b]
    return out


def _stack_e_step(
    stack: _Stack, sens: _FloatArray, spec: _FloatArray, prevalence: _FloatArray
) -> tuple[_FloatArray, _FloatArray]:
    log_prev = np.array([math.log(p) for p in prevalence.tolist()])
    log_not = np.array([math.log(1.0 - p) for p in prevalence.tolist()])
    log_1 = log_prev + _stack_dot(stack, 0, np.log(sens)) + _stack_dot(stack, 1, np.log(1.0 - sens))
    log_0 = log_not + _stack_dot(stack, 0, np.log(1.0 - spec)) + _stack_dot(stack, 1, np.log(spec))
    top = np.maximum(log_1, log_0)
    norm = top + np.log(np.exp(log_1 - top) + np.exp(log_0 - top))
    return np.exp(log_1 - norm), norm


def _stack_column_sums(weighted: _FloatArray, cells: _FloatArray) -> _FloatArray:
    """``(n_fits, n_judges)``: per fit, its rows' ``weighted * cells`` added in row order (the padding adds 0.0).

    The product is C-ordered ``(n_rows, n_fits, n_judges)``, so the reduction runs over the outer
    axis, one row after the other, as the single fit's ``(n_rows, n_judges)`` column sum does.
    """
    out: _FloatArray = np.add.reduce(weighted[:, :, None] * cells, axis=0)
    return out


def _stack_m_step(
    stack: _Stack, posterior: _FloatArray, smoothing: float
) -> tuple[_FloatArray, _FloatArray, _FloatArray]:
    p1, p0 = posterior, 1.0 - posterior
    sensitivity = (_stack_column_sums(p1, stack.ones) + smoothing) / (
        _stack_column_sums(p1, stack.seen) + 2 * smoothing
    )
    specificity = (_stack_column_sums(p0, stack.zeros) + smoothing) / (
        _stack_column_sums(p0, stack.seen) + 2 * smoothing
    )
    prevalence = (stack.row_sums(p1) + smoothing) / (stack.sizes + 2 * smoothing)
    return (
        np.minimum(np.maximum(sensitivity, _EPS), 1 - _EPS),
        np.minimum(np.maximum(specificity, _EPS), 1 - _EPS),
        np.minimum(np.maximum(prevalence, _EPS), 1 - _EPS),
    )


def _fit_stack(
    matrices: Sequence[_FloatArray], max_iterations: int, tolerance: float, smoothing: float
) -> DawidSkeneRates:
    """:func:`fit_dawid_skene_resamples` of some resamples' verdict matrices (each with at least one row)."""
    stack = _Stack.of(matrices)
    start = np.full(stack.ones.shape[:2], 0.5)
    for b, m in enumerate(matrices):
        start[: m.shape[0], b] = majority_posterior(m)

    def step(fits: _Stack, rates: _Rates) -> _Rates:
        posterior, _ = _stack_e_step(fits, *rates)
        return _stack_m_step(fits, posterior, smoothing)

    (sens, spec, prevalence), iterations, converged = _iterate(
        stack, _stack_m_step(stack, start, smoothing), step, _Stack.take, max_iterations, tolerance
    )
    _, norm = _stack_e_step(stack, sens, spec, prevalence)
    return DawidSkeneRates(sens, spec, prevalence, iterations, converged, stack.row_sums(norm))


def fit_dawid_skene_resamples(
    blocks: Sequence[ArrayLike],
    draws: Sequence[Sequence[int]] | NDArray[np.integer[Any]],
    *,
    max_iterations: int = 200,
    tolerance: float = 1e-6,
    smoothing: float = 1.0,
) -> DawidSkeneRates:
    """``fit_dawid_skene(np.vstack([blocks[i] for i in draw]), ...)`` for every draw, side by side.

    A cluster bootstrap's replicates (Field and Welsh 2007, "Bootstrapping clustered data", JRSS
    B 69(3)): each draw lists the clusters (verdict blocks) a replicate holds, repeats included,
    and is fitted on their rows stacked in that order, every row once (no weights), as
    :func:`ragqa.jury.dawid_skene.fit_dawid_skene` (Dawid and Skene 1979) fits it, whose numbers
    each fit gives bit for bit. Replicates are fitted in groups of at most :data:`MAX_ROWS` rows
    (replicates x the longest of them).

    Args:
        blocks: ``(rows_k, n_judges)`` verdict arrays of 0, 1 or NaN, each with at least one row.
        draws: per fit, the indices of its blocks (at least one; a 2-D array: one row per fit).
        max_iterations: EM iterations at most per fit (>= 1).
        tolerance: a fit stops when no rate or the prevalence moves by more than this.
        smoothing: pseudo-count of the symmetric Beta prior on every rate (>= 0).

    Returns:
        The :class:`DawidSkeneRates`, one row per draw.

    Raises:
        ValueError: for a bad block (see :func:`ragqa.jury.dawid_skene.fit_dawid_skene`), an empty
            block or draw, blocks of different widths or of fewer than two judges, ``max_iterations < 1``
            or a negative ``smoothing``.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    if smoothing < 0:
        raise ValueError(f"smoothing must be >= 0, got {smoothing}")
    checked = [_as_verdicts(b) for b in blocks]
    if any(b.shape[0] == 0 for b in checked) or {b.shape[1] for b in checked} != {checked[0].shape[1]}:
        raise ValueError("every block needs at least one row and the same number of judges")
    if checked[0].shape[1] < 2:
        raise ValueError(f"the blocks need two or more judges, got {checked[0].shape[1]}")
    if len(draws) == 0 or any(len(d) == 0 for d in draws):
        raise ValueError("every draw needs at least one block")
    rows = np.array([b.shape[0] for b in checked])
    groups: list[list[int]] = [[]]  # consecutive draws whose padded stack fits in MAX_ROWS rows
    longest = 0
    for k, draw in enumerate(draws):
        size = int(rows[np.asarray(draw)].sum())
        if groups[-1] and (len(groups[-1]) + 1) * max(longest, size) > MAX_ROWS:
            groups.append([])
            longest = 0
        groups[-1].append(k)
        longest = max(longest, size)
    parts = [  # one group's stacked matrices at a time, as one fit held one
        _fit_stack([np.vstack([checked[i] for i in draws[k]]) for k in group], max_iterations, tolerance, smoothing)
        for group in groups
    ]
    return DawidSkeneRates(
        *(np.concatenate([getattr(p, f) for p in parts]) for f in DawidSkeneRates.__dataclass_fields__)
    )
