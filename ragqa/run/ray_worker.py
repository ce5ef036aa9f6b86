"""The worker side of ``--engine ray``: one panel per Ray worker actor (:class:`PanelWorker`).

Ray starts each worker actor by importing this module (the actor's class is pickled by reference),
so it imports only what a worker runs: the container, the plan, the panel's build, the cluster
limiter and breakers, and the compact rows. The driver's side (the runner, the results file, the
report, the pool of actors) is :mod:`ragqa.run.ray_engine`, which a worker never imports: each
worker's start pays less import (about 0.2 CPU-s of the 0.8 that ``ragqa.run.ray_engine`` costs,
``docs/scale.md``).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import ray
from dependency_injector import providers

from ragqa.container import create_container
from ragqa.errors import ConfigError, RagqaError
from ragqa.factory import uncached_embedder, uncached_judge
from ragqa.run.identity import config_fingerprint
from ragqa.run.loop import run_sync
from ragqa.run.panel import build_evaluator
from ragqa.run.plan import make_plan
from ragqa.run.ray_breakers import share_breakers
from ragqa.run.ray_limits import ClusterLimiters
from ragqa.run.rows import CompactMode, CompactResult, cache_counts, compact_result
from ragqa.schema import PanelResult, Sample

if TYPE_CHECKING:
    from ragqa.evaluation import PanelEvaluator

__all__ = ["Batch", "Item", "PanelWorker", "Scored", "WorkerSettings"]

Item = tuple[int, Sample, list[str]]
"""One sample of a batch: ``(position, sample, metric keys to score)``."""
Batch = tuple[list[Item], CompactMode | None]
"""What a worker scores, as one pickle: the samples, and whether to return compact results (:mod:`ragqa.run.rows`)."""
Scored = tuple[list[tuple[int, list[PanelResult | CompactResult]]], dict[str, int]]
"""What a worker returns for a batch, as one pickle: ``(position, results)`` per sample, and cache lookups;
with a compact mode, a :data:`~ragqa.run.rows.CompactResult` stands for each result without a judge failure."""


@dataclasses.dataclass(frozen=True)
class WorkerSettings:
    """What a worker needs to build the run's panel; no secret is in it.

    Attributes:
        config: the ``application.yaml`` (absolute), or ``None`` for the default lookup.
        directory: where profile files are looked up (absolute).
        profiles: the active profiles.
        environ: the non-secret variables the settings read on the driver (:func:`shipped_environ`).
        metrics: the run's metric keys, in order.
        panel: the plan's panel overrides.
        no_cache: the plan's ``no_cache``.
        fingerprint: the driver's configuration fingerprint; a worker with another refuses to start.
    """

    config: str | None
    directory: str
    profiles: tuple[str, ...]
    environ: Mapping[str, str]
    metrics: tuple[str, ...]
    panel: Mapping[str, Any]
    no_cache: bool
    fingerprint: str


class PanelWorker:
    """One panel on one Ray worker: builds the run's evaluator once, then scores batches.

    Args:
        settings: what to build (:class:`WorkerSettings`).
        limits: the name of the run's :class:`~ragqa.run.ray_limits.ClusterLimits` actor (a name, not
            a handle: the constructor's arguments stay small and inline, so a restart can rebuild it),
            or ``None`` when the panel has no provider to limit (the worker keeps its own registry).

    A :class:`~ragqa.errors.ConfigError` of the build (a variable missing from the worker's
    environment, another configuration: the fingerprints differ) is raised by :meth:`score`, so the
    driver receives it as it was raised (Ray hands back a failed constructor's error as text only).
    """

    def __init__(self, settings: WorkerSettings, limits: str | None) -> None:
        self._failed: RagqaError | None = None
        try:
            self._build(settings, limits)
        except RagqaError as exc:  # raised by the first batch (see the class docstring)
            self._failed = exc

    def _build(self, settings: WorkerSettings, limits: str | None) -> None:
        environ = {**os.environ, **settings.environ}
        self.container = create_container(settings.config, settings.profiles, environ=environ)
        if settings.config is None:  # the default lookup, in the driver's directory
            self.container.config.directory.from_value(settings.directory)
        limiters: ClusterLimiters | None = None
        if limits is not None:
            handle = ray.get_actor(limits)
            holder = ray.get_runtime_context().get_actor_id() or ""  # the same after a restart
            ray.get(handle.forget.remote(holder))  # what this worker held before it died comes back
            limiters = ClusterLimiters(handle, holder)
            self.container.limiters.override(providers.Object(limiters))
        plan = make_plan(
            self.container.settings(), metrics=list(settings.metrics), panel=settings.panel, no_cache=settings.no_cache
        )
        self.evaluator: PanelEvaluator = build_evaluator(plan, self.container)  # what Runner.build does on the driver
        if limiters is not None:  # one breaker per judge across the cluster
            clients = [*map(uncached_judge, self.evaluator.judges), *map(uncached_embedder, self.evaluator.embedders)]
            share_breakers(clients, limiters.handle, limiters.holder, limiters.board)
        self.metrics = {m.key: m for m in self.evaluator.metrics}
        if tuple(self.metrics) != settings.metrics or config_fingerprint(self.evaluator) != settings.fingerprint:
            raise ConfigError(
                "a Ray worker resolved other settings than the driver (another panel or metric list): give every "
                "worker the same application.yaml, profiles and variables (API keys are never shipped: set them in "
                "the workers' environment)",
                key="--engine",
            )
        self._cache = None if settings.no_cache else self.container.cache()

    def ready(self) -> bool:
        """True once the worker is built (the pool hands it batches from then on)."""
        return True

    def score(self, batch: bytes) -> bytes:
        """Score one batch on this worker's loop.

        Args:
            batch: the pickle of a :data:`Batch` (``(position, sample, metric keys)`` per sample, and
                the compact mode or ``None``).

        Returns:
            The pickle of a :data:`Scored`: ``(position, results)`` per sample, in the order they
            finished (with a compact mode, :func:`~ragqa.run.rows.compact_result` of each), and the
            cache's lookups during the batch (:class:`~ragqa.report.CacheStats` fields).

        Raises:
            RagqaError: the worker could not build the run's panel (see the class docstring).
        """
        if self._failed is not None:
            raise self._failed
        before = cache_counts(self._cache)
        given: Batch = pickle.loads(batch)  # the driver's own batch, through Ray
        items, compact = given
        todo = [(position, sample, [self.metrics[k] for k in keys]) for position, sample, keys in items]
        done: list[tuple[int, list[PanelResult | CompactResult]]] = []

        def finished(position: int, rows: list[PanelResult]) -> None:
            done.append((position, [compact_result(r, compact) for r in rows] if compact is not None else [*rows]))

        run_sync(self.evaluator.score_stream(todo, finished))
        after = cache_counts(self._cache)
        scored: Scored = (done, {name: after[name] - before[name] for name in after})
        return pickle.dumps(scored, protocol=pickle.HIGHEST_PROTOCOL)
