"""Per-provider rate limits and concurrency, shared by every judge and embedder of a provider.

A provider (``provider_key`` of the resolved settings) gets one :class:`ProviderLimiter` per
container, from the :class:`ProviderLimiters` registry. Every HTTP request of every judge and
embedding model of that provider (retries and repair calls included) passes through
:meth:`ProviderLimiter.slot`:

1. :class:`FairSlots`, ``max_in_flight`` permits shared *fairly* by the provider's judges, bound
   the requests in flight. Every registered judge can always get one permit (the others may not
   take the last free permits while a judge holds none), and a released permit goes to the
   waiting judge that holds the fewest. So a judge whose requests hang holds at most
   ``max_in_flight - (judges - 1)`` permits and never starves another judge; its permits come
   back when its per-request timeouts fire, and its circuit breaker then cuts its other requests
   short (:mod:`ragqa.judges.breaker`).
2. A token bucket of ``rps`` tokens per second bounds the request rate. Its capacity is
   ``burst`` (default 1: no burst), so starts are spaced ``1 / rps`` apart and no one-second
   window ``[t, t + 1)`` holds more than ``ceil(rps) + burst - 1`` starts (``rps`` with the
   default). With strategy ``wait`` a call waits for its token (failing with
   :class:`~ragqa.errors.JudgeRateLimited` when the wait would exceed ``timeout``); with
   ``reject`` a call that finds no token fails at once.

The bucket uses reservations: a caller takes a token immediately (the balance may go negative)
and sleeps until its reserved instant, so waiting callers are served first come, first served
without a lock or a polling loop, and a wait that would exceed the timeout is refused up front.
Nothing here is bound to an event loop: one limiter serves successive ``asyncio.run`` calls.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar

from ragqa.errors import JudgeRateLimited
from ragqa.settings import ProviderLimits

__all__ = ["FairSlots", "ProviderLimiter", "ProviderLimiters", "TokenBucket", "request_priority"]

request_priority: ContextVar[int] = ContextVar("ragqa_request_priority", default=0)
"""Rank of a waiting request among its judge's waiters: lower is served first, then first come.

