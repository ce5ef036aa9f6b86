"""promptfoo's `factuality` and `similar` assertions run ragqa's response metrics with promptfoo's thresholds."""

from __future__ import annotations

from pathlib import Path

from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalEmbedder, LocalJudge
from ragqa.promptfoo import arun_suite, load_suite
from ragqa.promptfoo.mapping import ASSERTION_TYPES

SUITE = """
tests:
  - description: right
    vars: {query: "What is the capital of California?"}
    output: "Sacramento is the capital of California."
    assert:
      - {type: factuality, value: "Sacramento is the capital of California."}
      - {type: similar, value: "Sacramento is the capital of California."}
  - description: wrong
    vars: {query: "What is the capital of California?"}
    output: "Los Angeles is the capital of California."
    assert:
      - {type: factuality, value: "Sacramento is the capital of California."}
      - {type: similar, value: "Sacramento is the capital of California.", threshold: 0.99}
"""


def test_the_mapping_names_mode_threshold_and_the_reference() -> None:
    factuality, similar = ASSERTION_TYPES["factuality"], ASSERTION_TYPES["similar"]
    assert (factuality.metric, dict(factuality.options), factuality.default_threshold) == (
        "factual_correctness",
        {"mode": "precision"},
        0.5,
    )
    assert (similar.metric, dict(similar.options), similar.default_threshold) == ("semantic_similarity", {}, 0.75)
    assert factuality.value_is_reference and similar.value_is_reference


async def test_factuality_and_similar_run_and_decide(tmp_path: Path) -> None:
    path = tmp_path / "tests.yaml"
    path.write_text(SUITE, encoding="utf-8")
    suite = load_suite(path)
    evaluator = PanelEvaluator([LocalJudge("local")], [], embedders=[LocalEmbedder("hash", "hashing")])
    outcomes = await arun_suite(evaluator, suite)
    keys = [o.verdict.result.metric for o in outcomes]
    assert keys == ["factual_correctness(mode=precision)", "semantic_similarity"] * 2
    assert [o.verdict.threshold for o in outcomes] == [0.5, 0.75, 0.5, 0.99]
    assert [o.verdict.result.aggregate.value for o in outcomes][:2] == [1.0, 1.0]
    assert [o.verdict.passed for o in outcomes] == [True, True, False, False]
