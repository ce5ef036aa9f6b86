"""Each provider's ``max-in-flight`` and ``rps`` held across a Ray cluster (``--engine ray``).

One :class:`ClusterLimits` actor per run holds, per provider key, the token bucket of ``rps``
(:class:`~ragqa.judges.ratelimit.TokenBucket`, the one a single process uses) and a cluster-wide
count of requests in flight against ``max-in-flight``. Every worker's container gets
:class:`ClusterLimiters` in place of its own :class:`~ragqa.judges.ratelimit.ProviderLimiters`
(``container.limiters.override``), so every request of every judge and embedder of a provider, on
every worker, takes its permit and its token from that one actor:

- **in flight**: a worker fetches permits in leases of up to :data:`LEASE` at once (as many as
  its requests waiting), hands a finished request's permit to the next waiting request of its own,
  and gives it back to the actor after :data:`LEASE` hand-overs (so a busy worker cannot keep the
  permits from another), or, when none of its requests waits, after :data:`RETURN_AFTER_S` together
  with the other idle ones. The actor never grants more than ``max-in-flight`` in total.
- **rate**: a worker fetches tokens in leases of up to :data:`LEASE` (its waiting requests plus one);
  each token is an instant
  (the bucket's reservation, ``1 / rps`` apart) that its request waits for. A token that no
  request claimed within half a spacing (``0.5 / rps``) after its instant is dropped, never used
  late, so the starts of the whole cluster stay within ``rps + 1`` in any one-second window, as in
  one process.
- **429 and Retry-After**: a request of any worker answered with HTTP 429, or with a
  ``Retry-After`` / ``retry-after-ms`` header, holds the provider's bucket for the asked wait (1 s
  for a 429 without one): no worker's next token lease starts earlier
  (:meth:`~ragqa.judges.ratelimit.TokenBucket.hold`). The worker that was told drops the tokens it
  leased for the held time at once; every other worker drops its own with the reply of its next
  lease (of any provider), so each sends at most the requests it already held tokens for. A
  provider without ``rps`` carries the hold on its next permit lease instead.
- **circuit breakers**: the same actor holds each judge's breaker for the whole cluster, and the
  same replies carry its news (:mod:`ragqa.run.ray_breakers`). A failed request gives its permit
  back only after its judge's breaker has counted the failure.

A worker that dies is restarted under the same actor id; its restart first takes back every permit
the dead process held (:meth:`ClusterLimits.forget`), so none is lost to the run.

Each worker keeps the local fair share of its judges (:class:`~ragqa.judges.ratelimit.FairSlots`)
in front of the cluster permit, so a hung judge still cannot starve another on the same worker.
Overhead: one actor round trip per lease, not per call; :meth:`ClusterLimits.stats` counts the
round trips (``docs/scale.md`` gives the measured ratio and its command).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import ray

from ragqa.judges._http import classify_error
from ragqa.judges.ratelimit import ProviderLimiter, ProviderLimiters, TokenBucket
from ragqa.judges.retry import parse_retry_after
from ragqa.run.ray_breakers import Board, BoardUpdate, BreakerStates, Shared
from ragqa.settings import ProviderLimits

__all__ = ["LEASE", "ClusterLimiter", "ClusterLimiters", "ClusterLimits", "start_limits"]

log = logging.getLogger(__name__)

LEASE = 8
"""The most permits or tokens one lease hands a worker (one actor round trip)."""

RETURN_AFTER_S = 0.02
"""How long a worker keeps permits none of its requests waits for before giving them back, seconds."""

HOLD_WITHOUT_RETRY_AFTER_S = 1.0
"""How long a 429 without a ``Retry-After`` header holds the provider's bucket, seconds."""


class _Provider:
    """The cluster-wide state of one provider key, inside the actor."""

    def __init__(self, rps: float | None, max_in_flight: int) -> None:
        self.bucket = TokenBucket(rps) if rps else None
        self.cap = max(1, max_in_flight)
        self.in_use = 0
        self.peak = 0
        self.granted = 0
        self.tokens = 0
        self.round_trips = 0
        self.hold_until = 0.0
        self.held: dict[str, int] = {}
        """Permits out, per worker (a restarted worker's are taken back)."""
        self.changed = asyncio.Condition()


