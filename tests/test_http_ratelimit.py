"""Per-provider rate limits (token bucket, wait vs reject) and in-flight bounds, unit level and over HTTP."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from pydantic import SecretStr

from ragqa.errors import JudgeRateLimited
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.openai import OpenAIJudge, build_openai_judges
from ragqa.judges.ratelimit import ProviderLimiter, ProviderLimiters, TokenBucket
from ragqa.metrics import Faithfulness
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import ChatOptions, ProviderLimits, ResolvedChatModel, RetrySettings
from ragqa.testing import FakeOpenAIServer, make_sample, ragqa_responder


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


pytestmark = pytest.mark.usefixtures("reset_srv")


def test_token_bucket_starts_full_and_reserves_in_order() -> None:
    clock = Clock()
    bucket = TokenBucket(2.0, clock=clock)  # capacity max(1, 2) = 2
    assert bucket.capacity == 2.0
    assert [bucket.reserve() for _ in range(4)] == [0.0, 0.0, 0.5, 1.0]
    clock.now = 1.0  # two tokens refilled, both already reserved
    assert bucket.reserve() == pytest.approx(0.5)
    bucket.refund()
    assert bucket.tokens == pytest.approx(0.0)


def test_token_bucket_capacity_is_at_least_one_and_caps_refill() -> None:
    clock = Clock()
    bucket = TokenBucket(0.5, clock=clock)
    assert bucket.capacity == 1.0
    assert bucket.reserve() == 0.0
    assert bucket.reserve() == pytest.approx(2.0)
    bucket.refund()
    clock.now = 100.0
    assert bucket.tokens == 1.0


async def test_reject_strategy_fails_at_once_without_a_token() -> None:
    limiter = ProviderLimiter("p", ProviderLimits(rps=1, strategy="reject"))
    async with limiter.slot("j"):
        pass
    with pytest.raises(JudgeRateLimited) as info:
        async with limiter.slot("j", "nli"):
            pass
    assert info.value.judge_id == "j" and info.value.step == "nli"
    assert "strategy reject" in str(info.value) and "'p'" in str(info.value)
    assert limiter.rejected == 1


async def test_wait_strategy_spaces_calls_at_the_rate() -> None:
    limiter = ProviderLimiter("p", ProviderLimits(rps=20, strategy="wait"))
    starts: list[float] = []

    async def one() -> None:
        async with limiter.slot("j"):
            starts.append(time.monotonic())

    began = time.monotonic()
    await asyncio.gather(*(one() for _ in range(30)))
    elapsed = time.monotonic() - began
    # capacity 20 goes at once, the other 10 at 20/s: about 0.5 s
    assert 0.45 <= elapsed < 1.0
    assert sum(1 for s in starts if s - began < 0.05) == 20


async def test_wait_with_timeout_refuses_waits_that_are_too_long() -> None:
    limiter = ProviderLimiter("p", ProviderLimits(rps=1, strategy="wait", timeout=timedelta(milliseconds=100)))
    async with limiter.slot("j"):
        pass
    started = time.monotonic()
    with pytest.raises(JudgeRateLimited, match="exceeds the timeout"):
        async with limiter.slot("j"):
            pass
    assert time.monotonic() - started < 0.05  # refused up front, not after waiting
    # the refused call gave its token back: the next one waits about 1 s, not 2
    assert limiter._bucket is not None and limiter._bucket.tokens > -0.1


async def test_max_in_flight_bounds_concurrency_and_times_out() -> None:
    limiter = ProviderLimiter("p", ProviderLimits(max_in_flight=2, timeout=timedelta(milliseconds=50)))

    async def hold() -> None:
        async with limiter.slot("j"):
            await asyncio.sleep(0.2)

    tasks = [asyncio.create_task(hold()) for _ in range(2)]
    await asyncio.sleep(0.01)
    with pytest.raises(JudgeRateLimited, match="no free request slot"):
        async with limiter.slot("j"):
            pass
    await asyncio.gather(*tasks)
    assert limiter.peak_in_flight == 2 and limiter.in_flight == 0


def test_registry_returns_one_limiter_per_provider_key() -> None:
    limiters = ProviderLimiters()
    a = limiters.get("openrouter.ai", ProviderLimits(rps=5))
    assert limiters.get("openrouter.ai", ProviderLimits(rps=5)) is a
    assert limiters.get("openrouter.ai") is a
    assert limiters.get("localhost") is not a
    assert len(limiters) == 2 and "openrouter.ai" in limiters


def chat_model(srv: FakeOpenAIServer, name: str, provider: str, limits: ProviderLimits) -> ResolvedChatModel:
    return ResolvedChatModel(
        id=name,
        model=name,
        base_url=srv.base_url,
        api_key=SecretStr("sk-limits-0123456789"),
        provider_key=provider,
        limits=limits,
        options=ChatOptions(timeout=timedelta(seconds=5)),
        retry=RetrySettings(max_attempts=1),
    )


async def test_judges_of_one_provider_share_in_flight_slots_over_http(srv: FakeOpenAIServer) -> None:
    limits = ProviderLimits(max_in_flight=3)
    for name in ("a", "b"):
        srv.set_latency(name, 0.1)
    judges = build_openai_judges(
        [chat_model(srv, "a", "shared", limits), chat_model(srv, "b", "shared", limits)], ProviderLimiters()
    )
    assert judges[0].limiter is judges[1].limiter
    data = StatementsInput(question="q", answer="a")
    await asyncio.gather(*(j.ask(STATEMENTS, data) for j in judges for _ in range(6)))
    for j in judges:
        await j.aclose()
    assert judges[0].limiter.peak_in_flight == 3
    # 12 calls of 0.1 s, 3 at a time: the server saw them in 4 waves
    times = sorted(r.t for r in srv.requests)
    assert times[-1] - times[0] >= 0.28


async def test_rejected_calls_are_judge_failures_not_crashes(srv: FakeOpenAIServer) -> None:
    srv.script("*", ragqa_responder())
    limits = ProviderLimits(rps=1, strategy="reject")
    judge = OpenAIJudge(chat_model(srv, "r", "tight", limits))
    sample = make_sample()
    report = await PanelEvaluator([judge], [Faithfulness()]).evaluate([sample, sample.model_copy(update={"id": "s2"})])
    await judge.aclose()
    failures = [f for r in report.results for f in r.failures]
    # one token: the first statements call passes, everything else is refused
    assert failures and all(f.error_type == "JudgeRateLimited" for f in failures)
    assert report.summary("faithfulness").judges[0].n_failed == len(failures)
