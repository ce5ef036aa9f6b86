"""Where one metric's variance comes from, and what would halve its interval (:mod:`ragqa.uncertainty`).

:func:`variance_components` (ANOVA estimator of a crossed two-way random-effects design with
replication, Searle, Casella & McCulloch 1992), :func:`aggregate_variance`,
:func:`halving_advice` (generalizability theory's design study) and :func:`decompose`, which
does all three; :func:`score_cube` shapes a run's scores for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragqa.schema import AdviceOption, Decomposition, Lever, VarianceComponents

__all__ = [
    "aggregate_variance",
    "components_from",
    "decompose",
    "decomposition",
    "halving_advice",
    "score_cube",
    "variance_components",
]


def score_cube(values: Sequence[Sequence[Sequence[float]]] | NDArray[np.float64]) -> NDArray[np.float64]:
    """One metric's scores as the (samples, judges, repeats) array the estimators take.

    Args:
        values: per sample, per judge, that judge's repeat values (``[]`` for a judge that did not
            judge the sample; NaN for a failed or unscored repeat). Every sample lists the same judges.

    Returns:
        Shape (samples, judges, most repeats), NaN where a judge has fewer values (at least one
        repeat wide, so an empty run gives shape (0, 0, 1)).
    """
    if isinstance(values, np.ndarray) and values.ndim == 3:  # already the cube (filled, NaN where none)
        return np.asarray(values, dtype=np.float64)
    judges = max((len(row) for row in values), default=0)
    repeats = max((len(cell) for row in values for cell in row), default=0) or 1
    cube = np.full((len(values), judges, repeats), np.nan)
    for i, row in enumerate(values):
        for j, cell in enumerate(row):
            cube[i, j, : len(cell)] = cell
    return cube


_ROUNDING = 1e-12
"""A component below this share of the scores' total variance is rounding noise, reported as 0."""


def _complete_table(has: NDArray[np.bool_]) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """The samples and judges of the largest complete table of cells the greedy rule finds.

    Starts from every judge with a score; while leaving out the kept judge with the fewest scored
    cells gives a complete (samples x judges) table with more cells, leaves it out.

    Args:
        has: shape (samples, judges), True where the cell has a finite score.

    Returns:
        ``(rows, judges)`` masks: the samples with a cell for every kept judge, and the kept judges.
    """
    judges: NDArray[np.bool_] = np.asarray(has.any(axis=0), dtype=bool)
    best_rows: NDArray[np.bool_] = np.zeros(has.shape[0], dtype=bool)
    best_judges = judges.copy()
    best = -1
    while judges.any():
        rows: NDArray[np.bool_] = np.asarray(has[:, judges].all(axis=1), dtype=bool)
        size = int(rows.sum()) * int(judges.sum())
        if size <= best:
            break
        best, best_rows, best_judges = size, rows, judges.copy()
        coverage = np.where(judges, has.sum(axis=0), has.shape[0] + 1)
        judges[int(np.argmin(coverage))] = False
    return best_rows, best_judges


def cell_statistics(
    y: NDArray[np.float64], finite: NDArray[np.bool_]
) -> tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]]:
    """Per (sample, judge) cell of ``y`` (``finite``: its finite mask): finite repeats, their mean, squared deviations.

    The within-cell sum of squares is shifted by each cell's first finite value so that equal
    repeats (a deterministic judge) give exactly 0: ``sum(d^2) - (sum d)^2 / count``, ``d = y - first``.
    Each working array goes as soon as done (a long run's cube is large).
    """
    counts = finite.sum(axis=2)
    filled = np.where(finite, y, 0.0)
    has = counts > 0
    cell_mean = np.divide(filled.sum(axis=2), counts, out=np.zeros(counts.shape), where=has)
    first = np.take_along_axis(filled, np.argmax(finite, axis=2)[..., None], axis=2)
    del filled
    shifted = np.where(finite, y - first, 0.0)
    del first
    within = (shifted**2).sum(axis=2) - np.divide(
        shifted.sum(axis=2) ** 2, counts, out=np.zeros(counts.shape), where=has
    )
    return counts, cell_mean, within


