"""The per-judge circuit breaker: down means no answer; 5xx bursts, restarts and hangs cost no more than they must.

Injected clocks for the cool-down; the fake server for the endpoint; no wall-clock bound.
"""

from __future__ import annotations

import asyncio
import logging
import math

import factories
import pytest

from ragqa.errors import JudgeError, JudgeHTTPError, JudgeTimeout, JudgeUnavailable
from ragqa.judges.breaker import CircuitBreaker
from ragqa.judges.openai import OpenAIJudge
from ragqa.judges.retry import Failure, RetryPolicy, call_with_retry
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import ProviderLimits, ResolvedChatModel, RetrySettings
from ragqa.testing import FakeOpenAIServer, Fault

pytestmark = pytest.mark.usefixtures("reset_srv")

DATA = StatementsInput(question="q", answer="a")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def no_sleep(seconds: float) -> None:
    await asyncio.sleep(0)


def refused(breaker: CircuitBreaker, times: int = 1) -> None:
    for _ in range(times):
        breaker.record_failure("connection refused by h:1")


async def test_opens_after_k_consecutive_down_failures_and_fails_fast_naming_the_cause() -> None:
    clock = Clock()
    breaker = CircuitBreaker(
        "judge 'a' (model m at h:1)", judge_id="a", failure_threshold=3, cool_down_s=30, clock=clock
    )
    refused(breaker, 2)
    assert breaker.state == "closed"
    breaker.record_success()  # an answer resets the count
    refused(breaker, 3)
    assert breaker.state == "open" and breaker.opened == 1
    with pytest.raises(JudgeUnavailable) as info:
        await breaker.admit("nli")
    assert info.value.judge_id == "a" and info.value.step == "nli"
    assert isinstance(info.value, JudgeError)
    text = str(info.value)
    assert "judge 'a'" in text and "3 consecutive failure(s)" in text
    assert "last: connection refused by h:1" in text and "next probe in 30.0s" in text
    assert breaker.rejected == 1


async def test_a_5xx_is_an_answer_not_down() -> None:
    breaker = CircuitBreaker("j", failure_threshold=2, clock=Clock())
    refused(breaker, 1)
    attempts = 0

    async def attempt() -> None:
        nonlocal attempts
        attempts += 1
        raise ValueError

    for status in (500, 502, 503, 429):
        with pytest.raises(ValueError):
            await call_with_retry(
                attempt,
                policy=RetryPolicy(RetrySettings(max_attempts=3)),
                classify=lambda e, s=status: Failure("status", s),  # type: ignore[misc]
                label="j",
                sleep=no_sleep,
                breaker=breaker,
            )
        assert breaker.consecutive_failures == 0 and breaker.state == "closed"
    assert attempts == 4 * 3  # every retry went out: the breaker never cut one


async def test_the_cool_down_starts_short_doubles_per_failed_probe_and_resets_when_closed() -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=1, cool_down_s=1, max_cool_down_s=5, clock=clock)
    refused(breaker)
    seen = []
    for _ in range(5):
        seen.append(breaker.until_probe())
        clock.now += breaker.until_probe()
        await breaker.admit()  # the probe
        assert breaker.state == "half_open"
        refused(breaker)
    assert seen == pytest.approx([1, 2, 4, 5, 5])
    clock.now += 5
    await breaker.admit()
    breaker.record_success()
    assert breaker.state == "closed" and breaker.cool_down == 1
    refused(breaker)
    assert breaker.until_probe() == 1


async def test_calls_arriving_while_the_probe_is_out_wait_behind_it_and_go_through_when_it_succeeds() -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=1, cool_down_s=1, clock=clock)
    refused(breaker)
    clock.now += 1
    await breaker.admit()  # the probe
    waiting = [asyncio.ensure_future(breaker.admit()) for _ in range(5)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiting)  # queued, not failed
    breaker.record_success()
    await asyncio.gather(*waiting)  # all let through
    assert breaker.state == "closed" and breaker.rejected == 0


