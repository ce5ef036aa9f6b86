"""The jury's reliability section: each judge's error rates from the run's own verdicts, no labels.

A ``claim-vote`` or ``dawid-skene`` run gives every judge's verdict on the same statements of each
sample. :class:`JuryCollector` keeps those verdict matrices per metric as results arrive (a few
floats per statement), and :func:`estimate_reliability` fits the binary Dawid-Skene model over
all of them (Dawid and Skene 1979; :mod:`ragqa.jury.dawid_skene`), giving per judge its
sensitivity, specificity and accuracy with a percentile interval from a seeded cluster bootstrap
over samples (Efron and Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13; samples as
clusters: Field and Welsh 2007, "Bootstrapping clustered data", JRSS B 69(3)), the judges'
pairwise residual correlation, with a warning above 0.3 (the model assumes judges err
independently, which judges of one family break: Balasubramanian, Podkopaev and Kasiviswanathan
2026), and the metric's mean on the Dawid-Skene verdicts (posterior > 0.5) next to the mean on the
majority verdicts.

A run that does not vote gets the same model per item (:func:`item_reliability`,
:func:`attach_item_reliability`): each judge's verdict on a sample is whether its score meets the
metric's threshold (:func:`gate_verdicts`), read at the end of the run from the scores the run
keeps for its summaries, so no per-sample object is kept for it. It is reporting only: no score or
aggregate changes.

Each sample's row is written while the run streams, before the run's fit exists, so a
``dawid-skene`` run's per-sample aggregates are the majority vote of :mod:`ragqa.jury.panel`; the
Dawid-Skene verdicts give the summary's :attr:`~ragqa.report.JuryReliability.voted_mean` and each
sample's value (:func:`fit_reliability`, :attr:`JuryCollector.dawid_skene`), which the runner adds
to the finished results file's records.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragqa._math import nan_mean
from ragqa.jury.dawid_skene import DawidSkeneFit, fit_dawid_skene, residual_correlation
from ragqa.jury.dawid_skene_batch import DawidSkeneRates, fit_dawid_skene_batch, fit_dawid_skene_resamples
from ragqa.jury.item_patterns import ScoreChunks, count_patterns, pattern_residual_correlation
from ragqa.jury.tally import Matrices, repeat_units
from ragqa.jury.vote import vote_verdicts
from ragqa.metrics.base import ClaimVote, Metric
from ragqa.report import JudgeReliability, JuryReliability, MetricSummary
from ragqa.schema import Interval, JudgeOutcome, PanelResult

__all__ = [
    "HIGH_CORRELATION",
    "VOTING",
    "JuryCollector",
    "attach_item_reliability",
    "estimate_reliability",
    "fit_reliability",
    "gate_verdicts",
    "item_reliability",
]

HIGH_CORRELATION = 0.3
"""Residual correlation above which a pair of judges is reported as erring together."""

_Matrix = NDArray[np.float64]


def _interval(estimate: float, draws: _Matrix, confidence: float, n: int) -> Interval:
    alpha = (1.0 - confidence) / 2
    finite = draws[~np.isnan(draws)]
    low, high = (
        (float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha)))
        if finite.size
        else (estimate, estimate)
    )
    return Interval(
        estimate=estimate,
        low=min(low, estimate),
        high=max(high, estimate),
        confidence=confidence,
        method="cluster-bootstrap",
        n=n,
    )


Formula = Callable[[Sequence[Sequence[float]]], float]


def _sample_value(units: Sequence[Matrices], labels: _Matrix, formulas: Sequence[Formula]) -> float:
    """The metric on one sample's voted ``labels`` (its rows in stacking order), averaged over its repeats."""
    values, at = [], 0
    for unit, formula in zip(units, formulas, strict=True):
        lists = []
        for m in unit:
            part = labels[at : at + m.shape[0]]
            at += m.shape[0]
            lists.append([float(v) for v in part if not np.isnan(v)])
        values.append(float(formula(lists)))
    return nan_mean(values)


