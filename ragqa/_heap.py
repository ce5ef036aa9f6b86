"""Keep the garbage collector off the objects that outlive a run, and collect the young ones less often.

A run makes and drops many small objects per judge call (messages, responses, validated answers),
so CPython's cyclic collector runs often; each *full* collection also walks every object the
process built before the run: the imported modules, pydantic schemas, the HTTP clients and the
judges, hundreds of thousands of objects that cannot become garbage while the run needs them.
Measured on the side-by-side benchmark (8,000 requests), these full collections stopped the event
loop for up to a quarter of a second each, long enough for every request slot to fall idle.

:func:`frozen_heap` moves everything alive when a run starts into the collector's permanent
generation (:func:`gc.freeze`, meant for exactly this), so collections during the run walk only
the run's own objects, and gives them back to the collector when the last run ends
(:func:`gc.unfreeze`). Nothing is freed later than before except cyclic garbage among objects that
were alive at the start and die during the run (reference counting still frees the rest at once);
it is collected after the run.

While a run lasts, the youngest generation is also collected every :data:`YOUNG_THRESHOLD`
allocations instead of CPython's 700: each judge call leaves hundreds of short-lived objects, so
at 700 the collector ran after nearly every call and walked the in-flight requests' coroutines
each time (0.34 ms of collector CPU per request on 50 of the side-by-side benchmark's
samples, 0.09 ms at 10,000, both on a loaded machine). Cyclic garbage then waits for at most that
many allocations; the thresholds are put back when the last run ends. Scores do not depend on the
collector.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "frozen_heap"]

YOUNG_THRESHOLD = 10_000
"""Allocations (net of frees) between two collections of the youngest generation during a run."""

_lock = threading.Lock()
_depth = 0
_ours = False
_thresholds: tuple[int, int, int] | None = None


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Freeze the heap for the length of a run (re-entrant, thread-safe; see the module docstring).

    Runs may nest or overlap (two loops in two threads): the heap is frozen and the youngest
    generation's threshold raised to at least :data:`YOUNG_THRESHOLD` when the first starts, and
    both put back when the last ends. A heap someone else froze before (``gc.get_freeze_count() >
    0`` when the first run starts) is left frozen at the end, as it was found; a collector that is
    off (:func:`gc.disable`) stays off.

    Yields:
        Nothing; the body runs with the heap frozen.
    """
    global _depth, _ours, _thresholds
    with _lock:
        if _depth == 0:
            _ours = gc.get_freeze_count() == 0
            gc.freeze()
            _thresholds = gc.get_threshold()
            young, middle, old = _thresholds
            gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _thresholds is not None:
                    gc.set_threshold(*_thresholds)
                    _thresholds = None
                if _ours:
                    gc.unfreeze()