async def test_a_failed_probe_fails_its_waiters_and_a_cancelled_probe_hands_over() -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=1, cool_down_s=1, clock=clock)
    refused(breaker)
    clock.now += 1
    await breaker.admit()
    waiting = [asyncio.ensure_future(breaker.admit()) for _ in range(3)]
    await asyncio.sleep(0)
    refused(breaker)
    results = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(r, JudgeUnavailable) and "the probe failed" in str(r) for r in results)
    assert breaker.until_probe() == 2
    clock.now += 2
    await breaker.admit()  # a probe that will be cancelled
    heir = asyncio.ensure_future(breaker.admit())
    await asyncio.sleep(0)
    breaker.record_neutral()
    await heir  # became the probe
    assert breaker.state == "half_open"


async def test_invalid_parameters_are_refused() -> None:
    with pytest.raises(ValueError):
        CircuitBreaker("j", failure_threshold=0)
    with pytest.raises(ValueError):
        CircuitBreaker("j", cool_down_s=-1)
    assert CircuitBreaker("j", cool_down_s=10, max_cool_down_s=5).max_cool_down_s == 10


async def test_a_dead_judge_costs_each_running_call_one_probe_not_every_attempt() -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=3, cool_down_s=60, clock=clock)
    attempts = 0
    waits: list[float] = []

    async def attempt() -> None:
        nonlocal attempts
        attempts += 1
        raise ConnectionRefusedError

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    policy = RetryPolicy(RetrySettings(max_attempts=10))
    classify = lambda e: Failure("transport", detail="connection refused by h:1")  # noqa: E731
    with pytest.raises(ConnectionRefusedError):
        await call_with_retry(attempt, policy=policy, classify=classify, label="j", sleep=sleep, breaker=breaker)
    assert attempts == 4  # the threshold, then one probe after the cool-down; not max-attempts
    assert waits[-1] == pytest.approx(60)
    with pytest.raises(JudgeUnavailable):
        await call_with_retry(attempt, policy=policy, classify=classify, label="j", sleep=sleep, breaker=breaker)
    assert attempts == 4  # failed fast: no request


def chat_model(
    url: str, name: str, *, timeout_s: float = 600.0, attempts: int = 10, in_flight: int | None = None
) -> ResolvedChatModel:
    return factories.chat_model(
        url, name, id=f"judge-{name}", api_key="sk-breaker-0123456789", timeout_s=timeout_s, attempts=attempts,
        limits=ProviderLimits(max_in_flight=in_flight) if in_flight is not None else ProviderLimits(),
    )  # fmt: skip


async def test_a_burst_of_500_502_503_from_every_judge_loses_no_outcome(srv: FakeOpenAIServer) -> None:
    # 40 answers of 500, 502 (an HTML page) and 503 in a row, whoever asks: more than the threshold
    # many times over for each of the 4 judges; with injected sleeps the burst is counted, not timed
    burst = [Fault(status=500), Fault(status=502, body="<html>bad gateway</html>"), Fault(status=503)]
    for i in range(40):
        srv.inject("*", burst[i % 3])
    judges = [
        OpenAIJudge(chat_model(srv.base_url, name), failure_threshold=5, cool_down_s=30, sleep=no_sleep)
        for name in "abcd"
    ]
    results = await asyncio.gather(
        *(judge.ask(STATEMENTS, DATA) for judge in judges for _ in range(10)), return_exceptions=True
    )
    for judge in judges:
        await judge.aclose()
        assert judge.breaker.opened == 0 and judge.breaker.rejected == 0
    assert [r for r in results if isinstance(r, BaseException)] == []
    assert len(srv.requests) == 40 + 40  # every failed answer retried once more, nothing failed fast


