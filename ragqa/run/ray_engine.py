"""Scoring on a Ray cluster (``ragqa evaluate ... --engine ray``, ``ragqa.evaluate(..., engine="ray")``).

The driver (the process that runs ``ragqa evaluate``) does what a single-process run does before and
after scoring, with the same :class:`~ragqa.run.runner.Runner`: validation, resume, the estimate,
the results file (:class:`~ragqa.run.stream.ResultStream`), the report and the exit code. Only the
scoring moves: :class:`RayEngine` hands the samples still to score to a pool of worker actors in
batches, and writes what they return as it comes.

- **One panel per worker.** Each :class:`PanelWorker` actor builds one container from the run's
  settings (the same ``application.yaml`` and profiles, and the environment variables the settings
  read on the driver), makes the evaluator with the same plan (metrics, panel options, ``no_cache``)
  through :meth:`Runner.build <ragqa.run.runner.Runner.build>`, refuses to start when its
  configuration fingerprint differs from the driver's, and scores each batch with
  :meth:`PanelEvaluator.score_stream <ragqa.evaluation.PanelEvaluator.score_stream>` on its own
  event loop (:func:`ragqa.run.loop.run_sync`).
- **Batches travel pickled.** The driver sends each batch as one :mod:`pickle` of its validated
  :class:`~ragqa.schema.Sample` objects, and a worker returns one pickle of what it made: neither
  side spends a per-sample JSON conversion or validation (on the local judge those cost about a
  third of the scoring's own CPU). Ray's object store carries one ``bytes`` value per batch.
- **The driver appends bytes and adds numbers.** When the run reads nothing of a result but its
  summary's numbers and its line of the results file (``ragqa evaluate``: no result kept in
  memory, no voting or cascade tally, a progress bar that only counts), the runner asks for compact
  results (:mod:`ragqa.run.rows`): a worker sends, per result, its
  :data:`~ragqa.run.rows.SummaryRow` (a few tuples) and its results-file line already encoded by
  the very code the driver's stream runs (:func:`~ragqa.run.results_file.result_bytes`: the same
  bytes), and the driver appends the line and adds the numbers instead of rebuilding pydantic
  objects and serialising them. A result with a judge failure travels whole (the summary keeps
  those). Otherwise (the Python API keeps every result) the worker returns the
  :class:`~ragqa.schema.PanelResult` objects themselves: the driver has the very objects one
  process would have made (scores, reasons and details unchanged, nothing converted).
- **Secrets stay out of the object store.** The worker's settings are shipped as the config path,
  the profiles and the variables the settings read, minus every variable whose value is a secret
  of the resolved settings (an API key) or whose name says it is one (``KEY``, ``SECRET``,
  ``TOKEN``, ``PASSWORD``, ``CREDENTIAL``). A worker takes those from its own environment: on a
  local cluster the workers inherit the driver's; on a remote one, give them to the workers (the
  cluster's secrets, or ``runtime_env``).
- **Provider limits across the cluster**: :mod:`ragqa.run.ray_limits`, one limiter actor per run;
  it also holds each judge's circuit breaker for the whole cluster (:mod:`ragqa.run.ray_breakers`).
  A panel with no provider (only local judges: nothing to limit, no HTTP breaker) starts no
  limiter actor: one process less to start, import ragqa in and keep.
- **Workers start early.** :meth:`RayEngine.start` starts the cluster and the workers before the
  driver's checking pass (the runner calls it once the panel builds), so the workers import ragqa
  and build their panels while the driver validates the dataset and prints the estimate; a run
  stopped by a bad sample or the estimate stops them again (:meth:`RayEngine.stop`).
- **Batches.** At most two batches per worker are in flight; the next is read from the dataset only
  when one comes back, so the driver never holds the dataset. ``--workers MIN:MAX`` starts ``MIN``
  workers and adds more up to ``MAX`` while batches wait (:mod:`ragqa.run.ray_pool`). A worker
  that dies is restarted and its batch run again (``max_restarts``, ``max_task_retries``); a batch's records come back
  together, so nothing is written twice.

Why plain Ray actors and not a Ray Data actor pool: the driver must write the records itself
(through the one :class:`~ragqa.run.stream.ResultStream` that gives the same header, ``.partial``
file, resume and final order as one process), and a sample's records have a shape per metric
(``details``) that Arrow blocks would force into one schema; a bounded window of actor calls gives
the same one-panel-per-worker shape without Ray Data's start-up and block conversions.

Ray listens on loopback only when ragqa starts the cluster (:func:`connect`); with ``address`` it
joins the given cluster as that cluster is configured.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ray
from pydantic import BaseModel, SecretStr

from ragqa.errors import ConfigError
from ragqa.run.identity import config_fingerprint
from ragqa.run.ray_limits import start_limits
from ragqa.run.ray_pool import ActorPool
from ragqa.run.ray_worker import Item, PanelWorker, Scored, WorkerSettings
from ragqa.run.rows import CompactMode, CompactResult
from ragqa.run.runner import Runner
from ragqa.schema import PanelResult, Sample
from ragqa.settings import load_settings

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric

__all__ = ["LOOPBACK", "PanelWorker", "RayEngine", "WorkerSettings", "connect", "shipped_environ"]

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
"""The only address a cluster started by ragqa listens on."""

_SECRET_NAME = re.compile(r"KEY|SECRET|TOKEN|PASSWORD|CREDENTIAL", re.IGNORECASE)

Todo = Iterable[tuple[int, Sample, Sequence["Metric"]]]


class _Reads(Mapping[str, str]):
    """An environment that remembers which names were looked up."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self.read: set[str] = set()

    def __getitem__(self, name: str) -> str:
        self.read.add(name)
        return self._environ[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._environ)

    def __len__(self) -> int:
        return len(self._environ)


