"""The pool of panel actors of a Ray run: batches in, records out, from ``MIN`` to ``MAX`` workers.

``--workers N`` keeps ``N`` actors; ``--workers MIN:MAX`` starts ``MIN`` and adds one actor at a
time, up to ``MAX``, while batches wait for a free worker (every actor already has
:data:`PER_ACTOR` batches) and no other added actor is still starting. An actor joins the pool
only once it is ready (it has built its panel), so a worker the cluster has no CPU for never holds
a batch. Ray's ``ActorPool`` and Ray Data's ``ActorPoolStrategy(min_size, max_size)`` do the same
for their own inputs; this one reads the batches lazily from the run's dataset and hands each
batch's records to the driver as they come, which the results file needs (see
:mod:`ragqa.run.ray_engine`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import ray

from ragqa.errors import RagqaError

__all__ = ["PER_ACTOR", "ActorPool"]

PER_ACTOR = 2
"""Batches in flight per actor: one runs, one waits, so a worker never idles between batches."""


class ActorPool:
    """Hands batches to actors, at most :data:`PER_ACTOR` each, growing from ``min_size`` to ``max_size``.

    Args:
        make: starts one actor (an actor with ``ready()`` and ``score(batch)`` methods).
        min_size: actors started at once (>= 1).
        max_size: the most actors (>= ``min_size``).

    Attributes:
        actors: the actors started so far (those starting too); the caller kills them.
        peak: the most actors in the pool at once.
    """

    def __init__(self, make: Callable[[], Any], *, min_size: int, max_size: int) -> None:
        """Start ``min_size`` actors (each counts as ready; its first call waits for it).

        Raises:
            ValueError: unless ``1 <= min_size <= max_size``.
        """
        if not 1 <= min_size <= max_size:
            raise ValueError(f"need 1 <= min_size <= max_size, got {min_size} and {max_size}")
        self._make = make
        self.max_size = max_size
        self.actors: list[Any] = [make() for _ in range(min_size)]
        self._ready: list[Any] = list(self.actors)
        self.peak = min_size

    async def run(self, batches: Iterator[Any], on_result: Callable[[Any], None]) -> None:
        """Score every batch, calling ``on_result`` with what each ``score`` call returned, as it comes.

        Raises:
            RagqaError: what an actor raised (the ragqa error itself, not Ray's wrapper).
            asyncio.CancelledError: when cancelled; the calls in flight are cancelled.
        """
        busy = [0] * len(self._ready)
        running: dict[asyncio.Future[Any], int] = {}
        starting: dict[asyncio.Future[Any], Any] = {}
        waiting = next(batches, None)
        try:
            while True:
                for index in sorted(range(len(busy)), key=busy.__getitem__):
                    if waiting is None or busy[index] >= PER_ACTOR:
                        break
                    running[asyncio.ensure_future(_result(self._ready[index].score.remote(waiting)))] = index
                    busy[index] += 1
                    waiting = next(batches, None)
                if waiting is not None and not starting and len(self.actors) < self.max_size:
                    actor = self._make()  # batches wait for a worker: add one
                    self.actors.append(actor)
                    starting[asyncio.ensure_future(_result(actor.ready.remote()))] = actor
                if not running:
                    return
                done, _ = await asyncio.wait([*running, *starting], return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    if future in starting:
                        actor = starting.pop(future)
                        future.result()
                        self._ready.append(actor)
                        busy.append(0)
                        self.peak = max(self.peak, len(self._ready))
                    else:
                        busy[running.pop(future)] -= 1
                        on_result(future.result())
        finally:
            pending = [*running, *starting]
            for future in pending:
                future.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)


async def _result(ref: Any) -> Any:
    """Await a Ray call; a ragqa error raised on the worker is raised here as itself."""
    try:
        return await ref
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # the actors are killed next in any case
            ray.cancel(ref)
        raise
    except ray.exceptions.RayError as exc:
        cause = _ragqa_cause(exc)
        if cause is not None:
            raise cause from None
        raise


def _ragqa_cause(exc: BaseException) -> RagqaError | None:
    """The ragqa error inside a Ray error (a task's, or an actor's that failed to start), if any."""
    seen: BaseException | None = exc
    for _ in range(6):
        if seen is None:
            return None
        if isinstance(seen, RagqaError) and not isinstance(seen, ray.exceptions.RayError):
            return seen
        nested = getattr(seen, "cause", None) or seen.__cause__
        seen = nested if isinstance(nested, BaseException) else None
    return None
