"""The statistics of calibration, as pure functions of scores and labels.

AUROC (Mann-Whitney U), Spearman's rho, the best-accuracy gate threshold and percentile bootstrap
intervals, with ``scipy.stats`` doing the statistics. Tested against hand-computed values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "Direction",
    "Interval",
    "LabelKind",
    "as_floats",
    "auroc",
    "auroc_along",
    "auroc_groups",
    "best_threshold",
    "bootstrap_ci",
    "label_kind",
    "spearman",
]

Direction = Literal["higher", "lower"]
"""A metric's direction: which end of its scale is better."""
LabelKind = Literal["binary", "graded"]
"""``binary``: every label is 0 or 1; ``graded``: any other numbers (e.g. 1-5)."""


class Interval(BaseModel):
    """A confidence interval; ``nan`` bounds when it cannot be computed (fewer than 2 samples)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: float
    high: float


def as_floats(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``values`` as a float64 NumPy array."""
    import numpy as np

    return np.asarray(values, dtype=np.float64)


def auroc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Area under the ROC curve of ``scores`` for binary ``labels`` (1 = positive).

    Equals the Mann-Whitney U statistic of the positives' scores over ``n_pos * n_neg``
    (``scipy.stats.mannwhitneyu``; Hanley & McNeil 1982): the probability that a random positive
    scores higher than a random negative, ties counting one half.

    Args:
        scores: one finite score per sample, higher = more likely positive.
        labels: one label per sample, 0 or 1.

    Returns:
        AUROC in [0, 1]; 0.5 is chance.

    Raises:
        ValueError: when the lengths differ or a class is empty.
    """
    s, y = as_floats(scores), as_floats(labels)
    if s.shape != y.shape:
        raise ValueError(f"{s.size} scores for {y.size} labels")
    pos, neg = s[y == 1], s[y == 0]
    if pos.size == 0 or neg.size == 0:
        raise ValueError("AUROC needs both classes (labels 0 and 1)")
    return auroc_groups(pos, neg)


def auroc_groups(pos: npt.NDArray[np.float64], neg: npt.NDArray[np.float64]) -> float:
    """AUROC from the positives' and the negatives' scores (both non-empty): ``U / (n_pos * n_neg)``."""
    return float(auroc_along(pos, neg, axis=-1))


def auroc_along(
    pos: npt.NDArray[np.float64], neg: npt.NDArray[np.float64], *, axis: int = -1
) -> npt.NDArray[np.float64]:
    """AUROC of each slice along ``axis``: ``U / (n_pos * n_neg)``, one ``mannwhitneyu`` call for all.

    ``scipy.stats.mannwhitneyu`` (Mann & Whitney 1947; Hanley & McNeil 1982) ranks every slice at
    once, so a batch of bootstrap resamples (shape ``(resamples, n)``) costs one call; each value
    equals :func:`auroc_groups` of that slice, bit for bit (``tests/calibration``).

    Args:
        pos: the positives' scores, ``n_pos >= 1`` along ``axis``; other axes broadcast against ``neg``.
        neg: the negatives' scores, ``n_neg >= 1`` along ``axis``.
        axis: the axis of the samples.

    Returns:
        AUROC in [0, 1] per slice (a 0-d array for 1-D inputs), higher = positives score higher.
    """
    from scipy.stats import mannwhitneyu  # type: ignore[import-untyped, unused-ignore]

    u = mannwhitneyu(pos, neg, alternative="two-sided", axis=axis).statistic
    result: npt.NDArray[np.float64] = u / (pos.shape[axis] * neg.shape[axis])
    return result


def spearman(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Spearman's rank correlation between ``scores`` and ``labels`` (``scipy.stats.spearmanr``).

    Args:
        scores: one finite score per sample.
        labels: one label per sample, same length.

    Returns:
        rho in [-1, 1]; ``nan`` when either side is constant or there are fewer than 2 samples.
    """
    import warnings

    from scipy.stats import spearmanr  # type: ignore[import-untyped, unused-ignore]

    s, y = as_floats(scores), as_floats(labels)
    if s.size < 2 or s.size != y.size or (s == s[0]).all() or (y == y[0]).all():
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(spearmanr(s, y).statistic)


