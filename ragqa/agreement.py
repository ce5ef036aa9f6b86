"""Judge agreement on one metric (pure functions): how far the panel's judges agree with each other.

Input is a score matrix, judges x samples, in the metric's units, with NaN where a judge has no
finite score for a sample (it failed, the metric was undefined for it, or it did not run). From
it, :func:`agreement` computes:

- Krippendorff's alpha at the interval level over the whole matrix (NaN = missing), with the
  ``krippendorff`` package (Krippendorff, *Content Analysis*, 4th ed., ch. 12; ``alpha = 1 -
  D_o / D_e``): 1 is perfect agreement, 0 agreement at chance level, below 0 systematic
  disagreement;
- per judge pair, over the samples both scored: Spearman's rank correlation
  (``scipy.stats.spearmanr``) and the mean absolute difference of their scores;
- per judge, the bias: the mean over samples of (its score - the mean of the other judges' finite
  scores on that sample);
- the contested samples: those with the largest spread (max - min of the judges' finite scores).

A figure that is undefined is NaN, never a made-up number: alpha with no sample scored by two
judges or a single distinct value among them (``D_e = 0``); Spearman with fewer than 2 common
samples or a judge constant over them; a mean over no sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragqa.agreement_stream import Blocks, matrix_blocks, streamed_agreement
from ragqa.schema import Agreement, PanelResult

__all__ = [
    "MAX_CONTESTED",
    "PACKAGE_CELLS",
    "agreement",
    "interval_alpha",
    "krippendorff_alpha",
    "metric_agreement",
    "score_matrix",
]

MAX_CONTESTED = 5
"""Contested samples kept per metric."""

PACKAGE_CELLS = 2_000_000
"""Largest ``pairable samples x distinct values**2`` handed to the ``krippendorff`` package (its
coincidence arrays hold about that many floats, 16 MB); beyond it :func:`interval_alpha` is used."""

_Matrix = npt.NDArray[np.float64]


def score_matrix(results: Sequence[PanelResult], judge_ids: Sequence[str]) -> tuple[list[str], _Matrix]:
    """The judges x samples score matrix of one metric's results.

    Args:
        results: the panel results of one metric, one per sample (sample order is kept).
        judge_ids: the panel, in display order (the matrix rows).

    Returns:
        ``(sample ids, matrix)``: the matrix has shape ``(len(judge_ids), len(results))``; a cell
        holds the judge's finite score, or NaN when it failed, returned NaN or did not score.
    """
    row_of = {jid: i for i, jid in enumerate(judge_ids)}
    matrix = np.full((len(judge_ids), len(results)), np.nan)
    for col, result in enumerate(results):
        for outcome in result.judges:
            row = row_of.get(outcome.judge_id)
            if row is None or outcome.failure is not None or outcome.score is None:
                continue
            if math.isfinite(outcome.score.value):
                matrix[row, col] = outcome.score.value
    return [r.sample_id for r in results], matrix


def krippendorff_alpha(matrix: _Matrix) -> float:
    """Krippendorff's alpha, interval level, of a judges x samples matrix (NaN = missing).

    Only samples with two or more finite scores are pairable; the others do not change alpha.
    The ``krippendorff`` package computes it through a coincidence matrix whose memory grows with
    samples x distinct values squared (continuous scores over thousands of samples need many
    GiB); past :data:`PACKAGE_CELLS` cells the same alpha is computed in closed form
    (:func:`interval_alpha`), which is linear in the number of scores. Both give the same number
    (``tests/test_agreement.py`` checks them against each other and against Krippendorff's
    published example).

    Args:
        matrix: shape ``(judges, samples)``, float, NaN where a judge has no score.

    Returns:
        Alpha (at most 1; 1 = perfect agreement, 0 = chance), or NaN when it is undefined: no
        pairable sample, or one distinct value among the pairable ones (expected disagreement 0).
    """
    pairable = _pairable(matrix, np.sum(~np.isnan(matrix), axis=0) >= 2)
    values = pairable[~np.isnan(pairable)]
    n_distinct = np.unique(values).size
    del values
    if n_distinct < 2:
        return math.nan
    if pairable.shape[1] * n_distinct**2 > PACKAGE_CELLS:
        return interval_alpha(pairable)
    return _package_alpha(pairable)


def _pairable(matrix: _Matrix, keep: npt.NDArray[np.bool_]) -> _Matrix:
    """``matrix[:, keep]``: the matrix itself (no copy) when every column is kept and it is C-ordered."""
    if keep.all() and matrix.flags.c_contiguous:
        return matrix
    return matrix[:, keep]


def interval_alpha(matrix: _Matrix) -> float:
    """Krippendorff's interval alpha in closed form, linear in the number of scores.

    With the interval metric ``(c - k)^2``, the coincidence sums reduce to variances
    (Krippendorff, "Computing Krippendorff's alpha-reliability", 2011): over the pairable samples
    ``u`` holding ``m_u >= 2`` scores, ``n = sum m_u``,
    ``D_o = (1/n) sum_u 2 m_u SS_u / (m_u - 1)`` with ``SS_u`` the sum of squared deviations from
    the sample's mean, ``D_e = 2 SS / (n - 1)`` with ``SS`` the sum of squared deviations of all
    pairable scores from their mean, and ``alpha = 1 - D_o / D_e``.

    Args:
        matrix: shape ``(judges, samples)``, float, NaN = missing.

    Returns:
        Alpha, or NaN when no sample is pairable or ``D_e`` is 0 (a single distinct value).
    """
    m = np.sum(~np.isnan(matrix), axis=0)
    pairable = _pairable(matrix, m >= 2)
    m = m[m >= 2]
    values = pairable[~np.isnan(pairable)]
    n = values.size
    if n == 0:
        return math.nan
    ss_total = float(np.sum((values - values.mean()) ** 2))
    del values
    if ss_total == 0:
        return math.nan
    ss_units = np.nansum((pairable - np.nanmean(pairable, axis=0)) ** 2, axis=0)
    observed = float(np.sum(2 * m * ss_units / (m - 1))) / n
    expected = 2 * ss_total / (n - 1)
    return 1 - observed / expected


def _average_ranks(x: _Matrix) -> _Matrix:
    """1-based ranks of ``x`` with ties given their average rank (scipy's ``rankdata(method="average")``)."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inverse]


def _spearman(a: _Matrix, b: _Matrix) -> float:
    """Spearman's rho of two equally long finite vectors; NaN for fewer than 2 or a constant one.

    The Pearson correlation of the average ranks, as ``scipy.stats.spearmanr`` computes it, with
    numpy alone: importing ``scipy.stats`` took longer than scoring the shipped dataset offline.
    """
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(np.corrcoef(_average_ranks(a), _average_ranks(b))[0, 1])


def agreement(
    sample_ids: Sequence[str],
    judge_ids: Sequence[str],
    matrix: _Matrix | Blocks,
    *,
    max_contested: int = MAX_CONTESTED,
) -> Agreement | None:
    """Agreement figures of one metric from its judges x samples score matrix.

    The figures are computed from blocks of the matrix's columns, each working array the size of
    a block, with numpy's own operations and summation order, so they are the numbers the whole
    matrix gives (:mod:`ragqa.agreement_stream`); a long run passes its scores as blocks and never
    builds the matrix.

    Args:
        sample_ids: the matrix columns (sample ids).
        judge_ids: the matrix rows (judges, in panel order).
        matrix: shape ``(len(judge_ids), len(sample_ids))``, scores in the metric's units, NaN
            where a judge has no finite score; or a function starting a pass over its column
            blocks, ``(len(judge_ids), k)`` each, left to right (:data:`ragqa.agreement_stream.Blocks`).
        max_contested: contested samples kept (largest spread first).

    Returns:
        The :class:`~ragqa.report.Agreement`, or ``None`` with fewer than two judges (agreement
        needs a panel). Pairs come in panel order (``(j0, j1), (j0, j2), (j1, j2)``...); undefined
        figures are NaN (see the module docstring). Contested samples have a spread above 0 and
        at least two finite scores; ties keep sample order.

    Raises:
        ValueError: when the matrix shape does not match the ids.
    """
    if isinstance(matrix, np.ndarray):
        if matrix.shape != (len(judge_ids), len(sample_ids)):
            raise ValueError(f"score matrix has shape {matrix.shape}, expected ({len(judge_ids)}, {len(sample_ids)})")
        blocks = matrix_blocks(matrix)
    else:
        blocks = matrix
    if len(judge_ids) < 2:
        return None
    return streamed_agreement(
        blocks,
        sample_ids,
        judge_ids,
        max_contested=max_contested,
        package_cells=PACKAGE_CELLS,
        package_alpha=_package_alpha,
    )


def _package_alpha(pairable: _Matrix) -> float:
    """The ``krippendorff`` package's interval alpha of a matrix whose every column is pairable."""
    import krippendorff

    return float(krippendorff.alpha(reliability_data=pairable, level_of_measurement="interval"))


def metric_agreement(
    results: Sequence[PanelResult], judge_ids: Sequence[str], *, max_contested: int = MAX_CONTESTED
) -> Agreement | None:
    """Agreement of one metric's panel results (:func:`score_matrix` then :func:`agreement`).

    Args:
        results: the results of one metric, one per sample.
        judge_ids: the panel, in display order.
        max_contested: contested samples kept.

    Returns:
        The agreement, or ``None`` with fewer than two judges.
    """
    sample_ids, matrix = score_matrix(results, judge_ids)
    return agreement(sample_ids, judge_ids, matrix, max_contested=max_contested)
