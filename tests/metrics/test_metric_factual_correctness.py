"""Factual correctness: RAGAS's formula (golden values, rounding, epsilons), its steps and calls, the panel."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local.graded import GradedNLIOutput, GradedStatementVerdict
from ragqa.metrics import FactualCorrectness, build_metric
from ragqa.metrics.base import MetricContext
from ragqa.metrics.factual_correctness import claim_counts, factual_correctness_score, round2
from ragqa.prompts.base import Prompt
from ragqa.prompts.claim_decomposition import claim_decomposition_prompt
from ragqa.testing import FunctionJudge, make_sample

RESPONSE = "Paris is the capital of France. It has 10 million residents. The Eiffel Tower is in Paris."
REFERENCE = "Paris is the capital of France. The Eiffel Tower, in Paris, opened in 1889."


def _nli(statements: list[str], verdicts: list[float]) -> dict[str, Any] | GradedNLIOutput:
    if all(v in (0, 1) for v in verdicts):
        return {
            "verdicts": [
                {"statement": s, "reason": "r", "verdict": int(v)} for s, v in zip(statements, verdicts, strict=True)
            ]
        }
    return GradedNLIOutput(
        verdicts=[
            GradedStatementVerdict(statement=s, reason="r", verdict=int(v >= 0.5), support=v)
            for s, v in zip(statements, verdicts, strict=True)
        ]
    )


def _judge(precision: list[float], recall: list[float], judge_id: str = "j1") -> FunctionJudge:
    """Claims ``p1..pn`` for the response, ``g1..gm`` for the reference; the given verdicts for each side."""
    response_claims = [f"p{i}" for i in range(1, len(precision) + 1)]
    reference_claims = [f"g{i}" for i in range(1, len(recall) + 1)]

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "claim_decomposition":
            return {"claims": response_claims if data.response == RESPONSE else reference_claims}
        assert prompt.name == "nli"
        if data.context == REFERENCE:  # the response's claims judged against the reference
            assert data.statements == response_claims
            return _nli(response_claims, precision)
        assert data.context == RESPONSE and data.statements == reference_claims
        return _nli(reference_claims, recall)

    return FunctionJudge(judge_id, answer)


SAMPLE = make_sample(user_input="Tell me about Paris.", response=RESPONSE, reference=REFERENCE)

# (precision verdicts, recall verdicts, beta) -> (precision, recall, f-beta), computed by hand with
# RAGAS's formula: P = TP/(TP+FP+1e-8), R = TP/(TP+FN+1e-8), F = fbeta_score (no epsilon), np.round(., 2)
GOLDEN = [
    ([1, 1, 0], [1, 0], 1.0, (0.67, 0.67, 0.67)),  # TP 2, FP 1, FN 1 (ragas.md golden case)
    ([1, 1], [1, 0, 0], 1.0, (1.0, 0.5, 0.67)),  # 2/(2+1e-8) rounds to 1.0; F1 = 2*0.5/1.5
    ([1, 1], [1, 0, 0], 2.0, (1.0, 0.5, 0.56)),  # F2 = 5*0.5 / (4 + 0.5) = 0.5556
    ([1, 1], [1, 0, 0], 0.5, (1.0, 0.5, 0.83)),  # F0.5 = 1.25*0.5 / (0.25 + 0.5) = 0.8333
    ([1, 0, 0, 0], [1, 1, 1], 1.0, (0.25, 1.0, 0.4)),  # P 0.25, R 1/(1+1e-8) -> 1.0, F1 = 0.5/1.25
    ([0, 0], [0], 1.0, (0.0, 0.0, 0.0)),  # nothing supported
    ([1], [], 1.0, (1.0, 1.0, 1.0)),  # the reference has no claim: FN = 0
    ([], [1, 1], 1.0, (0.0, 0.0, 0.0)),  # the response has no claim: TP = 0
    ([], [], 1.0, (0.0, 0.0, 0.0)),  # no claim at all: 0.0 as in RAGAS, not NaN
    # graded (local judge): TP 1.3, FP 0.7, FN 0.75 -> P 0.65, R 1.3/2.05 = 0.6341, F1 0.6420
    ([0.8, 0.5], [0.25], 1.0, (0.65, 0.63, 0.64)),
]


@pytest.mark.parametrize(("precision", "recall", "beta", "expected"), GOLDEN)
async def test_golden_values_in_every_mode(
    precision: list[float], recall: list[float], beta: float, expected: tuple[float, float, float]
) -> None:
    for mode, want in zip(("precision", "recall", "f1"), expected, strict=True):
        metric = FactualCorrectness(mode=mode, beta=beta)  # type: ignore[arg-type]
        result = await metric.score(SAMPLE, _judge(precision, recall), MetricContext())
        assert result.value == want, (mode, result.value, want)


def test_formula_matches_ragas_arithmetic_exactly() -> None:
    def ragas(tp: float, fp: float, fn: float, mode: str, beta: float) -> float:  # metrics/_factual_correctness.py
        if mode == "precision":
            score = tp / (tp + fp + 1e-8)
        elif mode == "recall":
            score = tp / (tp + fn + 1e-8)
        else:
            p = 0 if tp + fp == 0 else tp / (tp + fp)
            r = 0 if tp + fn == 0 else tp / (tp + fn)
            score = 0.0 if p == 0 and r == 0 else (1 + beta**2) * p * r / (beta**2 * p + r)
        return float(np.round(score, 2))

    for tp in range(6):
        for fp in range(6):
            for fn in range(6):
                for beta in (0.5, 1.0, 2.0):
                    for mode in ("precision", "recall", "f1"):
                        got = factual_correctness_score(tp, fp, fn, mode=mode, beta=beta)  # type: ignore[arg-type]
                        assert got == ragas(tp, fp, fn, mode, beta)


def test_round2_is_numpys_rounding_not_pythons() -> None:
    values = [i / 1000 for i in range(1001)] + [2 / 3, 1 / 3, 0.125, 0.135, 0.285, 1.005, 0.645]
    assert all(round2(v) == float(np.round(v, 2)) for v in values)
    assert round2(0.125) == 0.12  # half to even
    assert math.isnan(round2(math.nan))


def test_claim_counts_are_graded_sums() -> None:
    assert claim_counts([1.0, 0.0, 1.0], [0.0]) == (2.0, 1.0, 1.0)
    tp, fp, fn = claim_counts([0.8, 0.5], [0.25])
    assert (tp, fp, fn) == pytest.approx((1.3, 0.7, 0.75))


async def test_f1_makes_four_calls_with_each_text_as_the_others_premise() -> None:
    judge = _judge([1, 0], [1])
    result = await FactualCorrectness().score(SAMPLE, judge, MetricContext())
    assert [c.prompt for c in judge.calls].count("claim_decomposition") == 2
    assert [c.prompt for c in judge.calls].count("nli") == 2
    assert result.details["response_claims"] == ["p1", "p2"] and result.details["reference_claims"] == ["g1"]
    assert result.details["unsupported"] == ["p2"] and result.details["missing"] == []
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == (1.0, 1.0, 0.0)
    assert result.reason == "TP 1, FP 1, FN 0: precision 0.50, recall 1.00; f1 0.67"


async def test_precision_mode_makes_two_calls_and_never_decomposes_the_reference() -> None:
    judge = _judge([1, 0, 1], [0, 0])
    metric = FactualCorrectness(mode="precision")
    result = await metric.score(SAMPLE, judge, MetricContext())
    assert result.value == 0.67 and len(judge.calls) == 2 == metric.estimate_calls(SAMPLE)
    assert [c.data["response"] for c in judge.calls if c.prompt == "claim_decomposition"] == [RESPONSE]
    assert result.reason == "TP 2, FP 1: precision 0.67"


async def test_no_claims_skip_verification_and_score_zero() -> None:
    judge = _judge([], [])
    result = await FactualCorrectness().score(SAMPLE, judge, MetricContext())
    assert result.value == 0.0 and [c.prompt for c in judge.calls] == ["claim_decomposition"] * 2
    assert result.reason == "no claim found in the response or the reference"


@pytest.mark.parametrize("atomicity", ["low", "high"])
@pytest.mark.parametrize("coverage", ["low", "high"])
async def test_atomicity_and_coverage_choose_ragas_examples_and_travel_in_the_input(
    atomicity: str, coverage: str
) -> None:
    judge = _judge([1], [1])
    await FactualCorrectness(atomicity=atomicity, coverage=coverage).score(  # type: ignore[arg-type]
        SAMPLE, judge, MetricContext()
    )
    sent = [c.data for c in judge.calls if c.prompt == "claim_decomposition"]
    assert all(d["atomicity"] == atomicity and d["coverage"] == coverage for d in sent)
    prompt = claim_decomposition_prompt(atomicity, coverage)  # type: ignore[arg-type]
    babbage = [len(prompt.examples[lang][0].output.claims) for lang in ("en", "ru")]
    assert babbage == [{"low": 1, "high": 2}[atomicity] + (2 if (atomicity, coverage) == ("high", "high") else 0)] * 2
    assert all(ex.input.atomicity == atomicity and ex.input.coverage == coverage for ex in prompt.examples["en"])


def test_keys_name_the_mode_and_any_setting_off_ragas_defaults() -> None:
    assert FactualCorrectness().key == "factual_correctness(mode=f1)"
    assert FactualCorrectness(mode="recall", beta=2, atomicity="high").key == (
        "factual_correctness(mode=recall, atomicity=high, beta=2)"
    )
    assert FactualCorrectness(coverage="high").key == "factual_correctness(mode=f1, coverage=high)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "accuracy"}, "mode must be one of precision, recall, f1"),
        ({"beta": 0}, "beta must be a positive number"),
        ({"beta": True}, "beta must be a positive number"),
        ({"atomicity": "medium"}, "atomicity and coverage must each be 'low' or 'high'"),
        ({"atomicty": "high"}, "Did you mean atomicity"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_metric("factual_correctness", options)


async def test_each_judge_scores_and_the_panel_aggregates() -> None:
    j1, j2 = _judge([1, 1, 0], [1, 0], "j1"), _judge([1, 1], [1, 1, 1], "j2")
    row = await PanelEvaluator([j1, j2]).score(SAMPLE, FactualCorrectness())
    assert [o.score.value for o in row.judges if o.score] == [0.67, 1.0]
    assert row.aggregate.value == pytest.approx((0.67 + 1.0) / 2)
    assert row.metric == "factual_correctness(mode=f1)"


def test_missing_reference_is_rejected_before_any_call() -> None:
    sample = make_sample(response=RESPONSE, reference=None)
    problems = PanelEvaluator([_judge([], [])]).validate([sample], [FactualCorrectness()])
    assert [(p.field, p.metric) for p in problems] == [("reference", "factual_correctness(mode=f1)")]


async def test_worked_example_of_the_docs() -> None:
    # docs/metrics/factual_correctness.md, "Worked example (Paris)"
    response_claims = [
        "Paris is the capital of France.",
        "Paris has 10 million residents.",
        "The Eiffel Tower is in Paris.",
    ]
    reference_claims = ["Paris is the capital of France.", "The Eiffel Tower opened in 1889."]

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "claim_decomposition":
            return {"claims": response_claims if data.response == RESPONSE else reference_claims}
        if data.context == REFERENCE:
            return _nli(response_claims, [1, 0, 1])
        return _nli(reference_claims, [1, 0])

    for mode, calls in (("precision", 2), ("recall", 4), ("f1", 4)):
        judge = FunctionJudge("j1", answer)
        result = await FactualCorrectness(mode=mode).score(SAMPLE, judge, MetricContext())  # type: ignore[arg-type]
        assert (result.value, len(judge.calls)) == (0.67, calls)
    assert result.details["unsupported"] == ["Paris has 10 million residents."]
    assert result.details["missing"] == ["The Eiffel Tower opened in 1889."]


# --- where ragqa differs from RAGAS 0.4.3 (docs/metrics/factual_correctness.md) --------------------------------------


async def test_blank_claims_are_dropped_and_a_verdict_of_2_is_the_judges_failure() -> None:
    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "claim_decomposition":
            return {"claims": ["p1", " ", ""] if data.response == RESPONSE else ["g1", ""]}
        assert data.statements in (["p1"], ["g1"])  # RAGAS would send the blank claims too
        return _nli(data.statements, [1])

    result = await FactualCorrectness().score(SAMPLE, FunctionJudge("j1", answer), MetricContext())
    assert result.value == 1.0 and result.details["response_claims"] == ["p1"]

    def two(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "claim_decomposition":
            return {"claims": ["p1"]}
        return {"verdicts": [{"statement": "p1", "reason": "r", "verdict": 2}]}  # RAGAS reads 2 as true

    row = await PanelEvaluator([FunctionJudge("j1", two)]).score(SAMPLE, FactualCorrectness())
    [outcome] = row.judges
    assert outcome.score is None and outcome.failure is not None and outcome.failure.error_type == "JudgeOutputError"
