"""The whole path over real HTTP: application.yaml -> container -> three judges -> faithfulness -> report.

The judges point at the fake server through a ``${FAKE_URL}`` placeholder. One judge answers
garbage, one is rate limited twice, one answers well; failures of every kind end as typed
failures of one judge and sample while the run completes, and the API key leaks nowhere.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from _clock import SteppedLoop, run_stepped, until
from pydantic import SecretStr

from ragqa.cache import CachingJudge, JudgeCache
from ragqa.container import close_container, create_container
from ragqa.errors import JudgeHTTPError
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.openai import OpenAIJudge, aclose_all, build_openai_judges
from ragqa.judges.ratelimit import ProviderLimiters
from ragqa.metrics import Faithfulness
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.report import Report
from ragqa.schema import Sample
from ragqa.settings import BackoffSettings, ChatOptions, ResolvedChatModel, RetrySettings
from ragqa.testing import ChatRequest, FakeOpenAIServer, Fault, fake_openai_server, ragqa_responder

KEY = "sk-or-v1-0123456789abcdef-SECRET"

APPLICATION_YAML = """
spring:
  ai:
    retry:
      max-attempts: 4
      on-http-codes: [429]
      on-client-errors: true
      backoff: {initial-interval: 100ms, max-interval: 1000ms, multiplier: 2}
    openai:
      base-url: ${FAKE_URL}          # Spring semantics: no /v1
      api-key: ${FAKE_API_KEY}
    chat-models:
      default-options: {temperature: 0.0, max-tokens: 1000, top-p: 1.0, timeout: 10m}
      list:
        - {id: judge-good}
        - {id: judge-garbage}
        - {id: judge-flaky}
ragqa:
  metrics: [faithfulness]
  concurrency: {max-concurrent-samples: 1}
  prices:
    judge-good: {prompt: 0.5, completion: 1.5}
