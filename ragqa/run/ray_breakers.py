"""Each judge's circuit breaker shared by every worker of a Ray run (``--engine ray``).

In one process a judge has one :class:`~ragqa.judges.breaker.CircuitBreaker`: once the endpoint is
found down, every call of the run fails fast until a probe finds it up again. On a cluster each
worker has its own, so without sharing every worker would rediscover a dead judge (its own
``failure-threshold`` of failures, or its own hung timeouts) and probe it on its own. Here the
run's limiter actor (:class:`~ragqa.run.ray_limits.ClusterLimits`) also holds each breaker's
cluster-wide state (:class:`BreakerStates`), and every worker's breakers are
:class:`ClusterBreaker` (:func:`share_breakers`):

- **open**: a worker whose breaker opens (its own failures, as in one process) tells the actor,
  once. Every other worker learns it with the reply of its next permit or token lease (a
  :class:`Board` update rides on the replies; none when nothing changed), opens its own breaker
  for the same remaining cool-down (cutting its attempts short when the judge hangs), and a
  request that got its permit after the news is refused before it is sent
  (:meth:`Board.check`). The worker that saw the failure gives its permit back only after its
  breaker has heard the failure (:class:`~ragqa.run.ray_limits.ClusterLimiter`), so no other
  worker's request slips in between with the old state.
- **probe**: when the cool-down has passed, the first worker to ask the actor sends the one probe
  request of the cluster; the calls of every worker that arrive meanwhile wait behind it (a hung
  judge's calls fail fast instead, as in one process). A successful probe closes the breaker
  everywhere; a failed one opens it again with the doubled cool-down; a probe whose worker died
  or was cancelled hands the probe to the next caller.
- **cost**: nothing per call while every breaker is closed and no 429 hold changes (the lease
  replies carry ``None``); one actor call when a breaker opens, closes or is probed, and one
  snapshot per change on each worker's next lease.

Failure *counts* stay per worker (one worker needs its own ``failure-threshold`` of consecutive
failures to open the breaker), as counting them across workers would cost a report per success.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from ragqa.errors import JudgeUnavailable
from ragqa.judges.breaker import CircuitBreaker

__all__ = ["PROBE_RECHECK_S", "Board", "BoardUpdate", "BreakerStates", "ClusterBreaker", "Shared", "share_breakers"]

log = logging.getLogger(__name__)

PROBE_RECHECK_S = 1.0
"""While another worker probes a hung judge, how long a worker fails its calls fast before asking again, seconds."""

Shared = tuple[str, float, float, str | None, int, bool]
"""A breaker's cluster state: ``(state, seconds until its probe, cool-down, last cause, failures, hung)``."""

BoardUpdate = tuple[int, dict[str, Shared], dict[str, float]]
"""``(epoch, {breaker key: state} of every breaker not closed, {provider key: seconds of 429 hold left})``."""


class _State:
    """One breaker's cluster-wide state inside the actor (a closed breaker has none)."""

    def __init__(self) -> None:
        self.state = "open"
        self.probe_at = 0.0
        self.cool_down = 0.0
        self.cause: str | None = None
        self.failures = 0
        self.hung = False
        self.prober: str | None = None
        self.settled: asyncio.Future[bool | None] | None = None


