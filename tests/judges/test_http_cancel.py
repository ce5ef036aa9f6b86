"""Cancellation, run deadlines and event loops over real HTTP, measured by requests at the fake server.

No wall-clock bounds: a test waits (a lower bound) and then counts the requests that started.
Per-request timeouts are generous (they must never fire here); the run deadline fires when the
test moves the loop's clock past it, after the calls meant to finish have finished.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

import factories
import openai
import pytest
from _clock import SteppedLoop, run_stepped, settle, until

from ragqa.container import close_container, create_container
from ragqa.errors import JudgeError, JudgeHTTPError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.base import SharedCallJudge
from ragqa.judges.openai import OpenAIEmbedder, OpenAIJudge, aclose_all, build_openai_judges
from ragqa.judges.ratelimit import ProviderLimiters
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.report import Report
from ragqa.schema import Sample
from ragqa.settings import (
    BackoffSettings,
    EmbeddingOptions,
    ResolvedChatModel,
    ResolvedEmbeddingModel,
    RetrySettings,
)
from ragqa.testing import FakeOpenAIServer, make_sample, ragqa_responder

pytestmark = pytest.mark.usefixtures("reset_srv")

FAST_RETRY = RetrySettings(
    max_attempts=50,
    backoff=BackoffSettings(
        initial_interval=timedelta(milliseconds=20), multiplier=1, max_interval=timedelta(milliseconds=20)
    ),
)


REQUEST_TIMEOUT_S = 600.0
"""Per-request timeout: never reached here, whatever the machine's load."""


def chat_model(srv: FakeOpenAIServer, name: str, *, timeout_s: float = REQUEST_TIMEOUT_S) -> ResolvedChatModel:
    return factories.chat_model(
        srv.base_url,
        name,
        api_key="sk-cancel-0123456789",
        provider_key=f"p-{name}",
        timeout_s=timeout_s,
        retry=FAST_RETRY,
    )


def samples(n: int) -> list[Sample]:
    return [make_sample(id=f"s{i}") for i in range(n)]


class LoopErrors:
    """Records what the event loop's exception handler is given ("Task exception was never retrieved")."""

    def __init__(self) -> None:
        self.contexts: list[dict[str, Any]] = []

    def __enter__(self) -> LoopErrors:
        loop = asyncio.get_running_loop()
        self._previous = loop.get_exception_handler()
        loop.set_exception_handler(lambda _loop, context: self.contexts.append(context))
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.get_running_loop().set_exception_handler(self._previous)


async def wait_for_requests(srv: FakeOpenAIServer, n: int) -> None:
    while len(srv.requests) < n:
        await asyncio.sleep(0.01)


async def started_after_cancel(srv: FakeOpenAIServer, judges: list[OpenAIJudge], settle_s: float = 0.6) -> int:
    """Requests started after a cancel: by the clients, and as seen at the server once it settles.

    A request the client sent just before the cancel may reach the server a little later, so the
    server's count is compared with what the clients had started when the cancel returned.
    """
    limiters = {id(j.limiter): j.limiter for j in judges}.values()
    started = sum(limiter.started for limiter in limiters)
    await asyncio.sleep(settle_s)  # longer than the latency and the retry backoff: anything pending would start
    started_later = sum(limiter.started for limiter in limiters) - started
    reached_server_later = max(0, len(srv.requests) - started)
    return started_later + reached_server_later