def _secrets(value: Any) -> set[str]:
    """Every :class:`~pydantic.SecretStr` value inside a settings object (models, lists, dicts)."""
    found: set[str] = set()
    if isinstance(value, SecretStr):
        secret = value.get_secret_value()
        if secret:
            found.add(secret)
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            found |= _secrets(getattr(value, name))
    elif isinstance(value, Mapping):
        for item in value.values():
            found |= _secrets(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found |= _secrets(item)
    return found


def shipped_environ(
    config: str | None, directory: str, profiles: Sequence[str], environ: Mapping[str, str]
) -> dict[str, str]:
    """The variables the settings read (placeholders, ``RAGQA__`` overrides), minus every secret.

    Args:
        config: the settings file (``None``: the default lookup).
        directory: where profile files are looked up.
        profiles: the active profiles.
        environ: the driver's environment for the settings.

    Returns:
        ``{name: value}`` safe to put in Ray's object store: no value that is a secret of the
        resolved settings and no name that says it holds one (see the module docstring).

    Raises:
        ConfigError: the settings do not load (as for a single-process run).
    """
    reads = _Reads(environ)
    settings = load_settings(directory, list(profiles), config_file=config, environ=reads)
    secrets = _secrets(settings)
    names = reads.read | {name for name in environ if name.upper().startswith("RAGQA")}
    return {
        name: environ[name]
        for name in sorted(names)
        if name in environ and environ[name] not in secrets and not _SECRET_NAME.search(name)
    }


def connect(address: str | None, *, num_cpus: int | None = None) -> bool:
    """Join the cluster at ``address``, or start a local one listening on loopback only.

    Args:
        address: ``auto``, ``ray://host:port`` or ``host:port`` of an existing cluster; ``None``
            starts a local cluster on this machine (no dashboard, every process on 127.0.0.1).
        num_cpus: CPUs of a local cluster (default: all of this machine's).

    Returns:
        True when this call started (or joined) Ray and the caller should shut it down; False when
        Ray was already initialised in this process.
    """
    if ray.is_initialized():
        return False
    ray_log = logging.getLogger("ray")
    level = ray_log.level
    ray_log.setLevel(logging.ERROR)  # start-up notes (no SIGTERM handler off the main thread: ragqa has its own)
    try:
        if address is not None:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
            return True
        _single_machine()
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            _node_ip_address=LOOPBACK,
            log_to_driver=False,
            configure_logging=False,
        )
        return True
    finally:
        ray_log.setLevel(level)


