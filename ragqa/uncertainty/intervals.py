"""Confidence intervals of a mean with the samples as clusters (:mod:`ragqa.uncertainty`).

:func:`mean_interval` (clustered standard error with a Student t quantile, Miller 2024, or a seeded
cluster bootstrap), :func:`sample_interval` (one sample across its judges x repeats),
:func:`t_quantile` and :func:`bootstrap_interval`, the two building blocks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragqa._pairwise import pairwise_var
from ragqa.schema import DEFAULT_CONFIDENCE, Interval, check_confidence

__all__ = ["BOOTSTRAP_RESAMPLES", "METHODS", "bootstrap_interval", "mean_interval", "sample_interval", "t_quantile"]

METHODS = ("clustered-se", "cluster-bootstrap")
"""Interval methods of :func:`mean_interval`."""

BOOTSTRAP_RESAMPLES = 9999
"""Resamples of the cluster bootstrap (scipy's default)."""


def _finite(values: ArrayLike) -> NDArray[np.float64]:
    data: NDArray[np.float64] = np.asarray(values, dtype=float).ravel()
    keep = np.isfinite(data)
    if keep.all():  # no copy: a run's per-sample values are read in place
        return data
    finite: NDArray[np.float64] = data[keep]
    return finite


def mean_interval(
    values: Sequence[float] | ArrayLike,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    method: str = "clustered-se",
    seed: int = 0,
    bounds: tuple[float, float] | None = None,
) -> Interval | None:
    """Confidence interval of the mean of per-cluster values (one value per sample, usually).

    ``clustered-se`` (default): the mean plus or minus ``t * s / sqrt(n)``, with ``s`` the sample
    standard deviation of the ``n`` cluster values (``ddof=1``) and ``t`` the Student t quantile
    at ``(1 + confidence) / 2`` with ``n - 1`` degrees of freedom (:func:`t_quantile`).
    This is Miller (2024), "Adding Error Bars to Evals", arXiv:2411.00640, eq. 4 (clustered
    standard error) when each cluster is summarised by its mean, with the t quantile his section
    on small samples recommends in place of 1.96.

    ``cluster-bootstrap``: ``scipy.stats.bootstrap`` over the cluster values (percentile method,
    :data:`BOOTSTRAP_RESAMPLES` resamples, a generator seeded with ``seed``: the same values give
    the same interval); Efron & Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13.

    Args:
        values: one number per cluster, in the metric's units; NaN and infinities are ignored.
        confidence: nominal coverage, in (0, 1).
        method: ``clustered-se`` or ``cluster-bootstrap``.
        seed: the bootstrap's seed (unused by ``clustered-se``).
        bounds: the metric's closed range ``(low, high)``; the interval is clamped to it.

    Returns:
        The interval (``estimate`` is the plain mean, ``n`` the finite values), or ``None`` with
        fewer than two finite values. All values equal give a zero-width interval.

    Raises:
        ValueError: for a confidence outside (0, 1) or an unknown method.
    """
    check_confidence(confidence)
    if method not in METHODS:
        raise ValueError(f"unknown interval method {method!r}; use one of {', '.join(METHODS)}")
    data = _finite(values)
    n = int(data.size)
    if n < 2:
        return None
    estimate = math.fsum(data) / n  # (not a list: a run's aggregates are not copied as Python floats)
    if np.ptp(data) == 0:
        low = high = estimate
    elif method == "clustered-se":
        se = float(np.sqrt(pairwise_var(data, ddof=1))) / math.sqrt(n)  # np.std's float, without its temporary
        half = t_quantile(n - 1, confidence) * se
        low, high = estimate - half, estimate + half
    else:
        low, high = bootstrap_interval(data, confidence=confidence, seed=seed)
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Interval(estimate=estimate, low=low, high=high, confidence=confidence, method=method, n=n)


def _t_two_sided(t: float, df: int) -> float:
    """``P(|T| <= t)`` for Student's t with integer ``df``: Abramowitz & Stegun (1964) 26.7.3 and 26.7.4.

    With ``theta = atan(t / sqrt(df))``, a finite series in ``cos(theta)^2``: for even ``df``,
    ``sin(theta) * (1 + 1/2 c + 1*3/(2*4) c^2 + ...)`` (``df / 2`` terms); for odd ``df > 1``,
    ``2/pi * (theta + sin(theta) cos(theta) (1 + 2/3 c + 2*4/(3*5) c^2 + ...))`` (``(df - 1) / 2``
    terms); for ``df = 1``, ``2 theta / pi``.
    """
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df == 1:
        return 2.0 * theta / math.pi
    if df % 2 == 0:
        k = np.arange(1, df // 2, dtype=float)
        terms = np.cumprod((2 * k - 1) / (2 * k) * c2)
        return math.sin(theta) * (1.0 + float(terms.sum()))
    k = np.arange(1, (df - 1) // 2, dtype=float)
    terms = np.cumprod((2 * k) / (2 * k + 1) * c2)
    return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * (1.0 + float(terms.sum())))


def t_quantile(df: int, confidence: float) -> float:
    """Student's t critical value: the ``t > 0`` with ``P(|T| <= t) = confidence``, ``df`` degrees of freedom.

    It is the quantile at ``(1 + confidence) / 2`` (``scipy.special.stdtrit(df, (1 + confidence) / 2)``,
    which ``tests/uncertainty/test_uncertainty.py`` checks it against to 1e-9 relative for 1 to 100,000 degrees
    of freedom). Computed here with numpy from the exact finite series of the t distribution for an
    integer ``df`` (Abramowitz & Stegun 1964, *Handbook of Mathematical Functions*, 26.7.3-4): a
    bisection for a start, then Newton's method with the t density. Importing ``scipy.special``
    loads scipy's array-API layer, too slow for the offline path's start
    (``tests/cli/test_startup_imports.py`` keeps scipy out of the README job).

    Args:
        df: degrees of freedom, an integer >= 1.
        confidence: the two-sided coverage, in (0, 1).

    Returns:
        The critical value (e.g. 2.001 for ``df = 59`` and 0.95; 12.71 for ``df = 1``).

    Raises:
        ValueError: for ``df < 1`` or a confidence outside (0, 1).
    """
    check_confidence(confidence)
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    low, high = 0.0, math.pi / 2
    for _ in range(12):  # theta = atan(t / sqrt(df)) to within pi / 8192: a start for Newton
        middle = (low + high) / 2
        if _t_two_sided(math.sqrt(df) * math.tan(middle), df) < confidence:
            low = middle
        else:
            high = middle
    t = math.sqrt(df) * math.tan((low + high) / 2)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(100):
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))
        step = (_t_two_sided(t, df) - confidence) / (2.0 * density)
        t = t - step if t - step > 0 else t / 2
        if abs(step) <= 1e-14 * t:
            break
    return t


