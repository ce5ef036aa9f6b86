"""Judge reliability without labels: the binary Dawid-Skene model fitted by EM. Pure numpy.

Dawid, A. P. and Skene, A. M. (1979), "Maximum Likelihood Estimation of Observer Error-Rates Using
the EM Algorithm", Journal of the Royal Statistical Society C 28(1), 20-28.

Each item ``i`` (a statement, or a sample's pass/fail) has an unknown true class ``z_i`` in {0, 1}
with prior ``pi = P(z = 1)``. Judge ``j`` says 1 with probability ``sensitivity_j`` when ``z = 1``
and says 0 with probability ``specificity_j`` when ``z = 0``, independently of the other judges
given ``z``. EM alternates the posterior ``T_i = P(z_i = 1 | verdicts)`` (E-step) and the
parameters as posterior-weighted frequencies (M-step), starting from the majority vote, as Dawid
and Skene do. A symmetric Beta(``smoothing`` + 1, ``smoothing`` + 1) prior keeps the rates off 0 and
1 (a MAP estimate; ``smoothing=0`` gives the maximum-likelihood one).

The independence assumption is broken by judges of one family (shared data, architectures,
prompts): Balasubramanian, Podkopaev and Kasiviswanathan (2026, stat.ML) show it for LLM judges.
:func:`residual_correlation` measures how far the fitted panel is from it, so a report can warn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["DawidSkeneFit", "fit_dawid_skene", "majority_posterior", "residual_correlation"]

_FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class DawidSkeneFit:
    """The fitted binary Dawid-Skene model of one panel on one set of items.

    Shapes: ``n_items`` items, ``n_judges`` judges. Every rate is a probability in [0, 1].

    Attributes:
        posterior: ``(n_items,)`` P(true class is 1 | the judges' verdicts) per item.
        sensitivity: ``(n_judges,)`` P(judge says 1 | true class 1), the judge's recall of 1s.
        specificity: ``(n_judges,)`` P(judge says 0 | true class 0).
        prevalence: P(true class is 1) over the items.
        iterations: EM iterations run.
        converged: whether the largest parameter change fell below the tolerance.
        log_likelihood: the observed-data log-likelihood at the fit (higher is better).
    """

    posterior: _FloatArray
    sensitivity: _FloatArray
    specificity: _FloatArray
    prevalence: float
    iterations: int
    converged: bool
    log_likelihood: float

    @property
    def accuracy(self) -> _FloatArray:
        """``(n_judges,)`` each judge's expected accuracy, ``prevalence * sens + (1 - prevalence) * spec``."""
        return self.prevalence * self.sensitivity + (1.0 - self.prevalence) * self.specificity

    @property
    def labels(self) -> NDArray[np.int64]:
        """``(n_items,)`` the voted class per item: 1 when the posterior is above 0.5, else 0."""
        return (self.posterior > 0.5).astype(np.int64)


def _as_verdicts(verdicts: ArrayLike) -> _FloatArray:
    matrix = np.asarray(verdicts, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"verdicts must be a 2-D array (items x judges), got shape {matrix.shape}")
    finite = matrix[~np.isnan(matrix)]
    if finite.size and not np.all((finite == 0.0) | (finite == 1.0)):
        raise ValueError("verdicts must be 0, 1 or NaN (a judge that gave no verdict on that item)")
    return matrix


def majority_posterior(verdicts: ArrayLike) -> _FloatArray:
    """The share of judges saying 1 per item: Dawid and Skene's starting point, and a plain vote.

    Args:
        verdicts: ``(n_items, n_judges)`` array of 0, 1 or NaN (no verdict).

    Returns:
        ``(n_items,)`` share of 1s among the judges that gave a verdict; 0.5 for an item with none.

    Raises:
        ValueError: for a non-2-D array or a value other than 0, 1 and NaN.
    """
    matrix = _as_verdicts(verdicts)
    seen = ~np.isnan(matrix)
    counts = seen.sum(axis=1)
    ones = np.where(seen, matrix, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(counts > 0, ones / np.maximum(counts, 1), 0.5)
    return share.astype(np.float64)


_EPS = 1e-9
"""How far every fitted rate and the prevalence stay from 0 and 1 (their logarithms are taken)."""


_column_sums = np.add.reduce
"""``np.add.reduce(x)``: ``x.sum(axis=0)`` without its Python wrappers (the same reduction)."""


@dataclass(frozen=True)
class _Masked:
    """One fit's verdict matrix split once for every EM iteration: 1s, 0s and the answered cells as floats.

    ``ones`` is 1.0 where a judge said 1, ``zeros`` 1.0 where it said 0, ``seen`` 1.0 where it said
    either (0.0 elsewhere, NaN cells included), each ``(n_items, n_judges)``; ``weights`` are the
    rows' counts or ``None``.
    """

    ones: _FloatArray
    zeros: _FloatArray
    seen: _FloatArray
    weights: _FloatArray | None

    @classmethod
    def of(cls, matrix: _FloatArray, weights: _FloatArray | None) -> _Masked:
        seen = ~np.isnan(matrix)
        return cls(np.where(seen, matrix, 0.0), np.where(seen, 1.0 - matrix, 0.0), seen.astype(np.float64), weights)


def _m_step(data: _Masked, posterior: _FloatArray, smoothing: float) -> tuple[_FloatArray, _FloatArray, float]:
    weights = data.weights
    p1 = posterior if weights is None else weights * posterior  # an item of weight w counts w times
    p0 = 1.0 - posterior if weights is None else weights * (1.0 - posterior)
    p1c, p0c = p1[:, None], p0[:, None]
    sensitivity = (_column_sums(p1c * data.ones) + smoothing) / (_column_sums(p1c * data.seen) + 2 * smoothing)
    specificity = (_column_sums(p0c * data.zeros) + smoothing) / (_column_sums(p0c * data.seen) + 2 * smoothing)
    n = posterior.size if weights is None else float(weights.sum())
    prevalence = float((p1.sum() + smoothing) / (n + 2 * smoothing)) if n else 0.5
    return (
        np.minimum(np.maximum(sensitivity, _EPS), 1 - _EPS),
        np.minimum(np.maximum(specificity, _EPS), 1 - _EPS),
        min(max(prevalence, _EPS), 1 - _EPS),
    )


def _e_step(data: _Masked, sens: _FloatArray, spec: _FloatArray, prevalence: float) -> tuple[_FloatArray, float]:
    ones, zeros = data.ones, data.zeros
    log_1 = math.log(prevalence) + ones @ np.log(sens) + zeros @ np.log(1.0 - sens)
    log_0 = math.log(1.0 - prevalence) + ones @ np.log(1.0 - spec) + zeros @ np.log(spec)
    top = np.maximum(log_1, log_0)
    norm = top + np.log(np.exp(log_1 - top) + np.exp(log_0 - top))
    return np.exp(log_1 - norm), float(norm.sum() if data.weights is None else (data.weights * norm).sum())


def fit_dawid_skene(
    verdicts: ArrayLike,
    *,
    max_iterations: int = 200,
    tolerance: float = 1e-6,
    smoothing: float = 1.0,
    weights: ArrayLike | None = None,
) -> DawidSkeneFit:
    """Fit the binary Dawid-Skene model by EM from the majority vote (Dawid and Skene 1979).

    Deterministic: the same verdicts give the same fit (there is no random start to seed).

    Args:
        verdicts: ``(n_items, n_judges)`` array of 0 (e.g. "not supported"), 1 ("supported") or NaN
            where a judge gave no verdict on an item.
        max_iterations: EM iterations at most (>= 1).
        tolerance: stop when no rate or the prevalence moves by more than this between iterations.
        smoothing: pseudo-count of the symmetric Beta prior on every rate (>= 0).
        weights: ``(n_items,)`` non-negative counts, each row standing for that many items with the
            same verdicts (e.g. the distinct verdict patterns of many items and how often each
            occurs: the same fit as on the rows repeated, up to rounding, in time independent of
            the number of items); ``None``: every row once.

    Returns:
        The :class:`DawidSkeneFit` (``posterior`` per row). With no items, the rates are 0.5 and
        nothing is fitted.

    Raises:
        ValueError: for a bad array (see :func:`majority_posterior`), ``max_iterations < 1``, a
            negative ``smoothing``, or weights of the wrong shape or negative.
    """
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    if smoothing < 0:
        raise ValueError(f"smoothing must be >= 0, got {smoothing}")
    matrix = _as_verdicts(verdicts)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if w is not None and (w.shape != (matrix.shape[0],) or np.any(~(w >= 0))):
        raise ValueError(f"weights must be {matrix.shape[0]} non-negative numbers, one per row")
    n_judges = matrix.shape[1]
    if matrix.shape[0] == 0:
        half = np.full(n_judges, 0.5)
        return DawidSkeneFit(np.empty(0), half, half.copy(), 0.5, 0, True, 0.0)
    data = _Masked.of(matrix, w)
    posterior = majority_posterior(matrix)
    sens, spec, prevalence = _m_step(data, posterior, smoothing)
    converged = False
    iterations = 0
    log_likelihood = 0.0
    largest = np.maximum.reduce
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - the count is reported
        posterior, log_likelihood = _e_step(data, sens, spec, prevalence)
        new_sens, new_spec, new_prev = _m_step(data, posterior, smoothing)
        change = max(
            float(largest(np.abs(new_sens - sens), initial=0.0)),
            float(largest(np.abs(new_spec - spec), initial=0.0)),
            abs(new_prev - prevalence),
        )
        sens, spec, prevalence = new_sens, new_spec, new_prev
        if change < tolerance:
            converged = True
            break
    posterior, log_likelihood = _e_step(data, sens, spec, prevalence)
    return DawidSkeneFit(posterior, sens, spec, prevalence, iterations, converged, log_likelihood)


def residual_correlation(verdicts: ArrayLike, fit: DawidSkeneFit) -> _FloatArray:
    """Pairwise correlation of the judges' verdicts after removing what the true class explains.

    The residual of judge ``j`` on item ``i`` is ``y_ij - E[y_ij | fit]`` with
    ``E[y_ij] = T_i * sens_j + (1 - T_i) * (1 - spec_j)``. Under Dawid-Skene's conditional
    independence the residuals of two judges are uncorrelated; a clearly positive value means the
    two err together (same family, same prompt), which the model does not account for
    (Balasubramanian, Podkopaev and Kasiviswanathan 2026).

    Args:
        verdicts: the ``(n_items, n_judges)`` array the fit was made on.
        fit: the fit.

    Returns:
        ``(n_judges, n_judges)`` Pearson correlations in [-1, 1] over the items both judges
        answered; 1 on the diagonal; NaN where fewer than 3 shared items or a constant residual.

    Raises:
        ValueError: when the shapes of ``verdicts`` and ``fit`` disagree.
    """
    matrix = _as_verdicts(verdicts)
    if matrix.shape != (fit.posterior.size, fit.sensitivity.size):
        raise ValueError(f"verdicts {matrix.shape} do not match the fit ({fit.posterior.size}, {fit.sensitivity.size})")
    expected = fit.posterior[:, None] * fit.sensitivity + (1.0 - fit.posterior)[:, None] * (1.0 - fit.specificity)
    residual = matrix - expected
    n = matrix.shape[1]
    out = np.full((n, n), np.nan)
    for a in range(n):
        out[a, a] = 1.0
        for b in range(a + 1, n):
            both = ~np.isnan(residual[:, a]) & ~np.isnan(residual[:, b])
            if both.sum() < 3:
                continue
            x, y = residual[both, a], residual[both, b]
            if np.std(x) == 0 or np.std(y) == 0:
                continue
            out[a, b] = out[b, a] = float(np.corrcoef(x, y)[0, 1])
    return out
