"""Intervals and variance components (ragqa.uncertainty) against simulations with known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragqa.testing.noisy import NoiseModel
from ragqa.uncertainty import (
    aggregate_variance,
    decompose,
    halving_advice,
    mean_interval,
    sample_interval,
    t_quantile,
    variance_components,
)

SAMPLE_SD = 0.15
BIASES = (-0.06, -0.02, 0.03, 0.05)
INTERACTION_SD = 0.05
REPEAT_SD = 0.10
REPEATS = 3


def _model(seed: int, n: int = 200, **kwargs: object) -> NoiseModel:
    truth = np.random.default_rng(10_000 + seed).normal(0.6, SAMPLE_SD, size=n)
    fields: dict[str, object] = {
        "truth": truth,
        "biases": BIASES,
        "interaction_sd": INTERACTION_SD,
        "repeat_sd": REPEAT_SD,
        "bounds": None,
        "seed": seed,
    }
    fields.update(kwargs)
    return NoiseModel(**fields)  # type: ignore[arg-type]


def test_the_interval_is_the_mean_plus_or_minus_t_times_the_standard_error() -> None:
    values = [0.2, 0.4, 0.6, 0.8, 1.0]
    interval = mean_interval(values, confidence=0.95)
    assert interval is not None
    # mean 0.6, s = 0.3162..., se = s / sqrt(5) = 0.1414..., t(0.975, 4) = 2.7764...
    half = 2.7764451051977987 * math.sqrt(0.1) / math.sqrt(5)
    assert interval.estimate == pytest.approx(0.6)
    assert interval.low == pytest.approx(0.6 - half)
    assert interval.high == pytest.approx(0.6 + half)
    assert (interval.method, interval.n, interval.confidence) == ("clustered-se", 5, 0.95)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 5, 9, 10, 29, 59, 100, 999, 1000, 12_345, 100_000])
def test_the_t_quantile_is_scipys(df: int) -> None:
    from scipy.special import stdtrit  # type: ignore[import-untyped]

    for confidence in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
        assert t_quantile(df, confidence) == pytest.approx(float(stdtrit(df, (1 + confidence) / 2)), rel=1e-9)


def test_the_t_quantile_refuses_what_has_none() -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile(0, 0.95)
    with pytest.raises(ValueError, match="between 0 and 1"):
        t_quantile(5, 1.0)


def test_nan_is_ignored_and_too_few_values_give_no_interval() -> None:
    assert mean_interval([0.5]) is None
    assert mean_interval([0.5, math.nan, math.inf]) is None
    with_nan = mean_interval([0.2, math.nan, 0.4])
    assert with_nan is not None and with_nan.n == 2 and with_nan.estimate == pytest.approx(0.3)


def test_equal_values_give_a_zero_width_interval_and_bounds_clamp() -> None:
    flat = mean_interval([0.7] * 10)
    assert flat is not None and (flat.low, flat.high) == (0.7, 0.7)
    wide = mean_interval([0.0, 1.0, 1.0, 1.0], bounds=(0.0, 1.0))
    assert wide is not None and wide.high == 1.0 and wide.low >= 0.0


def test_the_estimate_is_the_summaries_mean_bit_for_bit() -> None:
    values = list(np.random.default_rng(3).random(57))
    interval = mean_interval(values)
    assert interval is not None
    assert interval.estimate == math.fsum(values) / len(values)


def test_the_cluster_bootstrap_is_seeded_and_close_to_the_clustered_se() -> None:
    values = _model(0).scores(REPEATS).mean(axis=(1, 2))
    a = mean_interval(values, method="cluster-bootstrap", seed=7)
    b = mean_interval(values, method="cluster-bootstrap", seed=7)
    se = mean_interval(values)
    assert a is not None and b is not None and se is not None
    assert a == b and a.method == "cluster-bootstrap"
    assert a.half_width == pytest.approx(se.half_width, rel=0.1)


def test_bad_confidence_and_method_are_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        mean_interval([0.1, 0.2], confidence=95)
    with pytest.raises(ValueError, match="unknown interval method"):
        mean_interval([0.1, 0.2], method="jackknife")


def test_the_aggregate_interval_covers_the_panel_mean_in_95_of_100_seeded_runs() -> None:
    covered = 0
    for seed in range(100):
        model = _model(seed)
        aggregates = model.scores(REPEATS).mean(axis=(1, 2))  # per sample: mean over judges of mean over repeats
        interval = mean_interval(aggregates, confidence=0.95)
        assert interval is not None
        # the target: the fixed panel's mean over the population of samples (truth drawn around 0.6)
        covered += interval.contains(0.6 + float(np.mean(BIASES)))
    assert covered >= 93, covered


def test_the_decomposition_recovers_each_simulated_component_within_25_percent() -> None:
    model = _model(1)
    components = variance_components(model.scores(REPEATS))
    # samples and judges: the variance of the values the test set (200 drawn truths, 4 fixed biases)
    assert components.samples == pytest.approx(np.var(model.truth, ddof=1), rel=0.25)
    assert components.samples == pytest.approx(SAMPLE_SD**2, rel=0.25)
    assert components.judges == pytest.approx(np.var(BIASES, ddof=1), rel=0.25)
    assert components.interaction == pytest.approx(INTERACTION_SD**2, rel=0.25)
    assert components.repeats == pytest.approx(REPEAT_SD**2, rel=0.25)
    assert (components.n_samples, components.n_judges, components.repeats_per_cell) == (200, 4, 3.0)
    assert components.truncated == [] and components.confounded == []


def test_missing_cells_and_repeats_drop_samples_not_the_estimate() -> None:
    scores = _model(2).scores(REPEATS)
    scores[:20, 1, :] = np.nan  # judge 1 failed on 20 samples
    scores[50:100, 2, 2] = np.nan  # some repeats unscored: unequal replication
    components = variance_components(scores)
    assert components.n_samples == 180 and components.n_dropped == 20
    assert 2.0 < components.repeats_per_cell < 3.0
    assert components.samples == pytest.approx(SAMPLE_SD**2, rel=0.25)
    assert components.interaction == pytest.approx(INTERACTION_SD**2, rel=0.25)
    assert components.repeats == pytest.approx(REPEAT_SD**2, rel=0.25)


def test_a_judge_that_scored_nothing_is_left_out() -> None:
    scores = _model(3).scores(REPEATS)
    scores[:, 0, :] = np.nan
    components = variance_components(scores)
    assert components.n_judges == 3 and components.n_samples == 200 and components.n_dropped == 0


def test_a_judge_that_scored_few_samples_is_left_out_rather_than_most_samples() -> None:
    scores = _model(12).scores(REPEATS)
    scores[10:, 3, :] = np.nan  # judge 3 scored only 10 samples: keeping it would keep 10 samples
    components = variance_components(scores)
    assert (components.n_samples, components.n_judges) == (200, 3)
    assert (components.n_dropped, components.n_judges_dropped) == (0, 1)
    assert components.samples == pytest.approx(SAMPLE_SD**2, rel=0.25)


def test_equal_scores_give_exact_zeros_not_rounding_noise() -> None:
    # every sample scored 2/3 by one judge and 1 by the other: the panel's aggregate never varies
    scores = np.stack([np.full(5, 2 / 3), np.ones(5)], axis=1)[:, :, None]
    components = variance_components(scores)
    assert (components.samples, components.interaction) == (0.0, 0.0)
    assert components.judges is not None and components.judges > 0
    assert components.truncated == []
    assert decompose(scores).share == {}


def test_one_repeat_confounds_interaction_and_repeats() -> None:
    components = variance_components(_model(4).scores(1))
    assert components.repeats is None and components.confounded == ["interaction+repeats"]
    assert components.interaction == pytest.approx(INTERACTION_SD**2 + REPEAT_SD**2, rel=0.25)


def test_one_judge_confounds_samples_and_interaction() -> None:
    model = _model(5, biases=(0.0,))
    components = variance_components(model.scores(REPEATS))
    assert components.judges is None and components.interaction is None
    assert components.confounded == ["samples+interaction"]
    assert components.samples == pytest.approx(np.var(model.truth, ddof=1) + INTERACTION_SD**2, rel=0.25)


def test_a_deterministic_judge_has_zero_repeat_variance_and_negatives_are_truncated() -> None:
    scores = _model(6, repeat_sd=0.0, interaction_sd=0.0).scores(REPEATS)
    components = variance_components(scores)
    assert components.repeats == 0.0
    assert components.interaction is not None and components.interaction < 1e-20
    # a judge effect of exactly 0 estimates negative half the time; it is reported as 0 and named
    no_bias = variance_components(_model(7, biases=(0.0, 0.0, 0.0, 0.0)).scores(REPEATS))
    assert no_bias.judges is not None and no_bias.judges >= 0.0
    if no_bias.judges == 0.0:
        assert "judges" in no_bias.truncated


def test_fewer_than_two_samples_estimate_nothing_and_bad_shapes_are_refused() -> None:
    components = variance_components(np.full((1, 2, 2), 0.5))
    assert (components.samples, components.judges, components.interaction) == (None, None, None)
    with pytest.raises(ValueError, match="samples, judges, repeats"):
        variance_components(np.zeros((3, 2)))


def test_the_model_variance_matches_the_observed_spread_of_aggregates() -> None:
    scores = _model(8).scores(REPEATS)
    components = variance_components(scores)
    predicted = aggregate_variance(components, judges=4, repeats=REPEATS)
    observed = float(np.var(scores.mean(axis=(1, 2)), ddof=1))
    assert predicted == pytest.approx(observed, rel=1e-9)  # exact on balanced data (no truncation)


def test_advice_four_times_the_samples_halves_the_interval() -> None:
    scores = _model(9).scores(REPEATS)
    advice = {o.lever: o for o in decompose(scores, calls_per_judgement=2).advice}
    assert advice["samples"].possible and advice["samples"].target == 800
    assert advice["samples"].extra_judgements == 600 * 4 * REPEATS
    assert advice["samples"].extra_calls == 2 * 600 * 4 * REPEATS
    # the sample variance dominates: neither more judges nor more repeats can quarter the variance
    assert advice["judges"].possible is False and advice["repeats"].possible is False


def test_advice_when_repeat_noise_dominates_names_the_repeats_needed() -> None:
    truth = np.random.default_rng(5).normal(0.5, 0.02, size=200)
    scores = NoiseModel(truth=truth, biases=BIASES, interaction_sd=0.02, repeat_sd=0.3, bounds=None, seed=10).scores(2)
    result = decompose(scores)
    options = {o.lever: o for o in result.advice}
    repeats = options["repeats"]
    assert repeats.possible and repeats.target is not None and repeats.target > 2
    c = result.components
    assert c.samples is not None and c.interaction is not None and c.repeats is not None
    now = aggregate_variance(c, judges=4, repeats=2)
    after = aggregate_variance(c, judges=4, repeats=repeats.target)
    before = aggregate_variance(c, judges=4, repeats=repeats.target - 1)
    assert now is not None and after is not None and before is not None
    assert after <= now / 4 < before
    assert repeats.extra_judgements == 200 * 4 * (repeats.target - 2)
    assert sum(result.share.values()) == pytest.approx(1.0)


def test_advice_with_one_repeat_cannot_tell_about_repeats() -> None:
    options = {o.lever: o for o in decompose(_model(11).scores(1)).advice}
    assert options["repeats"].possible is None
    assert options["samples"].possible is True


def test_advice_on_identical_scores_says_nothing_can_narrow_it() -> None:
    components = variance_components(np.full((10, 3, 2), 0.4))
    options = halving_advice(components, n_samples=10, n_judges=3, n_repeats=2)
    assert [o.possible for o in options] == [False, False, False]


def test_a_samples_interval_uses_its_judges_as_clusters() -> None:
    scores = np.array([[0.5, 0.7], [0.6, 0.6], [0.9, math.nan]])
    interval = sample_interval(scores)
    assert interval is not None and interval.n == 3
    assert interval.estimate == pytest.approx((0.6 + 0.6 + 0.9) / 3)
    one_judge = sample_interval(np.array([[0.4, 0.6, 0.5]]))
    assert one_judge is not None and one_judge.n == 3
    assert sample_interval(np.array([[0.4], [math.nan]])) is None
