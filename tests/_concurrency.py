"""Concurrency shown by counting calls in flight, never by a clock."""

import asyncio


class PeakCounter:
    """Counts calls in flight; ``peak`` is the most at once (concurrency shown without a clock)."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    async def hold(self, seconds: float = 0.02) -> None:
        """Count one call in flight for ``seconds`` (a lower bound on its length, never asserted)."""
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            await asyncio.sleep(seconds)
        finally:
            self.now -= 1
