"""Each judge's circuit breaker shared across the workers of a Ray run, with the actor's methods in this loop.

No cluster here: the limiter actor (:class:`ClusterLimits`) runs in the test's loop behind a handle
shaped like Ray's (``handle.method.remote(...)`` returns an awaitable), and each "worker" is its own
:class:`ClusterLimiters` (with its own board) and its own breakers. Clocks are injected where time
matters. ``tests/run/test_ray_shared_limits.py`` checks the same on a loopback cluster with the fake server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")

from ragqa.errors import JudgeUnavailable
from ragqa.judges.breaker import CircuitBreaker
from ragqa.run.ray_breakers import BreakerStates, ClusterBreaker
from ragqa.run.ray_limits import ClusterLimiter, ClusterLimiters, ClusterLimits
from ragqa.settings import ProviderLimits


class _Handle:
    """An actor object whose methods run in this loop, called as through a Ray handle."""

    class _Call:
        def __init__(self, method: Callable[..., Any]) -> None:
            self._method = method

        def remote(self, *args: Any) -> asyncio.Future[Any]:
            return asyncio.ensure_future(self._method(*args))

    def __init__(self, actor: Any) -> None:
        self._actor = actor

    def __getattr__(self, name: str) -> _Handle._Call:
        return self._Call(getattr(self._actor, name))


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Worker:
    """One worker's limiter registry and its breaker of judge ``b`` at provider ``p``."""

    def __init__(self, handle: _Handle, name: str, clock: _Clock, *, threshold: int = 2, cool_down: float = 5.0):
        self.limiters = ClusterLimiters(handle, name)
        self.limiter = self.limiters.get("p", ProviderLimits(max_in_flight=4))
        own = CircuitBreaker("judge 'b'", judge_id="b", failure_threshold=threshold, cool_down_s=cool_down, clock=clock)
        self.breaker = ClusterBreaker(own, "p/b", handle, name, self.limiters.board)

    async def call(self) -> None:
        """One request of judge ``b``: the breaker's admission, then a slot of the provider."""
        await self.breaker.admit("ask")
        assert isinstance(self.limiter, ClusterLimiter)
        async with self.limiter.slot("b", "ask"):
            pass
        self.breaker.record_success()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


@pytest.fixture
def clock() -> _Clock:
    return _Clock()


@pytest.fixture
def limits(clock: _Clock) -> ClusterLimits:
    actor = ClusterLimits()
    actor.breakers = BreakerStates(clock)
    return actor


async def test_a_breaker_opened_on_one_worker_stops_the_others_before_they_send(
    limits: ClusterLimits, clock: _Clock
) -> None:
    handle = _Handle(limits)
    a, b = _Worker(handle, "a", clock), _Worker(handle, "b", clock)
    await b.call()  # b has leased and used a permit: its breaker is closed
    await asyncio.sleep(0.05)  # b gives its idle permit back (after 20 ms): its next call leases again
    a.breaker.record_failure("connection refused")
    a.breaker.record_failure("connection refused")
    assert a.breaker.state == "open"
    await _settle()  # the opening reaches the actor
    with pytest.raises(JudgeUnavailable, match="opened while this call waited for its request slot"):
        async with b.limiter.slot("b", "ask"):  # the lease's reply carries the news: refused before sending
            raise AssertionError("sent while the judge's breaker is open in the cluster")
    assert b.breaker.state == "open"
    with pytest.raises(JudgeUnavailable, match="connection refused"):
        await b.breaker.admit("ask")  # and its next calls fail fast, as a's do
    assert limits.breakers.stats()["opened"] == 1


async def test_closed_breakers_cost_no_actor_call(limits: ClusterLimits, clock: _Clock) -> None:
    handle = _Handle(limits)
    workers = [_Worker(handle, "a", clock), _Worker(handle, "b", clock)]
    await asyncio.gather(*(workers[i % 2].call() for i in range(40)))
    assert limits.breakers.calls == 0
    assert limits._update(workers[0].limiters.board.epoch) is None  # the leases' replies carried nothing


async def _open_everywhere(limits: ClusterLimits, clock: _Clock) -> tuple[_Worker, _Worker]:
    """Workers ``a`` and ``b`` with judge b's breaker open on both and its cool-down passed."""
    handle = _Handle(limits)
    a, b = _Worker(handle, "a", clock), _Worker(handle, "b", clock)
    a.breaker.record_failure("connection refused")
    a.breaker.record_failure("connection refused")
    await _settle()
    b.limiters.board.apply(limits._update(b.limiters.board.epoch))
    assert b.breaker.state == "open"
    clock.now += 5.0  # the cool-down has passed on every worker
    return a, b


async def _b_waits_for_as_probe(limits: ClusterLimits, clock: _Clock) -> tuple[_Worker, asyncio.Future[None]]:
    """``a`` sends the cluster's probe; ``b``'s call waits behind it (returned, not done)."""
    a, b = await _open_everywhere(limits, clock)
    await a.breaker.admit("ask")
    assert a.breaker.state == "half_open"  # a sends the probe
    waiting = asyncio.ensure_future(b.breaker.admit("ask"))
    await _settle()
    assert not waiting.done()  # b does not probe too: it waits for a's probe
    return a, waiting


async def test_one_probe_for_the_cluster_and_the_other_worker_waits_behind_it(
    limits: ClusterLimits, clock: _Clock
) -> None:
    a, waiting = await _b_waits_for_as_probe(limits, clock)
    a.breaker.record_success()
    await asyncio.wait_for(waiting, 5)
    assert a.breaker.state == "closed"
    assert limits._update(0) is not None and limits.breakers.snapshot() == {}  # closed everywhere
    assert limits.breakers.stats()["probes"] == 1


async def test_a_failed_probe_fails_the_calls_waiting_on_other_workers(limits: ClusterLimits, clock: _Clock) -> None:
    a, waiting = await _b_waits_for_as_probe(limits, clock)
    a.breaker.record_failure("connection refused")  # the probe failed: open again, cool-down doubled
    with pytest.raises(JudgeUnavailable, match=r"another worker's probe failed; next probe in 10\.0s"):
        await asyncio.wait_for(waiting, 5)


async def test_the_probe_of_a_worker_that_died_goes_to_the_next_caller(limits: ClusterLimits, clock: _Clock) -> None:
    _, waiting = await _b_waits_for_as_probe(limits, clock)
    await limits.forget("a")  # a dies holding the probe: its restart takes back what it held
    await asyncio.wait_for(waiting, 5)  # b's call is the cluster's probe now
    assert limits.breakers.stats()["probes"] == 2


async def test_a_probe_found_up_elsewhere_closes_this_workers_breaker_on_its_next_call(
    limits: ClusterLimits, clock: _Clock
) -> None:
    a, b = await _open_everywhere(limits, clock)
    await a.breaker.admit("ask")
    a.breaker.record_success()
    await _settle()
    await b.call()  # b asks the actor instead of probing: the judge is up
    assert b.breaker.state == "closed"
    # one opening, a's probe, a's answer, b's question: the breakers' whole cost on the actor
    assert limits.breakers.stats() == {"opened": 1, "probes": 1, "calls": 4, "open": 0}
