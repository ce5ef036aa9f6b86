"""Per-provider rate limits and concurrency, shared by every judge and embedder of a provider.

A provider (``provider_key`` of the resolved settings: a ``group`` or the base URL's host) gets one
:class:`ProviderLimiter` per container, from the :class:`ProviderLimiters` registry. Every HTTP
request of every judge and embedding model of that provider (retries and repair calls included)
passes through :meth:`ProviderLimiter.slot`:

1. an :class:`asyncio.Semaphore` of ``max_in_flight`` bounds the requests in flight;
2. a token bucket of ``rps`` tokens per second (capacity ``max(1, rps)``, so at most one second
   of burst) bounds the request rate. With strategy ``wait`` a call waits for its token (failing
   with :class:`~ragqa.errors.JudgeRateLimited` when the wait would exceed ``timeout``); with
   ``reject`` a call that finds no token fails at once.

The bucket uses reservations: a caller takes a token immediately (the balance may go negative)
and sleeps until its reserved instant, so waiting callers are served first come, first served
without a lock or a polling loop, and a wait that would exceed the timeout is refused up front.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from ragqa.errors import JudgeRateLimited
from ragqa.settings import ProviderLimits

__all__ = ["ProviderLimiter", "ProviderLimiters", "TokenBucket"]

log = logging.getLogger(__name__)


class TokenBucket:
    """A token bucket with reservations (virtual scheduling).

    Args:
        rate: tokens added per second (> 0).
        capacity: the most tokens the bucket holds (the largest burst); default ``max(1, rate)``.
        clock: a monotonic clock in seconds (injectable for tests).

    The bucket starts full.
    """

    def __init__(self, rate: float, capacity: float | None = None, *, clock: Callable[[], float] = time.monotonic):
        if rate <= 0:
            raise ValueError(f"rate must be > 0, got {rate}")
        self.rate = float(rate)
        self.capacity = float(capacity) if capacity is not None else max(1.0, self.rate)
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


class ProviderLimiter:
    """Rate limit and concurrency bound of one provider.

    Args:
        key: the provider key (shown in errors and logs).
        limits: ``rps`` (``None`` = unlimited), ``strategy`` (``wait`` or ``reject``), ``timeout``
            (longest wait for a slot with ``wait``; ``None`` = forever) and ``max_in_flight``.
        clock: a monotonic clock in seconds (injectable for tests).
    """

    def __init__(self, key: str, limits: ProviderLimits, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.key = key
        self.limits = limits
        self._bucket = TokenBucket(limits.rps, clock=clock) if limits.rps else None
        self._semaphore = asyncio.Semaphore(max(1, limits.max_in_flight))
        self._timeout = limits.timeout.total_seconds() if limits.timeout is not None else None
        self._clock = clock
        self.in_flight = 0
        """Requests holding a slot now."""
        self.peak_in_flight = 0
        """The most requests that held a slot at once."""
        self.rejected = 0
        """Calls refused (strategy ``reject`` or wait timeout)."""

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
        deadline = None if self._timeout is None else self._clock() + self._timeout
        await self._acquire_permit(deadline, judge_id, step)
        try:
            await self._take_token(deadline, judge_id, step)
        except BaseException:
            self._semaphore.release()
            raise
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield
        finally:
            self.in_flight -= 1
            self._semaphore.release()

    async def _acquire_permit(self, deadline: float | None, judge_id: str | None, step: str | None) -> None:
        if deadline is None or self.limits.strategy == "reject":
            await self._semaphore.acquire()
            return
        try:
            async with asyncio.timeout(max(0.0, deadline - self._clock())):
                await self._semaphore.acquire()
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
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._limiters: dict[str, ProviderLimiter] = {}
        self._clock = clock

    def get(self, provider_key: str, limits: ProviderLimits | None = None) -> ProviderLimiter:
        """Return the limiter of ``provider_key``, creating it with ``limits`` on first use.

        Later calls with different limits keep the first ones (and log a warning): limits are
        per provider, not per model.
        """
        limiter = self._limiters.get(provider_key)
        if limiter is None:
            limiter = ProviderLimiter(provider_key, limits or ProviderLimits(), clock=self._clock)
            self._limiters[provider_key] = limiter
        elif limits is not None and limits != limiter.limits:
            log.warning(
                "provider %s: models disagree on rate limits; keeping the first (%s)", provider_key, limiter.limits
            )
        return limiter

    def __contains__(self, provider_key: object) -> bool:
        return provider_key in self._limiters

    def __len__(self) -> int:
        return len(self._limiters)
