"""The one place in ragqa that drives an event loop.

Every synchronous entry point (the CLI, ``ragqa test``, :func:`ragqa.evaluate`, the pytest plugin
and ``check_metric``) runs its coroutine on one long-lived event loop in a daemon thread,
:class:`LoopThread`. That gives three properties at once:

- it works whether or not the caller's thread already runs a loop (a notebook, an async web
  handler): the coroutine never runs on the caller's loop, so nothing nests;
- HTTP clients that judges bind to the loop that first used them stay valid from one run to the
  next, so one container serves many runs;
- Ctrl-C in the caller's thread cancels the run's task on the loop and waits a bounded grace
  period for it to unwind (in-flight judge calls are cancelled), then re-raises
  :class:`KeyboardInterrupt`, so callers keep whatever was already written.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread", "default_loop", "run_sync"]

T = TypeVar("T")

_POLL_S = 0.1

CANCEL_GRACE_S = 2.0
"""Seconds an interrupted run gets to cancel its calls and unwind before the interrupt propagates."""


class LoopThread:
    """One event loop running forever in a daemon thread.

    Args:
        name: the thread's name (shown in thread dumps).
    """

    def __init__(self, name: str = "ragqa-loop") -> None:
        """Start the loop thread."""
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """True while the loop thread is alive and the loop is open."""
        return self._thread.is_alive() and not self.loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; the returned future is thread-safe.

        Raises:
            RuntimeError: when called from the loop's own thread (waiting on it would deadlock) or
                after :meth:`stop`; the coroutine is closed unrun.
        """
        if threading.current_thread() is self._thread or not self.running:
            coro.close()
            raise RuntimeError("ragqa's event loop cannot run this: called from its own thread or after stop()")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], *, grace_s: float = CANCEL_GRACE_S) -> T:
        """Run ``coro`` on the loop and block until it returns; safe inside a running loop of the caller.

        Args:
            coro: the coroutine to run.
            grace_s: seconds an interrupted run gets to unwind after its task is cancelled.

        Returns:
            The coroutine's result.

        Raises:
            KeyboardInterrupt: when interrupted while waiting; the task was cancelled first and got
                up to ``grace_s`` seconds to finish its cancellation.
            Exception: whatever the coroutine raises.
        """
        holder: list[asyncio.Task[Any]] = []
        interrupted = threading.Event()
        finished = threading.Event()

        async def tracked() -> T:
            try:
                task = asyncio.current_task()
                if task is not None:
                    holder.append(task)
                if interrupted.is_set():  # Ctrl-C came before the run even started
                    coro.close()
                    raise asyncio.CancelledError
                return await coro
            finally:
                finished.set()

        def cancel() -> None:
            for task in holder:
                task.cancel()

        try:
            future = self.submit(tracked())
            while not future.done():  # wake now and then so Ctrl-C is handled even if another thread got the signal
                concurrent.futures.wait([future], timeout=_POLL_S)
            return future.result()
        except KeyboardInterrupt:
            interrupted.set()
            if self.running:
                self.loop.call_soon_threadsafe(cancel)
                finished.wait(timeout=grace_s)
            raise

    async def arun(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` run on this loop from another event loop (cancellation is forwarded)."""
        return await asyncio.wrap_future(self.submit(coro))

    def stop(self, *, timeout_s: float = 10.0) -> None:
        """Cancel what still runs, shut down async generators, stop the loop and join the thread."""
        if self.loop.is_closed():
            return

        async def drain() -> None:
            current = asyncio.current_task()
            pending = [t for t in asyncio.all_tasks() if t is not current]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            await self.loop.shutdown_asyncgens()

        if self._thread.is_alive():
            with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
                asyncio.run_coroutine_threadsafe(drain(), self.loop).result(timeout=timeout_s)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=timeout_s)
        if not self._thread.is_alive():
            self.loop.close()


_default: LoopThread | None = None
_lock = threading.Lock()


def default_loop() -> LoopThread:
    """Return ragqa's shared loop thread, started on first use and stopped at interpreter exit."""
    global _default
    with _lock:
        if _default is None or not _default.running:
            _default = LoopThread()
            atexit.register(_default.stop)
        return _default


def run_sync(coro: Coroutine[Any, Any, T], *, grace_s: float = CANCEL_GRACE_S) -> T:
    """Run ``coro`` to completion on ragqa's shared loop thread and return its result.

    Works from plain code and from inside a running event loop (a notebook cell); see
    :meth:`LoopThread.run` for interruption.

    Raises:
        KeyboardInterrupt: when interrupted (after the run was cancelled).
        RuntimeError: when called from a coroutine that itself runs on ragqa's loop thread.
        Exception: whatever the coroutine raises.
    """
    return default_loop().run(coro, grace_s=grace_s)