class ClusterLimits:
    """The limiter actor of one run: permits and tokens of every provider key (see the module docstring).

    Run as a Ray async actor (:func:`start_limits`); workers call it through :class:`ClusterLimiter`.
    A provider's limits are those of the first call that names it (every worker resolves the same
    settings, so they agree).
    """

    def __init__(self) -> None:
        self._providers: dict[str, _Provider] = {}
        self.breakers = BreakerStates()
        """Every judge's circuit breaker state across the cluster (:mod:`ragqa.run.ray_breakers`)."""

    def _update(self, since: int) -> BoardUpdate | None:
        """What changed for a worker that saw epoch ``since``: ``None`` when nothing did (the common case)."""
        epoch = self.breakers.epoch
        if since == epoch:
            return None
        now = time.monotonic()
        holds = {key: p.hold_until - now for key, p in self._providers.items() if p.hold_until > now}
        return epoch, self.breakers.snapshot(), holds

    def _provider(self, key: str, rps: float | None, max_in_flight: int) -> _Provider:
        provider = self._providers.get(key)
        if provider is None:
            provider = self._providers[key] = _Provider(rps, max_in_flight)
        provider.round_trips += 1
        return provider

    async def acquire(
        self, key: str, rps: float | None, max_in_flight: int, n: int, holder: str = "", since: int = -1
    ) -> tuple[int, float, BoardUpdate | None]:
        """Wait until a permit is free, then grant up to ``n`` to the worker ``holder``.

        Returns:
            ``(permits granted (>= 1), seconds to wait before using them: a 429's hold, else 0,
            the breakers' and holds' news for a worker that saw epoch ``since``)``.
        """
        provider = self._provider(key, rps, max_in_flight)
        async with provider.changed:
            await provider.changed.wait_for(lambda: provider.in_use < provider.cap)
            granted = min(max(1, n), provider.cap - provider.in_use)
            provider.in_use += granted
            provider.held[holder] = provider.held.get(holder, 0) + granted
            provider.granted += granted
            provider.peak = max(provider.peak, provider.in_use)
        return granted, max(0.0, provider.hold_until - time.monotonic()), self._update(since)

    async def release(self, key: str, n: int, holder: str = "") -> None:
        """Give back ``n`` permits of ``key`` held by the worker ``holder``."""
        provider = self._providers[key]
        provider.round_trips += 1
        n = min(n, provider.held.get(holder, 0))
        provider.held[holder] = provider.held.get(holder, 0) - n
        async with provider.changed:
            provider.in_use = max(0, provider.in_use - n)
            provider.changed.notify_all()

    async def forget(self, holder: str) -> None:
        """Take back every permit and breaker probe of the worker ``holder`` (it died; its restart calls this first)."""
        self.breakers.forget(holder)
        for provider in self._providers.values():
            lost = provider.held.pop(holder, 0)
            if lost:
                async with provider.changed:
                    provider.in_use = max(0, provider.in_use - lost)
                    provider.changed.notify_all()

    async def take(
        self, key: str, rps: float | None, max_in_flight: int, n: int, since: int = -1
    ) -> tuple[float, list[float], BoardUpdate | None]:
        """Reserve ``n`` tokens of the provider's bucket.

        Returns:
            The actor's clock now (the waits count from it); for each token, the seconds from
            then until the instant it may be used (>= 0, increasing); and the news for a worker
            that saw epoch ``since`` (as :meth:`acquire`).
        """
        provider = self._provider(key, rps, max_in_flight)
        provider.tokens += n
        now = time.monotonic()
        if provider.bucket is None:
            return now, [max(0.0, provider.hold_until - now)] * n, self._update(since)
        return now, [provider.bucket.reserve() for _ in range(n)], self._update(since)

    async def hold(self, key: str, seconds: float) -> None:
        """Hand out no token of ``key`` for ``seconds`` (a worker saw a 429 or a ``Retry-After``)."""
        provider = self._providers.get(key)
        if provider is None:
            return
        provider.hold_until = max(provider.hold_until, time.monotonic() + seconds)
        if provider.bucket is not None:
            provider.bucket.hold(seconds)
        self.breakers.epoch += 1  # every worker drops the tokens it leased for the held time

    async def breaker_opened(
        self, key: str, seconds: float, cool_down: float, cause: str | None, failures: int, hung: bool
    ) -> None:
        """A worker's breaker opened (:meth:`BreakerStates.opened`)."""
        self.breakers.opened(key, seconds, cool_down, cause, failures, hung)

    async def breaker_closed(self, key: str) -> None:
        """An answer came through a breaker (:meth:`BreakerStates.closed`)."""
        self.breakers.closed(key)

    async def breaker_neutral(self, key: str, holder: str) -> None:
        """A probe ended telling nothing (:meth:`BreakerStates.neutral`)."""
        self.breakers.neutral(key, holder)

    async def breaker_probe(self, key: str, holder: str) -> Shared:
        """Who probes an open breaker (:meth:`BreakerStates.probe`)."""
        return await self.breakers.probe(key, holder)

    async def breaker_stats(self) -> dict[str, float]:
        """What the breakers cost and did (:meth:`BreakerStates.stats`)."""
        return self.breakers.stats()

    async def stats(self) -> dict[str, dict[str, float]]:
        """Per provider key: ``peak_in_flight``, ``max_in_flight``, ``permits``, ``tokens``, ``round_trips``."""
        return {
            key: {
                "peak_in_flight": p.peak,
                "max_in_flight": p.cap,
                "in_flight": p.in_use,
                "permits": p.granted,
                "tokens": p.tokens,
                "round_trips": p.round_trips,
            }
            for key, p in self._providers.items()
        }


