"""An event loop whose clock a test moves forward: timeouts fire when the test says, never by load.

A per-request timeout or a run deadline is an ``asyncio`` timer on the running loop's clock. On a
loaded machine a short real timer also fires on calls that were meant to finish, so tests give
timers generous values (they must not fire by themselves) and, once everything that must finish
has finished, jump the loop's clock past them with :meth:`SteppedLoop.advance`: exactly the timers
then pending (the request parked at the fake server, the run's deadline) fall due. Timers set
after the jump count from the new time, so later work is not cut short.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

HANG_GUARD_S = 600
"""Only stops a wait that can never end from blocking the suite; not a speed check."""


class SteppedLoop(asyncio.SelectorEventLoop):
    """A selector event loop whose :meth:`time` is the monotonic clock plus an offset the test sets."""

    def __init__(self) -> None:
        super().__init__()
        self.offset = 0.0

    def time(self) -> float:
        """The loop's clock, seconds: the real monotonic time plus every :meth:`advance` so far."""
        return super().time() + self.offset

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward: pending timers due by then fire on the next loop turn."""
        self.offset += seconds


def run_stepped(main: Callable[[SteppedLoop], Awaitable[T]]) -> T:
    """Run ``main(loop)`` to completion on a fresh :class:`SteppedLoop` (from a plain test function)."""

    async def start() -> T:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, SteppedLoop)
        return await main(loop)

    with asyncio.Runner(loop_factory=SteppedLoop) as runner:
        return runner.run(start())


async def settle(turns: int = 50) -> None:
    """Give the loop ``turns`` turns: continuations already queued (no I/O, no timer) run to their end.

    A count of loop turns, not a time: how far ready work gets does not depend on the machine.
    """
    for _ in range(turns):
        await asyncio.sleep(0)


async def until(condition: Callable[[], bool], what: str = "the condition") -> None:
    """Wait until ``condition()`` holds: a lower bound on time, never a speed check.

    Raises:
        AssertionError: after :data:`HANG_GUARD_S` seconds (a hang, not a slow machine).
    """
    guard = time.monotonic() + HANG_GUARD_S
    while not condition():
        assert time.monotonic() < guard, f"{what} never came true (hung)"
        await asyncio.sleep(0.005)