The panel evaluator sets it to each sample's admission number (0, 1, 2, ... in the order samples
enter the run), so a sample's next step is not queued behind every later sample's first step:
samples finish in the order they started and free their place in the window steadily instead of
in waves. Default 0 (plain first come, first served). It orders requests only: what is asked and
answered, and so every score, is unchanged."""

log = logging.getLogger(__name__)


class TokenBucket:
    """A token bucket with reservations (virtual scheduling).

    Args:
        rate: tokens added per second (> 0).
        capacity: the most tokens the bucket holds, i.e. the most starts at one instant (>= 1);
            default 1 (no burst: starts are spaced ``1 / rate`` apart).
        clock: a monotonic clock in seconds (injectable for tests).

    The bucket starts full. Any window ``[t, t + 1)`` seconds long holds at most
    ``ceil(rate) + capacity - 1`` reservations' start instants.
    """

    def __init__(self, rate: float, capacity: float | None = None, *, clock: Callable[[], float] = time.monotonic):
        if rate <= 0:
            raise ValueError(f"rate must be > 0, got {rate}")
        self.rate = float(rate)
        self.capacity = float(capacity) if capacity is not None else 1.0
        if self.capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self._clock = clock
        self._tokens = self.capacity
        self._updated = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
        self._updated = now
        return self._tokens

    @property
    def tokens(self) -> float:
        """Tokens available now (negative while callers wait for reserved tokens)."""
        return self._refill()

    def reserve(self) -> float:
        """Take one token, returning how long the caller must wait for it (seconds, >= 0)."""
        self._refill()
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate

    def refund(self) -> None:
        """Give back a token taken by :meth:`reserve` (the call was refused or cancelled)."""
        self._tokens = min(self.capacity, self._tokens + 1.0)

    def hold(self, seconds: float) -> None:
        """Hand out no token for the next ``seconds`` (a provider asked to wait: HTTP 429, ``Retry-After``).

        Reservations already made keep their instants; every later one starts ``seconds`` from now
        at the earliest and keeps the ``1 / rate`` spacing after that.
        """
        self._refill()
        self._tokens = min(self._tokens, -max(0.0, seconds) * self.rate)


class FairSlots:
    """``capacity`` permits shared fairly by named holders (the judges of one provider).

    Rules (checked whenever a permit is asked for or released):

    - a holder that holds no permit may take any free one;
    - a holder that holds some may take a free permit only when more remain free than the
      registered holders (other than itself) that hold none: every registered holder can
      always get its first permit, so no holder starves another;
    - waiting holders are served fewest-held first, then by the waiter's
      :data:`request_priority` (lower first: the earliest sample), then first come, first served.

    Waiters queue per holder in a heap (priority, then arrival), so serving one costs a look at
    each holder's first waiter, not at every waiter: with 1,500 requests waiting for 64 permits a
    release costs as little as with none waiting.

    Unregistered names are served too (they simply reserve nothing for themselves). Not bound
    to an event loop; not thread-safe (one loop at a time).

    Args:
        capacity: the number of permits (>= 1).
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.held: dict[str, int] = {}
        """Permits held now, per holder."""
        self._members: set[str] = set()
        self._queues: dict[str, list[tuple[int, int, asyncio.Future[None]]]] = {}
        """Waiters per holder, a heap of (priority, arrival number, future)."""
        self._arrivals = 0
        self._in_use = 0

    def register(self, name: str) -> None:
        """Declare a holder that must always be able to get one permit."""
        self._members.add(name)

    @property
    def free(self) -> int:
        """Permits not held now."""
        return self.capacity - self._in_use

    @property
    def waiting(self) -> int:
        """Waiters queued now (a cancelled wait may count until its task runs again)."""
        return sum(len(q) for q in self._queues.values())

    def _may_take(self, name: str) -> bool:
        if self.free <= 0:
            return False
        if self.held.get(name, 0) == 0:
            return True
        reserved = sum(1 for m in self._members if m != name and self.held.get(m, 0) == 0)
        return self.free > reserved

    def _grant(self, name: str) -> None:
        self._in_use += 1
        self.held[name] = self.held.get(name, 0) + 1

    def _first_waiters(self) -> dict[str, tuple[int, int, asyncio.Future[None]]]:
        """Each holder's first live waiter (cancelled waits at the front are dropped)."""
        firsts = {}
        for name, queue in self._queues.items():
            while queue and queue[0][2].done():
                heapq.heappop(queue)
            if queue:
                firsts[name] = queue[0]
        return firsts

    def _wake(self) -> None:
        # Serve the waiter that holds the fewest, earliest first among equals, while one may take:
        # a holder's first waiter stands for all of its waiters (they hold and may take alike).
        while self.free > 0:
            best: tuple[int, int, int, str] | None = None
            for name, (priority, arrival, _) in self._first_waiters().items():
                key = (self.held.get(name, 0), priority, arrival, name)
                if (best is None or key < best) and self._may_take(name):
                    best = key
            if best is None:
                return
            name = best[3]
            _, _, future = heapq.heappop(self._queues[name])
            self._grant(name)
            future.set_result(None)

    async def acquire(self, name: str) -> None:
        """Wait for a permit for ``name`` (cancellation-safe: a cancelled wait takes nothing)."""
        if not self._first_waiters() and self._may_take(name):
            self._grant(name)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (request_priority.get(), self._arrivals, future)
        self._arrivals += 1
        heapq.heappush(self._queues.setdefault(name, []), entry)
        self._wake()
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release(name)  # granted, then cancelled before it could be used
            else:
                queue = self._queues.get(name)
                if queue is not None and entry in queue:
                    queue.remove(entry)
                    heapq.heapify(queue)
            raise

    def release(self, name: str) -> None:
        """Give back a permit of ``name`` and serve the waiters."""
        self._in_use -= 1
        left = self.held.get(name, 0) - 1
        if left > 0:
            self.held[name] = left
        else:
            self.held.pop(name, None)
        self._wake()


