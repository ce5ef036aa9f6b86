"""The jury's statistics: Dawid-Skene recovers judges' accuracies without labels, and voting per
statement beats the mean of the judges' scores on a simulated panel with known truth."""

from __future__ import annotations

import numpy as np
import pytest

from ragqa.jury import (
    fit_dawid_skene,
    log_odds_weights,
    majority_posterior,
    residual_correlation,
    vote_verdicts,
)

ACCURACIES = [0.95, 0.9, 0.85, 0.7, 0.6]


def simulate(
    seed: int,
    *,
    n_samples: int = 100,
    per_sample: int = 5,
    prevalence: float = 0.7,
    copy_of: dict[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Truth per statement (samples x statements flattened) and each judge's verdicts.

    Judge j flips the truth with probability 1 - ACCURACIES[j], independently; ``copy_of`` makes a
    judge repeat another judge's verdict on most statements (a correlated pair).
    """
    rng = np.random.default_rng(seed)
    truth = (rng.random(n_samples * per_sample) < prevalence).astype(float)
    flips = rng.random((truth.size, len(ACCURACIES))) > np.asarray(ACCURACIES)
    verdicts = np.where(flips, 1.0 - truth[:, None], truth[:, None])
    for judge, source in (copy_of or {}).items():
        same = rng.random(truth.size) < 0.8
        verdicts[same, judge] = verdicts[same, source]
    return truth, verdicts


@pytest.mark.parametrize("seed", range(10))
def test_dawid_skene_recovers_each_judges_accuracy_within_005(seed: int) -> None:
    truth, verdicts = simulate(seed)
    fit = fit_dawid_skene(verdicts)
    realised = (verdicts == truth[:, None]).mean(axis=0)
    assert fit.converged
    assert np.all(np.abs(fit.accuracy - realised) < 0.05), (fit.accuracy, realised)
    assert np.all(np.abs(fit.accuracy - np.asarray(ACCURACIES)) < 0.05), fit.accuracy
    assert abs(fit.prevalence - truth.mean()) < 0.05


@pytest.mark.parametrize("seed", range(10))
def test_claim_vote_and_dawid_skene_beat_the_mean_of_scores(seed: int) -> None:
    truth, verdicts = simulate(seed)
    n_samples, per_sample = 100, 5
    by_sample = verdicts.reshape(n_samples, per_sample, len(ACCURACIES))
    true_faithfulness = truth.reshape(n_samples, per_sample).mean(axis=1)
    mean_of_scores = by_sample.mean(axis=1).mean(axis=1)
    voted = vote_verdicts(verdicts).reshape(n_samples, per_sample).mean(axis=1)
    fit = fit_dawid_skene(verdicts)
    ds_voted = fit.labels.reshape(n_samples, per_sample).mean(axis=1)
    weighted = (
        vote_verdicts(verdicts, weights=log_odds_weights(fit.accuracy)).reshape(n_samples, per_sample).mean(axis=1)
    )

    def mae(x: np.ndarray) -> float:
        return float(np.abs(x - true_faithfulness).mean())

    assert mae(voted) < mae(mean_of_scores)
    assert mae(ds_voted) < mae(mean_of_scores)
    assert mae(weighted) < mae(mean_of_scores)
    # statement by statement, the optimal weighted vote and the DS posterior decide alike
    assert np.mean(vote_verdicts(verdicts, weights=log_odds_weights(fit.accuracy)) == fit.labels) > 0.98


def test_fit_is_deterministic_and_reports_its_iterations() -> None:
    _, verdicts = simulate(3)
    a, b = fit_dawid_skene(verdicts), fit_dawid_skene(verdicts)
    assert np.array_equal(a.posterior, b.posterior) and a.iterations == b.iterations
    capped = fit_dawid_skene(verdicts, max_iterations=1)
    assert capped.iterations == 1 and not capped.converged
    assert a.log_likelihood >= capped.log_likelihood - 1e-9


def test_missing_verdicts_are_skipped_not_counted() -> None:
    truth, verdicts = simulate(5)
    holes = verdicts.copy()
    rng = np.random.default_rng(0)
    holes[rng.random(holes.shape) < 0.2] = np.nan
    fit = fit_dawid_skene(holes)
    assert np.all(np.abs(fit.accuracy - np.asarray(ACCURACIES)) < 0.06)
    assert np.mean(fit.labels == truth) > 0.95


def test_residual_correlation_flags_a_judge_that_copies_another() -> None:
    _, verdicts = simulate(7, copy_of={4: 3})
    fit = fit_dawid_skene(verdicts)
    corr = residual_correlation(verdicts, fit)
    assert corr[3, 4] > 0.5
    independent = [corr[a, b] for a in range(3) for b in range(a + 1, 3)]
    assert max(abs(c) for c in independent) < 0.3  # fitting on the same verdicts pulls these slightly negative
    assert np.allclose(np.diag(corr), 1.0)


def test_vote_rule_ties_weights_and_empty_rows() -> None:
    nan = float("nan")
    verdicts = [[1, 0], [0, 1], [1, 1], [nan, nan], [nan, 1], [0, nan]]
    assert vote_verdicts(verdicts).tolist()[:3] == [1.0, 0.0, 1.0]  # ties go to judge 0
    assert np.isnan(vote_verdicts(verdicts)[3])
    assert vote_verdicts(verdicts)[4:].tolist() == [1.0, 0.0]  # a silent judge casts no vote
    assert vote_verdicts([[1, 0], [1, nan]], tie_breaker=1).tolist() == [0.0, 1.0]
    assert vote_verdicts([[1, 0, nan]], tie_breaker=2).tolist() == [0.0]  # tie, breaker silent -> 0
    assert vote_verdicts([[1, 0, 0]], weights=[3.0, 1.0, 1.0]).tolist() == [1.0]
    assert vote_verdicts([[1, 0, 0]]).tolist() == [0.0]


def test_weights_ignore_judges_at_or_below_chance() -> None:
    w = log_odds_weights([0.9, 0.5, 0.3, 1.0])
    assert w[0] == pytest.approx(np.log(9)) and w[1] == 0 and w[2] == 0 and np.isfinite(w[3])


def test_majority_posterior_is_the_share_of_ones() -> None:
    assert majority_posterior([[1, 1, 0], [float("nan")] * 3]).tolist() == [pytest.approx(2 / 3), 0.5]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fit_dawid_skene([[2, 0]]), "0, 1 or NaN"),
        (lambda: fit_dawid_skene([1, 0]), "2-D"),
        (lambda: fit_dawid_skene([[1, 0]], max_iterations=0), "max_iterations"),
        (lambda: vote_verdicts([[1, 0]], weights=[1.0]), "weights"),
        (lambda: vote_verdicts([[1, 0]], tie_breaker=2), "tie_breaker"),
        (lambda: log_odds_weights([1.2]), r"\[0, 1\]"),
    ],
)
def test_bad_input_is_refused_with_the_fix(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call()


def test_no_items_gives_an_empty_fit() -> None:
    fit = fit_dawid_skene(np.empty((0, 3)))
    assert fit.posterior.size == 0 and fit.accuracy.tolist() == [0.5, 0.5, 0.5]