def start_limits(name: str) -> Any:
    """Start the run's limiter actor under ``name`` (no CPU reserved) and return its handle."""
    actor = ray.remote(ClusterLimits).options(name=name, num_cpus=0, max_concurrency=1000)
    return actor.remote()


class _Permits:
    """A worker's leased share of a provider's cluster-wide in-flight permits."""

    def __init__(self, handle: Any, key: str, spec: tuple[float | None, int], holder: str, board: Board) -> None:
        self._handle = handle
        self._key = key
        self._spec = spec
        self._holder = holder
        self._board = board
        self._free = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._fetching: asyncio.Future[None] | None = None
        self._flush: asyncio.TimerHandle | None = None
        self._handovers = 0

    async def acquire(self) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        self._fetch()
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release()
            elif future in self._waiters:
                self._waiters.remove(future)
            raise

    def _serve(self) -> None:
        while self._free > 0 and self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                self._free -= 1
                future.set_result(None)

    def _fetch(self) -> None:
        if self._fetching is None and self._waiters:
            self._fetching = asyncio.ensure_future(self._lease(min(LEASE, len(self._waiters))))

    async def _lease(self, n: int) -> None:
        try:
            granted, wait, update = await self._handle.acquire.remote(
                self._key, *self._spec, n, self._holder, self._board.epoch
            )
            self._board.apply(update)
            if wait > 0:
                await asyncio.sleep(wait)
            self._free += granted
            self._serve()
            if self._free and not self._waiters:  # the waiters left meanwhile
                self._handle.release.remote(self._key, self._free, self._holder)
                self._free = 0
        finally:
            self._fetching = None
        self._fetch()

    def release(self) -> None:
        self._handovers += 1
        if self._waiters and self._handovers % LEASE:
            self._free += 1
            self._serve()
            return
        if self._waiters:  # every LEASE-th hand-over goes back: another worker may be waiting for it
            self._handle.release.remote(self._key, 1, self._holder)
            self._fetch()
            return
        self._free += 1  # idle: kept a moment for this worker's next request, then given back with the others
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(RETURN_AFTER_S, self._give_back)

    def _give_back(self) -> None:
        self._flush = None
        if self._free and not self._waiters:
            self._handle.release.remote(self._key, self._free, self._holder)
            self._free = 0