def _judges_section(
    corr: _Matrix,
    fit: DawidSkeneFit,
    draws: NDArray[np.float64],
    judge_ids: Sequence[str],
    confidence: float,
    n_clusters: int,
) -> tuple[list[JudgeReliability], list[tuple[str, str, float]], list[str]]:
    """Each judge's rates with intervals, the pairwise residual correlations and the warnings of one fit.

    ``draws`` is ``(n_boot, 3, n_judges)``: sensitivity, specificity and accuracy per replicate;
    ``corr`` the fit's :func:`~ragqa.jury.dawid_skene.residual_correlation`.
    """
    judges = [
        JudgeReliability(
            judge_id=judge,
            sensitivity=_interval(float(fit.sensitivity[j]), draws[:, 0, j], confidence, n_clusters),
            specificity=_interval(float(fit.specificity[j]), draws[:, 1, j], confidence, n_clusters),
            accuracy=_interval(float(fit.accuracy[j]), draws[:, 2, j], confidence, n_clusters),
        )
        for j, judge in enumerate(judge_ids)
    ]
    pairs = [
        (judge_ids[a], judge_ids[b], float(corr[a, b]))
        for a in range(len(judge_ids))
        for b in range(a + 1, len(judge_ids))
    ]
    warnings = [
        f"{a} and {b} err together (residual correlation {r:.2f} > {HIGH_CORRELATION}): Dawid-Skene assumes "
        "independent judges, so their reliability is overstated (Balasubramanian, Podkopaev and Kasiviswanathan 2026)"
        for a, b, r in pairs
        if not math.isnan(r) and r > HIGH_CORRELATION
    ]
    if not fit.converged:
        warnings.append(f"Dawid-Skene did not converge in {fit.iterations} EM iterations; read its rates with care")
    return judges, pairs, warnings


def estimate_reliability(
    samples: Sequence[Sequence[Matrices]], judge_ids: Sequence[str], formula: Formula, **options: Any
) -> JuryReliability | None:
    """The reliability section of :func:`fit_reliability` alone (same arguments and errors).

    Returns:
        The :class:`~ragqa.report.JuryReliability`, or ``None`` with fewer than two judges or no
        statement.
    """
    return fit_reliability(samples, judge_ids, formula, **options)[0]


def _bootstrap_rates(draws: Sequence[NDArray[Any]], fit: Callable[[NDArray[Any]], DawidSkeneRates]) -> _Matrix:
    """``(n_boot, 3, n_judges)`` sensitivity, specificity and accuracy of each replicate's fit.

    ``draws`` are the replicates' resamples in replicate order (drawn before any fit, so a seeded
    generator draws what it always drew), all of one length; ``fit`` fits distinct resamples,
    one per row, side by side (:mod:`ragqa.jury.dawid_skene_batch`: the numbers of one
    :func:`~ragqa.jury.dawid_skene.fit_dawid_skene` per resample, bit for bit). A resample seen
    before is the same deterministic fit, so each distinct one is fitted once (with few samples
    most of the replicates repeat).
    """
    distinct, which = np.unique(np.stack(draws), axis=0, return_inverse=True)
    fits = fit(distinct)
    rates: _Matrix = np.stack([fits.sensitivity, fits.specificity, fits.accuracy], axis=1)
    return rates[which.reshape(-1)]


