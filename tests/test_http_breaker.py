"""The per-judge circuit breaker: a dead or hung judge costs K failures, then fails fast (injected clock)."""

from __future__ import annotations

import asyncio
import logging
import math
from datetime import timedelta

import pytest
from pydantic import SecretStr

from ragqa.errors import JudgeError, JudgeHTTPError, JudgeUnavailable
from ragqa.judges.breaker import CircuitBreaker
from ragqa.judges.openai import OpenAIJudge
from ragqa.judges.retry import Failure, RetryPolicy, call_with_retry
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import ChatOptions, ResolvedChatModel, RetrySettings
from ragqa.testing import FakeOpenAIServer

pytestmark = pytest.mark.usefixtures("reset_srv")

DATA = StatementsInput(question="q", answer="a")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def test_opens_after_k_consecutive_failures_and_fails_fast_naming_the_cause() -> None:
    clock = Clock()
    breaker = CircuitBreaker(
        "judge 'a' (model m at h:1)", judge_id="a", failure_threshold=3, cool_down_s=30, clock=clock
    )
    for _ in range(2):
        breaker.before_attempt()
        breaker.record_failure("connection refused by h:1")
    assert breaker.state == "closed"
    breaker.record_success()  # a success resets the count
    for _ in range(3):
        breaker.before_attempt()
        breaker.record_failure("connection refused by h:1")
    assert breaker.state == "open" and breaker.opened == 1
    with pytest.raises(JudgeUnavailable) as info:
        breaker.before_attempt("nli")
    assert info.value.judge_id == "a" and info.value.step == "nli"
    assert isinstance(info.value, JudgeError)
    text = str(info.value)
    assert "judge 'a'" in text and "3 consecutive failure(s)" in text
    assert "last: connection refused by h:1" in text and "next probe in 30.0s" in text
    assert breaker.rejected == 1


def test_half_open_lets_one_probe_through_then_closes_on_success() -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=1, cool_down_s=30, clock=clock)
    breaker.record_failure("HTTP 503 from h:1")
    clock.now += 29.9
    with pytest.raises(JudgeUnavailable):
        breaker.before_attempt()
    clock.now += 0.1
    breaker.before_attempt()  # the probe
    assert breaker.state == "half_open"
    with pytest.raises(JudgeUnavailable, match="a probe request is in flight"):
        breaker.before_attempt()  # only one probe at a time
    breaker.record_success()
    assert breaker.state == "closed"
    breaker.before_attempt()


def test_a_failed_probe_opens_again_for_a_full_cool_down() -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=2, cool_down_s=10, clock=clock)
    breaker.record_failure("x")
    breaker.record_failure("no answer within 5s from h:1")
    clock.now += 10
    breaker.before_attempt()
    breaker.record_failure("no answer within 5s from h:1")
    assert breaker.state == "open"
    clock.now += 9
    with pytest.raises(JudgeUnavailable, match=r"next probe in 1\.0s"):
        breaker.before_attempt()
    clock.now += 1
    breaker.before_attempt()
    breaker.record_neutral()  # the probe was cancelled: another call may probe
    breaker.before_attempt()


def test_invalid_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker("j", failure_threshold=0)
    with pytest.raises(ValueError):
        CircuitBreaker("j", cool_down_s=-1)


async def test_an_open_breaker_stops_the_retries_at_once() -> None:
    breaker = CircuitBreaker("j", failure_threshold=3, cool_down_s=60, clock=Clock())
    attempts = 0

    async def attempt() -> None:
        nonlocal attempts
        attempts += 1
        raise ConnectionRefusedError

    policy = RetryPolicy(RetrySettings(max_attempts=10))
    classify = lambda e: Failure("transport", detail="connection refused by h:1")  # noqa: E731
    with pytest.raises(ConnectionRefusedError):
        await call_with_retry(attempt, policy=policy, classify=classify, label="j", sleep=no_sleep, breaker=breaker)
    assert attempts == 3  # the threshold, not max-attempts
    with pytest.raises(JudgeUnavailable):
        await call_with_retry(attempt, policy=policy, classify=classify, label="j", sleep=no_sleep, breaker=breaker)
    assert attempts == 3  # failed fast: no request