def variance_components(scores: ArrayLike) -> VarianceComponents:
    """Estimate the variance components of one metric's scores (ANOVA / method of moments).

    The estimator equates mean squares to their expectations in the crossed two-way random-effects
    model with ``r`` repeats per cell (Searle, Casella & McCulloch 1992, *Variance Components*,
    ch. 4, balanced data): ``E[MS_S] = s2_e + r s2_sb + J r s2_s``, ``E[MS_J] = s2_e + r s2_sb + S r
    s2_b``, ``E[MS_SJ] = s2_e + r s2_sb``, ``E[MS_E] = s2_e``. It works on the table of cell means
    (the unweighted-means analysis, Yates 1934; Searle et al. ch. 5), which is the same estimator
    on balanced data and stays unbiased when cells have different numbers of repeats:

    - ``s2_e``: the within-cell variance pooled over every cell with two or more finite repeats
      (sum of squared deviations from the cell mean over the sum of ``count - 1``);
    - from the S x J table of cell means: ``MS_S``, ``MS_J``, ``MS_SJ`` of a two-way table without
      replication, and ``r_h`` the harmonic mean of the cells' repeat counts; then
      ``s2_sb = MS_SJ - s2_e / r_h``, ``s2_s = (MS_S - MS_SJ) / J``, ``s2_b = (MS_J - MS_SJ) / S``.

    Missing values (NaN: a failed judge, an unscored repeat) are handled in two steps: a cell's
    mean uses its finite repeats; then the table of cell means is made complete by leaving out
    judges and samples: judges with no finite score at all, then, while that gives a complete table
    with more cells, the judge with the fewest scored cells (counted in ``n_judges_dropped``), then
    every sample missing a cell of a kept judge (counted in ``n_dropped``). Negative estimates
    (sampling noise when a component is near 0) are truncated at 0 and named in ``truncated``, the
    usual practice (Searle et al. ch. 4.5); a component within rounding of 0 (below 1e-12 of the
    scores' total variance) is 0.

    Args:
        scores: shape (samples, judges, repeats), in the metric's units; NaN for a missing value.

    Returns:
        The components; those the design cannot estimate are ``None`` (fewer than two samples:
        every one).

    Raises:
        ValueError: when ``scores`` is not three-dimensional.
    """
    y = np.asarray(scores, dtype=float)
    if y.ndim != 3:
        raise ValueError(f"scores must be shaped (samples, judges, repeats), got shape {y.shape}")
    finite = np.isfinite(y)
    counts, cell_mean, within = cell_statistics(y, finite)
    has = counts > 0
    squares = float(np.clip(within, 0.0, None).sum())
    del within
    df_e = int(np.clip(counts - 1, 0, None).sum())
    repeats = float(squares / df_e) if df_e > 0 else None
    # rounding leaves ~1e-33 where a component is exactly 0 (equal scores); below this it is 0
    tiny = _ROUNDING * float(np.var(y[finite])) if finite.any() else 0.0
    del finite

    rows, kept_judges = _complete_table(has)
    n_dropped = int((has.any(axis=1) & ~rows).sum())
    n_judges_dropped = int((has.any(axis=0) & ~kept_judges).sum())
    table = cell_mean[rows][:, kept_judges]
    a, b = table.shape
    cell_counts = counts[rows][:, kept_judges]
    del cell_mean, counts, has, rows
    if cell_counts.size == 0:
        r_h = 1.0
    elif np.all(cell_counts == cell_counts.flat[0]):
        r_h = float(cell_counts.flat[0])
    else:
        r_h = float(cell_counts.size / np.sum(1.0 / cell_counts))
    mean_squares: tuple[float, float | None, float | None] | None = None
    if a >= 2:
        table = table - table.flat[0]  # variances are shift-free; equal scores now give exact zeros
        grand = table.mean()
        row = table.mean(axis=1)
        ms_s = b * float(np.sum((row - grand) ** 2)) / (a - 1)
        mean_squares = (ms_s, None, None)
        if b >= 2:
            col = table.mean(axis=0)
            ms_j = a * float(np.sum((col - grand) ** 2)) / (b - 1)
            resid = table - row[:, None] - col[None, :] + grand
            mean_squares = (ms_s, ms_j, float(np.sum(resid**2)) / ((a - 1) * (b - 1)))
    return components_from(mean_squares, (a, b), r_h, repeats, tiny, (n_dropped, n_judges_dropped))


