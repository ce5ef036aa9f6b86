"""Retry and backoff fit for an evaluator: rules, jittered waits and rate-limit headers, unit level and over HTTP.

No wall-clock bounds: waits are checked through an injected random source and sleep.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
from datetime import timedelta

import httpx
import openai
import pytest
from pydantic import SecretStr

from ragqa.errors import JudgeHTTPError, JudgeTimeout
from ragqa.judges.openai import OpenAIJudge, classify_error
from ragqa.judges.retry import (
    Failure,
    RetryPolicy,
    call_with_retry,
    parse_openai_duration,
    parse_retry_after,
)
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import BackoffSettings, ChatOptions, ResolvedChatModel, RetrySettings
from ragqa.testing import FakeOpenAIServer

SPRING_REPO = RetrySettings(
    on_http_codes=[429],
    on_client_errors=True,
    backoff=BackoffSettings(initial_interval=timedelta(seconds=2), max_interval=timedelta(seconds=30), multiplier=2),
)


pytestmark = pytest.mark.usefixtures("reset_srv")


class Sleeps:
    """An injected sleep: records every wait and yields to the loop without waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def model(srv: FakeOpenAIServer, name: str, *, retry: RetrySettings, timeout_s: float = 600.0) -> ResolvedChatModel:
    return ResolvedChatModel(
        id=f"judge-{name}",
        model=name,
        base_url=srv.base_url,
        api_key=SecretStr("sk-test-retry-0123456789"),
        options=ChatOptions(timeout=timedelta(seconds=timeout_s)),
        retry=retry,
    )


def fast(max_attempts: int = 4, **kwargs: object) -> RetrySettings:
    backoff = BackoffSettings(
        initial_interval=timedelta(milliseconds=50), multiplier=2, max_interval=timedelta(milliseconds=150)
    )
    return RetrySettings(max_attempts=max_attempts, backoff=backoff, **kwargs)  # type: ignore[arg-type]


# -- rules --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "status", "retried"),
    [
        (SPRING_REPO, 429, True),
        (SPRING_REPO, 400, True),  # on-client-errors
        (SPRING_REPO, 500, True),
        (SPRING_REPO, 503, True),
        (RetrySettings(), 429, True),  # deviation from Spring AI: rate limits are retried by default
        (RetrySettings(), 408, True),
        (RetrySettings(exclude_on_http_codes=[429]), 429, False),
        (RetrySettings(), 400, False),
        (RetrySettings(on_http_codes=[429]), 429, True),
        (RetrySettings(on_http_codes=[429]), 401, False),
        (SPRING_REPO, 401, False),  # deviation: a wrong key is never retried, even with on-client-errors
        (SPRING_REPO, 403, False),
        (RetrySettings(on_http_codes=[401]), 401, True),  # listed explicitly: retried
        (RetrySettings(on_client_errors=True, exclude_on_http_codes=[401]), 401, False),
        (RetrySettings(on_http_codes=[503], exclude_on_http_codes=[503]), 503, False),  # exclude wins
        (RetrySettings(exclude_on_http_codes=[500]), 500, False),
        (RetrySettings(), 302, False),
    ],
)
def test_which_statuses_are_retried(settings: RetrySettings, status: int, retried: bool) -> None:
    assert RetryPolicy(settings).retryable(Failure("status", status=status)) is retried


def test_transport_errors_and_timeouts_are_retried_other_failures_not() -> None:
    policy = RetryPolicy(RetrySettings())
    assert policy.retryable(Failure("timeout"))
    assert policy.retryable(Failure("transport"))
    assert not policy.retryable(Failure("other"))


def test_spring_backoff_is_exponential_and_capped() -> None:
    policy = RetryPolicy(SPRING_REPO)
    assert [policy.backoff(n) for n in range(1, 7)] == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    defaults = RetryPolicy(RetrySettings())  # Spring AI defaults: 2 s x5, max 3 min
    assert [defaults.backoff(n) for n in (1, 2, 3, 4)] == [2.0, 10.0, 50.0, 180.0]
    assert defaults.max_attempts == 10


def test_waits_have_equal_jitter_over_the_backoff() -> None:
    low, high = RetryPolicy(SPRING_REPO, random=lambda: 0.0), RetryPolicy(SPRING_REPO, random=lambda: 1.0)
    mid = RetryPolicy(SPRING_REPO, random=lambda: 0.5)
    for n, base in [(1, 2.0), (2, 4.0), (5, 30.0)]:
        assert low.wait_for(Failure("timeout"), n) == base / 2
        assert high.wait_for(Failure("timeout"), n) == base
        assert mid.wait_for(Failure("transport"), n) == 0.75 * base