"""

SAMPLES = [
    Sample(
        id="paris",
        user_input="Where is the Eiffel Tower?",
        response="The Eiffel Tower is in Paris. The Eiffel Tower was built in 1889. It is painted gold.",
        retrieved_contexts=["The Eiffel Tower is a wrought-iron tower in Paris, France, built in 1889."],
    ),
    Sample(
        id="ada",
        user_input="Who was Ada Lovelace?",
        response="Ada Lovelace was a mathematician. Ada Lovelace wrote the first program.",
        retrieved_contexts=["Ada Lovelace was an English mathematician who wrote the first program."],
    ),
    Sample(
        id="moon",
        user_input="When did people land on the Moon?",
        response="People landed on the Moon in 1969.",
        retrieved_contexts=["Apollo 11 landed people on the Moon in July 1969."],
    ),
]
EXPECTED = {"paris": 2 / 3, "ada": 1.0, "moon": 1.0}  # "painted gold" is unsupported


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server(api_key=KEY) as server:
        yield server


pytestmark = pytest.mark.usefixtures("reset_srv")


def write_app(tmp_path: Path) -> Path:
    path = tmp_path / "application.yaml"
    path.write_text(APPLICATION_YAML, encoding="utf-8")
    return path


def garbage(request: ChatRequest) -> str:
    # a hostile provider that echoes the key it was sent: it must not reach results or logs
    return f"As an AI I refuse. Your header was {request.headers.get('authorization')}."


@pytest.mark.slow
async def test_application_yaml_panel_of_three_judges_end_to_end(
    srv: FakeOpenAIServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    srv.script("judge-good", ragqa_responder())
    srv.script("judge-flaky", ragqa_responder())
    srv.script("judge-garbage", garbage)
    srv.fail("judge-flaky", times=2, status=429)

    container = create_container(write_app(tmp_path), environ={"FAKE_URL": srv.base_url, "FAKE_API_KEY": KEY})
    caplog.set_level(logging.DEBUG)  # every logger, every level: the key must appear in none
    try:
        evaluator = container.evaluator()
        assert [j.id for j in evaluator.judges] == ["judge-good", "judge-garbage", "judge-flaky"]
        report = await evaluator.evaluate(SAMPLES)
    finally:
        await close_container(container)

    # the aggregate is over the two working judges; the garbage judge is excluded with its cause
    for row in report.results:
        assert row.aggregate.n_ok == 2 and row.aggregate.n_failed == 1
        assert row.by_judge() == {
            "judge-good": pytest.approx(EXPECTED[row.sample_id]),
            "judge-flaky": pytest.approx(EXPECTED[row.sample_id]),
        }
        assert row.aggregate.value == pytest.approx(EXPECTED[row.sample_id])
        (failure,) = row.failures
        assert failure.judge_id == "judge-garbage" and failure.step == "statements"
        assert failure.error_type == "JudgeOutputError" and "after one repair" in failure.message
        assert failure.raw is not None and "As an AI I refuse" in failure.raw
    summary = report.summary("faithfulness")
    assert summary.aggregate_mean == pytest.approx(sum(EXPECTED.values()) / 3)
    by_id = {j.judge_id: j for j in summary.judges}
    assert by_id["judge-garbage"].n_failed == 3 and math.isnan(by_id["judge-garbage"].mean)

    # the flaky judge got 429 twice, then succeeded; the waits follow the configured backoff
    # (equal jitter: between half and all of initial-interval 100ms, then of 100ms x multiplier 2)
    retry_lines = [r.getMessage() for r in caplog.records if r.name == "ragqa.judges.retry"]
    assert len(retry_lines) == 2 and all("'judge-flaky'" in line and "HTTP 429" in line for line in retry_lines)
    waits = [float(line.rsplit("retrying in ", 1)[1].rstrip("s")) for line in retry_lines]
    assert 0.05 <= waits[0] <= 0.1 and 0.1 <= waits[1] <= 0.2
    assert len(srv.requests_for("judge-flaky")) == 6 + 2  # statements + nli per sample, plus the two 429s

    # the wire: key as a Bearer header, options from default-options, /v1 appended once
    good = srv.requests_for("judge-good")
    assert len(good) == 6  # statements + nli per sample
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in srv.requests)
    assert all(r.path == "/v1/chat/completions" for r in srv.requests)
    assert good[0].body["max_tokens"] == 1000 and good[0].body["temperature"] == 0.0

    # usage: per judge, metric and run; the price table turns the good judge's tokens into cost
    assert by_id["judge-good"].usage.calls == 6
    assert by_id["judge-flaky"].usage.calls == 6  # 429s are not answered requests
    assert by_id["judge-garbage"].usage.calls == 6  # one call plus one repair per sample
    assert by_id["judge-good"].usage.cost is not None and by_id["judge-good"].usage.cost > 0
    assert by_id["judge-flaky"].usage.cost is None
    server_prompt_tokens = sum(
        sum(len(m["content"].split()) for m in r.body["messages"]) for r in good
    )  # rough check: the fake counts words, the report must be in that ballpark and > 0
    assert 0 < by_id["judge-good"].usage.prompt_tokens <= server_prompt_tokens * 2
    assert report.usage.calls == 18
    assert report.usage.total_tokens == sum(j.usage.total_tokens for j in summary.judges)

    # the key appears in no log record, no result JSON, no failure text
    results_file = tmp_path / "results.json"
    results_file.write_text(report.model_dump_json(), encoding="utf-8")
    assert KEY not in results_file.read_text(encoding="utf-8")
    assert caplog.records and not [r for r in caplog.records if KEY in r.getMessage()]
    assert KEY not in caplog.text
    assert all(KEY not in f.message and KEY not in (f.raw or "") for row in report.results for f in row.failures)


REQUEST_TIMEOUT_S = 600.0
"""Per-request timeout: never reached by a call that gets an answer, whatever the machine's load."""


def model(srv: FakeOpenAIServer, name: str, **retry: Any) -> ResolvedChatModel:
    backoff = BackoffSettings(initial_interval=timedelta(milliseconds=20), max_interval=timedelta(milliseconds=40))
    return ResolvedChatModel(
        id=name,
        model=name,
        base_url=srv.base_url + "/v1",
        api_key=SecretStr(KEY),
        options=ChatOptions(timeout=timedelta(seconds=REQUEST_TIMEOUT_S)),
        retry=RetrySettings(**{"max_attempts": 2, "backoff": backoff, **retry}),
    )


def on_second_sample(fault: Fault | str) -> Any:
    """A responder that fails only for the sample about Ada, and answers by the rules otherwise."""
    rules = ragqa_responder()

    def respond(request: ChatRequest) -> Any:
        return fault if "Ada" in json.dumps(request.input or {}) else rules(request)

    return respond


def drop_a_verdict(request: ChatRequest) -> Any:
    answer = ragqa_responder()(request)
    if isinstance(answer, dict) and "verdicts" in answer and "Ada" in json.dumps(request.input):
        answer["verdicts"] = answer["verdicts"][:-1]
    return answer


