"""A warm cache changes no score: every judge kind, every metric, values, reasons and details identical.

Three kinds of judge score a few samples of the shipped dataset with every metric, once through
an empty cache (cold) and once, with fresh judges and a fresh cache object on the same directory,
from the cache (warm). The local judge answers with graded verdicts, which the cache once dropped
(0.791 became 1.0); the HTTP judge goes over the fake OpenAI-compatible server.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from factories import http_judge

from ragqa.cache import CachingJudge, JudgeCache
from ragqa.datasets import load_dataset
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalEmbedder, LocalJudge
from ragqa.judges.openai import OpenAIJudge
from ragqa.metrics import METRICS, build_metric
from ragqa.metrics.base import Metric
from ragqa.prompts.base import Prompt
from ragqa.report import Report
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import CountingJudge, FakeOpenAIServer, FunctionJudge, local_judge_responder

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = load_dataset(ROOT / "examples/datasets/it_helpdesk.jsonl")[:4]
CHAT = "/v1/chat/completions"

pytestmark = pytest.mark.usefixtures("reset_srv")


def _metrics() -> list[Metric]:
    single_turn = (name for name, cls in METRICS.items() if "messages" not in cls.required_fields)  # agent: own test
    return [*(build_metric(name) for name in single_turn), build_metric("noise_sensitivity", {"mode": "irrelevant"})]


def _scripted() -> FunctionJudge:
    """A test double answering every prompt with binary, LLM-shaped outputs (the local judge's, validated)."""
    local = LocalJudge("scripted-source", LocalJudgeSettings(support_threshold=0.6))

    async def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        out = await local.ask(prompt, data)
        return out.model_dump(mode="json")  # validated against the prompt's model: graded support ignored

    return FunctionJudge("scripted", answer)


def _http(srv: FakeOpenAIServer) -> OpenAIJudge:
    return http_judge(srv.base_url, "http-judge", id="http", api_key="sk-test-not-secret", temperature=0.0)


async def _run(srv: FakeOpenAIServer, directory: Path) -> tuple[Report, list[CountingJudge], JudgeCache]:
    """One run of the whole panel through a cache on ``directory``, with new judges."""
    http = _http(srv)
    counted = [CountingJudge(_scripted()), CountingJudge(LocalJudge("local")), CountingJudge(http)]
    cache = JudgeCache(directory)
    try:
        evaluator = PanelEvaluator(
            [CachingJudge(j, cache) for j in counted], _metrics(), embedders=[LocalEmbedder("hash", "hashing")]
        )
        report = await evaluator.evaluate(SAMPLES)
    finally:
        await http.aclose()
        cache.close()
    return report, counted, cache


def _exact(report: Report) -> dict[tuple[str, str, str], str]:
    """Every judge's outcome as JSON text (NaN written as NaN, floats in full), by (sample, metric, judge)."""
    out = {}
    for row in report.results:
        for outcome in row.judges:
            assert outcome.failure is None, outcome.failure
            assert outcome.score is not None
            out[(row.sample_id, row.metric, outcome.judge_id)] = json.dumps(
                outcome.score.model_dump(), sort_keys=True, allow_nan=True
            )
        out[(row.sample_id, row.metric, "aggregate")] = json.dumps(row.aggregate.model_dump(), allow_nan=True)
    return out


@pytest.mark.slow
async def test_cold_and_warm_runs_score_identically_for_every_judge_kind(srv: FakeOpenAIServer, tmp_path: Path) -> None:
    srv.script("http-judge", local_judge_responder())
    cold, cold_judges, cold_cache = await _run(srv, tmp_path)
    http_requests = len(srv.requests_for("http-judge", CHAT))
    assert all(j.calls > 0 for j in cold_judges) and http_requests > 0
    assert cold_cache.hits == 0

    warm, warm_judges, warm_cache = await _run(srv, tmp_path)
    assert [j.calls for j in warm_judges] == [0, 0, 0]  # no judge was asked anything
    assert len(srv.requests_for("http-judge", CHAT)) == http_requests  # not one more HTTP request
    assert warm_cache.misses == 0 and warm_cache.hits == cold_cache.misses

    cold_scores, warm_scores = _exact(cold), _exact(warm)
    assert len(cold_scores) == len(SAMPLES) * len(_metrics()) * 4  # three judges and the aggregate
    assert warm_scores == cold_scores

    # the local judge's verdicts were graded (a binary cache entry would have changed them)
    local_verdicts = [
        v
        for row in cold.results
        if row.metric == "faithfulness"
        for o in row.judges
        if o.judge_id == "local" and o.score is not None
        for v in o.score.details.get("verdicts", [])
    ]
    assert any(0.0 < v < 1.0 for v in local_verdicts)
    # and the scripted and HTTP judges' were binary, as an LLM's are
    for row in cold.results:
        if row.metric == "faithfulness":
            for o in row.judges:
                if o.judge_id != "local" and o.score is not None:
                    assert all(v in (0.0, 1.0) for v in o.score.details.get("verdicts", []))
    assert not any(math.isinf(o.score.value) for row in warm.results for o in row.judges if o.score is not None)