def fit_reliability(
    samples: Sequence[Sequence[Matrices]],
    judge_ids: Sequence[str],
    formula: Formula,
    *,
    tie_breaker: int = 0,
    n_boot: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    formulas: Sequence[Sequence[Formula]] | None = None,
) -> tuple[JuryReliability | None, list[float]]:
    """Fit Dawid-Skene over one metric's verdict matrices and bootstrap each judge's rates.

    Args:
        samples: per sample, per repeat (one without repeats), one ``(n_statements, n_judges)``
            array of 0, 1 or NaN per statement list of the metric
            (the matrices of :func:`ragqa.jury.tally.repeat_units`); all of a sample's rows are one cluster.
        judge_ids: the panel's judge ids, one per column.
        formula: the metric's score from voted verdicts, one list per statement list
            (:attr:`~ragqa.metrics.base.ClaimVote.formula`).
        tie_breaker: the extractor's column, which settles a tied majority.
        n_boot: bootstrap replicates (>= 1; seeded, so the same run gives the same intervals).
        seed: the bootstrap's seed.
        confidence: the intervals' nominal coverage in (0, 1).
        formulas: per sample, per repeat, the formula of that unit when it depends on the sample
            (:data:`ragqa.jury.tally.Unit`); ``None``: ``formula`` for every unit.

    Returns:
        ``(reliability, per_sample)``: the :class:`~ragqa.report.JuryReliability`, or ``None``
        with fewer than two judges or no statement; ``per_sample`` has one value per entry of
        ``samples``, the metric's formula on that sample's Dawid-Skene verdicts (posterior > 0.5)
        averaged over its repeats, NaN for a sample without verdicts (every one without a fit).

    Raises:
        ValueError: for a block of the wrong width, a verdict other than 0, 1 or NaN, or
            ``n_boot < 1``.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    none: list[float] = [math.nan] * len(samples)
    each = formulas if formulas is not None else [[formula] * len(sample) for sample in samples]
    units = [
        [(unit, f) for unit, f in zip(sample, fs, strict=True) if unit]
        for sample, fs in zip(samples, each, strict=True)
    ]
    stacked = [(i, u, np.vstack([m for unit, _ in u for m in unit])) for i, u in enumerate(units) if u]
    with_rows = [(i, u, b) for i, u, b in stacked if b.shape[0] > 0]
    kept = [b for _, _, b in with_rows]
    if len(judge_ids) < 2 or not kept:
        return None, none
    if any(b.shape[1] != len(judge_ids) for b in kept):
        raise ValueError(f"every verdict block needs {len(judge_ids)} columns, one per judge")
    matrix = np.vstack(kept)
    fit = fit_dawid_skene(matrix)
    rng = np.random.default_rng(seed)
    draws = _bootstrap_rates(  # a draw of the same samples in the same order is the same fit
        [rng.integers(0, len(kept), size=len(kept)) for _ in range(n_boot)],
        lambda chosen: fit_dawid_skene_resamples(kept, chosen, max_iterations=100),
    )
    corr = residual_correlation(matrix, fit)
    judges, pairs, warnings = _judges_section(corr, fit, draws, judge_ids, confidence, len(kept))
    ends = np.cumsum([0] + [b.shape[0] for b in kept])
    ds_labels = [fit.labels[ends[i] : ends[i + 1]].astype(np.float64) for i in range(len(kept))]
    majority = [vote_verdicts(b, tie_breaker=tie_breaker) for b in kept]
    structure = [u for _, u, _ in with_rows]
    ds_values = [
        _sample_value([x for x, _ in u], d, [f for _, f in u]) for u, d in zip(structure, ds_labels, strict=True)
    ]
    per_sample = list(none)
    for (i, _, _), value in zip(with_rows, ds_values, strict=True):
        per_sample[i] = value
    reliability = JuryReliability(
        n_statements=int(matrix.shape[0]),
        n_samples=len(kept),
        prevalence=fit.prevalence,
        converged=fit.converged,
        judges=judges,
        correlations=pairs,
        warnings=warnings,
        voted_mean=nan_mean(ds_values),
        majority_mean=nan_mean(
            [_sample_value([x for x, _ in u], m, [f for _, f in u]) for u, m in zip(structure, majority, strict=True)]
        ),
        n_changed=int(sum(int(np.sum(d != m)) for d, m in zip(ds_labels, majority, strict=True))),
    )
    return reliability, per_sample


class JuryCollector:
    """Keeps each statement-based metric's verdict matrices as a run's results arrive.

    Args:
        metrics: the run's metrics; only those with a :class:`~ragqa.metrics.base.ClaimVote` are kept.
        judge_ids: the panel's judge ids, in order (fewer than two: nothing is kept).
        tie_breaker: the extractor's index in the panel.
        seed: the bootstrap's seed.

    Attributes:
        dawid_skene: after :meth:`attach`, per ``(sample id, metric key)`` with verdicts, the
            metric on that sample's Dawid-Skene verdicts (:func:`fit_reliability`), finite values only.
    """

    def __init__(
        self, metrics: Sequence[Metric], judge_ids: Sequence[str], *, tie_breaker: int = 0, seed: int = 0
    ) -> None:
        """Start empty."""
        self.judge_ids = list(judge_ids)
        self.tie_breaker = tie_breaker
        self.seed = seed
        self._votes: dict[str, ClaimVote] = {
            m.key: m.claim_vote for m in metrics if m.claim_vote is not None and len(self.judge_ids) >= 2
        }
        self._samples: dict[str, list[list[Matrices]]] = {key: [] for key in self._votes}
        self._formulas: dict[str, list[list[Formula]]] = {key: [] for key in self._votes}
        self._ids: dict[str, list[str]] = {key: [] for key in self._votes}
        self.dawid_skene: dict[tuple[str, str], float] = {}

    def add(self, result: PanelResult) -> None:
        """Keep ``result``'s verdict matrix (a metric without claim-vote, or no judge scored: nothing)."""
        vote = self._votes.get(result.metric)
        if vote is None:
            return
        by_id = {o.judge_id: o for o in result.judges}  # a cascade's tier-2 judges may be absent: no verdicts
        outcomes = [by_id.get(j) or JudgeOutcome(judge_id=j) for j in self.judge_ids]
        found = repeat_units(outcomes, vote)
        if found:  # a sample's repeats are one cluster of the bootstrap
            self._samples[result.metric].append([matrices for matrices, _ in found])
            self._formulas[result.metric].append([formula for _, formula in found])
            self._ids[result.metric].append(result.sample_id)

    def attach(self, summaries: Sequence[MetricSummary], results: Sequence[PanelResult] = ()) -> list[MetricSummary]:
        """``summaries`` with :attr:`~ragqa.report.MetricSummary.jury` filled in where a fit exists.

        Args:
            summaries: the run's per-metric summaries.
            results: results not yet :meth:`add`-ed (a run that kept them all), added first.
        """
        for result in results:
            self.add(result)
        out = []
        for summary in summaries:
            vote = self._votes.get(summary.metric)
            if vote is None:
                out.append(summary)
                continue
            fitted, values = fit_reliability(
                self._samples[summary.metric],
                self.judge_ids,
                vote.formula,
                tie_breaker=self.tie_breaker,
                seed=self.seed,
                formulas=self._formulas[summary.metric],
            )
            for sample_id, value in zip(self._ids[summary.metric], values, strict=True):
                if math.isfinite(value):
                    self.dawid_skene[(sample_id, summary.metric)] = value
            out.append(summary.model_copy(update={"jury": fitted}) if fitted is not None else summary)
        return out