class _Tokens:
    """A worker's leased tokens of a provider's cluster-wide bucket: instants on this worker's clock.

    An instant is the actor's (its clock when it answered, plus the token's wait), moved onto this
    worker's clock by the smallest difference between the two clocks seen in any reply (answer
    received minus answer sent: the clocks' offset plus the quickest transit). Counting each lease's
    waits from when its reply arrived instead would shift every lease by its own transit, and a
    slow reply followed by a quick one would put two workers' tokens closer than ``1 / rps``.
    """

    def __init__(
        self, handle: Any, key: str, spec: tuple[float | None, int], clock: Callable[[], float], board: Board
    ) -> None:
        self._handle = handle
        self._board = board
        self._key = key
        self._spec = spec
        self._clock = clock
        rps = spec[0]
        self._slack = 0.5 / rps if rps else 0.0
        self._instants: collections.deque[float] = collections.deque()
        self._lock: asyncio.Lock | None = None
        self._waiting = 0
        self._offset = float("inf")
        self.dropped = 0
        """Tokens dropped unused (no request claimed them in time)."""

    async def take(self) -> None:
        """Wait for a token's instant (leasing more from the actor when none is left)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        self._waiting += 1
        try:
            while True:
                now = self._clock()
                while self._instants and self._instants[0] < now - self._slack:
                    self._instants.popleft()
                    self.dropped += 1
                if self._instants:
                    at = self._instants.popleft()
                    break
                async with self._lock:
                    if self._instants:
                        continue
                    sent, waits, update = await self._handle.take.remote(
                        self._key, *self._spec, min(LEASE, self._waiting + 1), self._board.epoch
                    )
                    self._offset = min(self._offset, self._clock() - sent)
                    self._board.apply(update)
                    self._instants.extend(sent + self._offset + w for w in waits)
        finally:
            self._waiting -= 1
        delay = at - self._clock()
        if delay > 0:
            await asyncio.sleep(delay)

    def hold(self, seconds: float) -> None:
        """Drop the leased tokens due within ``seconds`` (a 429): the next ones come from the held bucket."""
        until = self._clock() + seconds
        while self._instants and self._instants[0] < until:
            self._instants.popleft()
            self.dropped += 1


class ClusterLimiter(ProviderLimiter):
    """A provider's limiter on one worker: the local fair share, then the cluster's permit and token.

    Args:
        key: the provider key.
        limits: the provider's limits (``rps`` and ``max_in_flight`` hold for the whole cluster).
        handle: the run's :class:`ClusterLimits` actor.
        holder: this worker's name for the actor (its permits are counted under it).
        clock: a monotonic clock in seconds.
        board: this worker's view of the cluster's breakers and holds (default: its own).
    """

    def __init__(
        self,
        key: str,
        limits: ProviderLimits,
        handle: Any,
        *,
        holder: str = "",
        clock: Callable[[], float] = time.monotonic,
        board: Board | None = None,
    ) -> None:
        local = limits.model_copy(update={"rps": None})  # the rate is the cluster's, never the worker's own
        super().__init__(key, local, clock=clock)
        self.limits = limits
        self._handle = handle
        spec = (limits.rps, limits.max_in_flight)
        self._board = board if board is not None else Board()
        self._permits = _Permits(handle, key, spec, holder, self._board)
        self._tokens = _Tokens(handle, key, spec, clock, self._board) if limits.rps else None
        self._board.on_hold(key, self._hold)

    def _hold(self, seconds: float) -> None:
        if self._tokens is not None:
            self._tokens.hold(seconds)

    async def _take_token(self, deadline: float | None, judge_id: str | None, step: str | None) -> None:
        """Take the cluster's in-flight permit, then its token; refuse the call if its breaker opened meanwhile."""
        try:
            async with asyncio.timeout(None if deadline is None else max(0.0, deadline - self._clock())):
                await self._permits.acquire()
                try:
                    if self._tokens is not None:
                        await self._tokens.take()
                    self._board.check(self.key, judge_id, step)
                except BaseException:
                    self._permits.release()
                    raise
        except TimeoutError:
            self.rejected += 1
            raise self._error(f"no cluster-wide slot within {self._timeout:g}s", judge_id, step) from None

    @asynccontextmanager
    async def slot(self, judge_id: str | None = None, step: str | None = None) -> AsyncIterator[None]:
        """Hold one request slot of the cluster (see :meth:`ProviderLimiter.slot`); report a 429 to every worker."""
        async with super().slot(judge_id, step):
            try:
                yield
            except Exception as exc:
                self._report(exc)
                # given back once the failure reached the judge's breaker (it runs next, in this task):
                # an opening is told to the actor before another worker can get this permit
                asyncio.get_running_loop().call_soon(self._permits.release)
                raise
            except BaseException:
                self._permits.release()
                raise
            self._permits.release()

    def _report(self, exc: Exception) -> None:
        failure = classify_error(exc)
        if failure.kind != "status":
            return
        asked = parse_retry_after(failure.headers)
        if asked is None and failure.status != 429:
            return
        seconds = asked if asked is not None else HOLD_WITHOUT_RETRY_AFTER_S
        log.info("provider %s: %s; every worker holds for %.2fs", self.key, failure.cause, seconds)
        self._hold(seconds)
        self._handle.hold.remote(self.key, seconds)


class ClusterLimiters(ProviderLimiters):
    """The limiter registry of a worker's container: every provider's limiter is a :class:`ClusterLimiter`.

    Args:
        handle: the run's :class:`ClusterLimits` actor.
        holder: this worker's name (the same across its restarts, so a restart takes back what the
            dead process held: :meth:`ClusterLimits.forget`).
    """

    def __init__(self, handle: Any, holder: str = "") -> None:
        super().__init__()
        self.handle = handle
        """The run's :class:`ClusterLimits` actor."""
        self.holder = holder
        """This worker's name."""
        self.board = Board()
        """This worker's view of the cluster's breakers and 429 holds (:mod:`ragqa.run.ray_breakers`)."""

    def _new(self, provider_key: str, limits: ProviderLimits) -> ProviderLimiter:
        return ClusterLimiter(
            provider_key, limits, self.handle, holder=self.holder, clock=self._clock, board=self.board
        )
