"""Per-provider rate limits (token bucket, wait vs reject) and in-flight bounds, unit level and over HTTP."""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta

import factories
import pytest

from ragqa.errors import JudgeRateLimited
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.openai import OpenAIJudge, build_openai_judges
from ragqa.judges.ratelimit import FairSlots, ProviderLimiter, ProviderLimiters, TokenBucket
from ragqa.metrics import Faithfulness
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import ProviderLimits, ResolvedChatModel
from ragqa.testing import FakeOpenAIServer, make_sample, ragqa_responder


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


pytestmark = pytest.mark.usefixtures("reset_srv")


def starts_in_any_window(starts: list[float], width: float = 1.0) -> int:
    """The most start instants in any window [t, t + width) (it suffices to try t at each start).

    A nanosecond of slack absorbs float rounding of instants that are exactly ``width`` apart.
    """
    return max(sum(1 for s in starts if t - 1e-9 <= s < t + width - 1e-9) for t in starts)


def test_token_bucket_has_no_burst_by_default() -> None:
    clock = Clock()
    bucket = TokenBucket(2.0, clock=clock)
    assert bucket.capacity == 1.0
    assert [bucket.reserve() for _ in range(4)] == [0.0, 0.5, 1.0, 1.5]
    clock.now = 1.0  # two tokens refilled, both already reserved
    assert bucket.reserve() == pytest.approx(1.0)
    bucket.refund()
    assert bucket.tokens == pytest.approx(-1.0)


@pytest.mark.parametrize("rps", [1.0, 2.0, 5.0, 20.0, 0.5])
def test_no_one_second_window_holds_more_than_rps_starts(rps: float) -> None:
    clock = Clock()
    bucket = TokenBucket(rps, clock=clock)
    starts: list[float] = []
    for step in range(200):  # callers arrive in bursts of 7 every 0.3 s, faster than the rate
        if step % 7 == 0:
            clock.now += 0.3
        starts.append(clock.now + bucket.reserve())
    assert starts_in_any_window(starts) <= math.ceil(rps)


def test_a_burst_is_opt_in_and_bounded() -> None:
    clock = Clock()
    bucket = TokenBucket(5.0, 3, clock=clock)
    starts = [bucket.reserve() for _ in range(20)]
    assert starts[:3] == [0.0, 0.0, 0.0]
    assert starts_in_any_window(starts) <= 5 + 3 - 1
    with pytest.raises(ValueError):
        TokenBucket(5.0, 0.5)


def test_token_bucket_caps_refill_at_its_capacity() -> None:
    clock = Clock()
    bucket = TokenBucket(0.5, clock=clock)
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
    clock = Clock()
    limiter = ProviderLimiter("p", ProviderLimits(rps=1000, strategy="wait"), clock=clock)
    order: list[int] = []

    async def one(i: int) -> None:
        async with limiter.slot("j"):
            order.append(i)

    await asyncio.gather(*(one(i) for i in range(5)))
    assert order == [0, 1, 2, 3, 4]  # first come, first served
    assert limiter._bucket is not None and limiter._bucket.tokens == pytest.approx(-4.0)  # 4 reserved ahead


async def test_wait_with_timeout_refuses_waits_that_are_too_long() -> None:
    clock = Clock()  # frozen: nothing refills, so only an up-front refusal can end the call
    limiter = ProviderLimiter(
        "p", ProviderLimits(rps=1, strategy="wait", timeout=timedelta(milliseconds=100)), clock=clock
    )
    async with limiter.slot("j"):
        pass
    with pytest.raises(JudgeRateLimited, match="exceeds the timeout"):
        async with limiter.slot("j"):
            pass
    assert limiter.rejected == 1
    # the refused call gave its token back: the next one waits 1 s, not 2
    assert limiter._bucket is not None and limiter._bucket.tokens == pytest.approx(0.0)


async def test_max_in_flight_bounds_concurrency_and_times_out() -> None:
    limiter = ProviderLimiter("p", ProviderLimits(max_in_flight=2, timeout=timedelta(milliseconds=50)))
    done = asyncio.Event()  # the holders keep their slots until the third call was refused

    async def hold() -> None:
        async with limiter.slot("j"):
            await done.wait()

    tasks = [asyncio.create_task(hold()) for _ in range(2)]
    while limiter.in_flight < 2:
        await asyncio.sleep(0)
    with pytest.raises(JudgeRateLimited, match="no free request slot"):
        async with limiter.slot("j"):
            pass
    done.set()
    await asyncio.gather(*tasks)
    assert limiter.peak_in_flight == 2 and limiter.in_flight == 0