VOTING = ("claim-vote", "dawid-skene")
"""Aggregations whose metrics have the per-statement section; every other one gets the per-item section."""


def gate_verdicts(scores: ArrayLike, threshold: float, direction: Literal["higher", "lower"]) -> _Matrix:
    """Each judge's pass/fail verdict per item: its score against the metric's threshold.

    Args:
        scores: ``(n_judges, n_items)`` scores in the metric's units; NaN where the judge failed,
            returned NaN or was not asked (no verdict).
        threshold: the metric's threshold, in the metric's units.
        direction: ``higher`` passes when ``score >= threshold``, ``lower`` when ``score <= threshold``
            (:func:`ragqa.thresholds.passes`).

    Returns:
        ``(n_items, n_judges)`` of 1.0 (pass), 0.0 (fail) or NaN (no verdict), the layout of
        :func:`~ragqa.jury.dawid_skene.fit_dawid_skene`.

    Raises:
        ValueError: for a ``scores`` array that is not 2-D.
    """
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"scores must be a 2-D array (judges x items), got shape {matrix.shape}")
    with np.errstate(invalid="ignore"):
        passed = matrix >= threshold if direction == "higher" else matrix <= threshold
    return np.where(np.isnan(matrix), np.nan, passed.astype(np.float64)).T


