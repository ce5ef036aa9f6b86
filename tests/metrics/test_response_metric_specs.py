"""Every response metric's result key is a spec that builds the same metric (thresholds and resume rely on it)."""

from __future__ import annotations

import pytest

from ragqa.metrics import AnswerCorrectness, FactualCorrectness, SemanticSimilarity
from ragqa.metrics.base import Metric
from ragqa.run import parse_metric_specs, resolve_thresholds, spec_of

METRICS: list[Metric] = [
    FactualCorrectness(),
    FactualCorrectness(mode="recall", beta=0.5, atomicity="high", coverage="high"),
    AnswerCorrectness(),
    AnswerCorrectness(preset="semantic_focused", beta=2.0),
    AnswerCorrectness(weights=[0.9, 0.1]),
    AnswerCorrectness(weights=[1, 0]),
    SemanticSimilarity(),
    SemanticSimilarity(threshold=0.8),
]


@pytest.mark.parametrize("metric", METRICS, ids=lambda m: m.key)
def test_the_key_round_trips_through_a_spec(metric: Metric) -> None:
    rebuilt = spec_of(metric).build()
    assert type(rebuilt) is type(metric) and rebuilt.key == metric.key
    assert vars(rebuilt) == vars(metric)


def test_the_command_line_form_builds_the_metrics() -> None:
    specs = parse_metric_specs(
        "factual_correctness(mode=precision,atomicity=high),answer_correctness(weights=1/0),"
        "semantic_similarity(threshold=0.75)"
    )
    keys = [s.build().key for s in specs]
    assert keys == [
        "factual_correctness(mode=precision, atomicity=high)",
        "answer_correctness(weights=1/0)",
        "semantic_similarity(threshold=0.75)",
    ]
    assert specs[1].build().needs_embeddings is False


def test_thresholds_resolve_for_every_key() -> None:
    found = resolve_thresholds({"factual_correctness": 0.6, "answer_correctness": 0.7}, METRICS, require_in_run=False)
    assert found["factual_correctness(mode=f1)"] == 0.6 and found["answer_correctness(weights=0.9/0.1)"] == 0.7