async def test_fair_slots_keep_one_slot_for_every_registered_judge() -> None:
    slots = FairSlots(4)
    for name in ("hung", "b", "c"):
        slots.register(name)
    for _ in range(2):
        await slots.acquire("hung")
    assert slots.held == {"hung": 2}
    blocked = asyncio.create_task(slots.acquire("hung"))  # 2 free, but b and c hold none
    await asyncio.sleep(0)
    assert not blocked.done()
    await slots.acquire("b")
    await asyncio.sleep(0)
    assert not blocked.done()  # the last free slot is kept for c
    await slots.acquire("c")
    assert slots.free == 0
    slots.release("hung")  # everyone holds one now: the freed slot may go to the waiting hung judge
    await asyncio.sleep(0)
    assert blocked.done() and slots.held == {"hung": 2, "b": 1, "c": 1}


async def test_fair_slots_serve_the_waiter_holding_the_fewest_first() -> None:
    slots = FairSlots(2)
    await slots.acquire("a")
    await slots.acquire("a")
    more_a = asyncio.create_task(slots.acquire("a"))
    await asyncio.sleep(0)
    first_b = asyncio.create_task(slots.acquire("b"))
    await asyncio.sleep(0)
    slots.release("a")
    await asyncio.sleep(0)
    assert first_b.done() and not more_a.done()  # b holds none: it goes first although it came later
    more_a.cancel()
    await asyncio.gather(more_a, return_exceptions=True)
    slots.release("a")
    slots.release("b")
    assert slots.free == 2 and slots.held == {}


async def test_a_cancelled_wait_takes_no_slot() -> None:
    slots = FairSlots(1)
    await slots.acquire("a")
    waiting = asyncio.create_task(slots.acquire("b"))
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    slots.release("a")
    assert slots.free == 1 and slots.held == {}


async def test_a_hung_judge_cannot_starve_another_of_the_same_provider(srv: FakeOpenAIServer) -> None:
    srv.hang("hung", times=100, seconds=math.inf)  # the hung judge never gets an answer, nor a timeout here
    limits = ProviderLimits(max_in_flight=4)
    registry = ProviderLimiters()
    hung, healthy = build_openai_judges(
        [chat_model(srv, "hung", "shared", limits), chat_model(srv, "healthy", "shared", limits)], registry
    )
    data = StatementsInput(question="q", answer="a")
    stuck = [asyncio.create_task(hung.ask(STATEMENTS, data)) for _ in range(8)]  # asked first, with slots free
    while len(srv.requests_for("hung")) < 3:
        await asyncio.sleep(0.01)
    answers = await asyncio.gather(*(healthy.ask(STATEMENTS, data) for _ in range(8)))
    # the healthy judge got all its answers while the hung requests still held their slots
    assert [a.statements for a in answers] == [["ok"]] * 8
    assert len(srv.requests_for("hung")) == 3  # max-in-flight 4, one slot kept for the other judge
    assert hung.limiter.slots.held.get("hung") == 3
    for task in stuck:
        task.cancel()
    await asyncio.gather(*stuck, return_exceptions=True)
    await hung.aclose()
    await healthy.aclose()
    assert hung.limiter.in_flight == 0 and hung.limiter.slots.free == 4


def test_registry_returns_one_limiter_per_provider_key() -> None:
    limiters = ProviderLimiters()
    a = limiters.get("openrouter.ai", ProviderLimits(rps=5))
    assert limiters.get("openrouter.ai", ProviderLimits(rps=5)) is a
    assert limiters.get("openrouter.ai") is a
    assert limiters.get("localhost") is not a
    assert len(limiters) == 2 and "openrouter.ai" in limiters


def chat_model(srv: FakeOpenAIServer, name: str, provider: str, limits: ProviderLimits) -> ResolvedChatModel:
    return factories.chat_model(
        srv.base_url, name, api_key="sk-limits-0123456789", provider_key=provider, limits=limits
    )


async def test_judges_of_one_provider_share_in_flight_slots_over_http(srv: FakeOpenAIServer) -> None:
    limits = ProviderLimits(max_in_flight=3)
    srv.hold("*")  # no answer until the slots are full: the peak is reached whatever the machine's speed
    judges = build_openai_judges(
        [chat_model(srv, "a", "shared", limits), chat_model(srv, "b", "shared", limits)], ProviderLimiters()
    )
    assert judges[0].limiter is judges[1].limiter
    data = StatementsInput(question="q", answer="a")
    asks = asyncio.gather(*(j.ask(STATEMENTS, data) for j in judges for _ in range(6)))
    while srv.parked < 3:
        await asyncio.sleep(0.005)
    srv.release("*")
    answers = await asks
    for j in judges:
        await j.aclose()
    assert [a.statements for a in answers] == [["ok"]] * 12
    assert judges[0].limiter.peak_in_flight == 3
    assert len(srv.requests) == 12


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
