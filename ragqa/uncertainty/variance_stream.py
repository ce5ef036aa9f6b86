"""The variance decomposition of a long run from blocks of its score cube (:mod:`ragqa.uncertainty.variance`).

:func:`~ragqa.uncertainty.variance.variance_components` on a whole ``(samples, judges, repeats)``
cube holds several cube-sized working arrays at once (counts, filled values, cell means and
deviations, the complete table and its residuals). :func:`blocked_decompose` reads the cube as
consecutive blocks of samples and computes the same components with the same numpy operations
on the same values in the same order, so the same floats, bit for bit
(``tests/uncertainty/test_variance_stream.py`` compares it with the whole-cube functions):
per-cell and per-sample figures block by block; every sum over the samples as numpy's pairwise
summation of the whole sequence in numpy's memory order (:func:`ragqa._pairwise.pairwise_sum`;
the complete table, ``cell_mean[rows][:, judges]``, is column-major, so its sums run judge after
judge); counts in any order. The memory is a block's working arrays, whatever the run's length.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import NDArray

from ragqa._pairwise import pairwise_mean, pairwise_sum
from ragqa.schema import Decomposition, VarianceComponents
from ragqa.uncertainty.variance import _ROUNDING, cell_statistics, components_from, decomposition

__all__ = ["CubeBlocks", "blocked_decompose", "blocked_variance_components"]

_Cube = NDArray[np.float64]
CubeBlocks = Callable[[], Iterator[_Cube]]
"""Starts a pass over a ``(samples, judges, repeats)`` cube: its ``(k, judges, repeats)`` sample blocks, in order."""


def _cells(y: _Cube) -> tuple[NDArray[np.intp], _Cube, _Cube]:
    """A block's per-cell counts of finite repeats, cell means and within-cell sums of squares (as the whole cube's)."""
    return cell_statistics(y, np.isfinite(y))


def _complete(blocks: CubeBlocks, n: int, n_judges: int) -> tuple[NDArray[np.bool_], int, int]:
    """:func:`~ragqa.uncertainty.variance._complete_table`'s kept judges, with the kept rows and samples scored."""
    coverage_total: NDArray[np.intp] | None = None
    any_judge: NDArray[np.bool_] | None = None
    n_scored = 0
    for y in blocks():
        has = np.isfinite(y).sum(axis=2) > 0
        coverage_total = has.sum(axis=0) if coverage_total is None else coverage_total + has.sum(axis=0)
        seen = has.any(axis=0)
        any_judge = seen if any_judge is None else any_judge | seen
        n_scored += int(has.any(axis=1).sum())
    if coverage_total is None or any_judge is None:
        return np.zeros(n_judges, dtype=bool), 0, 0
    judges: NDArray[np.bool_] = np.asarray(any_judge, dtype=bool)
    best_judges = judges.copy()
    best, best_rows = -1, 0
    while judges.any():
        rows = sum(int((np.isfinite(y).sum(axis=2) > 0)[:, judges].all(axis=1).sum()) for y in blocks())
        size = rows * int(judges.sum())
        if size <= best:
            break
        best, best_rows, best_judges = size, rows, judges.copy()
        coverage = np.where(judges, coverage_total, n + 1)
        judges[int(np.argmin(coverage))] = False
    return best_judges, best_rows, n_scored


