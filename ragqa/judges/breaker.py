"""A per-judge circuit breaker: a dead or hung endpoint costs a few failures, not one per call.

Without it every call of a run rediscovers a dead judge and waits out all its retries. The
breaker counts *consecutive* failures that say the endpoint is **down**: a transport error (a
refused or reset connection) or a timeout. An HTTP answer of any status, 5xx included, proves the
endpoint is up and resets the count: a 500, 502 or 503 burst is outlived by the retry policy
(:mod:`ragqa.judges.retry`), not turned into lost outcomes by the breaker.

States (Nygard, *Release It!*, 2nd ed., 2018, "Circuit Breaker"):

- ``closed``: calls go through; after ``failure_threshold`` consecutive down-failures it opens;
- ``open``: a new call fails at once with :class:`~ragqa.errors.JudgeUnavailable`, whose message
  names the last failure's cause; once the cool-down has passed the next call becomes the
  ``half_open`` probe;
- ``half_open``: one probe request is out; the calls that arrive meanwhile **wait behind it**
  (they are not failed): a successful probe closes the breaker and lets them all through; a
  failed probe opens it again and fails them; a cancelled probe hands the probe to one of them.

The cool-down starts short and grows: ``cool_down_s`` (1 s by default) after the breaker opens,
doubled after each failed probe up to ``max_cool_down_s`` (30 s), and back to ``cool_down_s`` when
it closes (exponential backoff of the probes, as in Nygard's and AWS's advice: AWS Architecture
Blog, *Exponential Backoff and Jitter*, 2015). A restarted judge is therefore probed again within
seconds and used again.

**A hung judge** (it accepts requests and never answers) costs one timeout: a timeout of an
attempt during which the endpoint answered nothing at all is a *hang signal*; at
:data:`HANG_SIGNALS` consecutive ones (the first wave of timeouts, which fire together) the breaker
opens at once, and every other attempt of the judge in flight or waiting for a request slot is cut
short with :class:`~ragqa.errors.JudgeUnavailable` instead of waiting out its own timeout. While it
is open for a hang, its cool-down is at least the request timeout (``hang_cool_down_s``) and
calls do not wait behind its probe (a probe to a hung endpoint may hang too): they fail fast.

The breaker is asked before every attempt (the first and every retry), with
:meth:`CircuitBreaker.admit`; every attempt runs inside :meth:`CircuitBreaker.scope`, which arms the
request timeout and lets the breaker cut it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from types import TracebackType
from typing import Literal

from ragqa.errors import JudgeUnavailable

__all__ = [
    "DEFAULT_COOL_DOWN_S",
    "DEFAULT_FAILURE_THRESHOLD",
    "DEFAULT_MAX_COOL_DOWN_S",
    "HANG_SIGNALS",
    "AttemptScope",
    "BreakerState",
    "CircuitBreaker",
]

log = logging.getLogger(__name__)

DEFAULT_FAILURE_THRESHOLD = 5
"""Consecutive down-failures (transport errors, timeouts) that open the breaker."""
DEFAULT_COOL_DOWN_S = 1.0
"""Seconds an open breaker waits before its first probe; doubled after each failed probe."""
DEFAULT_MAX_COOL_DOWN_S = 30.0
"""The longest cool-down, seconds."""
HANG_SIGNALS = 2
"""Consecutive timeouts with no answer from the endpoint since they started that open the breaker at once."""

BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """The circuit breaker of one judge or embedder (not shared across judges).

    Args:
        name: who it guards, shown in errors and logs, e.g. ``judge 'gpt' (model m at host:443)``.
        judge_id: the judge id put on :class:`~ragqa.errors.JudgeUnavailable`.
        failure_threshold: consecutive down-failures that open it (>= 1).
        cool_down_s: seconds from opening until the first probe may pass (>= 0).
        max_cool_down_s: the cap of the growing cool-down, seconds (raised to ``cool_down_s`` if below).
        hang_cool_down_s: the least cool-down after a hang, seconds (the request timeout;
            default ``max_cool_down_s``).
        clock: a monotonic clock in seconds (injectable for tests).

    Raises:
        ValueError: for a threshold below 1 or a negative cool-down.

    Not thread-safe: use it from one event loop at a time (asyncio code between awaits is atomic).
    """

    def __init__(
        self,
        name: str,
        *,
        judge_id: str | None = None,
        failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
        cool_down_s: float = DEFAULT_COOL_DOWN_S,
        max_cool_down_s: float = DEFAULT_MAX_COOL_DOWN_S,
        hang_cool_down_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError(f"failure_threshold must be >= 1, got {failure_threshold}")
        if cool_down_s < 0:
            raise ValueError(f"cool_down_s must be >= 0, got {cool_down_s}")
        self.name = name
        self.judge_id = judge_id
        self.failure_threshold = failure_threshold
        self.cool_down_s = float(cool_down_s)
        self.max_cool_down_s = float(max(max_cool_down_s, cool_down_s))
        self.hang_cool_down_s = float(hang_cool_down_s) if hang_cool_down_s is not None else self.max_cool_down_s
        self._clock = clock
        self._state: BreakerState = "closed"
        self._failures = 0
        self._hang_signals = 0
        self._hung = False
        self._cool_down = self.cool_down_s
        self._probe_at = 0.0
        self._probe: asyncio.Future[bool | None] | None = None
        self._last_answer_at = float("-inf")
        self._scopes: set[AttemptScope] = set()
        self.last_cause: str | None = None
        """The cause of the last down-failure (``connection refused by host:port``...)."""
        self.rejected = 0
        """Calls failed fast while open."""
        self.opened = 0
        """Times the breaker opened from closed."""
        self.cut = 0
        """Attempts cut short because the judge hung."""

    @property
    def state(self) -> BreakerState:
        """``closed``, ``open`` or ``half_open`` (``open`` turns ``half_open`` only when a probe is let through)."""
        return self._state

    @property
    def consecutive_failures(self) -> int:
        """Down-failures since the last answer."""
        return self._failures

    @property
    def cool_down(self) -> float:
        """The current cool-down, seconds (grows with failed probes, back to ``cool_down_s`` when closed)."""
        return self._cool_down

    @property
    def hung(self) -> bool:
        """Whether the breaker is open because the judge hung (calls fail fast, none waits behind a probe)."""
        return self._hung and self._state != "closed"

    def now(self) -> float:
        """The breaker's clock, seconds."""
        return self._clock()

    def until_probe(self) -> float:
        """Seconds until an open breaker lets its next probe through (0 when closed or half-open)."""
        if self._state != "open":
            return 0.0
        return max(0.0, self._probe_at - self._clock())

    def _unavailable(self, step: str | None, why: str) -> JudgeUnavailable:
        self.rejected += 1
        hung = "; the judge hangs" if self._hung else ""
        return JudgeUnavailable(
            f"{self.name}: unavailable (circuit open after {self._failures} consecutive failure(s){hung}; "
            f"last: {self.last_cause}; {why})",
            judge_id=self.judge_id,
            step=step,
        )

    async def admit(self, step: str | None = None) -> None:
        """Let an attempt through, make it the probe, wait behind the probe, or fail it fast.

        Args:
            step: the prompt being asked, put on the error.

        Raises:
            JudgeUnavailable: the breaker is open and its cool-down has not passed; or the probe
                this call waited behind failed; or the breaker is open for a hang and a probe is out.
        """
        while self._state != "closed":
            if self._state == "open":
                wait = self._probe_at - self._clock()
                if wait > 0:
                    raise self._unavailable(step, f"next probe in {wait:.1f}s")
                self._state = "half_open"
                self._probe = asyncio.get_running_loop().create_future()
                log.info("%s: circuit half-open; letting one probe request through", self.name)
                return
            probe = self._probe
            if self._hung or probe is None:
                raise self._unavailable(step, "a probe request to the hung judge is in flight")
            outcome = await asyncio.shield(probe)
            if outcome is False:
                raise self._unavailable(step, f"the probe failed; next probe in {self.until_probe():.1f}s")
            # True: closed, the loop ends; None: the probe was cancelled, this call may probe

    def scope(self, timeout_s: float | None) -> AttemptScope:
        """The scope of one attempt: its request timeout, which the breaker cuts short when the judge hangs.

        Args:
            timeout_s: the request timeout, armed by :meth:`AttemptScope.arm` once a request
                slot is held (``None``: none).
        """
        return AttemptScope(self, timeout_s)

    def _settle_probe(self, outcome: bool | None) -> None:
        probe, self._probe = self._probe, None
        if probe is not None and not probe.done():
            probe.set_result(outcome)

    def record_success(self) -> None:
        """The endpoint answered (a completion or any HTTP status): close the breaker."""
        self._last_answer_at = self._clock()
        if self._state != "closed":
            log.warning("%s: circuit closed; the endpoint answers again", self.name)
        self._state = "closed"
        self._failures = 0
        self._hang_signals = 0
        self._hung = False
        self._cool_down = self.cool_down_s
        self._settle_probe(True)

    def record_failure(self, cause: str, *, timeout: bool = False, started: float | None = None) -> None:
        """A transport error or a timeout: count it; open the breaker at the threshold or on a hang.

        Args:
            cause: what went wrong, for the error message (``connection refused by host:port``).
            timeout: the attempt timed out.
            started: when the attempt started (:meth:`now`); a timeout with no answer from the
                endpoint since then is a hang signal.
        """
        self.last_cause = cause
        self._failures += 1
        silent = timeout and started is not None and self._last_answer_at < started
        self._hang_signals = self._hang_signals + 1 if silent else 0
        if self._state == "half_open":
            self._cool_down = min(self._cool_down * 2.0, self.max_cool_down_s) if self._cool_down else 0.0
            self._open(hung=silent or self._hung)
            self._settle_probe(False)
            return
        if self._state != "closed":
            return
        hung = self._hang_signals >= HANG_SIGNALS
        if self._failures >= self.failure_threshold or hung:
            log.warning(
                "%s: circuit open after %d consecutive failure(s)%s (last: %s); failing fast for %.1fs",
                self.name,
                self._failures,
                ", the judge hangs" if hung else "",
                cause,
                max(self._cool_down, self.hang_cool_down_s) if hung else self._cool_down,
            )
            self.opened += 1
            self._open(hung=hung)

    def _open(self, *, hung: bool) -> None:
        self._state = "open"
        self._hung = hung
        cool_down = max(self._cool_down, self.hang_cool_down_s) if hung else self._cool_down
        self._probe_at = self._clock() + cool_down
        if hung:
            for scope in list(self._scopes):
                scope.cut_short()

    def record_neutral(self) -> None:
        """An attempt that says nothing about the endpoint (cancelled, refused locally) ended.

        A half-open breaker whose probe this was goes back to open with its probe due now, so one
        of the calls waiting behind it becomes the next probe.
        """
        if self._state == "half_open":
            self._state = "open"
            self._probe_at = self._clock()
            self._settle_probe(None)