@pytest.mark.slow
async def test_cancelling_a_run_cancels_its_calls_shared_ones_included(
    srv: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    srv.script("*", ragqa_responder())
    for name in ("slow-a", "slow-b"):
        srv.set_latency(name, 0.2)
    srv.fail("failing", times=10_000, status=503)  # retried every 20 ms while the run lasts
    judges = build_openai_judges(
        [chat_model(srv, "slow-a"), chat_model(srv, "slow-b"), chat_model(srv, "failing")], ProviderLimiters()
    )
    for judge in judges:
        judge.breaker.failure_threshold = 10_000  # keep retrying: this test is about cancellation
    evaluator = PanelEvaluator(judges, [Faithfulness(), Hallucination()])  # statements are shared calls
    caplog.set_level(logging.WARNING, logger="ragqa")
    with LoopErrors() as loop_errors:
        run = asyncio.create_task(evaluator.evaluate(samples(6)))
        await wait_for_requests(srv, 12)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        retry_lines = len([r for r in caplog.records if "retrying" in r.getMessage()])
        assert await started_after_cancel(srv, judges) == 0
        gc.collect()
        await asyncio.sleep(0)
    assert len([r for r in caplog.records if "retrying" in r.getMessage()]) == retry_lines
    assert loop_errors.contexts == []
    await aclose_all(judges)


@pytest.mark.slow
async def test_wait_for_timing_out_stops_every_request(srv: FakeOpenAIServer) -> None:
    srv.script("*", ragqa_responder())
    srv.hold("slow")  # no answer ever comes: the run cannot finish before wait_for gives up
    judge = OpenAIJudge(chat_model(srv, "slow"))
    with LoopErrors() as loop_errors:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(PanelEvaluator([judge], [Faithfulness()]).evaluate(samples(20)), 0.3)
        assert await started_after_cancel(srv, [judge]) == 0
        gc.collect()
        await asyncio.sleep(0)
    assert loop_errors.contexts == []
    assert judge.limiter.in_flight == 0 and judge.limiter.slots.free == judge.limiter.slots.capacity
    await judge.aclose()


@pytest.mark.slow
async def test_the_shared_call_outlives_one_cancelled_waiter_but_not_the_last(srv: FakeOpenAIServer) -> None:
    srv.hold("shared")  # the answer waits until the test has cancelled a waiter
    judge = OpenAIJudge(chat_model(srv, "shared"))
    shared = SharedCallJudge(judge)
    data = StatementsInput(question="q", answer="a")
    first = asyncio.create_task(shared.ask(STATEMENTS, data))
    second = asyncio.create_task(shared.ask(STATEMENTS, data))
    await wait_for_requests(srv, 1)
    first.cancel()
    await asyncio.gather(first, return_exceptions=True)
    assert first.cancelled()
    srv.release("shared")
    assert (await second).statements == ["ok"]  # the other waiter still gets the one shared answer
    assert len(srv.requests) == 1 and shared.calls_made == 1

    srv.hold("shared")
    third = asyncio.create_task(shared.ask(STATEMENTS, StatementsInput(question="q2", answer="a")))
    await wait_for_requests(srv, 2)
    third.cancel()
    await asyncio.gather(third, return_exceptions=True)
    assert third.cancelled()
    assert shared.calls_made == 1  # the cancelled call is forgotten: asking again calls afresh
    srv.release("shared")  # the answer comes now, to nobody
    assert await started_after_cancel(srv, [judge], 0.4) == 0
    await judge.aclose()


@pytest.mark.slow
async def test_a_failure_nobody_waits_for_is_not_reported_as_unretrieved() -> None:
    class Failing:
        id = "f"

        async def ask(self, prompt: Any, data: Any, *, language: str = "en") -> Any:
            await asyncio.sleep(0.05)
            raise JudgeError("boom", judge_id="f")

    shared = SharedCallJudge(Failing())
    with LoopErrors() as loop_errors:
        waiter = asyncio.create_task(shared.ask(STATEMENTS, StatementsInput(question="q", answer="a")))
        await asyncio.sleep(0)
        other = asyncio.create_task(shared.ask(STATEMENTS, StatementsInput(question="q", answer="a")))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(JudgeError):
            await other
        del waiter, other
        gc.collect()
        await asyncio.sleep(0)
    assert loop_errors.contexts == []


def test_the_run_deadline_ends_unfinished_calls_as_typed_timeouts(srv: FakeOpenAIServer) -> None:
    srv.script("*", ragqa_responder())
    srv.hold("hung")  # never answered while the run lasts: only the deadline can end these calls
    deadline_s = 60.0  # far below the per-request timeout, so the deadline is what ends them

    async def run(loop: SteppedLoop) -> tuple[Report, int, list[OpenAIJudge]]:
        judges = build_openai_judges([chat_model(srv, "ok"), chat_model(srv, "hung")], ProviderLimiters())
        ok = judges[0]
        evaluator = PanelEvaluator(judges, [Faithfulness()], options=PanelOptions(deadline_s=deadline_s))
        task = asyncio.create_task(evaluator.evaluate(samples(4)))
        # the ok judge has answered every call (statements, nli) and each sample's hung call is parked
        await until(
            lambda: len(srv.requests_for("ok")) == 8 and ok.limiter.in_flight == 0 and srv.parked == 4,
            "the ok judge done, four hung calls parked",
        )
        await settle()  # the ok judge's scores are computed (queued work, no I/O)
        loop.advance(deadline_s)  # the deadline passes; no per-request timeout is due
        report = await task
        later = await started_after_cancel(srv, judges, 0.3)
        await aclose_all(judges)
        return report, later, judges

    report, later, judges = run_stepped(run)
    assert later == 0
    assert len(report.results) == 4
    for row in report.results:
        assert row.by_judge()["ok"] == pytest.approx(1.0)
        (failure,) = row.failures
        assert failure.judge_id == "hung" and failure.error_type == "JudgeTimeout"
        assert "run deadline of 60s" in failure.message
    assert all(j.limiter.in_flight == 0 for j in judges)


def test_options_refuse_a_deadline_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="deadline_s"):
        PanelOptions(deadline_s=0)


