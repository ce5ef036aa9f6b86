"""Percentile bootstrap intervals shared by the benchmarks (a sibling module, not a benchmark).

The percentile bootstrap (Efron and Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13):
resample the items with replacement, recompute the statistic, read the 2.5th and 97.5th
percentiles of the draws as the 95% interval. Seeded, so a benchmark's table is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["bootstrap_ci", "interval_text"]


def bootstrap_ci(
    wins: Sequence[float] | NDArray[np.float64], resamples: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean of ``wins`` (e.g. 1 win, 0.5 tie, 0 loss per pair).

    Args:
        wins: the per-item values, at least one.
        resamples: bootstrap resamples.
        seed: the seed of numpy's ``default_rng``.

    Returns:
        ``(low, high)``: the 2.5th and 97.5th percentiles of the resampled means.
    """
    values = np.asarray(wins, dtype=float)
    means = values[np.random.default_rng(seed).integers(0, len(values), (resamples, len(values)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def interval_text(
    draws: NDArray[np.float64], point: float | None = None, *, signed: bool = False, skip_nan: bool = False
) -> str:
    """The 95% percentile interval of bootstrap ``draws`` as a table cell: ``0.812 [0.771, 0.850]``.

    Args:
        draws: the statistic of each resample.
        point: the statistic on all the items, written before the interval; ``None``: the interval alone.
        signed: write a sign on every number (a difference: ``+0.012 [-0.020, +0.041]``).
        skip_nan: leave out the draws that are NaN (a resample where the statistic is undefined);
            otherwise a NaN draw makes the interval NaN.

    Returns:
        Three decimals each; ``[low, high]`` alone without ``point``.
    """
    low, high = (np.nanquantile if skip_nan else np.quantile)(draws, [0.025, 0.975])
    fmt = "+.3f" if signed else ".3f"
    interval = f"[{low:{fmt}}, {high:{fmt}}]"
    return interval if point is None else f"{point:{fmt}} {interval}"