def components_from(
    mean_squares: tuple[float, float | None, float | None] | None,
    shape: tuple[int, int],
    r_h: float,
    repeats: float | None,
    tiny: float,
    dropped: tuple[int, int],
) -> VarianceComponents:
    """The components from the complete table's mean squares (the last step of :func:`variance_components`).

    Args:
        mean_squares: ``(MS_S, MS_J, MS_SJ)`` of the ``(a, b)`` table (the last two ``None`` with
            one judge); ``None`` with fewer than two samples.
        shape: the table's ``(samples, judges)``.
        r_h: the harmonic mean of the cells' repeat counts.
        repeats: the pooled within-cell variance, ``None`` without a cell of two repeats.
        tiny: rounding's share of the total variance, below which a component is 0.
        dropped: samples and judges the complete table left out.
    """
    noise = repeats / r_h if repeats is not None else 0.0
    confounded = [] if repeats is not None else ["interaction+repeats"]
    truncated: list[str] = []
    if repeats is not None and repeats <= tiny:
        repeats = 0.0

    def clip(name: str, value: float) -> float:
        if abs(value) <= tiny:
            return 0.0
        if value < 0:
            truncated.append(name)
            return 0.0
        return value

    a, b = shape
    samples = judges = interaction = None
    if mean_squares is not None:
        ms_s, ms_j, ms_sj = mean_squares
        if ms_j is not None and ms_sj is not None:
            samples = clip("samples", (ms_s - ms_sj) / b)
            judges = clip("judges", (ms_j - ms_sj) / a)
            interaction = clip("interaction", ms_sj - noise)
        else:
            samples = clip("samples", ms_s - noise)
            confounded = ["samples+interaction"]
    return VarianceComponents(
        samples=samples,
        judges=judges,
        interaction=interaction,
        repeats=repeats,
        n_samples=a,
        n_judges=b,
        repeats_per_cell=r_h,
        n_dropped=dropped[0],
        n_judges_dropped=dropped[1],
        truncated=truncated,
        confounded=confounded,
    )


def aggregate_variance(components: VarianceComponents, *, judges: int, repeats: float) -> float | None:
    """Variance of one sample's panel-mean aggregate with the given panel size and repeats.

    With the panel fixed and samples random, a sample's mean over ``judges`` judges of the mean of
    ``repeats`` repeats varies as ``s2_s + s2_sb / judges + s2_e / (judges * repeats)`` (the
    judges' main effects cancel out of the variance: they are the same for every sample). The
    variance of the aggregate's mean over ``n`` samples is this over ``n``.

    Args:
        components: from :func:`variance_components`.
        judges: judges in the panel (>= 1).
        repeats: repeats per judge (>= 1).

    Returns:
        The variance in squared metric units, or ``None`` when the samples component is unknown.
        A confounded component is used as estimated (with one repeat, ``interaction`` already holds
        ``s2_sb + s2_e`` and the repeat term is 0).
    """
    if components.samples is None:
        return None
    interaction = components.interaction or 0.0
    noise = components.repeats or 0.0
    return components.samples + interaction / judges + noise / (judges * repeats)


