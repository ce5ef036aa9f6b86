"""Spring-style retry and backoff: rules, waits and Retry-After, unit level and over real HTTP."""

from __future__ import annotations

import email.utils
import itertools
import logging
from datetime import timedelta

import pytest
from pydantic import SecretStr

from ragqa.errors import JudgeHTTPError, JudgeTimeout
from ragqa.judges.openai import OpenAIJudge
from ragqa.judges.retry import Failure, RetryPolicy, call_with_retry, parse_retry_after
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import BackoffSettings, ChatOptions, ResolvedChatModel, RetrySettings
from ragqa.testing import FakeOpenAIServer

SPRING_REPO = RetrySettings(
    on_http_codes=[429],
    on_client_errors=True,
    backoff=BackoffSettings(initial_interval=timedelta(seconds=2), max_interval=timedelta(seconds=30), multiplier=2),
)


pytestmark = pytest.mark.usefixtures("reset_srv")


def model(srv: FakeOpenAIServer, name: str, *, retry: RetrySettings, timeout_s: float = 5.0) -> ResolvedChatModel:
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
        (RetrySettings(), 429, False),  # Spring default: 4xx not retried unless listed
        (RetrySettings(on_http_codes=[429]), 429, True),
        (RetrySettings(on_http_codes=[429]), 401, False),
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


def test_retry_after_headers_win_over_backoff() -> None:
    policy = RetryPolicy(SPRING_REPO)
    assert policy.wait_for(Failure("status", 429, {"retry-after": "1.5"}), 3) == 1.5
    assert policy.wait_for(Failure("status", 429, {"retry-after": "2", "retry-after-ms": "250"}), 1) == 0.25
    assert policy.wait_for(Failure("status", 429, {"retry-after": "soon"}), 2) == 4.0
    assert policy.wait_for(Failure("timeout"), 1) == 2.0


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
        attempt, policy=RetryPolicy(SPRING_REPO), classify=lambda e: Failure("status", 503), label="t", sleep=sleep
    )
    assert result == "done" and attempts == 4
    assert slept == [2.0, 4.0, 8.0]

    attempts = 0
    slept.clear()
    with pytest.raises(Boom):
        await call_with_retry(
            attempt,
            policy=RetryPolicy(RetrySettings(max_attempts=2)),
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


def gaps(srv: FakeOpenAIServer, name: str) -> list[float]:
    times = [r.t for r in srv.requests_for(name)]
    return [b - a for a, b in itertools.pairwise(times)]


async def test_429_twice_then_success_waits_follow_the_configured_backoff(
    srv: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    srv.fail("m429", times=2, status=429)
    backoff = BackoffSettings(
        initial_interval=timedelta(milliseconds=100), multiplier=2, max_interval=timedelta(seconds=1)
    )
    retry = RetrySettings(max_attempts=4, on_http_codes=[429], backoff=backoff)
    judge = OpenAIJudge(model(srv, "m429", retry=retry))
    with caplog.at_level(logging.WARNING, logger="ragqa"):
        out = await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert out.statements == ["ok"]
    waits = gaps(srv, "m429")
    assert len(waits) == 2
    # the wait is a lower bound; request overhead on a busy machine only adds to it
    assert 0.095 <= waits[0] < 0.19  # initial
    assert 0.195 <= waits[1] < 0.30  # initial * multiplier
    lines = [r.getMessage() for r in caplog.records if r.name == "ragqa.judges.retry"]
    assert len(lines) == 2
    assert "'judge-m429' (model m429)" in lines[0] and "HTTP 429" in lines[0] and "retrying in 0.10s" in lines[0]
    assert "attempt 2/4" in lines[1] and "retrying in 0.20s" in lines[1]


async def test_retry_after_header_wins_over_backoff_on_the_wire(srv: FakeOpenAIServer) -> None:
    srv.fail("mra", times=1, status=429, retry_after=0.3)
    srv.fail("mra", times=1, status=503, retry_after_ms=120)
    judge = OpenAIJudge(model(srv, "mra", retry=fast(on_http_codes=[429])))
    await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    waits = gaps(srv, "mra")
    assert 0.295 <= waits[0] < 0.40  # Retry-After: 0.3 (backoff would be 0.05)
    assert 0.115 <= waits[1] < 0.22  # retry-after-ms: 120 (backoff would be 0.10)


async def test_500_storm_past_max_attempts_is_a_typed_http_error(srv: FakeOpenAIServer) -> None:
    srv.fail("m500", times=10, status=500)
    judge = OpenAIJudge(model(srv, "m500", retry=fast(max_attempts=3)))
    with pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert info.value.status == 500
    assert info.value.judge_id == "judge-m500" and info.value.step == "statements"
    assert len(srv.requests_for("m500")) == 3


async def test_non_retryable_status_fails_after_one_attempt(srv: FakeOpenAIServer) -> None:
    srv.fail("m401", times=5, status=401)
    judge = OpenAIJudge(
        model(srv, "m401", retry=fast(on_http_codes=[429], on_client_errors=True, exclude_on_http_codes=[401]))
    )
    with pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert info.value.status == 401
    assert len(srv.requests_for("m401")) == 1


async def test_timeouts_are_retried_then_a_typed_timeout(srv: FakeOpenAIServer) -> None:
    srv.hang("mhang", times=5, seconds=10)
    judge = OpenAIJudge(model(srv, "mhang", retry=fast(max_attempts=2), timeout_s=0.25))
    with pytest.raises(JudgeTimeout) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert len(srv.requests_for("mhang")) == 2
    assert "0.25s" in str(info.value) and info.value.judge_id == "judge-mhang"


async def test_a_slow_answer_within_the_timeout_succeeds(srv: FakeOpenAIServer) -> None:
    srv.hang("mslow", times=1, seconds=0.1)
    judge = OpenAIJudge(model(srv, "mslow", retry=fast(max_attempts=1), timeout_s=2))
    out = await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert out.statements == ["ok"]


async def test_connection_refused_is_retried_then_an_http_error_without_status() -> None:
    with FakeOpenAIServer() as dead:
        url = dead.base_url  # the port is free again once the server stopped
    m = ResolvedChatModel(id="gone", model="x", base_url=url, retry=fast(max_attempts=2))
    judge = OpenAIJudge(m)
    with pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="a"))
    await judge.aclose()
    assert info.value.status is None
    assert "after 2 attempt(s)" in str(info.value)
