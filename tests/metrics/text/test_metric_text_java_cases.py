"""spring-ai-ragas's 83 text-metric unit-test cases, reproduced by ragqa's default (java) variants.

Every ``java_value`` of ``tests/data/spring-ai-ragas-nlp-cases.yaml`` is reproduced to 1e-6 through
the registered metric (built by name with the Java config mapped to ragqa's options), except the
two chrF beta cases: their recorded 1.0 is not what the Java source computes for those inputs,
and docs/metrics/chrf_score.md lists them with the value ragqa (and the Java code) gives. Java's
``null`` (missing or empty response or reference) is ragqa's SampleError before scoring.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragqa import build_metric
from ragqa.errors import SampleError
from ragqa.metrics.base import MetricContext
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge

ROOT = Path(__file__).resolve().parents[3]
CASES: list[dict[str, Any]] = yaml.safe_load((ROOT / "tests/data/spring-ai-ragas-nlp-cases.yaml").read_text("utf-8"))[
    "cases"
]

METRIC_NAMES = {
    "BleuScore": "bleu_score",
    "RougeScore": "rouge_score",
    "ChrfScore": "chrf_score",
    "StringSimilarity": "non_llm_string_similarity",
}
OPTION_NAMES = {
    "maxNgram": "max_ngram",
    "smoothing": "smoothing",
    "rougeType": "rouge_type",
    "mode": "mode",
    "charNgramOrder": "char_order",
    "wordNgramOrder": "word_order",
    "beta": "beta",
    "distanceMeasure": "distance_measure",
    "caseSensitive": "case_sensitive",
}
ROUGE_TYPES = {"ROUGE_1": "rouge1", "ROUGE_2": "rouge2", "ROUGE_L": "rougeL"}

# The recorded java_value is not what spring-ai-ragas's ChrfScoreMetric computes for these inputs
# (the Java test asserts only "not null"); ragqa gives the Java code's value. Listed on the page.
DOCUMENTED = {
    "ChrfScoreMetricTest.shouldUseConfigurableBeta[lowBetaScore]": 0.44043309631544925,
    "ChrfScoreMetricTest.shouldUseConfigurableBeta[highBetaScore]": 0.30635032594434924,
}


def _options(case: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, value in (case.get("config") or {}).items():
        if key == "rougeType":
            value = ROUGE_TYPES[value]
        elif key in ("mode", "distanceMeasure"):
            value = value.lower()
        options[OPTION_NAMES[key]] = value
    return options


def test_the_file_holds_the_83_cases() -> None:
    assert len(CASES) == 83
    assert len({c["id"] for c in CASES}) == 83


@pytest.mark.parametrize("case", [c for c in CASES if c["java_value"] is not None], ids=lambda c: c["id"])
async def test_java_value_is_reproduced(case: dict[str, Any]) -> None:
    metric = build_metric(METRIC_NAMES[case["metric"]], _options(case))
    sample = Sample(id=case["id"], response=case["response"], reference=case["reference"])
    metric.validate(sample)
    judge = ScriptedJudge("j1", {})
    score = await metric.score(sample, judge, MetricContext())
    assert judge.calls == []  # no judge is asked
    expected = DOCUMENTED.get(case["id"], case["java_value"])
    assert score.value == pytest.approx(expected, abs=1e-6)
    bounds = case.get("expected") or {}
    if case["id"] not in DOCUMENTED:  # the Java test's own assertion holds too
        assert bounds.get("min", -math.inf) - 1e-9 <= score.value <= bounds.get("max", math.inf) + 1e-9


@pytest.mark.parametrize("case_id", sorted(DOCUMENTED))
def test_each_difference_is_listed_on_the_metric_page(case_id: str) -> None:
    page = (ROOT / "docs/metrics/chrf_score.md").read_text("utf-8")
    [case] = [c for c in CASES if c["id"] == case_id]
    assert case_id.split("[")[0] in page
    assert f"{DOCUMENTED[case_id]:.4f}" in page
    assert case["java_value"] != pytest.approx(DOCUMENTED[case_id], abs=1e-6)


@pytest.mark.parametrize("case", [c for c in CASES if c["java_value"] is None], ids=lambda c: c["id"])
def test_java_null_is_a_sample_error_before_scoring(case: dict[str, Any]) -> None:
    metric = build_metric(METRIC_NAMES[case["metric"]], _options(case))
    sample = Sample(id=case["id"], response=case["response"], reference=case["reference"])
    missing = "response" if not case["response"] else "reference"
    with pytest.raises(SampleError) as caught:
        metric.validate(sample)
    assert caught.value.field == missing
