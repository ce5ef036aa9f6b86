"""Concurrency shown by counting calls in flight, never by a clock."""

import asyncio


class PeakCounter:
    """Counts calls in flight; ``peak`` is the most at once (concurrency shown without a clock)."""

    def __init__(self) -> None:
        self.now = 0
        self.peak = 0

    async def hold(self, turns: int = 50) -> None:
        """Count one call in flight for ``turns`` turns of the event loop.

        Turns, not seconds: calls started together overlap however slow or loaded the machine is
        (a timer could fire between two turns and end one call before the next one starts).
        """
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            for _ in range(turns):
                await asyncio.sleep(0)
        finally:
            self.now -= 1