def test_retry_after_headers_win_over_backoff() -> None:
    policy = RetryPolicy(SPRING_REPO, random=lambda: 0.0)
    assert policy.wait_for(Failure("status", 429, {"retry-after": "1.5"}), 3) == 1.5
    assert policy.wait_for(Failure("status", 429, {"retry-after": "2", "retry-after-ms": "250"}), 1) == 0.25
    assert policy.wait_for(Failure("status", 429, {"retry-after": "soon"}), 2) == 2.0  # backoff 4 s, jitter low
    assert policy.wait_for(Failure("timeout"), 1) == 1.0
    jittered = RetryPolicy(SPRING_REPO, random=lambda: 1.0)  # never sooner than asked, at most 10% later
    assert jittered.wait_for(Failure("status", 429, {"retry-after": "2"}), 1) == pytest.approx(2.2)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("250ms", 0.25)],
)
def test_openai_durations(text: str, seconds: float) -> None:
    assert parse_openai_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5x", "s1", "1s garbage"])
def test_invalid_openai_durations(text: str) -> None:
    assert parse_openai_duration(text) is None


def test_rate_limit_reset_headers_set_the_wait() -> None:
    both = {"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}
    assert parse_retry_after(both) == 360.0  # no remaining-* header: the longest
    exhausted = {**both, "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "9000"}
    assert parse_retry_after(exhausted) == 1.0  # only the exhausted limit matters
    assert parse_retry_after({"x-ratelimit-reset-tokens": "20ms"}) == pytest.approx(0.02)
    assert parse_retry_after({**both, "retry-after": "3"}) == 3.0  # Retry-After wins


def test_reset_headers_of_a_real_sdk_error_reach_the_wait() -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    headers = {"x-ratelimit-reset-requests": "1.5s", "x-ratelimit-remaining-requests": "0"}
    response = httpx.Response(429, headers=headers, request=request, json={"error": {"message": "slow down"}})
    error = openai.RateLimitError("slow down", response=response, body=None)
    failure = classify_error(error, endpoint="127.0.0.1:9")
    assert failure.kind == "status" and failure.status == 429 and failure.cause == "HTTP 429 from 127.0.0.1:9"
    assert RetryPolicy(RetrySettings(), random=lambda: 0.0).wait_for(failure, 1) == 1.5


def test_parse_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    header = email.utils.formatdate(now + 7, usegmt=True)
    assert parse_retry_after({"Retry-After": header}, now=now) == pytest.approx(7.0)
    assert parse_retry_after({"Retry-After": email.utils.formatdate(now - 60, usegmt=True)}, now=now) == 0.0
    assert parse_retry_after({}, now=now) is None
    assert parse_retry_after(None) is None


async def test_call_with_retry_counts_attempts_and_waits() -> None:
    slept: list[float] = []
    attempts = 0

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    class Boom(Exception):
        pass

    async def attempt() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 4:
            raise Boom
        return "done"

    result = await call_with_retry(
        attempt,
        policy=RetryPolicy(SPRING_REPO, random=lambda: 1.0),
        classify=lambda e: Failure("status", 503),
        label="t",
        sleep=sleep,
    )
    assert result == "done" and attempts == 4
    assert slept == [2.0, 4.0, 8.0]

    attempts = 0
    slept.clear()
    with pytest.raises(Boom):
        await call_with_retry(
            attempt,
            policy=RetryPolicy(RetrySettings(max_attempts=2), random=lambda: 1.0),
            classify=lambda e: Failure("transport"),
            label="t",
            sleep=sleep,
        )
    assert attempts == 2 and slept == [2.0]


async def test_retry_after_beyond_the_limit_gives_up_at_once() -> None:
    attempts = 0

    async def attempt() -> None:
        nonlocal attempts
        attempts += 1
        raise RuntimeError

    with pytest.raises(RuntimeError):
        await call_with_retry(
            attempt,
            policy=RetryPolicy(SPRING_REPO),
            classify=lambda e: Failure("status", 429, {"retry-after": "3600"}),
            label="t",
        )
    assert attempts == 1


# -- over HTTP ----------------------------------------------------------------------------------


async def test_429_twice_then_success_waits_follow_the_configured_backoff(
    srv: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    srv.fail("m429", times=2, status=429)
    backoff = BackoffSettings(
        initial_interval=timedelta(milliseconds=100), multiplier=2, max_interval=timedelta(seconds=1)
    )
    retry = RetrySettings(max_attempts=4, backoff=backoff)  # no on-http-codes: 429 is retried anyway
    sleeps = Sleeps()
    judge = OpenAIJudge(model(srv, "m429", retry=retry), retry_random=lambda: 1.0, sleep=sleeps)
    with caplog.at_level(logging.WARNING, logger="ragqa"):
        out = await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert out.statements == ["ok"]
    assert len(srv.requests_for("m429")) == 3
    assert sleeps.waits == pytest.approx([0.1, 0.2])  # initial, initial * multiplier (jitter source at 1)
    lines = [r.getMessage() for r in caplog.records if r.name == "ragqa.judges.retry"]
    assert len(lines) == 2
    assert f"judge 'judge-m429' (model m429 at 127.0.0.1:{srv.port})" in lines[0]
    assert f"HTTP 429 from 127.0.0.1:{srv.port}" in lines[0] and "retrying in 0.10s" in lines[0]
    assert "attempt 2/4" in lines[1] and "retrying in 0.20s" in lines[1]


async def test_retry_after_header_wins_over_backoff_on_the_wire(srv: FakeOpenAIServer) -> None:
    srv.fail("mra", times=1, status=429, retry_after=0.3)
    srv.fail("mra", times=1, status=503, retry_after_ms=120)
    sleeps = Sleeps()
    judge = OpenAIJudge(model(srv, "mra", retry=fast()), retry_random=lambda: 0.0, sleep=sleeps)
    await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert len(srv.requests_for("mra")) == 3
    assert sleeps.waits == pytest.approx([0.3, 0.12])  # Retry-After 0.3, retry-after-ms 120 (backoff: 0.025, 0.05)


async def test_500_storm_past_max_attempts_is_a_typed_http_error(srv: FakeOpenAIServer) -> None:
    srv.fail("m500", times=10, status=500)
    judge = OpenAIJudge(model(srv, "m500", retry=fast(max_attempts=3)), sleep=Sleeps())
    with pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert info.value.status == 500
    assert info.value.judge_id == "judge-m500" and info.value.step == "statements"
    assert f"HTTP 500 from 127.0.0.1:{srv.port} after 3 attempt(s)" in str(info.value)
    assert len(srv.requests_for("m500")) == 3


async def test_a_wrong_key_is_not_retried_even_with_on_client_errors(srv: FakeOpenAIServer) -> None:
    srv.fail("m401", times=5, status=401)
    sleeps = Sleeps()
    judge = OpenAIJudge(model(srv, "m401", retry=SPRING_REPO), sleep=sleeps)
    with pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert info.value.status == 401
    assert len(srv.requests_for("m401")) == 1 and sleeps.waits == []
    assert judge.breaker.state == "closed"  # the endpoint answered: not a reason to open


@pytest.mark.slow
async def test_timeouts_are_retried_then_a_typed_timeout(srv: FakeOpenAIServer) -> None:
    srv.hang("mhang", times=5, seconds=math.inf)  # never answers: the 0.25 s timeout fires however slow
    judge = OpenAIJudge(model(srv, "mhang", retry=fast(max_attempts=2), timeout_s=0.25), sleep=Sleeps())
    with pytest.raises(JudgeTimeout) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert len(srv.requests_for("mhang")) == 2
    assert f"no answer within 0.25s from 127.0.0.1:{srv.port} after 2 attempt(s)" in str(info.value)
    assert info.value.judge_id == "judge-mhang"


async def test_a_slow_answer_within_the_timeout_succeeds(srv: FakeOpenAIServer) -> None:
    srv.hang("mslow", times=1, seconds=0.1)
    judge = OpenAIJudge(model(srv, "mslow", retry=fast(max_attempts=1)))  # 10 min: never reached
    out = await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert out.statements == ["ok"]


async def test_connection_refused_is_named_as_such(caplog: pytest.LogCaptureFixture) -> None:
    with FakeOpenAIServer() as dead:
        url, port = dead.base_url, dead.port  # the port is free again once the server stopped
    m = ResolvedChatModel(id="gone", model="x", base_url=url, retry=fast(max_attempts=2))
    judge = OpenAIJudge(m, sleep=Sleeps())
    with caplog.at_level(logging.WARNING, logger="ragqa"), pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert info.value.status is None
    assert f"connection refused by 127.0.0.1:{port} after 2 attempt(s)" in str(info.value)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "ragqa.judges.retry"]
    assert f"judge 'gone' (model x at 127.0.0.1:{port}): connection refused by 127.0.0.1:{port}" in line
    assert "timed out" not in line.lower()