class ProviderLimiter:
    """Rate limit and concurrency bound of one provider.

    Args:
        key: the provider key (shown in errors and logs).
        limits: ``rps`` (``None`` = unlimited), ``strategy`` (``wait`` or ``reject``), ``timeout``
            (longest wait for a slot with ``wait``; ``None`` = forever) and ``max_in_flight``.
        clock: a monotonic clock in seconds (injectable for tests).
        burst: requests that may start at one instant (the token bucket's capacity, >= 1);
            default 1: no burst, starts spaced ``1 / rps`` apart.
    """

    def __init__(
        self, key: str, limits: ProviderLimits, *, clock: Callable[[], float] = time.monotonic, burst: int = 1
    ) -> None:
        self.key = key
        self.limits = limits
        self._bucket = TokenBucket(limits.rps, burst, clock=clock) if limits.rps else None
        self.slots = FairSlots(max(1, limits.max_in_flight))
        """The in-flight permits, shared fairly by the registered judges."""
        self._timeout = limits.timeout.total_seconds() if limits.timeout is not None else None
        self._clock = clock
        self.in_flight = 0
        """Requests holding a slot now."""
        self.peak_in_flight = 0
        """The most requests that held a slot at once."""
        self.rejected = 0
        """Calls refused (strategy ``reject`` or wait timeout)."""
        self.started = 0
        """Requests that got a slot (were sent or about to be), in total."""

    def register(self, judge_id: str) -> None:
        """Declare a judge or embedder of this provider: it can always get one in-flight slot."""
        self.slots.register(judge_id)

    @asynccontextmanager
    async def slot(self, judge_id: str | None = None, step: str | None = None) -> AsyncIterator[None]:
        """Hold one request slot: a concurrency permit and a rate token.

        Args:
            judge_id: the judge or embedder asking (for the error).
            step: the prompt being asked (for the error).

        Raises:
            JudgeRateLimited: with strategy ``reject`` when no token is free now, or with ``wait``
                when the slot cannot be had within ``timeout``.
        """
        holder = judge_id or ""
        deadline = None if self._timeout is None else self._clock() + self._timeout
        await self._acquire_permit(holder, deadline, judge_id, step)
        try:
            await self._take_token(deadline, judge_id, step)
        except BaseException:
            self.slots.release(holder)
            raise
        self.in_flight += 1
        self.started += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1
            self.slots.release(holder)

    async def _acquire_permit(
        self, holder: str, deadline: float | None, judge_id: str | None, step: str | None
    ) -> None:
        if deadline is None or self.limits.strategy == "reject":
            await self.slots.acquire(holder)
            return
        try:
            async with asyncio.timeout(max(0.0, deadline - self._clock())):
                await self.slots.acquire(holder)
        except TimeoutError:
            self.rejected += 1
            raise self._error(
                f"no free request slot within {self._timeout:g}s (max-in-flight {self.limits.max_in_flight})",
                judge_id,
                step,
            ) from None

    async def _take_token(self, deadline: float | None, judge_id: str | None, step: str | None) -> None:
        bucket = self._bucket
        if bucket is None:
            return
        wait = bucket.reserve()
        if wait <= 0:
            return
        if self.limits.strategy == "reject":
            bucket.refund()
            self.rejected += 1
            raise self._error(f"rate limit of {bucket.rate:g} requests/s reached (strategy reject)", judge_id, step)
        if deadline is not None and self._clock() + wait > deadline:
            bucket.refund()
            self.rejected += 1
            raise self._error(
                f"rate limit of {bucket.rate:g} requests/s: the wait of {wait:.2f}s exceeds the timeout "
                f"of {self._timeout:g}s",
                judge_id,
                step,
            )
        try:
            await asyncio.sleep(wait)
        except BaseException:
            bucket.refund()
            raise

    def _error(self, message: str, judge_id: str | None, step: str | None) -> JudgeRateLimited:
        log.debug("provider %s: %s (judge %s)", self.key, message, judge_id)
        return JudgeRateLimited(f"provider {self.key!r}: {message}", judge_id=judge_id, step=step)


class ProviderLimiters:
    """The registry of limiters of one container: the same provider key gives the same limiter.

    Every judge and embedder of a provider must share its limiter, so build them all from one
    registry (``limiters.get(model.provider_key, model.limits)``).

    Args:
        clock: the monotonic clock of every limiter (injectable for tests).
        burst: the ``burst`` of every limiter (default 1: no burst).
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, burst: int = 1) -> None:
        self._limiters: dict[str, ProviderLimiter] = {}
        self._clock = clock
        self._burst = burst

    def get(self, provider_key: str, limits: ProviderLimits | None = None) -> ProviderLimiter:
        """Return the limiter of ``provider_key``, creating it with ``limits`` on first use.

        Later calls with different limits keep the first ones (and log a warning): limits are
        per provider, not per model.
        """
        limiter = self._limiters.get(provider_key)
        if limiter is None:
            limiter = self._new(provider_key, limits or ProviderLimits())
            self._limiters[provider_key] = limiter
        elif limits is not None and limits != limiter.limits:
            log.warning(
                "provider %s: models disagree on rate limits; keeping the first (%s)", provider_key, limiter.limits
            )
        return limiter

    def _new(self, provider_key: str, limits: ProviderLimits) -> ProviderLimiter:
        """Make the limiter of a provider seen for the first time (a subclass may hand out another kind)."""
        return ProviderLimiter(provider_key, limits, clock=self._clock, burst=self._burst)

    def __contains__(self, provider_key: object) -> bool:
        return provider_key in self._limiters

    def __len__(self) -> int:
        return len(self._limiters)
