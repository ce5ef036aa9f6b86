"""The local judge's word lists come from the language packs: its answers are the ones it gave
when the lists were written in its modules.

Every score, with its details (statements, verdicts, reasons), of the offline local judges on the
shipped English and Russian datasets is pinned to a digest taken before the lists moved (English
in :mod:`ragqa.judges.local.lexicon`, Russian in ``ragqa/languages/ru.json``), with the default
``language`` and with ``ru``. A change that moves one is a change of the local judge's answers.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from factories import local_profile_hashing

import ragqa
from ragqa.judges.local import minilm_available
from ragqa.report import Report

ROOT = Path(__file__).resolve().parents[3]
DATASETS = ROOT / "examples" / "datasets"

LLM_METRICS = [
    "answer_accuracy",
    "answer_correctness",
    "aspect_critic",
    "context_entity_recall",
    "context_precision",
    "context_recall",
    "context_relevance",
    "factual_correctness",
    "faithfulness",
    "hallucination",
    "noise_sensitivity",
    "response_groundedness",
    "response_relevancy",
    "response_relevancy_llm",
    "rubrics_score",
    "semantic_similarity",
    "simple_criteria_score",
]
AGENT_METRICS = ["agent_goal_accuracy", "topic_adherence"]

DIGESTS = {
    ("ru_support.jsonl", "en"): "49655e429d65ddbbce7642fd48ced5a90e7cdfdb7156bd2292d484ed545d70ab",
    ("ru_support.jsonl", "ru"): "15b6abb9049f7a65d909bfe249f33f3e633422e78aff36a1d3f7bff30b3ece52",
    ("it_helpdesk.jsonl", "en"): "017e5afef6d7325e6a5754004dc11d322b31e22cdd60cb4e580caf2aa1a7c7c4",
    ("agent_conversations.jsonl", "en"): "091d60ac2f37531e739c1d4c653c6d5576b035a5412b99045e70d47407711eb8",
}
"""With the embeddings extra: the local profile embeds with MiniLM."""

HASHING_DIGESTS = {
    **DIGESTS,
    ("ru_support.jsonl", "en"): "3766827dfd7a2e548a2afd6bc219c620042bc910b030f9887f0871770caa743a",
    ("ru_support.jsonl", "ru"): "4f5cb91be22574c430ca9af52a4641e8d2ed71de6777e5bb61dd6e43ab64eeac",
    ("it_helpdesk.jsonl", "en"): "e4cd462ea7d11e7c2740b45d237a8a947a751a4a0823e0691c8c6839a4c6f3bf",
}
"""Without it: the embedding metrics (answer correctness, response relevancy, semantic similarity)
embed with the hashing fallback, so their scores differ; also taken before the lists moved."""

COUNTS = {"ru_support.jsonl": 136, "it_helpdesk.jsonl": 2040, "agent_conversations.jsonl": 56}
"""Scores per run (samples x metrics x the two local judges, less the metrics a sample cannot have)."""


def _digest(report: Report) -> tuple[int, str]:
    lines = sorted(
        f"{r.sample_id}|{r.metric}|{o.judge_id}|{o.score.value!r}|{json.dumps(o.score.details, sort_keys=True)}"
        for r in report.results
        for o in r.judges
        if o.score is not None
    )
    return len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _run(dataset: str, language: str, config: Path) -> Report:
    metrics = AGENT_METRICS if dataset.startswith("agent") else LLM_METRICS
    return ragqa.evaluate(
        DATASETS / dataset, metrics=metrics, config=config, profile="local", language=language, progress=False
    )


@pytest.fixture(scope="module")
def hashing_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped settings with the built-in local profile embedding by hashing (no MiniLM)."""
    return local_profile_hashing(tmp_path_factory.mktemp("settings"), ROOT / "application.yaml")


@pytest.mark.parametrize(("dataset", "language"), sorted(HASHING_DIGESTS))
def test_the_local_judge_answers_as_before_the_lists_moved(dataset: str, language: str, hashing_config: Path) -> None:
    """Every dataset and language, embedding by hashing: the path of a machine without the embeddings extra.

    The local judges do not embed (``use-embeddings`` is off in the local profile), so their answers,
    where the word lists act, are the same as with MiniLM; the hashing embedder itself reads the stop
    words and stemmers of the lists too.
    """
    count, digest = _digest(_run(dataset, language, hashing_config))
    assert count == COUNTS[dataset]
    assert digest == HASHING_DIGESTS[(dataset, language)], f"{dataset} {language}: {digest}"


@pytest.mark.skipif(not minilm_available(), reason="the embeddings extra (MiniLM) is not installed")
@pytest.mark.parametrize(("dataset", "language"), [("ru_support.jsonl", "en"), ("ru_support.jsonl", "ru")])
def test_with_minilm_the_answers_are_as_before_the_lists_moved(dataset: str, language: str) -> None:
    """The shipped settings as they are, MiniLM embedding: the Russian dataset, whose lists moved to ``ru.json``.

    The English dataset's MiniLM run (2040 scores) is left to the hashing test above: its local-judge
    answers are the same there, and MiniLM over its 120 samples cost 24 of this module's 41 CPU seconds.
    """
    count, digest = _digest(_run(dataset, language, ROOT / "application.yaml"))
    assert count == COUNTS[dataset]
    assert digest == DIGESTS[(dataset, language)], f"{dataset} {language}: {digest}"