APPLICATION_YAML = """
spring:
  ai:
    openai:
      base-url: ${FAKE_URL}
      api-key: sk-loops-0123456789
    chat-models:
      default-options: {timeout: 10m}
      list:
        - {id: judge-a}
        - {id: judge-b}
ragqa:
  metrics: [faithfulness]
"""


@pytest.mark.slow
def test_one_container_serves_two_event_loops(srv: FakeOpenAIServer, tmp_path: Path) -> None:
    srv.script("*", ragqa_responder())
    path = tmp_path / "application.yaml"
    path.write_text(APPLICATION_YAML, encoding="utf-8")
    data = samples(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        container = create_container(path, environ={"FAKE_URL": srv.base_url})
        evaluator = container.evaluator()
        first = asyncio.run(evaluator.evaluate(data))
        second = asyncio.run(evaluator.evaluate(data))  # the first loop is closed: every HTTP client must be new
        asyncio.run(close_container(container))
        del evaluator, container
        gc.collect()
    for report in (first, second):
        assert len(report.results) == 3
        for row in report.results:
            assert row.failures == [] and row.aggregate.n_ok == 2
    assert len(srv.requests) == 2 * 2 * 3 * 2  # two runs x two judges x three samples x (statements, nli)
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == []  # each loop's client was closed when its loop shut down


async def test_a_closed_client_is_reported_as_a_client_failure_not_invalid_output(srv: FakeOpenAIServer) -> None:
    http = openai.DefaultAioHttpClient()
    await http.aclose()
    judge = OpenAIJudge(chat_model(srv, "closed"), http_client=http)
    with pytest.raises(JudgeHTTPError, match="the HTTP client failed") as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    assert info.value.status is None and info.value.judge_id == "closed"
    assert srv.requests == []


def test_an_embedder_serves_two_event_loops(srv: FakeOpenAIServer) -> None:
    model = ResolvedEmbeddingModel(id="emb", model="emb", base_url=srv.base_url, options=EmbeddingOptions(batch_size=2))
    embedder = OpenAIEmbedder(model)
    first = asyncio.run(embedder.embed(["a", "b", "c"]))
    second = asyncio.run(embedder.embed(["a", "b", "c"]))
    asyncio.run(embedder.aclose())
    assert first == second and len(first) == 3 and all(len(v) == 8 for v in first)
    assert len(srv.requests_for("emb")) == 4  # two batches per run
