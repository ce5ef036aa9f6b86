"""Bootstrap confidence intervals of a mean paired difference (pure), for comparing two runs.

:func:`paired_bootstrap_ci` resamples the per-pair differences (``scipy.stats.bootstrap`` through
:func:`ragqa.uncertainty.bootstrap_interval`); :func:`paired_cluster_bootstrap_ci` also resamples
each sample's repeat values (a two-stage bootstrap). Both use a fixed seed, so the same results
give the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ragqa.uncertainty import bootstrap_interval

__all__ = ["BOOTSTRAP_RESAMPLES", "BOOTSTRAP_SEED", "paired_bootstrap_ci", "paired_cluster_bootstrap_ci"]

BOOTSTRAP_SEED = 20240611
"""Seed of the bootstrap's random generator: the same two files always give the same interval."""

BOOTSTRAP_RESAMPLES = 9999
"""Bootstrap resamples per interval."""


def paired_bootstrap_ci(
    differences: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Bootstrap confidence interval of the mean of paired differences (``scipy.stats.bootstrap``).

    Resamples the differences with replacement (percentile method, Efron & Tibshirani, *An
    Introduction to the Bootstrap*, ch. 13), with a generator seeded by ``seed``.

    Args:
        differences: per-pair ``B - A``, finite.
        confidence: confidence level, in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed.

    Returns:
        ``(low, high)``; ``(NaN, NaN)`` for fewer than 2 differences; ``(d, d)`` when every
        difference equals ``d`` (every resample has that mean).
    """
    return bootstrap_interval(differences, confidence=confidence, n_resamples=n_resamples, seed=seed)


def paired_cluster_bootstrap_ci(
    differences: Sequence[float],
    repeats_a: Sequence[Sequence[float]],
    repeats_b: Sequence[Sequence[float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Two-stage (cluster) bootstrap interval of the mean paired difference, with repeats inside each sample.

    Stage 1 resamples the samples (the clusters) with replacement; stage 2 resamples, inside each
    chosen sample, its repeat values in A and in B with replacement, and moves that sample's
    difference by how far the resampled repeat means fall from the observed ones:
    ``d_i* = d_i + (mean(b_i*) - mean(b_i)) - (mean(a_i*) - mean(a_i))``. The interval is the
    percentile interval of the resampled means. This is the two-stage bootstrap of hierarchical
    data (Davison & Hinkley, *Bootstrap Methods and their Application*, 1997, section 3.8; Field &
    Welsh, "Bootstrapping clustered data", JRSS B 69(3), 2007). Resampling both stages counts the
    repeat noise twice over (it is already in the spread of the ``d_i``), so the interval is
    somewhat conservative: it says "no significant change" a little more often than the nominal
    level, never less.

    Args:
        differences: per-sample ``B - A`` of the observed scores, finite, shape (n,).
        repeats_a: per sample, A's finite repeat values (one value without repeats).
        repeats_b: per sample, B's finite repeat values.
        confidence: confidence level, in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed (the same inputs give the same interval).

    Returns:
        ``(low, high)``; ``(NaN, NaN)`` for fewer than 2 samples.

    Raises:
        ValueError: when the three sequences differ in length or a sample has no repeat value.
    """
    d = np.asarray(differences, dtype=float)
    n = d.size
    if not len(repeats_a) == len(repeats_b) == n:
        raise ValueError(f"{n} differences but {len(repeats_a)} and {len(repeats_b)} samples of repeats")
    if n < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    shifted = np.empty((n_resamples, n))
    for i in range(n):
        shift = np.zeros(n_resamples)
        for values, sign in ((repeats_b[i], 1.0), (repeats_a[i], -1.0)):
            reps = np.asarray(values, dtype=float)
            if reps.size == 0:
                raise ValueError(f"sample {i} has no repeat value")
            if reps.size > 1:
                drawn = reps[rng.integers(0, reps.size, size=(n_resamples, reps.size))].mean(axis=1)
                shift += sign * (drawn - reps.mean())
        shifted[:, i] = d[i] + shift
    means = np.empty(n_resamples)
    step = max(1, 2_000_000 // n)  # resamples per batch: about 16 MB of indices at a time
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        picks = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = np.take_along_axis(shifted[start:stop], picks, axis=1).mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)
