"""Answer correctness: RAGAS's formula (golden values), weights and presets, embedders, shared steps, the panel."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ragqa.errors import ConfigError, JudgeUnsupported
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local.answers_response import GradedCorrectnessOutput
from ragqa.metrics import AnswerCorrectness, Faithfulness, build_metric
from ragqa.metrics.answer_correctness import PRESETS, answer_correctness_score, factuality_score
from ragqa.metrics.base import MetricContext
from ragqa.prompts.base import Prompt
from ragqa.testing import FunctionJudge, StaticEmbedder, make_sample

Q = "What powers the sun?"
RESPONSE = "The sun is powered by nuclear fission."
REFERENCE = "The sun is powered by nuclear fusion."
SAMPLE = make_sample(user_input=Q, response=RESPONSE, reference=REFERENCE)


def _embedder(cos: float, embedder_id: str = "e1") -> StaticEmbedder:
    """Vectors whose cosine is exactly ``cos``: (1, 0) and (cos, sqrt(1 - cos^2))."""
    return StaticEmbedder(embedder_id, {RESPONSE: [1.0, 0.0], REFERENCE: [cos, math.sqrt(1 - cos * cos)]})


def _judge(tp: int, fp: int, fn: int, judge_id: str = "j1", classification: Any = None) -> FunctionJudge:
    """Statements a1..a(tp+fp) of the response, g1..g(fn+1) of the reference; the classifier answers TP/FP/FN."""
    answer_st = [f"a{i}" for i in range(1, tp + fp + 1)]
    truth_st = [f"g{i}" for i in range(1, fn + 2)] if tp + fp + fn else []

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            assert data.question == Q
            return {"statements": answer_st if data.answer == RESPONSE else truth_st}
        assert prompt.name == "correctness_classifier"
        assert (data.question, data.answer, data.ground_truth) == (Q, answer_st, truth_st)
        if classification is not None:
            return classification
        item = {"statement": "s", "reason": "r"}
        return {"TP": [item] * tp, "FP": [item] * fp, "FN": [item] * fn}

    return FunctionJudge(judge_id, answer)


def _ctx(*embedders: StaticEmbedder) -> MetricContext:
    return MetricContext(embedders=embedders)


F_1_1_4 = 2 * 0.5 * 0.2 / 0.7  # TP 1, FP 1, FN 4: P 0.5, R 0.2

# (tp, fp, fn, similarity, options) -> RAGAS's value, computed by hand
GOLDEN = [
    (1, 1, 4, 0.9, {}, 0.4392857142857143),  # ragas.md golden case: 0.75 * 0.2857 + 0.25 * 0.9
    (1, 1, 4, 0.9, {"preset": "equal_weights"}, (F_1_1_4 + 0.9) / 2),
    (1, 1, 4, 0.9, {"preset": "factual_focused"}, 0.9 * F_1_1_4 + 0.1 * 0.9),
    (1, 1, 4, 0.9, {"preset": "semantic_focused"}, 0.1 * F_1_1_4 + 0.9 * 0.9),
    (1, 1, 4, 0.9, {"weights": [3, 1]}, 0.4392857142857143),  # normalised like np.average
    (1, 1, 4, 0.9, {"beta": 2.0}, 0.75 * (5 * 0.1 / 2.2) + 0.25 * 0.9),  # F2 = 5PR / (4P + R)
    (2, 0, 0, 0.5, {}, 0.75 * 1.0 + 0.25 * 0.5),
    (0, 2, 3, 0.2, {}, 0.25 * 0.2),  # nothing right: factuality 0
    (0, 0, 0, 0.6, {}, 0.75 * 1.0 + 0.25 * 0.6),  # neither text has a statement: factuality 1.0, no classifier
]


@pytest.mark.parametrize(("tp", "fp", "fn", "sim", "options", "expected"), GOLDEN)
async def test_golden_values(tp: int, fp: int, fn: int, sim: float, options: dict[str, Any], expected: float) -> None:
    result = await build_metric("answer_correctness", options).score(SAMPLE, _judge(tp, fp, fn), _ctx(_embedder(sim)))
    assert result.value == pytest.approx(expected, rel=1e-12)


def test_weighted_mean_is_numpys_average() -> None:
    for f, s, w in [(F_1_1_4, 0.9, (0.75, 0.25)), (0.3, 0.7, (0.1, 0.9)), (1.0, 0.41, (2.0, 5.0)), (0.6, 0.0, (1, 0))]:
        assert answer_correctness_score(f, s, w) == float(np.average([f, s], weights=w))


def test_factuality_edge_rules() -> None:
    assert factuality_score(0, 0, 0) == 0.0  # fbeta_score's P = R = 0 rule
    assert factuality_score(0, 0, 0, no_statements=True) == 1.0  # RAGAS skips the classifier
    assert factuality_score(0, 0, 3) == 0.0 and factuality_score(2, 0, 0) == 1.0


async def test_both_texts_without_statements_skip_the_classifier() -> None:
    judge = _judge(0, 0, 0)
    result = await AnswerCorrectness().score(SAMPLE, judge, _ctx(_embedder(0.6)))
    assert [c.prompt for c in judge.calls] == ["statements", "statements"]
    assert result.details["factuality"] == 1.0 and "classification" not in result.details
    assert result.reason.startswith("neither text has a statement: factuality 1.0")


async def test_every_embedder_is_used_and_the_similarity_is_their_mean() -> None:
    result = await AnswerCorrectness().score(SAMPLE, _judge(1, 1, 4), _ctx(_embedder(0.9, "e1"), _embedder(0.5, "e2")))
    assert result.details["similarity"] == pytest.approx(0.7)
    assert result.value == pytest.approx(0.75 * F_1_1_4 + 0.25 * 0.7)
    per_model = result.details["embedders"]
    assert list(per_model) == ["e1", "e2"]
    assert per_model["e1"]["score"] == pytest.approx(0.75 * F_1_1_4 + 0.25 * 0.9)
    assert result.value == pytest.approx((per_model["e1"]["score"] + per_model["e2"]["score"]) / 2)


async def test_zero_similarity_weight_needs_no_embedder() -> None:
    metric = AnswerCorrectness(weights=[1, 0])
    assert metric.needs_embeddings is False and AnswerCorrectness().needs_embeddings is True
    result = await metric.score(SAMPLE, _judge(1, 1, 4), MetricContext())
    assert result.value == pytest.approx(F_1_1_4) and result.details["similarity"] is None
    evaluator = PanelEvaluator([_judge(1, 1, 4)])
    assert evaluator.validate([SAMPLE], [metric]) == []
    assert [p.metric for p in evaluator.validate([SAMPLE], [AnswerCorrectness()])] == ["answer_correctness"]


async def test_without_an_embedder_the_similarity_part_is_unsupported() -> None:
    with pytest.raises(JudgeUnsupported, match="needs an embedding model"):
        await AnswerCorrectness().score(SAMPLE, _judge(1, 1, 4), MetricContext())


async def test_graded_counts_of_the_local_judge_are_used() -> None:
    graded = GradedCorrectnessOutput(TP=[], FP=[], FN=[], answer_support=[0.8, 0.4], reference_support=[0.5, 1.0])
    result = await AnswerCorrectness(weights=[1, 0]).score(SAMPLE, _judge(1, 1, 1, classification=graded), _ctx())
    tp, fp, fn = 1.2, 0.8, 0.5
    p, r = tp / (tp + fp), tp / (tp + fn)
    assert (result.details["tp"], result.details["fp"], result.details["fn"]) == pytest.approx((tp, fp, fn))
    assert result.value == pytest.approx(2 * p * r / (p + r))


async def test_the_response_statements_are_shared_with_faithfulness() -> None:
    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": ["a1"] if data.answer == RESPONSE else ["g1"]}
        if prompt.name == "nli":
            return {"verdicts": [{"statement": "a1", "reason": "r", "verdict": 1}]}
        return {"TP": [{"statement": "a1", "reason": "r"}], "FP": [], "FN": []}

    judge = FunctionJudge("j1", answer)
    sample = SAMPLE.model_copy(update={"id": "shared"})
    rows = await PanelEvaluator([judge], embedders=[_embedder(1.0)]).score_sample(
        sample, [Faithfulness(), AnswerCorrectness()]
    )
    assert [r.aggregate.value for r in rows] == [1.0, pytest.approx(1.0)]
    assert sorted(c.prompt for c in judge.calls) == ["correctness_classifier", "nli", "statements", "statements"]
    assert "statements:response" in AnswerCorrectness().shared_steps(sample)


async def test_each_judge_scores_and_the_panel_aggregates() -> None:
    j1, j2 = _judge(1, 1, 4, "j1"), _judge(2, 0, 0, "j2")
    row = await PanelEvaluator([j1, j2], embedders=[_embedder(0.9)]).score(SAMPLE, AnswerCorrectness())
    values = [o.score.value for o in row.judges if o.score]
    assert values == [pytest.approx(0.4392857142857143), pytest.approx(0.75 + 0.25 * 0.9)]
    assert row.aggregate.value == pytest.approx(sum(values) / 2)


def test_presets_are_spring_ai_ragas_configs() -> None:
    assert PRESETS == {
        "default": (0.75, 0.25),
        "equal_weights": (0.5, 0.5),
        "factual_focused": (0.9, 0.1),
        "semantic_focused": (0.1, 0.9),
    }
    assert AnswerCorrectness(preset="factual_focused").weights == (0.9, 0.1)


def test_keys_name_settings_off_ragas_defaults() -> None:
    assert AnswerCorrectness().key == "answer_correctness"
    assert AnswerCorrectness(preset="default").key == "answer_correctness"
    assert AnswerCorrectness(preset="equal_weights").key == "answer_correctness(preset=equal_weights)"
    assert AnswerCorrectness(weights=[1, 0], beta=2).key == "answer_correctness(weights=1/0, beta=2)"
    assert AnswerCorrectness(weights="0.9/0.1").weights == (0.9, 0.1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"weights": [1, 2, 3]}, "weights must be a list of two numbers"),
        ({"weights": "0.5/x"}, "weights must be non-negative numbers"),
        ({"weights": [0, 0]}, "at least one weight must be non-zero"),
        ({"weights": [-1, 2]}, "weights must be non-negative"),
        ({"preset": "balanced"}, "preset must be one of default, equal_weights"),
        ({"preset": "default", "weights": [1, 0]}, "either weights or preset"),
        ({"beta": -1}, "beta must be a positive number"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_metric("answer_correctness", options)


async def test_worked_example_of_the_docs() -> None:
    # docs/metrics/answer_correctness.md, "Worked example (the sun)": 0.4393, and 0.5929 with equal weights
    result = await AnswerCorrectness().score(SAMPLE, _judge(1, 1, 4), _ctx(_embedder(0.9)))
    assert round(result.details["factuality"], 4) == 0.2857 and round(result.value, 4) == 0.4393
    equal = await AnswerCorrectness(preset="equal_weights").score(SAMPLE, _judge(1, 1, 4), _ctx(_embedder(0.9)))
    assert round(equal.value, 4) == 0.5929
