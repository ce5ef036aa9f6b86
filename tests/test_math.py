"""Pure metric maths against RAGAS's formulas (research golden cases) and their edge cases."""

from __future__ import annotations

import math

import pytest

from ragqa._math import average_precision, cosine, finite_mean, mean_or_nan, nan_mean
from ragqa.interpretation import band_for, interpret
from ragqa.metrics.context_entity_recall import entity_recall_score
from ragqa.metrics.context_precision import context_precision_score
from ragqa.metrics.context_recall import context_recall_score
from ragqa.metrics.faithfulness import faithfulness_score
from ragqa.metrics.hallucination import hallucination_score
from ragqa.metrics.response_relevancy import response_relevancy_score
from ragqa.metrics.response_relevancy_llm import statement_relevancy_score


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ([1, 1, 1, 1], 0.999999999975),
        ([1, 0, 1], 0.8333333332916666),
        ([0, 1], 0.49999999995),
        ([0, 0, 1], 0.3333333333),
        ([1, 0, 0, 0], 0.9999999999),
        ([], 0.0),
        ([0, 0, 0], 0.0),
    ],
)
def test_context_precision_ragas_golden(verdicts: list[int], expected: float) -> None:
    assert context_precision_score(verdicts) == pytest.approx(expected, rel=0, abs=1e-15)


def test_context_precision_is_never_exactly_one_but_textbook_ap_is() -> None:
    assert context_precision_score([1, 1]) < 1.0
    assert context_precision_score([1, 1], eps=0.0) == 1.0
    assert average_precision([1, 0, 1], eps=0.0) == pytest.approx((1 + 2 / 3) / 2)


@pytest.mark.parametrize(
    ("ref", "ctx", "expected"),
    [
        (["a", "a", "b"], ["a"], 0.33333333222),  # legacy: list length in the denominator
        (["a", "b"], ["a", "b", "c"], 2 / (2 + 1e-8)),
        ([], ["a"], 0.0),  # no reference entity
        (["a"], [], 0.0),
        (["Paris"], ["paris"], 0.0),  # exact, case-sensitive
    ],
)
def test_entity_recall_ragas_legacy(ref: list[str], ctx: list[str], expected: float) -> None:
    assert entity_recall_score(ref, ctx) == pytest.approx(expected, rel=1e-10)


def test_entity_recall_collections_variant_via_set() -> None:
    # RAGAS collections divide by the set size: 1 / (2 + 1e-8)
    assert entity_recall_score(sorted(set(["a", "a", "b"])), ["a"]) == pytest.approx(0.4999999975)


@pytest.mark.parametrize(
    ("values", "expected"),
    [([1, 1, 0, 0], 0.5), ([1], 1.0), ([0, 0], 0.0), ([0.25, 0.75], 0.5)],
)
def test_ratio_metrics(values: list[float], expected: float) -> None:
    for fn in (context_recall_score, faithfulness_score, statement_relevancy_score):
        assert fn(values) == expected
    assert hallucination_score(values) == pytest.approx(1 - expected)


def test_ratio_metrics_nan_when_nothing_to_count() -> None:
    for fn in (context_recall_score, faithfulness_score, statement_relevancy_score, hallucination_score):
        assert math.isnan(fn([]))
    assert math.isnan(mean_or_nan([]))


def test_the_three_means_differ_only_in_what_they_leave_out() -> None:
    values = [0.2, math.nan, 0.4, math.inf]
    assert math.isnan(mean_or_nan(values))  # NaN propagates
    assert nan_mean(values) == math.inf  # NaN left out (RAGAS's safe_nanmean), infinities kept
    assert finite_mean(values) == pytest.approx(0.3)  # NaN and infinities left out
    assert math.isnan(finite_mean([math.nan, -math.inf])) and math.isnan(finite_mean(iter([])))
    assert finite_mean(v for v in (1.0, 2.0)) == 1.5  # any iterable


def test_response_relevancy_formula_and_noncommittal_gate() -> None:
    q = [1.0, 0.0]
    gen = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
    expected = (1.0 + 0.0 + math.sqrt(0.5)) / 3
    assert response_relevancy_score(q, gen, [0, 0, 0]) == pytest.approx(expected)
    assert response_relevancy_score(q, gen, [1, 0, 1]) == pytest.approx(expected)  # np.all: one committal keeps it
    assert response_relevancy_score(q, gen, [1, 1, 1]) == 0.0
    assert response_relevancy_score(q, [[-1.0, 0.0]], [0]) == -1.0  # raw cosine, not clipped
    assert math.isnan(response_relevancy_score(q, [], [0]))
    assert math.isnan(response_relevancy_score(q, [[0.0, 0.0]], [0]))  # zero norm
    with pytest.raises(ValueError):
        response_relevancy_score(q, [[1.0, 0.0, 0.0]], [0])