async def test_a_restarted_judge_gets_requests_again(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    with FakeOpenAIServer() as first:
        port = first.port
        judge = OpenAIJudge(
            chat_model(first.base_url, "back", attempts=1), failure_threshold=3, cool_down_s=1, clock=clock
        )
        assert (await judge.ask(STATEMENTS, DATA)).statements
    # stopped: the port refuses connections
    with caplog.at_level(logging.WARNING, logger="ragqa"):
        down = await asyncio.gather(*(judge.ask(STATEMENTS, DATA) for _ in range(6)), return_exceptions=True)
    assert all(isinstance(e, JudgeHTTPError | JudgeUnavailable) for e in down)
    assert judge.breaker.state == "open"
    refused_message = next(str(e) for e in down if isinstance(e, JudgeHTTPError))
    assert "connection refused" in refused_message and "Request timed out" not in refused_message
    with FakeOpenAIServer(port=port) as again:  # the same endpoint, restarted
        clock.now += judge.breaker.until_probe()
        answers = await asyncio.gather(*(judge.ask(STATEMENTS, DATA) for _ in range(5)))
        await judge.aclose()
        assert all(a.statements for a in answers)  # the probe closed it; the 4 behind it went through
        assert len(again.requests) == 5
    assert judge.breaker.state == "closed"
    assert any("circuit closed" in r.getMessage() for r in caplog.records)


async def test_a_hung_judge_costs_one_timeout_its_other_calls_are_cut(srv: FakeOpenAIServer) -> None:
    srv.hang("hung", times=1000, seconds=math.inf)  # never answers: the 0.3 s timeout fires however slow
    judge = OpenAIJudge(
        chat_model(srv.base_url, "hung", timeout_s=0.3, attempts=10, in_flight=4),
        failure_threshold=5,
        cool_down_s=1,
        sleep=no_sleep,
    )
    results = await asyncio.gather(*(judge.ask(STATEMENTS, DATA) for _ in range(12)), return_exceptions=True)
    await judge.aclose()
    # 4 requests in flight time out together: two silent timeouts open it, the rest of the wave and the
    # calls queued for a slot are cut; nothing is retried (10 attempts would be 120 requests). The slot
    # the first timeout frees may send one queued request before the second opens it; it is cut too.
    assert len(srv.requests_for("hung")) <= 5
    assert judge.breaker.hung and judge.breaker.opened == 1 and judge.breaker.cut >= 7
    assert all(isinstance(r, JudgeTimeout | JudgeUnavailable) for r in results)
    cut = [str(r) for r in results if isinstance(r, JudgeUnavailable)]
    assert len(cut) >= 8 and all("the judge hangs" in m for m in cut)
    assert judge.breaker.until_probe() >= 0.3 * 0.99  # the cool-down of a hang is at least the timeout


async def test_a_slow_but_answering_judge_is_not_taken_for_hung(srv: FakeOpenAIServer) -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=5, clock=clock)
    started = clock()
    clock.now += 1
    breaker.record_success()  # another call was answered while this one waited
    clock.now += 1
    breaker.record_failure("no answer within 2s", timeout=True, started=started)
    breaker.record_failure("no answer within 2s", timeout=True, started=started)
    assert breaker.state == "closed"  # two timeouts, but the endpoint answered meanwhile
    later = clock()
    breaker.record_failure("no answer within 2s", timeout=True, started=later)
    breaker.record_failure("no answer within 2s", timeout=True, started=later)
    assert breaker.state == "open" and breaker.hung


async def test_a_new_call_waits_for_a_probe_due_within_its_first_retry_wait() -> None:
    clock = Clock()
    breaker = CircuitBreaker("j", failure_threshold=1, cool_down_s=1, clock=clock)
    refused(breaker)  # open; the probe is due in 1 s, within the first backoff (2 s by default)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    async def attempt() -> str:
        return "answer"

    policy = RetryPolicy(RetrySettings(max_attempts=3))
    out = await call_with_retry(
        attempt, policy=policy, classify=lambda e: Failure("other"), label="j", sleep=sleep, breaker=breaker
    )
    assert out == "answer" and waits == [pytest.approx(1.0)] and breaker.state == "closed"
    far = CircuitBreaker("j", failure_threshold=1, cool_down_s=8, clock=clock)
    refused(far)  # a probe further away than the first retry wait: fail fast, no wait
    with pytest.raises(JudgeUnavailable, match=r"next probe in 8\.0s"):
        await call_with_retry(
            attempt, policy=policy, classify=lambda e: Failure("other"), label="j", sleep=sleep, breaker=far
        )
    assert len(waits) == 1