def item_reliability(
    scores: ArrayLike | ScoreChunks,
    judge_ids: Sequence[str],
    threshold: float,
    direction: Literal["higher", "lower"],
    *,
    n_boot: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
) -> JuryReliability | None:
    """Fit Dawid-Skene on each judge's pass/fail verdict per item (sample) and bootstrap its rates.

    The verdicts are :func:`gate_verdicts`; items no judge gave a verdict on are left out. The fit
    is the binary Dawid-Skene model by EM (Dawid and Skene 1979, :func:`fit_dawid_skene`), which
    takes a missing verdict as missing (it neither counts for nor against the judge). Each rate's
    interval is the percentile interval of a seeded bootstrap resampling items (each sample is its
    own cluster; Efron and Tibshirani 1993, ch. 13), ``n_boot`` replicates of at most 100 EM
    iterations each, as the per-statement section. Items with the same verdicts are fitted as one
    weighted row (at most ``3 ** n_judges`` rows), and a replicate draws how many items of each
    verdict pattern it holds (multinomial, the same distribution as resampling the items), so the
    time grows with the items only through one pass over them. Scores given in chunks
    (:class:`~ragqa.jury.item_patterns.ScoreChunks`, e.g. a run's summary) are read a chunk at a
    time: no per-item array is kept but the judge pairs' residual rows
    (:mod:`ragqa.jury.item_patterns`), and the result is the same as for the whole matrix.

    Args:
        scores: ``(n_judges, n_items)`` each judge's score per sample, NaN for no verdict; or the
            same in chunks of items.
        judge_ids: the panel's judge ids, one per row of ``scores``.
        threshold: the metric's threshold.
        direction: the metric's direction (``higher`` or ``lower`` is better).
        n_boot: bootstrap replicates (>= 1).
        seed: the bootstrap's seed (the same scores give the same intervals).
        confidence: the intervals' nominal coverage in (0, 1).

    Returns:
        The :class:`~ragqa.report.JuryReliability` with ``unit`` ``item`` and ``threshold`` set:
        ``voted_mean`` is the share of items the Dawid-Skene verdicts (posterior > 0.5) pass,
        ``majority_mean`` the share the judges' majority passes (a tie: the first judge's verdict,
        fail when it gave none), ``n_changed`` the items they disagree on; ``None`` with fewer than
        two judges or no item with a verdict.

    Raises:
        ValueError: for ``scores`` (or a chunk) that is not 2-D or whose rows are not one per
            judge, or ``n_boot < 1``.
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    chunks = scores.chunks if isinstance(scores, ScoreChunks) else lambda: iter((scores,))

    def rows() -> Iterator[_Matrix]:
        for chunk in chunks():
            verdicts = gate_verdicts(chunk, threshold, direction)
            if verdicts.shape[1] != len(judge_ids):
                raise ValueError(f"scores has {verdicts.shape[1]} rows, one per judge of {len(judge_ids)} needed")
            yield verdicts[~np.isnan(verdicts).all(axis=1)]

    # items with the same verdicts are one row of the fit, weighted by their count: at most 3 ** judges rows
    patterns = count_patterns(rows, len(judge_ids))
    n = patterns.n
    if len(judge_ids) < 2 or n == 0:
        return None
    counts = patterns.counts
    fit = fit_dawid_skene(patterns.patterns, weights=counts)
    rng = np.random.default_rng(seed)
    draws = _bootstrap_rates(  # resampling n items with replacement = a multinomial draw of the pattern counts
        [rng.multinomial(n, counts / n) for _ in range(n_boot)],
        lambda weights: fit_dawid_skene_batch(patterns.patterns, weights, max_iterations=100),
    )
    corr = pattern_residual_correlation(rows, patterns, fit)
    judges, pairs, warnings = _judges_section(corr, fit, draws, judge_ids, confidence, n)
    # per item, every figure below is its pattern's: counted, never expanded to the items
    voted = fit.labels == 1
    majority = vote_verdicts(patterns.patterns, tie_breaker=0) == 1.0
    return JuryReliability(
        unit="item",
        threshold=threshold,
        n_statements=n,
        n_samples=n,
        prevalence=fit.prevalence,
        converged=fit.converged,
        judges=judges,
        correlations=pairs,
        warnings=warnings,
        voted_mean=int(counts[voted].sum()) / n,
        majority_mean=int(counts[majority].sum()) / n,
        n_changed=int(counts[voted != majority].sum()),
    )


def attach_item_reliability(
    summaries: Sequence[MetricSummary],
    judge_ids: Sequence[str],
    thresholds: Mapping[str, float],
    scores: Callable[[str], ArrayLike | ScoreChunks],
    *,
    seed: int = 0,
) -> list[MetricSummary]:
    """``summaries`` with :attr:`~ragqa.report.MetricSummary.item_jury` set where the section applies.

    It applies to every metric aggregated otherwise than by a vote (:data:`VOTING`) in a panel of
    two or more judges: with a threshold in ``thresholds``, the :func:`item_reliability` fit (a
    metric whose judges scored no item keeps ``None``); without one, a section with ``threshold``
    ``None`` and nothing estimated, so the report says why there is none. Reporting only: no
    score, aggregate or other figure of a summary changes.

    Args:
        summaries: the run's per-metric summaries.
        judge_ids: the panel, in order (the rows of ``scores``).
        thresholds: ``{metric key: threshold}``, the run's resolved thresholds.
        scores: a metric key's ``(n_judges, n_items)`` scores (NaN: no verdict), or the same in
            chunks (:class:`~ragqa.jury.item_patterns.ScoreChunks`, e.g.
            :meth:`ragqa.run.summary.RunSummary.score_chunks`), asked only for metrics with a threshold.
        seed: the bootstrap's seed.
    """
    if len(judge_ids) < 2:
        return list(summaries)
    out = []
    for summary in summaries:
        if summary.strategy in VOTING:
            out.append(summary)
            continue
        threshold = thresholds.get(summary.metric)
        if threshold is None:
            section: JuryReliability | None = JuryReliability(
                unit="item", n_statements=0, n_samples=0, prevalence=math.nan, converged=False
            )
        else:
            section = item_reliability(scores(summary.metric), judge_ids, threshold, summary.direction, seed=seed)
        out.append(summary.model_copy(update={"item_jury": section}) if section is not None else summary)
    return out
