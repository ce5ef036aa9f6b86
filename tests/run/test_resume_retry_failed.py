"""``--resume --retry-failed``: a kept results file is repaired by asking only the judges that failed.

The judges are the fake OpenAI server; requests are counted there, so "the judge that scored was
not asked again" is a fact. Scores that were fine are compared byte for byte with the first run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import CliResult, run_cli

import ragqa as ragqa_pkg
from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.local import LocalJudge
from ragqa.metrics.faithfulness import Faithfulness
from ragqa.schema import PanelResult
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import ChatRequest, CountingJudge, FakeOpenAIServer, Fault, make_sample, ragqa_responder

ROOT = Path(__file__).resolve().parents[2]
JUDGES = ("judge-a", "judge-b")
N_SAMPLES = 6
METRICS = ["faithfulness", "hallucination"]

YAML = """
spring:
  ai:
    retry:
      max-attempts: 1
    openai:
      base-url: {url}
      api-key: sk-test-SECRET
    chat-models:
      default-options: {{temperature: 0.0, timeout: 10m}}
      list:
        - {{id: judge-a}}
        - {{id: judge-b}}
    embedding-models:
      list: []
ragqa:
  concurrency: {{max-concurrent-samples: 2}}
"""


@pytest.fixture
def work(srv: FakeOpenAIServer, tmp_path: Path) -> Path:
    srv.reset()
    (tmp_path / "application.yaml").write_text(YAML.format(url=srv.base_url), encoding="utf-8")
    rows = [
        {
            "id": f"s{i}",
            "user_input": f"When does office {i} open?",
            "response": f"The office opens at nine. Office {i} has a kitchen.",
            "retrieved_contexts": [f"The office opens at nine. Office {i} has a kitchen."],
        }
        for i in range(1, N_SAMPLES + 1)
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return tmp_path


def down_on_odd_samples(request: ChatRequest) -> Any:
    """judge-b is down (HTTP 503) for the odd samples' calls: some pairs hold one failed judge."""
    prompt = json.dumps(request.body.get("messages", []))
    if any(f"office {i} " in prompt.lower() for i in range(1, N_SAMPLES + 1, 2)):
        return Fault(status=503)
    return ragqa_responder()(request)


def judge_entries(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {(r["sample_id"], r["metric"], j["judge_id"]): j for r in lines[1:] for j in r["judges"]}


def test_retry_failed_asks_only_the_failed_judges_and_keeps_the_other_scores_exactly(
    srv: FakeOpenAIServer, work: Path
) -> None:
    out = work / "results.jsonl"
    srv.script("judge-a", ragqa_responder())
    srv.script("judge-b", down_on_odd_samples)
    ragqa_pkg.evaluate(work / "data.jsonl", METRICS, config=work / "application.yaml", out=out)
    first = judge_entries(out)
    failed = {key for key, entry in first.items() if entry["failure"] is not None}
    assert failed and {judge for _, _, judge in failed} == {"judge-b"}
    assert len(failed) == len(METRICS) * len(range(1, N_SAMPLES + 1, 2))

    srv.clear_requests()
    srv.script("judge-b", ragqa_responder())  # judge-b is back
    report = ragqa_pkg.evaluate(
        work / "data.jsonl", METRICS, config=work / "application.yaml", out=out, resume=True, retry_failed=True
    )
    second = judge_entries(out)
    assert srv.requests_for("judge-a") == []  # every judge-a outcome was fine: kept, not asked
    assert srv.requests_for("judge-b")  # only the failed outcomes were asked again
    assert all(entry["failure"] is None for entry in second.values())
    for key, entry in first.items():
        if key not in failed:
            assert second[key] == entry  # kept exactly, latency and usage included
    assert sum(r.aggregate.value is not None for r in report.results) == N_SAMPLES * len(METRICS)
    b_scored = [r for r in report.results if r.judges[1].ok]
    assert len(b_scored) == N_SAMPLES * len(METRICS)


def test_retry_failed_with_nothing_failed_asks_nobody(srv: FakeOpenAIServer, work: Path) -> None:
    out = work / "results.jsonl"
    for judge in JUDGES:
        srv.script(judge, ragqa_responder())
    ragqa_pkg.evaluate(work / "data.jsonl", METRICS, config=work / "application.yaml", out=out)
    before = out.read_text(encoding="utf-8")
    srv.clear_requests()
    ragqa_pkg.evaluate(
        work / "data.jsonl", METRICS, config=work / "application.yaml", out=out, resume=True, retry_failed=True
    )
    assert srv.requests == [] and out.read_text(encoding="utf-8") == before


def test_retry_failed_needs_resume(work: Path) -> None:
    with pytest.raises(ConfigError, match="use it with --resume"):
        ragqa_pkg.evaluate(
            work / "data.jsonl", METRICS, config=work / "application.yaml", out=work / "r.jsonl", retry_failed=True
        )


@pytest.mark.slow
def test_cli_resume_retry_failed_repairs_a_run_after_an_outage(srv: FakeOpenAIServer, work: Path) -> None:
    def evaluate(*args: str) -> CliResult:
        return run_cli("evaluate", "data.jsonl", "--metrics", ",".join(METRICS), "--out", "r.jsonl", *args, cwd=work)

    srv.script("judge-a", ragqa_responder())
    srv.script("judge-b", down_on_odd_samples)
    assert evaluate().returncode == 0  # judge-a carries every aggregate
    srv.clear_requests()
    srv.script("judge-b", ragqa_responder())
    kept = evaluate("--resume")
    assert kept.returncode == 0 and srv.requests == []  # a plain resume keeps the failures
    repaired = evaluate("--resume", "--retry-failed")
    assert repaired.returncode == 0, repaired.stderr
    assert "--retry-failed: asking 6 failed judge outcome(s) of 6 result(s) again" in repaired.stderr
    assert srv.requests_for("judge-a") == [] and srv.requests_for("judge-b")
    assert all(entry["failure"] is None for entry in judge_entries(work / "r.jsonl").values())
    refused = evaluate("--retry-failed")
    assert refused.returncode == 2 and "use it with --resume" in refused.stderr


@pytest.mark.parametrize("repeats", [1, 2])
async def test_the_panel_asks_only_the_judges_without_a_kept_outcome(repeats: int) -> None:
    strict = CountingJudge(LocalJudge("strict", LocalJudgeSettings(support_threshold=0.6)))
    lenient = CountingJudge(LocalJudge("lenient", LocalJudgeSettings(support_threshold=0.4)))
    evaluator = PanelEvaluator([strict, lenient], [Faithfulness()], options=PanelOptions(repeats=repeats))
    sample = make_sample()
    plain = (await evaluator.score_sample(sample))[0]
    strict.calls = lenient.calls = 0
    kept = plain.judges[0].model_copy(update={"latency_s": 123.0})  # a kept outcome is used as it is
    rows: list[PanelResult] = []
    await evaluator.score_stream(
        [(0, sample, evaluator.metrics)],
        lambda tag, got: rows.extend(got),
        reuse=lambda label, key: {"strict": kept} if (label, key) == ("s1", "faithfulness") else {},
    )
    assert strict.calls == 0 and lenient.calls > 0
    (result,) = rows
    assert result.judges[0] == kept
    assert [o.judge_id for o in result.judges] == ["strict", "lenient"]
    assert result.judges[1].score == plain.judges[1].score and len(result.judges[1].repeats) == len(
        plain.judges[1].repeats
    )
    assert result.aggregate == plain.aggregate  # the same scores: the same aggregate
