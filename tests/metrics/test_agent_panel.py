"""The agent metrics across a panel: per-judge scores and the aggregate, offline, over HTTP and from a cache.

The shipped ``examples/datasets/agent_conversations.jsonl`` is scored by the local judge, by an
HTTP judge on the fake OpenAI-compatible server answering through the local judge
(``local_judge_responder``), and through a disk cache; every path gives exactly the plain local
judge's scores, reasons and details.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _cli import run_cli
from factories import http_judge

from ragqa.cache import CachingJudge, JudgeCache
from ragqa.datasets import load_dataset
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.base import Judge
from ragqa.judges.local import LocalJudge
from ragqa.judges.openai import OpenAIJudge
from ragqa.metrics import AgentGoalAccuracy, ToolCallAccuracy, TopicAdherence
from ragqa.metrics.base import Metric
from ragqa.report import Report
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import CountingJudge, FakeOpenAIServer, ScriptedJudge, local_judge_responder

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "examples/datasets/agent_conversations.jsonl"
SAMPLES = load_dataset(DATASET)
CHAT = "/v1/chat/completions"

pytestmark = pytest.mark.usefixtures("reset_srv")


def _metrics() -> list[Metric]:
    return [
        ToolCallAccuracy(),
        ToolCallAccuracy(strict_order=False),
        AgentGoalAccuracy(),
        AgentGoalAccuracy(mode="without_reference"),
        TopicAdherence(),
        TopicAdherence(mode="precision"),
    ]


def _http(srv: FakeOpenAIServer, judge_id: str) -> OpenAIJudge:
    return http_judge(srv.base_url, judge_id, api_key="sk-test-not-secret", timeout_s=10, temperature=0.0)


def _scores(report: Report, judge_id: str) -> dict[tuple[str, str], str]:
    """One judge's score, reason and details as JSON text, by (sample, metric)."""
    out = {}
    for row in report.results:
        (outcome,) = [o for o in row.judges if o.judge_id == judge_id]
        assert outcome.failure is None, outcome.failure
        assert outcome.score is not None
        out[(row.sample_id, row.metric)] = json.dumps(outcome.score.model_dump(), sort_keys=True, allow_nan=True)
    return out


async def test_local_panel_per_judge_and_aggregate() -> None:
    strict = LocalJudge("strict", LocalJudgeSettings(support_threshold=0.6))
    lenient = LocalJudge("lenient", LocalJudgeSettings(support_threshold=0.4))
    report = await PanelEvaluator([strict, lenient], _metrics()).evaluate(SAMPLES)
    assert len(report.results) == len(SAMPLES) * len(_metrics())
    rows = {(r.sample_id, r.metric): r for r in report.results}
    for row in report.results:
        assert not row.failures, row.failures
        values = [v for v in row.by_judge().values() if not math.isnan(v)]
        if values:
            assert row.aggregate.value == pytest.approx(sum(values) / len(values))
            assert row.aggregate.spread == pytest.approx(max(values) - min(values))
    # no judge: every judge gets RAGAS's exact value
    assert rows[("agent-04", "tool_call_accuracy")].by_judge() == {
        "strict": (1 + 2 / 3) / 2,
        "lenient": (1 + 2 / 3) / 2,
    }
    assert rows[("agent-03", "tool_call_accuracy")].aggregate.value == 0.0
    assert rows[("agent-03", "tool_call_accuracy(strict_order=false)")].aggregate.value == 1.0
    assert rows[("agent-10", "tool_call_accuracy")].aggregate.value == 0.5
    assert rows[("agent-14", "tool_call_accuracy")].aggregate.value == 1.0
    # the refused on-topic request and the conversation without a topic
    assert rows[("agent-08", "agent_goal_accuracy")].aggregate.value == 0.0
    assert rows[("agent-08", "topic_adherence(mode=f1)")].aggregate.value == 0.0
    assert rows[("agent-14", "topic_adherence(mode=f1)")].aggregate.n_nan == 2
    # the declined off-topic question keeps topic adherence high; the answered one lowers precision
    assert rows[("agent-06", "topic_adherence(mode=precision)")].aggregate.value == pytest.approx(1.0, abs=1e-9)
    assert rows[("agent-07", "topic_adherence(mode=precision)")].aggregate.value == pytest.approx(0.5, abs=1e-9)
    summary = {s.metric: s for s in report.summaries}
    assert summary["topic_adherence(mode=f1)"].n_samples == len(SAMPLES)