def _single_machine() -> None:
    """Make the local cluster Ray is about to start bind every process to loopback only.

    Ray treats a machine as one that may join a multi-node cluster unless
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` is ``0``: then it finds its address through the network and
    its processes listen on every interface. Ray reads the variable when it is imported, so the
    value it read is set too; the variable itself reaches the processes the cluster starts.
    """
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is not None and hasattr(constants, "ENABLE_RAY_CLUSTER"):
        constants.ENABLE_RAY_CLUSTER = False


class RayEngine:
    """Scores a run's missing pairs on a Ray cluster (see the module docstring).

    Args:
        address: the cluster to join (``auto``, ``ray://host:port``); ``None`` starts a local one
            with ``workers`` CPUs.
        workers: the most panel actors (each takes one CPU).
        batch_size: samples per batch handed to a worker (>= 1).
        min_workers: actors started at once (default ``workers``); more are added up to
            ``workers`` while batches wait (:class:`~ragqa.run.ray_pool.ActorPool`).

    Raises:
        ValueError: ``workers`` or ``batch_size`` below 1, or ``min_workers`` not in ``1..workers``.
    """

    def __init__(
        self, *, address: str | None = None, workers: int = 2, batch_size: int = 64, min_workers: int | None = None
    ) -> None:
        if workers < 1 or batch_size < 1:
            raise ValueError(f"workers and batch size must be >= 1, got {workers} and {batch_size}")
        if min_workers is not None and not 1 <= min_workers <= workers:
            raise ValueError(f"min_workers must be in 1..{workers}, got {min_workers}")
        self.address = address
        self.workers = workers
        self.min_workers = min_workers or workers
        self.batch_size = batch_size
        self.peak_workers = 0
        """The most workers that scored at once in the last run."""
        self.limits_stats: dict[str, dict[str, float]] = {}
        """Per provider key, what the limiter actor counted (:meth:`ClusterLimits.stats`), after a run."""
        self.breaker_stats: dict[str, float] = {}
        """What the shared circuit breakers did and cost (:meth:`ClusterLimits.breaker_stats`), after a run."""
        self._started: tuple[bool, Any, ActorPool] | None = None  # (shut Ray down after?, limiter, pool)

    @property
    def running_workers(self) -> int:
        """Worker actors started by :meth:`start` and not stopped yet (0 before a run and after it)."""
        return len(self._started[2].actors) if self._started is not None else 0

    def worker_settings(self, runner: Runner, evaluator: PanelEvaluator) -> WorkerSettings:
        """What the workers of ``runner``'s run build (no secret; see :class:`WorkerSettings`).

        Raises:
            ConfigError: the container's judges or embedders were replaced in Python (a worker
                can only rebuild a container from settings).
        """
        container: Container = runner.container
        if container.judges.overridden or container.embedders.overridden or container.plain_judges.overridden:
            raise ConfigError(
                "--engine ray rebuilds the panel from settings on every worker; this container's judges were "
                "replaced in Python. Describe the panel in application.yaml, or run without engine='ray'",
                key="--engine",
            )
        given = container.config()
        config = given.get("config_file")
        directory = str(Path(given.get("directory") or ".").resolve())
        profiles = tuple(given.get("profiles") or ())
        environ = given.get("environ") or dict(os.environ)
        config = str(Path(config).resolve()) if config else None
        return WorkerSettings(
            config=config,
            directory=directory,
            profiles=profiles,
            environ=shipped_environ(config, directory, profiles, environ),
            metrics=tuple(m.key for m in runner.plan.metrics),
            panel=dict(runner.plan.panel),
            no_cache=runner.plan.no_cache,
            fingerprint=config_fingerprint(evaluator),
        )

    async def score(
        self,
        runner: Runner,
        evaluator: PanelEvaluator,
        todo: Todo,
        on_rows: Callable[[int, list[PanelResult | CompactResult]], None],
        *,
        compact: CompactMode | None = None,
    ) -> dict[str, int]:
        """Score ``todo`` on the cluster, calling ``on_rows`` per sample as its batch comes back.

        With ``compact``, the workers send a :data:`~ragqa.run.rows.CompactResult` for each result
        without a judge failure (see the module docstring and :class:`~ragqa.run.runner.Engine`).

        Returns:
            The workers' cache lookups, summed (:class:`~ragqa.report.CacheStats` fields).

        Raises:
            ConfigError: a worker could not build the run's panel (the worker's message).
            RagqaError: what a worker raised while scoring.
            asyncio.CancelledError: when cancelled; the batches in flight are cancelled.
        """
        if self._started is None:
            await self.start(runner, evaluator)
        assert self._started is not None
        _, limits, pool = self._started
        self.limits_stats, self.breaker_stats = {}, {}
        cache: dict[str, int] = {}

        def on_batch(returned: bytes) -> None:
            scored: Scored = pickle.loads(returned)  # our own worker's batch, through Ray
            rows, counts = scored
            for key, count in counts.items():
                cache[key] = cache.get(key, 0) + count
            for position, results in rows:
                on_rows(position, results)

        try:
            await pool.run(self._batches(todo, compact), on_batch)
            self.peak_workers = pool.peak
            if limits is not None:
                self.limits_stats = await limits.stats.remote()
                self.breaker_stats = await limits.breaker_stats.remote()
            for key, stats in self.limits_stats.items():
                log.info("cluster limiter, provider %s: %s", key, stats)
        finally:
            await self.stop()
        return cache

    async def start(self, runner: Runner, evaluator: PanelEvaluator) -> None:
        """Start (or join) the cluster, the limiter actor and the first workers; return without waiting for them.

        The runner calls it before its checking pass, so the workers build their panels meanwhile;
        :meth:`score` calls it when nobody did. A panel without providers (local judges only) has
        nothing to limit and no HTTP breaker: no limiter actor is started.

        Raises:
            ConfigError: from :meth:`worker_settings`.
        """
        settings = self.worker_settings(runner, evaluator)
        shutdown = await asyncio.to_thread(connect, self.address, num_cpus=None if self.address else self.workers)
        name = f"ragqa-limits-{uuid.uuid4().hex}" if len(runner.container.limiters()) else None
        limits = start_limits(name) if name is not None else None
        worker = ray.remote(PanelWorker).options(num_cpus=1, max_restarts=2, max_task_retries=2)
        pool = ActorPool(lambda: worker.remote(settings, name), min_size=self.min_workers, max_size=self.workers)
        self._started = (shutdown, limits, pool)

    async def stop(self) -> None:
        """Kill what :meth:`start` started and shut Ray down if it started it; nothing when nothing runs."""
        if self._started is None:
            return
        shutdown, limits, pool = self._started
        self._started = None
        for actor in [*pool.actors, *([limits] if limits is not None else [])]:
            ray.kill(actor)
        if shutdown:
            await asyncio.to_thread(ray.shutdown)

    def _batches(self, todo: Todo, compact: CompactMode | None) -> Iterator[bytes]:
        """The batches of ``todo``, each the pickle of a :data:`Batch`, read lazily."""
        batch: list[Item] = []
        for position, sample, metrics in todo:
            batch.append((position, sample, [m.key for m in metrics]))
            if len(batch) >= self.batch_size:
                yield pickle.dumps((batch, compact), protocol=pickle.HIGHEST_PROTOCOL)
                batch = []
        if batch:
            yield pickle.dumps((batch, compact), protocol=pickle.HIGHEST_PROTOCOL)
