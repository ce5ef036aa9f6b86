"""How busy the fake server is: requests in flight over time, and the CPU its process used.

:class:`InFlight` follows the number of API requests the server is answering (from the moment a
request is read to the moment its answer is handed to aiohttp) and integrates it over time, so a
benchmark can check that the client really keeps its ``max-in-flight`` requests open: the mean
in flight over the busy time, the peak, and how long each level was held. The clock is
injectable, so tests drive it without sleeping.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

__all__ = ["InFlight"]


class InFlight:
    """Requests in flight, their peak, and the seconds spent at each level (thread-safe).

    Args:
        clock: a monotonic clock in seconds (default :func:`time.monotonic`).

    All times are seconds of ``clock``; the counters only grow, so a caller reads
    :meth:`snapshot` before and after a run and takes the difference.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """Start with nothing in flight."""
        self._clock = clock
        self._lock = threading.Lock()
        self._now = 0
        self._peak = 0
        self._since = clock()
        self._at_level: defaultdict[int, float] = defaultdict(float)

    def _advance(self) -> None:
        now = self._clock()
        self._at_level[self._now] += now - self._since
        self._since = now

    def enter(self) -> None:
        """One more request in flight."""
        with self._lock:
            self._advance()
            self._now += 1
            self._peak = max(self._peak, self._now)

    def leave(self) -> None:
        """One request fewer in flight (its answer is out)."""
        with self._lock:
            self._advance()
            self._now -= 1

    def snapshot(self) -> dict[str, Any]:
        """The counters so far, as JSON-ready values.

        Returns:
            ``in_flight`` (now), ``peak_in_flight`` (the most at once since the start),
            ``seconds_at`` (``{level: seconds}``, level as a string, level 0 included: time
            spent with exactly that many requests in flight), ``busy_s`` (seconds with at least
            one in flight) and ``request_seconds`` (the integral of requests in flight over time,
            so ``request_seconds / busy_s`` is the mean in flight while busy).
        """
        with self._lock:
            self._advance()
            seconds_at = {str(level): s for level, s in sorted(self._at_level.items())}
            busy = sum(s for level, s in self._at_level.items() if level > 0)
            area = sum(level * s for level, s in self._at_level.items())
            return {
                "in_flight": self._now,
                "peak_in_flight": self._peak,
                "seconds_at": seconds_at,
                "busy_s": busy,
                "request_seconds": area,
            }
