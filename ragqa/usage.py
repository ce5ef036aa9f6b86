"""Usage accounting without threading a ledger through every call.

The evaluator opens a :func:`usage_scope` around each (sample, metric, judge) computation;
adapters call :func:`record_usage` after each provider request. Because asyncio tasks copy the
context when they are created, a call shared between metrics is billed to the metric that made
it first.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from ragqa.schema import Usage

__all__ = ["UsageMeter", "record_usage", "usage_scope"]


class UsageMeter:
    """A mutable accumulator of :class:`~ragqa.schema.Usage`."""

    def __init__(self) -> None:
        """Start at zero."""
        self.total = Usage()

    def add(self, usage: Usage) -> None:
        """Add one request's usage."""
        self.total = self.total + usage


_CURRENT: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar("ragqa_usage", default=None)


@contextmanager
def usage_scope() -> Iterator[UsageMeter]:
    """Collect the usage recorded inside this block (and tasks created inside it)."""
    meter = UsageMeter()
    token = _CURRENT.set(meter)
    try:
        yield meter
    finally:
        _CURRENT.reset(token)


def record_usage(usage: Usage) -> None:
    """Record one provider request in the current scope; a no-op outside any scope."""
    meter = _CURRENT.get()
    if meter is not None:
        meter.add(usage)
