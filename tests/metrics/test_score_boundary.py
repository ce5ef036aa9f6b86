"""Scores at the range boundary: float rounding past an end of the range is that end, not a failure.

sacreBLEU scores a perfect match 1.0000000000000004, and ``bleu_score(variant=ragas)`` turned
every perfect match into a ``ScoreOutOfRange`` failure. The one range check of every score
(:meth:`ragqa.metrics.base.Metric.check_score`, called by the evaluator) now clamps a value within
:data:`~ragqa.metrics.base.RANGE_TOLERANCE` of an end; anything further out still fails.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any, get_args

import pytest

import ragqa
from ragqa.errors import ScoreOutOfRange
from ragqa.metrics import METRICS, Faithfulness, build_metric
from ragqa.metrics.base import RANGE_TOLERANCE, Metric
from ragqa.metrics.text.bleu import BleuVariant, ragas_bleu
from ragqa.metrics.text.chrf import ChrfVariant
from ragqa.metrics.text.rouge import RougeMode, RougeType, RougeVariant
from ragqa.metrics.text.string_match import MatchMode
from ragqa.metrics.text.string_similarity import DistanceMeasure, StringVariant
from ragqa.schema import MetricScore

TEXT = "The office opens at 9.00 on Monday. Staff arrive at 8.30 and the doors close at 18.00"


def _text_metrics() -> list[Metric]:
    """Every judge-free text metric of the catalogue, in every variant and mode its options allow."""
    options: dict[str, list[dict[str, Any]]] = {
        "bleu_score": [{"variant": v} for v in get_args(BleuVariant)],
        "rouge_score": [
            {"rouge_type": t, "mode": m, "variant": v}
            for t, m, v in itertools.product(get_args(RougeType), get_args(RougeMode), get_args(RougeVariant))
        ],
        "chrf_score": [{"variant": v} for v in get_args(ChrfVariant)],
        "non_llm_string_similarity": [{"variant": v} for v in get_args(StringVariant)]
        + [{"variant": "ragas", "distance_measure": d} for d in get_args(DistanceMeasure)],
        "string_match": [{"mode": m} for m in get_args(MatchMode)],
        "string_present": [{"case_sensitive": True}, {"case_sensitive": False}],
    }
    out: list[Metric] = []
    for name, cls in METRICS.items():
        if cls.needs_judge or cls.required_fields != ("response", "reference") or cls.needs_embeddings:
            continue
        for opts in options.get(name, [{}]):
            out.append(build_metric(name, opts))
    return out


def test_sacrebleu_really_rounds_past_one() -> None:
    # the cause, pinned: if sacreBLEU stops rounding past 1, the clamp is still harmless
    assert ragas_bleu(TEXT, TEXT) >= 1.0


def test_every_text_metric_on_identical_strings_scores_its_best_value(tmp_path: Path) -> None:
    metrics = _text_metrics()
    assert {m.name for m in metrics} >= {"bleu_score", "rouge_score", "chrf_score", "levenshtein_distance"}
    config = tmp_path / "application.yaml"
    config.write_text("spring: {ai: {chat-models: {list: []}}}\n", encoding="utf-8")
    rows = [{"id": "same", "user_input": "When does the office open?", "response": TEXT, "reference": TEXT}]
    report = ragqa.evaluate(rows, metrics, config=config)
    assert len(report.results) == len(metrics)
    for metric, result in zip(metrics, report.results, strict=True):
        low, high = metric.value_range
        best = high if metric.direction == "higher" else low
        [outcome] = result.judges
        assert outcome.failure is None, (metric.key, outcome.failure)
        assert outcome.score is not None and outcome.score.value == best, (metric.key, outcome.score)
        assert result.aggregate.value == best, metric.key


def test_bleu_ragas_variant_of_a_response_equal_to_its_reference_is_one(tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text("spring: {ai: {chat-models: {list: []}}}\n", encoding="utf-8")
    rows = [{"id": "a", "response": TEXT, "reference": TEXT}, {"id": "b", "response": "Closed.", "reference": TEXT}]
    report = ragqa.evaluate(rows, ["bleu_score(variant=ragas)"], config=config)
    assert report.results[0].aggregate.value == 1.0
    assert 0.0 <= report.results[1].aggregate.value < 1.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0000000000000004, 1.0),
        (1.0 + RANGE_TOLERANCE / 2, 1.0),
        (-1e-12, 0.0),
        (0.5, 0.5),
        (1.0, 1.0),
    ],
)
def test_values_within_rounding_of_an_end_are_clamped_to_it(value: float, expected: float) -> None:
    score = MetricScore(value=value, reason="r", details={"k": 1})
    checked = Faithfulness().check_score(score, judge_id="j")
    assert checked.value == expected
    assert (checked.reason, checked.details) == ("r", {"k": 1})


@pytest.mark.parametrize("value", [1.0 + 1e-6, 1.01, -0.001, 2.468, math.inf, -math.inf])
def test_values_clearly_outside_the_range_still_fail(value: float) -> None:
    with pytest.raises(ScoreOutOfRange):
        Faithfulness().check_score(MetricScore(value=value), judge_id="j")


def test_an_open_ended_range_clamps_only_at_its_finite_end() -> None:
    levenshtein = build_metric("levenshtein_distance")
    assert levenshtein.check_score(MetricScore(value=-1e-12), judge_id="j").value == 0.0
    assert levenshtein.check_score(MetricScore(value=1e300), judge_id="j").value == 1e300
    assert math.isnan(levenshtein.check_score(MetricScore(value=math.nan), judge_id="j").value)