def test_seed_super_bowl_cosines() -> None:
    # the write-up's vectors: E_o and three generated questions -> ~0.98 (its rounded illustration)
    e_o = [0.9, 0.4, 0.1]
    gen = [[0.85, 0.38, 0.09], [0.88, 0.39, 0.11], [0.87, 0.41, 0.10]]
    value = response_relevancy_score(e_o, gen, [0, 0, 0])
    assert value == pytest.approx(sum(cosine(e_o, g) for g in gen) / 3)
    assert value > 0.99


@pytest.mark.parametrize(
    ("value", "language", "expected"),
    [
        (0.0, "en", "ignores noise (0-0.1)"),
        (0.1, "en", "ignores noise (0-0.1)"),
        (0.2, "ru", "в основном устойчива к шуму (0.1-0.3)"),
        (0.5, "en", "sometimes uses noisy information (0.3-0.5)"),
        (0.51, "ru", "подвержена влиянию нерелевантных контекстов (0.5-1)"),
        (1.0, "en", "influenced by irrelevant contexts (0.5-1)"),
    ],
)
def test_noise_sensitivity_bands(value: float, language: str, expected: str) -> None:
    assert interpret("noise_sensitivity(mode=irrelevant)", value, language) == expected  # type: ignore[arg-type]


def test_interpret_unknown_and_nan() -> None:
    assert interpret("noise_sensitivity", math.nan) is None
    assert interpret("bleu", 0.5) is None
    assert interpret("noise_sensitivity", 1.5) is None
    band = band_for("context_precision", 0.999999999975)
    assert band is not None and band.level == "excellent"
    low = band_for("response_relevancy", -0.2)
    assert low is not None and low.level == "poor"


def test_count_of_counts_binary_verdicts_and_sums_graded_ones() -> None:
    from ragqa._math import count_of

    assert count_of([1.0, 0.0, 1.0]) == "2"
    assert count_of([]) == "0"
    # a graded support of 0.19 is not "0 of 1": the reason must agree with the score
    assert count_of([0.19]) == "0.19 (graded)"
    assert count_of([0.79, 1.0]) == "1.79 (graded)"


async def test_graded_reasons_agree_with_graded_scores() -> None:
    from ragqa.judges.local.graded import GradedAttribution, GradedAttributionOutput
    from ragqa.metrics import ContextRecall
    from ragqa.metrics.base import MetricContext
    from ragqa.testing import FunctionJudge, make_sample

    def answer(value: float) -> GradedAttributionOutput:
        graded = GradedAttribution(statement="s", reason="r", attributed=int(value >= 0.5), support=value)
        return GradedAttributionOutput(classifications=[graded])

    for value, said in ((0.19, "0.19 (graded) of 1"), (1.0, "1 of 1")):
        judge = FunctionJudge("j", lambda prompt, data, v=value: answer(v))
        score = await ContextRecall().score(make_sample(reference="s"), judge, MetricContext())
        assert score.value == value
        assert score.reason is not None and score.reason.startswith(f"{said} reference sentences attributed")


def test_every_judged_zero_to_one_metric_gets_the_standard_scale_without_an_entry() -> None:
    from ragqa.interpretation import BANDS, scale_for
    from ragqa.metrics import METRICS

    standard = scale_for("faithfulness")
    assert standard is not None and "faithfulness" not in BANDS
    for name in ("factual_correctness(mode=f1)", "answer_accuracy", "agent_goal_accuracy", "context_relevance"):
        assert scale_for(name) is standard
    assert scale_for("bleu_score") is None  # a text metric: no judge, no scale
    assert scale_for("rubrics_score") is None  # levels 1..5
    assert scale_for("hallucination") is None  # lower is better, no scale of its own
    judged = [c for c in METRICS.values() if c.needs_judge and c.direction == "higher" and c.value_range == (0.0, 1.0)]
    assert judged and all(scale_for(c.name) is not None for c in judged)
