"""Where a Ray run's CPU goes: ``scale_out.py --profile DIR`` profiles the driver and every worker actor.

- Each ``PanelWorker`` actor is replaced by :class:`ProfiledWorker`, which measures its process's
  CPU (``time.process_time``: every thread) when its constructor starts (the process's start and the
  import of ragqa), after the build, and around each batch, and profiles its batches with cProfile
  on the thread's CPU clock (``time.thread_time``), both threads: Ray's (unpickling, compacting,
  pickling) and ragqa's loop thread (scoring). It writes ``worker-<pid>.prof`` and
  ``worker-<pid>.json`` (the phases' CPU seconds) into ``DIR`` after every batch.
- The driver's loop thread (the runner: checking pass, estimate, batches, results) is profiled the
  same way, one file per way of the run (``driver-<way>.prof``).

Ray's workers import this module by name (Ray puts the driver script's folder on their path), and
find ``DIR`` in the variable :data:`ENV`, which the benchmark sets before it starts the cluster.
Read a file with ``python -m pstats DIR/worker-<pid>.prof`` (``sort tottime``, ``stats 30``). The
profiles slow the batches several times over; the CPU before the constructor and of the build are
not profiled, and are what a plain run pays.
"""

from __future__ import annotations

import cProfile
import json
import os
import pstats
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from ragqa.run import loop

try:  # the worker's own module, so that a profiled worker imports what a plain one does
    from ragqa.run.ray_worker import PanelWorker, WorkerSettings
except ImportError:  # older ragqa: the worker class lived with the engine
    from ragqa.run.ray_engine import PanelWorker, WorkerSettings  # type: ignore[attr-defined,no-redef]

ENV = "RAGQA_BENCH_PROFILE"
"""The folder the profiles go to; set in the driver's environment, which a local cluster's workers inherit."""

_LOOP = cProfile.Profile(time.thread_time)
"""This process's profile of ragqa's loop thread (the driver's runner, or a worker's scoring)."""
_plain_run = loop.LoopThread.run


def _profiled_run(self: loop.LoopThread, coro: Coroutine[Any, Any, Any], **kwargs: Any) -> Any:
    async def profiled() -> Any:
        _LOOP.enable()  # on the loop thread: the profile follows that thread only
        try:
            return await coro
        finally:
            _LOOP.disable()

    return _plain_run(self, profiled(), **kwargs)


class ProfiledWorker(PanelWorker):
    """A :class:`~ragqa.run.ray_worker.PanelWorker` that writes its CPU by phase and its profile (module docstring)."""

    def __init__(self, settings: WorkerSettings, limits: str | None) -> None:
        self._folder = Path(os.environ[ENV])
        self._phases: dict[str, Any] = {"before_init": time.process_time()}
        self._main = cProfile.Profile(time.thread_time)
        loop.LoopThread.run = _profiled_run  # type: ignore[method-assign]
        super().__init__(settings, limits)
        self._phases["build"] = time.process_time() - self._phases["before_init"]
        self._phases["batches"] = []

    def score(self, batch: bytes) -> bytes:
        """Score as a PanelWorker does, recording the batch's CPU and writing the profiles."""
        began = time.process_time()
        self._main.enable()
        try:
            return super().score(batch)
        finally:
            self._main.disable()
            self._phases["batches"].append(time.process_time() - began)
            self._write()

    def _write(self) -> None:
        merged = pstats.Stats(self._main)  # Ray's thread, then ragqa's loop thread (empty before the first run)
        _LOOP.create_stats()
        if _LOOP.stats:  # type: ignore[attr-defined]
            merged.add(_LOOP)
        merged.dump_stats(self._folder / f"worker-{os.getpid()}.prof")
        (self._folder / f"worker-{os.getpid()}.json").write_text(json.dumps(self._phases))


def install(folder: Path) -> None:
    """Profile this process's loop thread and have the engine start :class:`ProfiledWorker` actors."""
    folder.mkdir(parents=True, exist_ok=True)
    os.environ[ENV] = str(folder.resolve())
    from ragqa.run import ray_engine  # the driver's side, which a worker never imports

    loop.LoopThread.run = _profiled_run  # type: ignore[method-assign]
    ray_engine.PanelWorker = ProfiledWorker  # type: ignore[misc]


def dump_driver(folder: Path, way: str) -> None:
    """Write the driver's loop-thread profile since the last call to ``driver-<way>.prof``, and start a new one."""
    global _LOOP
    _LOOP.dump_stats(folder / f"driver-{way}.prof")
    _LOOP = cProfile.Profile(time.thread_time)


def worker_phases(folder: Path) -> list[dict[str, Any]]:
    """Every worker's phases, as written: CPU seconds before its constructor, of its build, per batch."""
    return [json.loads(p.read_text()) for p in sorted(folder.glob("worker-*.json"))]