async def test_4xx_answers_prove_the_endpoint_is_up() -> None:
    breaker = CircuitBreaker("j", failure_threshold=2, clock=Clock())
    breaker.record_failure("x")

    async def attempt() -> None:
        raise ValueError

    with pytest.raises(ValueError):
        await call_with_retry(
            attempt,
            policy=RetryPolicy(RetrySettings(max_attempts=1)),
            classify=lambda e: Failure("status", 429),
            label="j",
            breaker=breaker,
        )
    assert breaker.consecutive_failures == 0 and breaker.state == "closed"


def chat_model(url: str, name: str, *, timeout_s: float = 600.0, attempts: int = 10) -> ResolvedChatModel:
    return ResolvedChatModel(
        id=f"judge-{name}",
        model=name,
        base_url=url,
        api_key=SecretStr("sk-breaker-0123456789"),
        options=ChatOptions(timeout=timedelta(seconds=timeout_s)),
        retry=RetrySettings(max_attempts=attempts),
    )


async def test_a_dead_judge_costs_the_threshold_not_every_call(caplog: pytest.LogCaptureFixture) -> None:
    with FakeOpenAIServer() as dead:
        url, port = dead.base_url, dead.port
    judge = OpenAIJudge(chat_model(url, "dead"), failure_threshold=5, cool_down_s=60, sleep=no_sleep)
    with caplog.at_level(logging.WARNING, logger="ragqa"):
        first = await asyncio.gather(*(judge.ask(STATEMENTS, DATA) for _ in range(4)), return_exceptions=True)
        later = await asyncio.gather(*(judge.ask(STATEMENTS, DATA) for _ in range(20)), return_exceptions=True)
    await judge.aclose()
    assert all(isinstance(e, JudgeHTTPError | JudgeUnavailable) for e in first)
    assert all(isinstance(e, JudgeUnavailable) for e in later)
    # 4 calls x 10 attempts would be 40 connection attempts; the breaker stopped them at the threshold
    assert judge.breaker.consecutive_failures <= 5 + 3  # the threshold plus the attempts already in flight
    assert judge.breaker.rejected >= 20
    message = str(later[0])
    assert "judge 'judge-dead'" in message and f"last: connection refused by 127.0.0.1:{port}" in message
    opened = [r.getMessage() for r in caplog.records if "circuit open" in r.getMessage()]
    assert len(opened) == 1 and f"127.0.0.1:{port}" in opened[0]


async def test_a_hung_judge_stops_receiving_requests_once_open(srv: FakeOpenAIServer) -> None:
    srv.hang("hung", times=1000, seconds=math.inf)  # never answers: the 0.2 s timeout fires however slow
    judge = OpenAIJudge(
        chat_model(srv.base_url, "hung", timeout_s=0.2, attempts=3), failure_threshold=2, cool_down_s=60, sleep=no_sleep
    )
    results = await asyncio.gather(*(judge.ask(STATEMENTS, DATA) for _ in range(2)), return_exceptions=True)
    assert judge.breaker.state == "open"
    seen = len(srv.requests_for("hung"))
    # 2 calls x 3 attempts would be 6 requests; a retry may start before the second timeout opens it
    assert seen <= 3
    later = await asyncio.gather(*(judge.ask(STATEMENTS, DATA) for _ in range(10)), return_exceptions=True)
    await judge.aclose()
    assert all(isinstance(e, JudgeError) for e in results)
    assert all(isinstance(e, JudgeUnavailable) and "no answer within 0.2s" in str(e) for e in later)
    assert len(srv.requests_for("hung")) == seen  # failed fast: no request reached the server


async def test_a_successful_probe_after_the_cool_down_closes_the_breaker(srv: FakeOpenAIServer) -> None:
    clock = Clock()
    srv.fail("flap", times=2, status=503)
    judge = OpenAIJudge(
        chat_model(srv.base_url, "flap", attempts=1), failure_threshold=2, cool_down_s=30, clock=clock, sleep=no_sleep
    )
    for _ in range(2):
        with pytest.raises(JudgeHTTPError):
            await judge.ask(STATEMENTS, DATA)
    with pytest.raises(JudgeUnavailable, match="HTTP 503"):
        await judge.ask(STATEMENTS, DATA)
    assert len(srv.requests_for("flap")) == 2
    clock.now += 30
    out = await judge.ask(STATEMENTS, DATA)  # the probe; the server answers again
    await judge.aclose()
    assert out.statements == ["ok"] and judge.breaker.state == "closed"
    assert len(srv.requests_for("flap")) == 3
