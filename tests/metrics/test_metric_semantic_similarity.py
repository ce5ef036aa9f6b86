"""Semantic similarity: cosine per embedding model, their mean, the binary threshold; no judge is asked."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from ragqa._math import cosine
from ragqa.errors import ConfigError, JudgeUnsupported
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import SemanticSimilarity, build_metric
from ragqa.metrics.base import MetricContext
from ragqa.metrics.semantic_similarity import semantic_similarity_score
from ragqa.testing import ScriptedJudge, StaticEmbedder, make_sample

RESPONSE = "The first Super Bowl was played in 1967."
REFERENCE = "Super Bowl I took place on January 15, 1967."
SAMPLE = make_sample(response=RESPONSE, reference=REFERENCE)


def _embedder(embedder_id: str, response: list[float], reference: list[float]) -> StaticEmbedder:
    return StaticEmbedder(embedder_id, {RESPONSE: response, REFERENCE: reference})


def _ragas(a: list[float], b: list[float], threshold: float | None = None) -> float:
    """RAGAS ``_answer_similarity.py``: L2-normalise, dot product, ``>= threshold`` when a threshold is set."""
    e1, e2 = np.array(b), np.array(a)
    score = (e1 / np.linalg.norm(e1, keepdims=True)) @ (e2 / np.linalg.norm(e2, keepdims=True)).T
    return float(score >= threshold) if threshold else float(score)


VECTORS = [([1.0, 2.0, 3.0], [2.0, 1.0, 3.5]), ([0.3, -0.2, 0.9], [0.1, 0.4, 0.2]), ([1.0, 0.0], [-1.0, 0.1])]


@pytest.mark.parametrize(("response", "reference"), VECTORS)
async def test_one_model_gives_ragas_cosine(response: list[float], reference: list[float]) -> None:
    judge = ScriptedJudge("j1", {})
    result = await SemanticSimilarity().score(
        SAMPLE, judge, MetricContext(embedders=[_embedder("e", response, reference)])
    )
    assert result.value == pytest.approx(_ragas(response, reference), abs=1e-12)
    assert judge.calls == []  # no judge is asked


async def test_the_score_is_the_mean_over_embedding_models() -> None:
    models = [_embedder(f"e{i}", a, b) for i, (a, b) in enumerate(VECTORS)]
    result = await SemanticSimilarity().score(SAMPLE, ScriptedJudge("j1", {}), MetricContext(embedders=models))
    expected = [_ragas(a, b) for a, b in VECTORS]
    assert result.value == pytest.approx(sum(expected) / 3)
    assert [m["cosine"] for m in result.details["embedders"].values()] == pytest.approx(expected)
    assert all(m.calls == [[RESPONSE, REFERENCE]] for m in models)  # one batched request per model


async def test_a_threshold_makes_each_model_binary_before_the_mean() -> None:
    models = [_embedder(f"e{i}", a, b) for i, (a, b) in enumerate(VECTORS)]  # cosines ~0.95, ~0.29, ~-0.99
    metric = SemanticSimilarity(threshold=0.25)
    result = await metric.score(SAMPLE, ScriptedJudge("j1", {}), MetricContext(embedders=models))
    assert [_ragas(a, b, 0.25) for a, b in VECTORS] == [1.0, 1.0, 0.0]
    assert result.value == pytest.approx(2 / 3)
    assert result.reason.startswith("2 of 3 embedding model(s) give a cosine of at least 0.25")
    assert metric.key == "semantic_similarity(threshold=0.25)" and SemanticSimilarity().key == "semantic_similarity"


def test_formula_edges() -> None:
    assert semantic_similarity_score([0.75], 0.75) == 1.0  # >= as in RAGAS
    assert math.isnan(semantic_similarity_score([]))
    assert math.isnan(semantic_similarity_score([math.nan, 1.0], 0.5))


async def test_a_zero_vector_gives_nan() -> None:
    embedder = _embedder("e", [0.0, 0.0], [1.0, 0.0])
    result = await SemanticSimilarity().score(SAMPLE, ScriptedJudge("j1", {}), MetricContext(embedders=[embedder]))
    assert math.isnan(result.value)


async def test_a_zero_vector_gives_nan_with_a_threshold_too_where_ragas_gives_zero() -> None:
    # RAGAS: the normalised zero vector is NaN, and `nan >= threshold` is False, so it scores 0.0
    embedder = _embedder("e", [0.0, 0.0], [1.0, 0.0])
    metric = SemanticSimilarity(threshold=0.5)
    result = await metric.score(SAMPLE, ScriptedJudge("j1", {}), MetricContext(embedders=[embedder]))
    assert math.isnan(result.value)


async def test_no_embedder_is_unsupported_and_rejected_by_the_panel_before_scoring() -> None:
    with pytest.raises(JudgeUnsupported, match="needs an embedding model"):
        await SemanticSimilarity().score(SAMPLE, ScriptedJudge("j1", {}), MetricContext())
    problems = PanelEvaluator([ScriptedJudge("j1", {})]).validate([SAMPLE], [SemanticSimilarity()])
    assert [p.metric for p in problems] == ["semantic_similarity"]


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("semantic_similarity", "semantic_similarity needs an embedding model; configure spring.ai.embedding-models"),
        ("response_relevancy", "response_relevancy needs an embedding model; configure spring.ai.embedding-models"),
        (
            "answer_correctness",
            "answer_correctness needs an embedding model for its similarity part; configure "
            "spring.ai.embedding-models or set weights: [1, 0]",
        ),
    ],
)
async def test_each_embedding_metric_names_itself_and_the_fix_without_an_embedder(metric: str, message: str) -> None:
    sample = make_sample(user_input="When?", response=RESPONSE, reference=REFERENCE)
    with pytest.raises(JudgeUnsupported) as caught:
        await build_metric(metric).score(sample, ScriptedJudge("j1", {}), MetricContext())
    assert str(caught.value).startswith(message) and caught.value.step == "embed" and caught.value.judge_id == "j1"


async def test_every_judge_row_of_the_panel_holds_the_same_value() -> None:
    embedder = _embedder("e", *VECTORS[0])
    judges = [ScriptedJudge("j1", {}), ScriptedJudge("j2", {})]
    metric = SemanticSimilarity()
    row = await PanelEvaluator(judges, embedders=[embedder]).score(SAMPLE, metric)
    values = [o.score.value for o in row.judges if o.score]
    assert values == [pytest.approx(_ragas(*VECTORS[0]))] * 2 and row.aggregate.value == values[0]
    assert metric.estimate_calls(SAMPLE) == 0 and all(j.calls == [] for j in judges)


@pytest.mark.parametrize("threshold", [0, -0.5, 1.5, "high", True])
def test_bad_thresholds_are_config_errors(threshold: Any) -> None:
    with pytest.raises(ConfigError, match=r"threshold must be a number in \(0, 1\]"):
        build_metric("semantic_similarity", {"threshold": threshold})


async def test_identical_texts_score_exactly_one_not_a_rounding_error_above() -> None:
    vector = [0.13, 0.85, 0.76, 0.26]
    embedder = StaticEmbedder("e", {RESPONSE: vector, REFERENCE: vector})
    assert cosine(vector, vector) > 1.0  # 1.0000000000000002: outside the cosine's range
    metric = SemanticSimilarity()
    result = await metric.score(SAMPLE, ScriptedJudge("j1", {}), MetricContext(embedders=[embedder]))
    assert result.value == 1.0
    metric.check_score(result, judge_id="j1")


async def test_worked_example_of_the_docs() -> None:
    # docs/metrics/semantic_similarity.md, "Worked example": 0.933 and 0.293, mean 0.613; 1.0 at threshold 0.25
    models = [_embedder("e1", *VECTORS[0]), _embedder("e2", *VECTORS[1])]
    context = MetricContext(embedders=models)
    cosines = [
        m["cosine"]
        for m in (await SemanticSimilarity().score(SAMPLE, ScriptedJudge("j", {}), context))
        .details["embedders"]
        .values()
    ]
    assert [round(c, 3) for c in cosines] == [0.933, 0.293]
    assert round((await SemanticSimilarity().score(SAMPLE, ScriptedJudge("j", {}), context)).value, 3) == 0.613
    assert (await SemanticSimilarity(threshold=0.25).score(SAMPLE, ScriptedJudge("j", {}), context)).value == 1.0