def halving_advice(
    components: VarianceComponents,
    *,
    n_samples: int,
    n_judges: int,
    n_repeats: int,
    calls_per_judgement: float | None = None,
) -> list[AdviceOption]:
    """How many samples, judges or repeats would halve the aggregate's interval, and at what cost.

    With ``V(S, J, R) = (s2_s + s2_sb / J + s2_e / (J R)) / S`` (:func:`aggregate_variance`), the
    half-width halves when ``V`` quarters:

    - samples: ``S' = 4 S`` (always possible while ``V > 0``);
    - repeats: the smallest ``R'`` with ``s2_s + s2_sb / J + s2_e / (J R') <= V_1 / 4`` (``V_1``:
      the per-sample variance now); impossible when the sample and interaction terms alone exceed
      a quarter: repeats only average out the repeat noise;
    - judges: the smallest ``J'`` with ``s2_s + (s2_sb + s2_e / R) / J' <= V_1 / 4``, assuming
      new judges behave like the current ones (same interaction and repeat variance); impossible
      when ``s2_s`` alone exceeds a quarter. Adding judges changes the panel, and so what its mean
      estimates, by the new judges' leniency.

    This is the design-study reasoning of generalizability theory (Cronbach et al. 1972, *The
    Dependability of Behavioral Measurements*; Brennan 2001, *Generalizability Theory*, ch. 4).

    Args:
        components: from :func:`variance_components`.
        n_samples: samples behind the interval now (>= 1).
        n_judges: judges in the panel now (>= 1).
        n_repeats: repeats per judge now (>= 1).
        calls_per_judgement: judge calls per (sample, judge, repeat) metric computation, for the
            cost; ``None`` when unknown.

    Returns:
        Three options, in the order samples, judges, repeats. When the variance is 0 (every score
        equal) nothing can narrow a zero-width interval: all three are impossible.
    """
    per_sample = aggregate_variance(components, judges=n_judges, repeats=n_repeats)

    def option(lever: Lever, target: int, extra: int) -> AdviceOption:
        calls = None if calls_per_judgement is None else round(extra * calls_per_judgement)
        return AdviceOption(lever=lever, possible=True, target=target, extra_judgements=extra, extra_calls=calls)

    if per_sample is None:
        return [AdviceOption(lever=lever, possible=None) for lever in ("samples", "judges", "repeats")]
    if per_sample <= 0:
        return [AdviceOption(lever=lever, possible=False) for lever in ("samples", "judges", "repeats")]
    goal = per_sample / 4
    s2_s = components.samples or 0.0
    s2_sb = components.interaction or 0.0
    s2_e = components.repeats

    samples = option("samples", 4 * n_samples, 3 * n_samples * n_judges * n_repeats)

    if "samples+interaction" in components.confounded:
        judges = AdviceOption(lever="judges", possible=None)
    elif s2_s >= goal:
        judges = AdviceOption(lever="judges", possible=False)
    else:
        spread = s2_sb + (s2_e or 0.0) / n_repeats
        target = max(n_judges + 1, math.ceil(spread / (goal - s2_s) - 1e-12))
        judges = option("judges", target, n_samples * (target - n_judges) * n_repeats)

    if s2_e is None:
        repeats = AdviceOption(lever="repeats", possible=None)
    else:
        fixed = s2_s + s2_sb / n_judges
        if s2_e <= 0 or fixed >= goal:
            repeats = AdviceOption(lever="repeats", possible=False)
        else:
            target = max(n_repeats + 1, math.ceil(s2_e / (n_judges * (goal - fixed)) - 1e-12))
            repeats = option("repeats", target, n_samples * n_judges * (target - n_repeats))
    return [samples, judges, repeats]


def decompose(scores: ArrayLike, *, calls_per_judgement: float | None = None) -> Decomposition:
    """Variance components of one metric's scores, their shares and the halving advice.

    Args:
        scores: shape (samples, judges, repeats), NaN for a missing value (see
            :func:`variance_components`).
        calls_per_judgement: judge calls per (sample, judge, repeat) metric computation, for the
            cost of the advice (``None``: unknown).

    Returns:
        The decomposition; the advice uses the samples and judges the components rest on and the
        largest repeat count.

    Raises:
        ValueError: when ``scores`` is not three-dimensional.
    """
    y = np.asarray(scores, dtype=float)
    components = variance_components(y)
    repeats = max(1, int(np.isfinite(y).sum(axis=2).max())) if y.size else 1
    return decomposition(components, repeats, calls_per_judgement)


def decomposition(components: VarianceComponents, repeats: int, calls_per_judgement: float | None) -> Decomposition:
    """The shares and halving advice of ``components`` with ``repeats`` the most repeats of a cell (>= 1)."""
    judges = max(1, components.n_judges)
    share: dict[str, float] = {}
    total = aggregate_variance(components, judges=judges, repeats=repeats)
    if total is not None and total > 0:
        share["samples"] = (components.samples or 0.0) / total
        if components.interaction is not None:
            share["interaction"] = components.interaction / judges / total
        if components.repeats is not None:
            share["repeats"] = components.repeats / (judges * repeats) / total
    advice = (
        halving_advice(
            components,
            n_samples=components.n_samples,
            n_judges=judges,
            n_repeats=repeats,
            calls_per_judgement=calls_per_judgement,
        )
        if components.n_samples >= 2
        else []
    )
    return Decomposition(
        components=components,
        share=share,
        advice=advice,
        repeats=repeats,
        calls_per_judgement=calls_per_judgement,
    )