class AttemptScope:
    """One attempt's request timeout, which its breaker can cut short (see :meth:`CircuitBreaker.scope`).

    ``async with breaker.scope(timeout_s) as scope:`` enters an unarmed :func:`asyncio.timeout`;
    :meth:`arm` starts the request timeout (after the request slot is held). When the breaker
    opens for a hang, :meth:`cut_short` ends the attempt at once: the block raises
    :class:`~ragqa.errors.JudgeUnavailable` instead of ``TimeoutError``.
    """

    def __init__(self, breaker: CircuitBreaker, timeout_s: float | None) -> None:
        """Remember the breaker and the timeout; nothing runs before ``async with``."""
        self._breaker = breaker
        self._timeout_s = timeout_s
        self._timeout = asyncio.timeout(None)
        self.cut = False
        """Whether the breaker cut this attempt short."""

    async def __aenter__(self) -> AttemptScope:
        """Enter the (unarmed) timeout and register with the breaker."""
        await self._timeout.__aenter__()
        self._breaker._scopes.add(self)
        return self

    def arm(self) -> None:
        """Start the request timeout now (``timeout_s`` from now)."""
        if self._timeout_s is not None and not self.cut and not self._timeout.expired():
            self._timeout.reschedule(asyncio.get_running_loop().time() + self._timeout_s)

    def cut_short(self) -> None:
        """End the attempt now: the judge hangs."""
        if not self.cut and not self._timeout.expired():
            self.cut = True
            self._breaker.cut += 1
            self._timeout.reschedule(asyncio.get_running_loop().time())

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the timeout; a cut attempt raises :class:`~ragqa.errors.JudgeUnavailable`.

        Raises:
            TimeoutError: the request timeout passed.
            JudgeUnavailable: the breaker cut the attempt short (the judge hangs).
        """
        self._breaker._scopes.discard(self)
        try:
            await self._timeout.__aexit__(exc_type, exc, tb)
        except TimeoutError:
            if not self.cut:
                raise
            breaker = self._breaker
            raise JudgeUnavailable(
                f"{breaker.name}: cut short, the judge hangs (other calls got no answer within their timeout; "
                f"last: {breaker.last_cause})",
                judge_id=breaker.judge_id,
            ) from None
