"""The local judge's worker thread: its CPU work runs here, never on the event loop.

Sentence splitting, stemming and support scoring are pure CPU work. Run on the event loop they
block it for tens of milliseconds per call: the progress bar jumps in blocks and the HTTP judges
of a mixed panel wait for their responses to be read. Every local handler therefore computes its
answer with :func:`run_in_worker`, which hands the function to one dedicated thread with
``loop.run_in_executor`` (ragqa's only event loop stays in :mod:`ragqa.run.loop`).

One thread, not a pool: Python runs one thread's bytecode at a time, so more threads would not
answer faster, while one thread computes each shared cache entry (a context's sentences and
features) once instead of racing to compute it twice.

When every judge of the panel is local, the panel evaluator sets
:data:`ragqa.judges.offload.inline_work` and the work runs in place: with no HTTP judge to serve,
the hand-off to the thread only costs CPU.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from ragqa.judges.offload import inline_work

__all__ = ["run_in_worker", "worker_thread_name"]

P = ParamSpec("P")
T = TypeVar("T")

_LOCK = threading.Lock()
_EXECUTOR: ThreadPoolExecutor | None = None

worker_thread_name = "ragqa-local-judge"
"""Name prefix of the worker thread (shown in thread dumps and profiles)."""


def _executor() -> ThreadPoolExecutor:
    global _EXECUTOR
    with _LOCK:
        if _EXECUTOR is None:
            _EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix=worker_thread_name)
        return _EXECUTOR


async def run_in_worker(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Run ``fn(*args, **kwargs)`` in the local judge's worker thread and await its result.

    Args:
        fn: a synchronous, thread-safe function (the local judge's text functions are).
        *args: its positional arguments.
        **kwargs: its keyword arguments.

    Returns:
        What ``fn`` returns.

    Raises:
        Exception: whatever ``fn`` raises, re-raised in the caller. A cancelled caller stops
            waiting at once; the function itself finishes in the worker and its result is dropped.
    """
    if inline_work.get():  # a panel of local judges only: nothing else needs the loop meanwhile
        return fn(*args, **kwargs)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executor(), functools.partial(fn, *args, **kwargs))