def bootstrap_interval(
    values: Sequence[float] | ArrayLike,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of ``values`` (``scipy.stats.bootstrap``).

    Resamples the values with replacement (percentile method, Efron & Tibshirani 1993, *An
    Introduction to the Bootstrap*, ch. 13) with a generator seeded by ``seed``: the same values
    give the same interval. Used for the cluster bootstrap of :func:`mean_interval` and the paired
    differences of :func:`ragqa.compare.paired_bootstrap_ci`.

    Args:
        values: finite numbers, one per cluster (or per pair).
        confidence: nominal coverage, in (0, 1).
        n_resamples: bootstrap resamples.
        seed: the generator's seed.

    Returns:
        ``(low, high)``; ``(NaN, NaN)`` for fewer than 2 values; ``(v, v)`` when every value equals
        ``v`` (every resample has that mean).
    """
    data = np.asarray(values, dtype=float)
    if data.size < 2:
        return math.nan, math.nan
    if np.ptp(data) == 0:
        return float(data[0]), float(data[0])
    from scipy.stats import bootstrap  # type: ignore[import-untyped]

    result = bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        vectorized=True,
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def sample_interval(
    scores: ArrayLike,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    bounds: tuple[float, float] | None = None,
) -> Interval | None:
    """One sample's interval across its judges x repeats (clustered standard error, judges as clusters).

    Each judge's repeats are averaged (a judge is one cluster); with two or more judges the
    interval is :func:`mean_interval` of the judge means (it answers "what would another judge like
    these say?"); with one judge, :func:`mean_interval` of its repeats.

    Args:
        scores: shape (judges, repeats), or (judges,) for one repeat; NaN for a missing value.
        confidence: nominal coverage, in (0, 1).
        bounds: the metric's closed range, to clamp to.

    Returns:
        The interval, or ``None`` when fewer than two judges (or, for one judge, repeats) have a
        finite value.

    Raises:
        ValueError: for a confidence outside (0, 1) or an array with more than two dimensions.
    """
    data = np.asarray(scores, dtype=float)
    if data.ndim == 1:
        data = data[:, None]
    if data.ndim != 2:
        raise ValueError(f"sample scores must be shaped (judges, repeats), got shape {data.shape}")
    finite = np.isfinite(data)
    counts = finite.sum(axis=1)
    scored = counts > 0
    if int(scored.sum()) >= 2:
        means = np.where(finite, data, 0.0).sum(axis=1)[scored] / counts[scored]
        return mean_interval(means, confidence=confidence, bounds=bounds)
    if int(scored.sum()) == 1:
        return mean_interval(data[scored][0], confidence=confidence, bounds=bounds)
    check_confidence(confidence)
    return None