class BreakerStates:
    """The cluster-wide state of every breaker of a run, kept by the limiter actor.

    Args:
        clock: a monotonic clock in seconds (one machine's clock is every local process's clock;
            across machines only differences of it travel).

    Attributes:
        epoch: counts the changes; a worker that saw this epoch has nothing new to learn.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._states: dict[str, _State] = {}
        self.epoch = 0
        self.opened_count = 0
        """Reports of a breaker opening (one per worker that opened it on its own failures)."""
        self.probes = 0
        """Probes handed out."""
        self.calls = 0
        """Actor calls about breakers (the per-call overhead is these over the run's requests)."""

    def _settle(self, state: _State, outcome: bool | None) -> None:
        settled, state.settled, state.prober = state.settled, None, None
        if settled is not None and not settled.done():
            settled.set_result(outcome)

    def opened(self, key: str, seconds: float, cool_down: float, cause: str | None, failures: int, hung: bool) -> None:
        """A worker's breaker ``key`` opened (or its probe failed): open it for ``seconds`` everywhere."""
        self.calls += 1
        self.opened_count += 1
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = _State()
        state.state, state.probe_at, state.cool_down = "open", self._clock() + seconds, cool_down
        state.cause, state.failures, state.hung = cause, failures, hung
        self._settle(state, False)
        self.epoch += 1

    def closed(self, key: str) -> None:
        """An answer came back through breaker ``key``: close it everywhere, letting the calls behind a probe go."""
        self.calls += 1
        state = self._states.pop(key, None)
        if state is not None:
            self._settle(state, True)
            self.epoch += 1

    def neutral(self, key: str, holder: str) -> None:
        """The probe of worker ``holder`` ended telling nothing (cancelled): the next caller probes."""
        self.calls += 1
        state = self._states.get(key)
        if state is not None and state.state == "half_open" and state.prober == holder:
            state.state, state.probe_at = "open", self._clock()
            self._settle(state, None)
            self.epoch += 1

    def forget(self, holder: str) -> None:
        """Worker ``holder`` died: a probe it held goes to the next caller."""
        for key, state in list(self._states.items()):
            if state.prober == holder:
                self.neutral(key, holder)

    def _shared(self, state: _State) -> Shared:
        until = max(0.0, state.probe_at - self._clock())
        return (state.state, until, state.cool_down, state.cause, state.failures, state.hung)

    async def probe(self, key: str, holder: str) -> Shared:
        """Whether worker ``holder`` may send the probe of breaker ``key`` now.

        Returns:
            The state, whose first item says what to do: ``closed`` (call as usual), ``probe``
            (this call is the cluster's probe), ``open`` (fail fast; the probe is in the second
            item's seconds). While another worker's probe is out, waits for its outcome first
            (a hung judge's callers do not wait: ``open`` for :data:`PROBE_RECHECK_S`).
        """
        self.calls += 1
        while True:
            state = self._states.get(key)
            if state is None:
                return ("closed", 0.0, 0.0, None, 0, False)
            if state.state == "open":
                if state.probe_at > self._clock():
                    return self._shared(state)
                state.state, state.prober = "half_open", holder
                state.settled = asyncio.get_running_loop().create_future()
                self.probes += 1
                self.epoch += 1
                return ("probe", 0.0, state.cool_down, state.cause, state.failures, state.hung)
            if state.hung or state.settled is None:
                return ("open", PROBE_RECHECK_S, state.cool_down, state.cause, state.failures, state.hung)
            await asyncio.shield(state.settled)  # True: closed; False: open again; None: ask again

    def snapshot(self) -> dict[str, Shared]:
        """Every breaker not closed, by key."""
        return {key: self._shared(state) for key, state in self._states.items()}

    def stats(self) -> dict[str, float]:
        """``opened`` reports, ``probes`` handed out, ``calls`` about breakers, ``open`` breakers now."""
        return {"opened": self.opened_count, "probes": self.probes, "calls": self.calls, "open": len(self._states)}


class ClusterBreaker(CircuitBreaker):
    """A judge's breaker on one worker, sharing its state through the run's actor (see the module docstring).

    Args:
        like: the breaker it replaces (its name, judge id, threshold, cool-downs and clock are kept).
        key: the breaker's name for the actor, the same on every worker (``provider/judge id``).
        handle: the run's :class:`~ragqa.run.ray_limits.ClusterLimits` actor.
        holder: this worker's name for the actor.
        board: this worker's :class:`Board` (the breaker registers with it).
    """

    def __init__(self, like: CircuitBreaker, key: str, handle: Any, holder: str, board: Board) -> None:
        super().__init__(
            like.name,
            judge_id=like.judge_id,
            failure_threshold=like.failure_threshold,
            cool_down_s=like.cool_down_s,
            max_cool_down_s=like.max_cool_down_s,
            hang_cool_down_s=like.hang_cool_down_s,
            clock=like._clock,
        )
        self.key = key
        self._handle = handle
        self._holder = holder
        self._board = board
        self.reported = False
        """Its opening was told to the actor and no update has shown it yet."""
        board.add(self)

    def record_failure(self, cause: str, *, timeout: bool = False, started: float | None = None) -> None:
        """As :meth:`CircuitBreaker.record_failure`; an opening is told to every worker."""
        before = self._state
        super().record_failure(cause, timeout=timeout, started=started)
        if self._state == "open" and before != "open":
            self.reported = True
            self._handle.breaker_opened.remote(
                self.key, self.until_probe(), self._cool_down, self.last_cause, self._failures, self._hung
            )

    def record_success(self) -> None:
        """As :meth:`CircuitBreaker.record_success`; closes the breaker everywhere if it was open anywhere."""
        before = self._state
        super().record_success()
        if before != "closed" or self.key in self._board.open:
            self._board.open.discard(self.key)
            self._handle.breaker_closed.remote(self.key)

    def record_neutral(self) -> None:
        """As :meth:`CircuitBreaker.record_neutral`; a cancelled probe hands the cluster's probe on."""
        before = self._state
        super().record_neutral()
        if before == "half_open":
            self._handle.breaker_neutral.remote(self.key, self._holder)

    async def admit(self, step: str | None = None) -> None:
        """As :meth:`CircuitBreaker.admit`, but the probe is the cluster's: the actor says who sends it.

        Raises:
            JudgeUnavailable: as :meth:`CircuitBreaker.admit`, also when another worker's probe failed.
        """
        while self._state == "open" and self._probe is None and self._probe_at <= self._clock():
            asked: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()
            self._state, self._probe = "half_open", asked  # this worker's other calls wait behind the answer
            try:
                shared = await self._handle.breaker_probe.remote(self.key, self._holder)
            except BaseException:
                if self._probe is asked:
                    self.record_neutral()
                raise
            if self._probe is not asked:  # an answer or a failure of this worker settled it meanwhile
                continue
            verdict, seconds = shared[0], shared[1]
            if verdict == "probe":
                return  # half-open: this call is the cluster's probe
            if verdict == "closed":
                self._board.open.discard(self.key)
                CircuitBreaker.record_success(self)  # another worker's probe found the judge up
                return
            self.adopt(shared)
            raise self._unavailable(step, f"another worker's probe failed; next probe in {seconds:.1f}s")
        await super().admit(step)

    def adopt(self, shared: Shared) -> None:
        """Take the cluster's state ``shared`` of an open breaker (opened elsewhere, or a probe failed elsewhere)."""
        _, seconds, cool_down, cause, failures, hung = shared
        if self._state == "closed":
            log.warning(
                "%s: circuit opened on another worker (last: %s); failing fast for %.1fs", self.name, cause, seconds
            )
        self.last_cause = cause
        self._failures = max(self._failures, failures)
        self._cool_down = max(self._cool_down, cool_down)
        self._open(hung=hung)
        self._probe_at = self._clock() + seconds
        self._settle_probe(False)

    def refuse(self, step: str | None) -> JudgeUnavailable | None:
        """The error for a request about to be sent while this breaker is open, else ``None``."""
        if self._state != "open":
            return None
        return self._unavailable(step, "opened while this call waited for its request slot")


class Board:
    """What one worker knows of the cluster's breakers and 429 holds, from its leases' replies.

    Attributes:
        epoch: the last :attr:`BreakerStates.epoch` seen (sent with every lease; ``-1``: nothing yet).
        open: keys of the breakers open somewhere in the cluster, as of the last update.
    """

    def __init__(self) -> None:
        self.epoch = 0
        self.open: set[str] = set()
        self._breakers: dict[str, ClusterBreaker] = {}
        self._holds: dict[str, Callable[[float], None]] = {}

    def add(self, breaker: ClusterBreaker) -> None:
        """Register a breaker of this worker."""
        self._breakers[breaker.key] = breaker

    def on_hold(self, provider_key: str, hold: Callable[[float], None]) -> None:
        """Call ``hold(seconds)`` when an update says provider ``provider_key`` is held (a 429 elsewhere)."""
        self._holds[provider_key] = hold

    def apply(self, update: BoardUpdate | None) -> None:
        """Take an update from a lease's reply (``None``: nothing changed since :attr:`epoch`)."""
        if update is None:
            return
        epoch, breakers, holds = update
        if epoch <= self.epoch:
            return
        self.epoch = epoch
        self.open = set(breakers)
        for key, breaker in self._breakers.items():
            shared = breakers.get(key)
            if shared is not None:
                breaker.reported = False
                if breaker.state == "closed":  # opened elsewhere (half-open there: its next call waits for the probe)
                    breaker.adopt(shared)
            elif breaker.state == "open" and not breaker.reported:
                CircuitBreaker.record_success(breaker)  # a probe elsewhere found the judge up
        for provider_key, seconds in holds.items():
            hold = self._holds.get(provider_key)
            if hold is not None and seconds > 0:
                hold(seconds)

    def check(self, provider_key: str, judge_id: str | None, step: str | None) -> None:
        """Refuse a request whose breaker opened while it waited for its permit or token.

        Raises:
            JudgeUnavailable: the breaker of ``judge_id`` at ``provider_key`` is open.
        """
        breaker = self._breakers.get(f"{provider_key}/{judge_id}")
        error = breaker.refuse(step) if breaker is not None else None
        if error is not None:
            raise error


def share_breakers(clients: Iterable[Any], handle: Any, holder: str, board: Board) -> int:
    """Give every HTTP judge or embedder of ``clients`` a :class:`ClusterBreaker` in place of its own.

    Args:
        clients: judges and embedders (the uncached instances: those that own a ``breaker`` and a
            ``limiter``); others (local judges) are left as they are.
        handle: the run's limiter actor.
        holder: this worker's name.
        board: this worker's board.

    Returns:
        How many breakers were replaced.
    """
    replaced = 0
    for client in clients:
        breaker = getattr(client, "breaker", None)
        limiter = getattr(client, "limiter", None)
        if isinstance(breaker, CircuitBreaker) and not isinstance(breaker, ClusterBreaker) and limiter is not None:
            client.breaker = ClusterBreaker(breaker, f"{limiter.key}/{client.id}", handle, holder, board)
            replaced += 1
    return replaced