def test_every_failure_kind_is_typed_per_judge_and_sample_and_the_run_completes(
    srv: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    srv.script("good", ragqa_responder())
    srv.script("hangs", on_second_sample(Fault(status=200, hang_s=math.inf)))  # never answers about Ada
    srv.script("storm", on_second_sample(Fault(status=500)))
    srv.script("broken", on_second_sample(Fault(status=200, body='{"choices": [{"message": {"content": "{\\"sta')))
    srv.script("miscount", drop_a_verdict)
    names = ["good", "hangs", "storm", "broken", "miscount"]
    caplog.set_level(logging.DEBUG)

    def hung_attempts() -> int:
        return len([r for r in srv.requests_for("hangs") if "Ada" in json.dumps(r.body)])

    async def run(loop: SteppedLoop) -> Report:
        judges = build_openai_judges([model(srv, n) for n in names], ProviderLimiters())
        limiter = judges[0].limiter  # one provider: every request of the panel holds one of its slots
        try:
            task = asyncio.create_task(PanelEvaluator(judges, [Faithfulness()]).evaluate(SAMPLES))
            for attempt in (1, 2):  # max-attempts 2: the timed-out call is retried once
                # the hanging Ada call is the only request in flight, so its timeout is the only one due
                await until(lambda n=attempt: hung_attempts() == n and limiter.in_flight == 1, f"attempt {attempt}")
                loop.advance(REQUEST_TIMEOUT_S)
            return await task
        finally:
            await aclose_all(judges)

    report = run_stepped(run)

    rows = {r.sample_id: r for r in report.results}
    assert set(rows) == {"paris", "ada", "moon"}
    for sample_id in ("paris", "moon"):  # every judge scores the samples without faults
        assert rows[sample_id].aggregate.n_ok == 5
        assert rows[sample_id].aggregate.value == pytest.approx(EXPECTED[sample_id])
    ada = rows["ada"]
    failures = {f.judge_id: f for f in ada.failures}
    assert set(failures) == {"hangs", "storm", "broken", "miscount"}
    assert failures["hangs"].error_type == "JudgeTimeout" and failures["hangs"].step == "statements"
    assert failures["storm"].error_type == "JudgeHTTPError" and "HTTP 500" in failures["storm"].message
    assert failures["broken"].error_type == "JudgeOutputError" and failures["broken"].raw is not None
    assert failures["miscount"].error_type == "JudgeOutputError" and failures["miscount"].step == "nli"
    assert "1 verdicts for 2 statements" in failures["miscount"].message
    assert ada.by_judge() == {"good": 1.0} and ada.aggregate.value == 1.0
    assert len([r for r in srv.requests_for("storm") if "Ada" in json.dumps(r.body)]) == 2  # max-attempts
    assert KEY not in caplog.text and KEY not in report.model_dump_json()


async def test_http_error_bodies_echoing_the_key_are_redacted(srv: FakeOpenAIServer) -> None:
    srv.script("echo", lambda r: Fault(status=400, body=json.dumps({"error": {"message": f"bad key {KEY}"}})))
    judge = OpenAIJudge(model(srv, "echo", on_client_errors=False))
    with pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert info.value.status == 400
    assert "bad key ***" in str(info.value)
    assert KEY not in str(info.value) and KEY not in repr(info.value.args)
    assert info.value.__cause__ is None  # the provider's own exception (with the key) is not chained


async def test_the_disk_cache_holds_no_key_and_answers_repeats(srv: FakeOpenAIServer, tmp_path: Path) -> None:
    srv.script("cached", ragqa_responder())
    cache = JudgeCache(tmp_path / "cache")
    inner = OpenAIJudge(model(srv, "cached"))
    judge = CachingJudge(inner, cache)
    try:
        first = await PanelEvaluator([judge], [Faithfulness()]).evaluate(SAMPLES[:1])
        second = await PanelEvaluator([judge], [Faithfulness()]).evaluate(SAMPLES[:1])
    finally:
        await inner.aclose()
        cache.close()
    assert first.results[0].aggregate.value == second.results[0].aggregate.value == pytest.approx(2 / 3)
    assert len(srv.requests_for("cached")) == 2  # the second run was answered from the cache
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes()


async def test_concurrent_judges_share_one_event_loop_and_close_cleanly(srv: FakeOpenAIServer) -> None:
    srv.script("*", ragqa_responder())
    judges = build_openai_judges([model(srv, f"c{i}") for i in range(3)])
    results = await asyncio.gather(
        *(
            j.ask(STATEMENTS, StatementsInput(question="q", answer="Ada wrote programs. She lived in London."))
            for j in judges
            for _ in range(5)
        )
    )
    await aclose_all(judges)
    await aclose_all(judges)  # idempotent
    assert all(r.statements == ["Ada wrote programs.", "She lived in London."] for r in results)