def blocked_variance_components(blocks: CubeBlocks, n: int, n_judges: int) -> VarianceComponents:
    """:func:`~ragqa.uncertainty.variance.variance_components` of the cube ``blocks`` reads (``n`` samples), exactly.

    Args:
        blocks: starts a pass over the cube's blocks of samples (:data:`CubeBlocks`); called several times.
        n: samples in the cube.
        n_judges: the cube's second dimension.

    Returns:
        The same components as the whole cube gives.
    """

    def clipped_within() -> Iterator[_Cube]:
        for y in blocks():
            yield np.clip(_cells(y)[2], 0.0, None)

    squares = float(pairwise_sum(clipped_within(), n * n_judges))
    df_e = sum(int(np.clip(np.isfinite(y).sum(axis=2) - 1, 0, None).sum()) for y in blocks())
    repeats = float(squares / df_e) if df_e > 0 else None

    def finite_values() -> Iterator[_Cube]:
        for y in blocks():
            yield y[np.isfinite(y)]

    n_finite = sum(int(np.isfinite(y).sum()) for y in blocks())
    tiny = 0.0
    if n_finite:  # np.var: the mean, then the mean of the squared deviations
        mean = pairwise_mean(finite_values(), n_finite)
        tiny = _ROUNDING * float(pairwise_sum((np.square(v - mean) for v in finite_values()), n_finite) / n_finite)

    kept_judges, a, n_scored = _complete(blocks, n, n_judges)
    b = int(kept_judges.sum())
    n_dropped = n_scored - a
    seen = np.zeros(n_judges, dtype=bool)  # judges with a score, of which the complete table may leave some out
    for y in blocks():
        seen |= (np.isfinite(y).sum(axis=2) > 0).any(axis=0)
    n_judges_dropped = int((seen & ~kept_judges).sum())

    def table() -> Iterator[tuple[_Cube, NDArray[np.intp]]]:
        """The complete table's rows (cell means) and cell counts, block by block."""
        for y in blocks():
            counts, cell_mean, _ = _cells(y)
            rows = (counts > 0)[:, kept_judges].all(axis=1) if b else np.zeros(len(y), dtype=bool)
            yield cell_mean[rows][:, kept_judges], counts[rows][:, kept_judges]

    first_count: int | None = None
    uniform = True
    for _, cell_counts in table():
        if cell_counts.size:
            first_count = int(cell_counts.flat[0]) if first_count is None else first_count
            uniform = uniform and bool(np.all(cell_counts == first_count))
    if first_count is None:
        r_h = 1.0
    elif uniform:
        r_h = float(first_count)
    else:
        inverse = (1.0 / c[:, j] for j in range(b) for _, c in table())  # column-major, as the table
        r_h = float(a * b / pairwise_sum(inverse, a * b))
    return _components(table, a, b, r_h, repeats, tiny, n_dropped, n_judges_dropped)


def _components(
    table: Callable[[], Iterator[tuple[_Cube, NDArray[np.intp]]]],
    a: int,
    b: int,
    r_h: float,
    repeats: float | None,
    tiny: float,
    n_dropped: int,
    n_judges_dropped: int,
) -> VarianceComponents:
    """The mean squares of the complete ``(a, b)`` table, read in blocks of rows, and the components from them."""
    mean_squares: tuple[float, float | None, float | None] | None = None
    if a >= 2:
        origin = next(t for t, _ in table() if t.size).flat[0]

        def shifted() -> Iterator[_Cube]:
            for t, _ in table():
                yield t - origin

        def by_judge(blocks: Callable[[], Iterator[_Cube]]) -> Iterator[_Cube]:
            for j in range(b):  # the table is column-major (numpy's x[rows][:, judges]): judge after judge
                for t in blocks():
                    yield t[:, j]

        grand = pairwise_mean(by_judge(shifted), a * b)
        ms_s = b * float(pairwise_sum(((t.mean(axis=1) - grand) ** 2 for t in shifted()), a)) / (a - 1)
        mean_squares = (ms_s, None, None)
        if b >= 2:
            col = np.array([pairwise_sum((t[:, j] for t in shifted()), a) for j in range(b)]) / a

            def resid() -> Iterator[_Cube]:
                for t in shifted():
                    yield (t - t.mean(axis=1)[:, None] - col[None, :] + grand) ** 2

            ms_j = a * float(np.sum((col - grand) ** 2)) / (b - 1)
            mean_squares = (ms_s, ms_j, float(pairwise_sum(by_judge(resid), a * b)) / ((a - 1) * (b - 1)))
    return components_from(mean_squares, (a, b), r_h, repeats, tiny, (n_dropped, n_judges_dropped))


def blocked_decompose(
    blocks: CubeBlocks, n: int, n_judges: int, *, calls_per_judgement: float | None = None
) -> Decomposition:
    """:func:`~ragqa.uncertainty.variance.decompose` of the cube ``blocks`` reads (``n`` samples), bit for bit."""
    components = blocked_variance_components(blocks, n, n_judges)
    most = max((int(np.isfinite(y).sum(axis=2).max()) for y in blocks() if y.size), default=0)
    return decomposition(components, max(1, most), calls_per_judgement)