def best_threshold(
    scores: npt.ArrayLike, passed: npt.ArrayLike, direction: Direction = "higher"
) -> tuple[float, float]:
    """The gate threshold that best reproduces ``passed``, and its accuracy.

    The gate passes a sample when ``score >= t`` (``score <= t`` when ``direction`` is
    ``lower``). ``t`` ranges over the distinct scores (so at least one sample passes); among
    equally accurate thresholds the most lenient one wins (the lowest for ``higher``, the highest
    for ``lower``).

    Args:
        scores: one finite score per sample, on the metric's scale.
        passed: the reference verdict per sample (the human label passes).
        direction: the metric's direction.

    Returns:
        ``(threshold, accuracy)``, accuracy in [0, 1].

    Raises:
        ValueError: when there are no scores or the lengths differ.
    """
    import numpy as np

    s = as_floats(scores)
    y = np.asarray(passed, dtype=bool)
    if s.size == 0 or s.size != y.size:
        raise ValueError(f"best_threshold needs as many verdicts as scores, at least one ({s.size}, {y.size})")
    candidates = np.unique(s)  # ascending
    if direction == "lower":
        candidates = candidates[::-1]
        gate = s[None, :] <= candidates[:, None]
    else:
        gate = s[None, :] >= candidates[:, None]
    accuracy = (gate == y[None, :]).mean(axis=1)
    best = int(np.argmax(accuracy))  # first maximum = most lenient
    return float(candidates[best]), float(accuracy[best])


def bootstrap_ci(
    statistic: Callable[..., float | npt.NDArray[np.float64]],
    samples: Sequence[npt.NDArray[np.float64]],
    *,
    paired: bool,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    vectorized: bool = False,
) -> Interval:
    """Percentile bootstrap interval of ``statistic`` (``scipy.stats.bootstrap``; Efron & Tibshirani 1993).

    Resamples that give ``nan`` (e.g. a constant resample for Spearman) are left out of the
    percentiles.

    Args:
        statistic: a function of the (resampled) arrays returning a float (with ``vectorized``, one
            float per resample along ``axis``).
        samples: the data arrays; with ``paired`` the same indices are drawn from each
            (one array per variable of the same samples), else each is resampled on its own
            (independent groups, e.g. the two classes: a stratified bootstrap).
        paired: see ``samples``.
        confidence: the confidence level, e.g. 0.95.
        n_resamples: bootstrap resamples.
        seed: seed of the random generator (results are reproducible).
        vectorized: ``statistic`` takes an ``axis`` keyword and computes every resample at once
            (shape ``(resamples, n)``), as ``scipy.stats.bootstrap`` calls it; the same draws
            and, for a statistic equal slice by slice, the same interval, in one call.

    Returns:
        The interval; ``nan`` bounds when a sample has fewer than 2 items or every resample is ``nan``.
    """
    import warnings

    import numpy as np
    from scipy.stats import bootstrap  # type: ignore[import-untyped, unused-ignore]

    if any(len(a) < 2 for a in samples):
        return Interval(low=math.nan, high=math.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bootstrap(
            tuple(samples),
            statistic,
            paired=paired,
            vectorized=vectorized,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    distribution = result.bootstrap_distribution
    if np.isnan(distribution).all():
        return Interval(low=math.nan, high=math.nan)
    alpha = (1 - confidence) / 2
    low, high = np.nanpercentile(distribution, [100 * alpha, 100 * (1 - alpha)])
    return Interval(low=float(low), high=float(high))


def label_kind(labels: Sequence[float]) -> LabelKind:
    """``binary`` when every label is 0 or 1, else ``graded``."""
    return "binary" if all(label in (0, 1) for label in labels) else "graded"