async def test_scripted_judges_that_disagree_are_averaged() -> None:
    inferred = {"user_goal": "book", "end_state": "booked"}
    yes = ScriptedJudge("yes", {"goal_outcome": [inferred], "outcome_comparison": [{"reason": "ok", "verdict": 1}]})
    no = ScriptedJudge("no", {"goal_outcome": [inferred], "outcome_comparison": [{"reason": "no", "verdict": 0}]})
    report = await PanelEvaluator([yes, no], [AgentGoalAccuracy()]).evaluate(SAMPLES[:1])
    (row,) = report.results
    assert row.by_judge() == {"yes": 1.0, "no": 0.0}
    assert (row.aggregate.value, row.aggregate.spread, row.aggregate.n_ok) == (0.5, 1.0, 2)


@pytest.mark.slow
async def test_http_judge_on_the_fake_server_scores_exactly_like_the_local_judge(srv: FakeOpenAIServer) -> None:
    srv.script("http-local", local_judge_responder())
    http = _http(srv, "http-local")
    try:
        report = await PanelEvaluator([LocalJudge("local"), http], _metrics()).evaluate(SAMPLES)
    finally:
        await http.aclose()
    assert srv.failures == []
    prompts = {r.body["response_format"]["json_schema"]["name"] for r in srv.requests_for("http-local", CHAT)}
    assert len(prompts) == 5  # every agent prompt went over HTTP
    local, remote = _scores(report, "local"), _scores(report, "http-local")
    assert remote == local


@pytest.mark.slow
async def test_a_warm_cache_changes_no_agent_score(srv: FakeOpenAIServer, tmp_path: Path) -> None:
    srv.script("http-cached", local_judge_responder())

    async def run() -> tuple[Report, list[CountingJudge]]:
        http = _http(srv, "http-cached")
        counted = [CountingJudge(LocalJudge("local")), CountingJudge(http)]
        cache = JudgeCache(tmp_path)
        judges: list[Judge] = [CachingJudge(j, cache) for j in counted]
        try:
            return await PanelEvaluator(judges, _metrics()).evaluate(SAMPLES), counted
        finally:
            await http.aclose()
            cache.close()

    cold, cold_judges = await run()
    warm, warm_judges = await run()
    assert all(j.calls > 0 for j in cold_judges)
    assert [j.calls for j in warm_judges] == [0, 0]
    for judge_id in ("local", "http-cached"):
        assert _scores(warm, judge_id) == _scores(cold, judge_id)


def test_cli_scores_the_shipped_dataset_offline(tmp_path: Path) -> None:
    out = tmp_path / "agent.jsonl"
    proc = run_cli(
        "evaluate", DATASET, "--profile", "local",
        "--metrics", "tool_call_accuracy,agent_goal_accuracy,topic_adherence", "-o", out, "--no-progress", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header, *rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert header["metrics"] == ["tool_call_accuracy", "agent_goal_accuracy", "topic_adherence(mode=f1)"]
    assert len(rows) == 3 * len(SAMPLES)
    assert all(j["failure"] is None for row in rows for j in row["judges"])
    for key in ("tool_call_accuracy", "agent_goal_accuracy", "topic_adherence(mode=f1)"):
        assert key in proc.stdout


async def test_html_report_shows_the_last_human_message_and_the_conversation() -> None:
    from ragqa.render.html import report_to_html
    from ragqa.render.records import report_to_json

    report = await PanelEvaluator([LocalJudge("local")], [ToolCallAccuracy()]).evaluate(SAMPLES[:1])
    report = report.model_copy(update={"samples": SAMPLES[:1]})
    page = report_to_html(report)
    assert '<dd class="question">thanks</dd>' in page  # agent-01's last human message
    assert "conversation (9)" in page
    assert (
        "<code>restaurant_book: {&#39;name&#39;: &#39;Golden Dragon&#39;, &#39;time&#39;: &#39;8:00pm&#39;}</code>"
        in page
    )
    document = json.loads(report_to_json(report))
    assert document["samples"][0]["messages"][1]["tool_calls"][0] == {
        "name": "restaurant_search",
        "args": {"cuisine": "Chinese", "time": "8:00pm"},
    }
