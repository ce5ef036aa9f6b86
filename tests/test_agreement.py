"""Judge agreement (ragqa.agreement) against values computed by hand, and in every report."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from _reports import quorum_run, readme_run

from ragqa.agreement import PACKAGE_CELLS, agreement, interval_alpha, krippendorff_alpha
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness
from ragqa.render.records import report_record, report_to_json
from ragqa.testing import ScriptedJudge, make_sample

nan = math.nan

# Three samples, two judges (scores x10 to keep the arithmetic in integers; every figure but the
# mean absolute difference and the bias is scale-free):
#   judge a: 2, 5, 9    judge b: 4, 5, 6
A, B = [2.0, 5.0, 9.0], [4.0, 5.0, 6.0]


def _by_hand_alpha() -> Fraction:
    # Interval alpha = 1 - D_o / D_e (Krippendorff 2011), n = 6 pairable values.
    # D_o = (1/n) * sum over samples of sum over ordered pairs (c - k)^2 / (m_u - 1)
    #     = (1/6) * (2*(2-4)^2 + 2*(5-5)^2 + 2*(9-6)^2) / 1 = (8 + 0 + 18) / 6 = 26/6
    d_o = Fraction(8 + 0 + 18, 6)
    # D_e = (1/(n(n-1))) * sum over all ordered pairs of values (c - k)^2 = 2 * n * SS / (n(n-1))
    # mean = 31/6, sum of squares = 4+25+81+16+25+36 = 187, SS = 187 - 31^2/6 = 161/6
    ss = Fraction(187) - Fraction(31**2, 6)
    assert ss == Fraction(161, 6)
    d_e = 2 * 6 * ss / (6 * 5)  # = 322/30
    return 1 - d_o / d_e  # = 1 - 780/1932 = 96/161


def test_two_judges_three_samples_match_the_hand_computed_figures() -> None:
    result = agreement(["s1", "s2", "s3"], ["a", "b"], np.array([A, B]))
    assert result is not None
    assert _by_hand_alpha() == Fraction(96, 161)
    assert result.alpha == pytest.approx(96 / 161)  # 0.5963
    assert result.n_samples == 3
    [pair] = result.pairs
    assert (pair.judge_a, pair.judge_b, pair.n) == ("a", "b", 3)
    # ranks: a 1,2,3 ; b 1,2,3 -> rho = 1
    assert pair.spearman == pytest.approx(1.0)
    # |2-4| + |5-5| + |9-6| = 2 + 0 + 3 = 5 over 3 samples
    assert pair.mean_abs_diff == pytest.approx(5 / 3)
    # bias of a: (2-4) + (5-5) + (9-6) = 1 over 3 samples; b is its mirror
    assert [(b.judge_id, b.n) for b in result.bias] == [("a", 3), ("b", 3)]
    assert result.bias[0].bias == pytest.approx(1 / 3)
    assert result.bias[1].bias == pytest.approx(-1 / 3)
    # spreads 2, 0, 3: largest first; a sample the judges agree on is not contested
    assert [(c.sample_id, c.spread) for c in result.contested] == [("s3", 3.0), ("s1", 2.0)]


def test_opposite_rankings_give_spearman_minus_one() -> None:
    # a: 1, 2, 3 ; b: 3, 2, 1 -> rank differences d = -2, 0, 2; rho = 1 - 6*8/(3*(9-1)) = -1
    result = agreement(["s1", "s2", "s3"], ["a", "b"], np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
    assert result is not None
    assert result.pairs[0].spearman == pytest.approx(-1.0)
    # interval alpha: D_o = (2*4 + 0 + 2*4)/6 = 16/6; values 1,2,3,3,2,1: SS = 4, D_e = 2*4/5 = 8/5
    # alpha = 1 - (16/6)/(8/5) = 1 - 80/48 = -2/3
    assert result.alpha == pytest.approx(-2 / 3)


def test_krippendorffs_published_interval_example_is_reproduced() -> None:
    # Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011), 4 observers x 12 units,
    # reported interval alpha 0.849.
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    assert round(krippendorff_alpha(data), 3) == 0.849
    assert interval_alpha(data) == pytest.approx(krippendorff_alpha(data), abs=1e-12)
    result = agreement([f"u{i}" for i in range(1, 13)], ["A", "B", "C", "D"], data)
    assert result is not None
    assert result.n_samples == 11  # unit 12 has one value: not pairable
    assert len(result.pairs) == 6 and len(result.bias) == 4


@pytest.mark.slow
def test_closed_form_equals_the_package_on_continuous_scores_with_gaps() -> None:
    rng = np.random.default_rng(7)
    data = rng.random((3, 200))
    data[rng.random((3, 200)) < 0.2] = nan
    import krippendorff

    package = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert interval_alpha(data) == pytest.approx(package, abs=1e-12)


def test_large_continuous_runs_take_the_closed_form_and_give_the_same_alpha() -> None:
    rng = np.random.default_rng(3)
    base = rng.random(3000)
    data = np.array([base, base + rng.normal(0, 0.05, 3000), base + rng.normal(0, 0.1, 3000)])
    assert PACKAGE_CELLS < 3000 * 9000**2  # the package would need ~1.9 TB of coincidence arrays here
    alpha = krippendorff_alpha(data)
    assert alpha == interval_alpha(data)
    small = data[:, :100]
    import krippendorff

    assert interval_alpha(small) == pytest.approx(
        krippendorff.alpha(reliability_data=small, level_of_measurement="interval"), abs=1e-12
    )
    assert 0.8 < alpha < 1.0  # three judges that track one signal with small noise


def test_missing_scores_are_left_out_not_filled() -> None:
    # s2: only a scored -> not pairable; s4: only b -> not pairable
    data = np.array([[2.0, 7.0, 9.0, nan], [4.0, nan, 6.0, 1.0]])
    result = agreement(["s1", "s2", "s3", "s4"], ["a", "b"], data)
    assert result is not None
    assert result.n_samples == 2
    # the same as the two pairable samples alone: D_o = (8 + 18)/4 ; values 2,4,9,6: SS = 26.75
    # D_e = 2*26.75/3 ; alpha = 1 - 6.5/17.8333 = 0.635514...
    assert result.alpha == pytest.approx(1 - 6.5 / (2 * 26.75 / 3))
    [pair] = result.pairs
    assert pair.n == 2 and pair.mean_abs_diff == pytest.approx((2 + 3) / 2)
    assert pair.spearman == pytest.approx(1.0)  # two points, same order
    assert [b.n for b in result.bias] == [2, 2]


def test_undefined_figures_are_nan() -> None:
    # one common sample: Spearman undefined; two values only -> alpha defined (D_e > 0)
    one = agreement(["s1"], ["a", "b"], np.array([[0.2], [0.8]]))
    assert one is not None
    assert math.isnan(one.pairs[0].spearman)
    assert one.pairs[0].mean_abs_diff == pytest.approx(0.6)
    # a constant judge: Spearman undefined (no ranking), alpha still defined
    const = agreement(["s1", "s2", "s3"], ["a", "b"], np.array([[1.0, 1.0, 1.0], [0.2, 0.5, 0.9]]))
    assert const is not None
    assert math.isnan(const.pairs[0].spearman)
    assert not math.isnan(const.alpha)
    # every score identical: no expected disagreement, alpha undefined; nothing contested
    same = agreement(["s1", "s2"], ["a", "b"], np.ones((2, 2)))
    assert same is not None
    assert math.isnan(same.alpha) and same.contested == []
    assert same.pairs[0].mean_abs_diff == 0.0
    # no sample scored by both: n = 0 and every figure NaN
    apart = agreement(["s1", "s2"], ["a", "b"], np.array([[0.5, nan], [nan, 0.5]]))
    assert apart is not None
    assert apart.n_samples == 0 and math.isnan(apart.alpha)
    assert apart.pairs[0].n == 0 and math.isnan(apart.pairs[0].mean_abs_diff) and math.isnan(apart.pairs[0].spearman)
    assert all(b.n == 0 and math.isnan(b.bias) for b in apart.bias)
    assert apart.contested == []
    # no sample at all
    empty = agreement([], ["a", "b"], np.empty((2, 0)))
    assert empty is not None and math.isnan(empty.alpha) and empty.n_samples == 0


def test_one_judge_has_no_agreement_and_a_bad_shape_is_refused() -> None:
    assert agreement(["s1", "s2"], ["a"], np.array([[0.1, 0.2]])) is None
    with pytest.raises(ValueError, match="shape"):
        agreement(["s1"], ["a", "b"], np.zeros((2, 2)))


def test_contested_keeps_the_five_largest_spreads_in_sample_order_on_ties() -> None:
    a = np.array([0.0] * 7)
    b = np.array([0.1, 0.5, 0.5, 0.9, 0.2, 0.7, 0.3])
    result = agreement([f"s{i}" for i in range(7)], ["a", "b"], np.array([a, b]))
    assert result is not None
    assert [c.sample_id for c in result.contested] == ["s3", "s5", "s1", "s2", "s6"]


async def test_summarize_fills_agreement_from_a_real_run_with_failures_and_nan() -> None:
    report = await quorum_run()
    # faithfulness per sample (judge-a, judge-b, flaky): s1 1.0, 0.5, 0.0 ; s2 0.5, NaN, failed ;
    # s3 all failed ; s4 1.0, 1.0, failed. Pairable: s1 (3 scores), s4 (2 scores); n = 5.
    agr = report.summary("faithfulness").agreement
    assert agr is not None and agr.n_samples == 2
    # D_o = (1/5) * [s1: ordered pairs 2*(0.25 + 1 + 0.25) / (3-1) = 1.5 ; s4: 0] = 0.3
    # values 1, .5, 0, 1, 1: mean .7, SS = 3.25 - 5*.49 = 0.8 ; D_e = 2*0.8/4 = 0.4 ; alpha = 1 - .3/.4
    assert agr.alpha == pytest.approx(0.25)
    pairs = {(p.judge_a, p.judge_b): (p.n, p.mean_abs_diff) for p in agr.pairs}
    assert pairs == {
        ("judge-a", "judge-b"): (2, pytest.approx((0.5 + 0.0) / 2)),
        ("judge-a", "flaky"): (1, pytest.approx(1.0)),
        ("judge-b", "flaky"): (1, pytest.approx(0.5)),
    }
    assert all(math.isnan(p.spearman) for p in agr.pairs)  # judge-b, flaky: too few common samples
    # judge-a: s1 1 - (0.5+0)/2 = 0.75, s4 1 - 1 = 0 -> 0.375 ; flaky: s1 0 - (1+0.5)/2 = -0.75
    bias = {b.judge_id: (b.n, b.bias) for b in agr.bias}
    assert bias == {
        "judge-a": (2, pytest.approx(0.375)),
        "judge-b": (2, pytest.approx(((0.5 - 0.5) + 0.0) / 2)),
        "flaky": (1, pytest.approx(-0.75)),
    }
    assert [(c.sample_id, c.spread) for c in agr.contested] == [("s1", 1.0)]
    # hallucination = 1 - faithfulness per judge: the same alpha and |diff|, the bias mirrored
    hal = report.summary("hallucination").agreement
    assert hal is not None and hal.alpha == pytest.approx(0.25)
    assert {b.judge_id: b.bias for b in hal.bias}["flaky"] == pytest.approx(0.75)


async def test_one_judge_panel_has_no_agreement() -> None:
    judge = ScriptedJudge("j", {"statements": [{"statements": []}]})
    report = await PanelEvaluator([judge], [Faithfulness()]).evaluate([make_sample(id="s1")])
    assert report.summary("faithfulness").agreement is None


async def test_json_report_carries_agreement_with_nan_as_null() -> None:
    report = await readme_run()
    document = json.loads(report_to_json(report))
    agr = document["summaries"][0]["agreement"]
    # strict 2/3 and lenient 1 on every sample: alpha = 1 - (1/9)/(1/15) = -2/3 (see test_render)
    assert agr["alpha"] == pytest.approx(-2 / 3)
    assert agr["pairs"][0]["spearman"] is None  # constant judges: undefined, written as null
    assert agr["pairs"][0]["mean_abs_diff"] == pytest.approx(1 / 3)
    assert [c["sample_id"] for c in agr["contested"]] == ["s1", "s2", "s3"]
    assert report_record(report)["results"][0].keys() == document["results"][0].keys()
