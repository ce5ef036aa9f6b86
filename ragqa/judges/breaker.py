"""A per-judge circuit breaker: a dead or hung endpoint costs K failures, not one per call.

Without it every call of a run rediscovers a dead judge and waits out all its retries. The
breaker counts *consecutive* failures that say the endpoint is down (transport errors such as a
refused connection, timeouts and 5xx answers). Any other answer (a 2xx, a 4xx such as 429 or
401, an invalid completion) proves the endpoint is up and resets the count.

States (Nygard, *Release It!*, "Circuit Breaker"):

- ``closed``: calls go through; after ``failure_threshold`` consecutive down-failures it opens;
- ``open``: every call fails at once with :class:`~ragqa.errors.JudgeUnavailable`, whose message
  names the last failure's cause; after ``cool_down_s`` it lets ONE probe request through
  (``half_open``) while the other calls keep failing fast;
- ``half_open``: the probe's success closes the breaker; its failure opens it again for another
  ``cool_down_s``.

The breaker is checked before every attempt (the first and every retry), so an open breaker also
stops the retries of calls already running.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal

from ragqa.errors import JudgeUnavailable

__all__ = ["DEFAULT_COOL_DOWN_S", "DEFAULT_FAILURE_THRESHOLD", "BreakerState", "CircuitBreaker"]

log = logging.getLogger(__name__)

DEFAULT_FAILURE_THRESHOLD = 5
"""Consecutive down-failures (transport, timeout, 5xx) that open the breaker."""
DEFAULT_COOL_DOWN_S = 30.0
"""Seconds an open breaker waits before letting one probe request through."""

BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """The circuit breaker of one judge or embedder (not shared across judges).

    Args:
        name: who it guards, shown in errors and logs, e.g. ``judge 'gpt' (model m at host:443)``.
        judge_id: the judge id put on :class:`~ragqa.errors.JudgeUnavailable`.
        failure_threshold: consecutive down-failures that open it (>= 1).
        cool_down_s: seconds from opening until one probe may pass (>= 0).
        clock: a monotonic clock in seconds (injectable for tests).

    Not thread-safe: use it from one event loop at a time (asyncio code between awaits is atomic).
    """

    def __init__(
        self,
        name: str,
        *,
        judge_id: str | None = None,
        failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
        cool_down_s: float = DEFAULT_COOL_DOWN_S,
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
        self._clock = clock
        self._state: BreakerState = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._probe_out = False
        self.last_cause: str | None = None
        """The cause of the last down-failure (``connection refused to host:port``...)."""
        self.rejected = 0
        """Calls failed fast while open."""
        self.opened = 0
        """Times the breaker opened."""

    @property
    def state(self) -> BreakerState:
        """``closed``, ``open`` or ``half_open`` (``open`` turns ``half_open`` only when a probe is let through)."""
        return self._state

    @property
    def consecutive_failures(self) -> int:
        """Down-failures since the last success."""
        return self._failures

    def before_attempt(self, step: str | None = None) -> None:
        """Let an attempt through, or fail it fast.

        Raises:
            JudgeUnavailable: the breaker is open and the cool-down has not passed, or a
                half-open probe is already in flight.
        """
        if self._state == "closed":
            return
        now = self._clock()
        if self._state == "open" and now - self._opened_at >= self.cool_down_s:
            self._state = "half_open"
            self._probe_out = False
        if self._state == "half_open" and not self._probe_out:
            self._probe_out = True
            log.info("%s: circuit half-open; letting one probe request through", self.name)
            return
        self.rejected += 1
        wait = max(0.0, self._opened_at + self.cool_down_s - now)
        next_probe = f"next probe in {wait:.1f}s" if self._state == "open" else "a probe request is in flight"
        raise JudgeUnavailable(
            f"{self.name}: unavailable (circuit open after {self._failures} consecutive failure(s); "
            f"last: {self.last_cause}; {next_probe})",
            judge_id=self.judge_id,
            step=step,
        )

    def record_success(self) -> None:
        """The endpoint answered (any answer that is not a 5xx): close the breaker."""
        if self._state != "closed":
            log.warning("%s: circuit closed; the endpoint answers again", self.name)
        self._state = "closed"
        self._failures = 0
        self._probe_out = False

    def record_failure(self, cause: str) -> None:
        """A transport error, timeout or 5xx: count it; open the breaker at the threshold.

        Args:
            cause: what went wrong, for the error message (``connection refused to host:port``).
        """
        self.last_cause = cause
        self._failures += 1
        if self._state == "half_open" or (self._state == "closed" and self._failures >= self.failure_threshold):
            if self._state == "closed":
                log.warning(
                    "%s: circuit open after %d consecutive failures (last: %s); failing fast for %.0fs",
                    self.name,
                    self._failures,
                    cause,
                    self.cool_down_s,
                )
                self.opened += 1
            self._state = "open"
            self._opened_at = self._clock()
            self._probe_out = False

    def record_neutral(self) -> None:
        """An attempt that says nothing about the endpoint (cancelled, refused locally) ended.

        Frees the half-open probe so another call may probe.
        """
        if self._state == "half_open":
            self._probe_out = False
