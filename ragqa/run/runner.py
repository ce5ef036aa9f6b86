"""The one runner behind every entry point: validate once, estimate, stream, resume, decide the exit code.

:class:`Runner` executes a :class:`~ragqa.run.plan.RunPlan` on samples with a container's panel.
The order never changes, and nothing is paid for before the last check:

1. samples get ids and are validated once against every metric and the size guards
   (:func:`ragqa.run.validate.validate_run`): ``on_invalid="raise"`` raises
   :class:`~ragqa.errors.InvalidSamples` listing every problem, ``skip`` leaves out only the
   invalid (sample, metric) pairs;
2. with ``resume``, the results file is read back; a different configuration, metric list or
   dataset is refused (:class:`~ragqa.errors.ConfigError`);
3. the evaluator is built (once), and the estimate of calls and tokens is reported; a run over
   ``max_calls`` is refused (:class:`TooManyCalls`);
4. old output files are removed, each (sample, metric) streams to the ``.partial`` file of the
   plan's journal (:attr:`~ragqa.run.plan.RunPlan.journal`: the JSON Lines output, else the
   first output) as it is made, and only the missing pairs are scored;
5. the final files are written (the other formats, then JSON Lines in dataset order, each
   atomically), the ``.partial`` file is removed last, and the exit code is decided
   (:func:`ragqa.run.outcome.exit_code_for`). A file that cannot be written raises
   :class:`~ragqa.errors.OutputError` naming the ``.partial`` file that keeps every result.

Cancelling the coroutine (Ctrl-C through :mod:`ragqa.run.loop`) stops the calls; every result
already made stays in ``<out>.partial``, from which ``resume`` continues.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ragqa._ids import CompactIds
from ragqa.errors import ConfigError, RagqaError, SampleError
from ragqa.jury.reliability import attach_item_reliability
from ragqa.render.registry import RenderOptions
from ragqa.report import CacheStats, Report, SkippedSample
from ragqa.run.estimate import EstimateTally, RunEstimate, TooManyCalls, panel_estimate
from ragqa.run.identity import check_resumed, config_fingerprint, run_header
from ragqa.run.outcome import FlakySamples, RunResult, exit_code_for, incomplete_results, threshold_verdicts
from ragqa.run.panel import build_evaluator, panel_options_or_none
from ragqa.run.plan import RunPlan
from ragqa.run.prepared import DatasetFingerprint, Prepared, check_samples, dataset_fingerprint
from ragqa.run.results_file import Pair, ResultsHeader, header_intervals, read_results
from ragqa.run.rows import CompactMode, CompactResult, cache_counts
from ragqa.run.stream import ResultStream
from ragqa.run.summary import RunSummary
from ragqa.schema import JudgeOutcome, PanelResult, Sample

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric

__all__ = [
    "DatasetFingerprint",
    "Engine",
    "Prepared",
    "Runner",
    "TooManyCalls",
    "cache_counts",
    "config_fingerprint",
    "dataset_fingerprint",
]

ResultCallback = Callable[[PanelResult], None]
ProgressCallback = Callable[[], None]
EstimateCallback = Callable[[RunEstimate], None]


class Engine(Protocol):
    """Where the missing pairs are scored, when not in this process (``--engine ray``: :mod:`ragqa.run.ray_engine`).

    The runner does everything else as for a single-process run: validation, resume, estimate, the
    streamed results file, the report and the exit code.
    """

    async def score(
        self,
        runner: Runner,
        evaluator: PanelEvaluator,
        todo: Iterable[tuple[int, Sample, Sequence[Metric]]],
        on_rows: Callable[[int, list[PanelResult | CompactResult]], None],
        *,
        compact: CompactMode | None = None,
    ) -> dict[str, int]:
        """Score ``todo`` as :meth:`PanelEvaluator.score_stream <ragqa.evaluation.PanelEvaluator.score_stream>` does.

        With ``compact``, the run reads only the summary's numbers (and, with ``lines``, each result's
        line of the results file): the engine may hand ``on_rows`` a
        :data:`~ragqa.run.rows.CompactResult` instead of a result without a judge failure
        (:func:`~ragqa.run.rows.compact_result`). Without it, every item is a
        :class:`~ragqa.schema.PanelResult`.

        Returns:
            The cache lookups made while scoring (:class:`~ragqa.report.CacheStats` fields).
        """
        ...


class Runner:
    """Runs one plan on samples with a container's panel (see the module docstring).

    Args:
        plan: the checked plan.
        container: where the judges, embedders and panel options come from; the runner builds
            the evaluator once and never closes the container (its owner does).
        on_estimate: called once with the estimate before the first judge call.
        on_result: called with each (sample, metric) result after it is streamed.
        on_progress: called once per (sample, metric) result after it is streamed, without it (a
            progress bar): unlike ``on_result``, it lets an engine send the driver compact rows
            instead of the results (:mod:`ragqa.run.rows`).
        engine: score elsewhere (a Ray cluster) instead of with the evaluator in this process.
        keep_results: keep every result (and the samples) in the report (the Python API's
            default). False keeps only the per-metric summaries and the results with a judge
            failure, so memory stays flat in the dataset's size: the results are in the ``.jsonl``
            output. Outputs that render every result (``.json``, ``.csv``, JUnit, HTML) need them
            (and a second ``.jsonl`` output) turn it back on.
    """

    def __init__(
        self,
        plan: RunPlan,
        container: Container,
        *,
        on_estimate: EstimateCallback | None = None,
        on_result: ResultCallback | None = None,
        on_progress: ProgressCallback | None = None,
        keep_results: bool = True,
        engine: Engine | None = None,
    ) -> None:
        """Remember the plan and the container; nothing is built yet."""
        self.plan = plan
        self.engine = engine
        self.container = container
        self.on_estimate = on_estimate
        self.on_result = on_result
        self.on_progress = on_progress
        self.keep_results = keep_results or any(output is not plan.stream for output in plan.outputs)
        """Whether the report keeps every result (see the class docstring)."""
        self.stream: ResultStream | None = None
        """The JSON Lines sink of the run once it started (its ``count`` survives an interrupt)."""
        self.prepared: Prepared | None = None
        """The run after :meth:`prepare`."""
        self.resumed_from: Path | None = None
        """The file a resumed run's results were read from."""

    # -- 1-2: checks that need no judge ---------------------------------------------------------

    def prepare(self, samples: Iterable[Sample]) -> Prepared:
        """Give samples ids, validate them in one pass, and read back a resumed run; no judge is built.

        Args:
            samples: a sequence, or a source that yields the same samples each time it is
                iterated (:class:`~ragqa.run.source.JsonlSamples`); samples without an id get their
                1-based position.

        Raises:
            InvalidSamples: listing every problem, with ``on_invalid="raise"``.
            DatasetError: from a source that reads a file, for the first bad record.
            ConfigError: when ``resume`` finds a file of another run (see :meth:`_read_resume`).
        """
        plan = self.plan
        if iter(samples) is samples:  # a one-pass iterator (a generator): the run reads its samples more than once
            samples = list(samples)
        if isinstance(samples, Sequence):
            samples = [s if s.id is not None else s.model_copy(update={"id": str(i)}) for i, s in enumerate(samples, 1)]
        options = panel_options_or_none(plan, self.container)
        # the results file is read first, so that the one pass over the samples leaves its pairs out
        # of the estimate; its errors are raised after the samples' own, in the order of the steps
        header: ResultsHeader | None = None
        kept: dict[Pair, dict[str, Any]] = {}
        unread: Exception | None = None
        if plan.resume:
            try:
                header, kept = self._read_resume()
            except Exception as exc:  # raised below, after the checks of the samples
                unread = exc
        retry: dict[Pair, dict[str, Any]] = {}
        if plan.retry_failed:  # records with a failed judge are scored again, asking only that judge
            retry = {pair: r for pair, r in kept.items() if any(j.get("failure") for j in r.get("judges", []))}
            kept = {pair: r for pair, r in kept.items() if pair not in retry}
        tally = (
            EstimateTally(
                plan=options.call_plan,
                claim_vote=options.votes,
                probe=options.order_probe if "order" in options.probes else None,
            )
            if options is not None
            else None
        )
        prepared = check_samples(
            samples,
            plan.metrics,
            limits=plan.limits,
            shard=plan.shard,
            tally=tally,
            defer_fingerprint=not plan.resume,  # a resumed run compares fingerprints before scoring
            defer_list=not plan.resume and plan.journal is None,  # no .partial header holds it from the start
            kept=kept,
        )
        if plan.on_invalid == "raise":
            prepared.validation.raise_if_any(hint="fix them, or pass --on-invalid skip to score only the valid pairs")
        if unread is not None:
            raise unread
        self.prepared = dataclasses.replace(prepared, kept=kept, header=header, retry=retry)
        return self.prepared

    def _read_resume(self) -> tuple[ResultsHeader | None, dict[Pair, dict[str, Any]]]:
        for source in self.plan.resume_sources():
            if source.exists():  # a file, or a directory of Parquet parts
                header, records = read_results(source)
                self.resumed_from = source
                keys = tuple(m.key for m in self.plan.metrics)
                if header.metrics != keys:
                    raise ConfigError(
                        f"--resume: {source} was written for metrics {', '.join(header.metrics)}, this run has "
                        f"{', '.join(keys)}; use the same --metrics, or run without --resume",
                        key="--resume",
                    )
                return header, records
        return None, {}

    # -- 3: the panel and the estimate ----------------------------------------------------------

    def build(self) -> PanelEvaluator:
        """Build the evaluator once, with the plan's panel overrides (:func:`ragqa.run.panel.build_evaluator`).

        Raises:
            ConfigError: settings that cannot build a judge (a missing key), a metric that
                needs an embedding model none is configured for, or one that needs a judge when
                the panel has none.
        """
        return build_evaluator(self.plan, self.container)

    def estimate(self, prepared: Prepared, evaluator: PanelEvaluator) -> RunEstimate:
        """Estimate calls and tokens of the missing pairs; refuse a run over the cap.

        Raises:
            TooManyCalls: when the estimated calls exceed ``plan.max_calls``.
        """
        estimate = panel_estimate(evaluator, prepared.tally, prepared.todo(self.plan.metrics))
        if self.on_estimate is not None:
            self.on_estimate(estimate)
        if self.plan.max_calls is not None and estimate.calls > self.plan.max_calls:
            raise TooManyCalls(estimate, self.plan.max_calls)
        return estimate

    # -- 4-5: scoring and outputs ---------------------------------------------------------------

    async def arun(self, samples: Iterable[Sample]) -> RunResult:
        """Run the plan on ``samples``: every step of the module docstring, in order.

        Raises:
            InvalidSamples, ConfigError, TooManyCalls: before any judge call.
            asyncio.CancelledError: when cancelled; finished results stay in the partial file.
        """
        if self.engine is not None and "order" in self.plan.panel.get("probes", ()):
            raise ConfigError(
                "--probe order tallies its verdicts in this process, which --engine ray cannot do yet; "
                "probe without --engine ray",
                key="--probe",
            )
        if self.engine is not None and self.plan.retry_failed:
            raise ConfigError(
                "--retry-failed asks again only the judges that failed, which --engine ray cannot do yet; "
                "retry without --engine ray",
                key="--retry-failed",
            )
        early, stop = await self._start_engine()
        try:
            prepared = self.prepare(samples)
            evaluator = early or self.build()
            if prepared.header is not None:
                check_resumed(self.plan, prepared, evaluator)
            estimate = self.estimate(prepared, evaluator)
            return await self.execute(prepared, evaluator, estimate)
        finally:
            if stop is not None:  # a run stopped before scoring; after scoring there is nothing left to stop
                await stop()

    async def _start_engine(self) -> tuple[PanelEvaluator | None, Callable[[], Awaitable[None]] | None]:
        """Start an engine's workers before the checking pass, so they get ready meanwhile.

        Only for an engine with ``start(runner, evaluator)`` and ``stop()``
        (:class:`~ragqa.run.ray_engine.RayEngine`), and only when the panel builds and the engine
        accepts it: otherwise the same error is raised again after the checks, which come first,
        as in one process.

        Returns:
            The evaluator built for the engine (the run uses it) and the engine's ``stop``, or
            ``(None, None)`` when nothing was started.
        """
        start = getattr(self.engine, "start", None)
        stop = getattr(self.engine, "stop", None)
        if start is None or stop is None:
            return None, None
        try:
            evaluator = self.build()
            await start(self, evaluator)
        except RagqaError:
            return None, None
        return evaluator, stop

    def _write_outputs(self, report: Report, options: RenderOptions) -> None:
        """Render every output but the streamed ``.jsonl`` (the stream writes that one).

        Raises:
            OutputError: when an output cannot be written; it names the ``.partial`` file that
                keeps the run's results (``--resume`` writes the outputs from it).
        """
        stream = self.stream
        for output in self.plan.outputs:
            assert stream is not None  # a run with outputs streams to the journal's partial file
            if stream.final and output.path == stream.path:
                continue
            try:
                output.renderer.write(report, output.path, options)
            except OSError as exc:
                raise stream.kept_error(exc, output.path, what="every result was made") from exc

    async def execute(self, prepared: Prepared, evaluator: PanelEvaluator, estimate: RunEstimate) -> RunResult:
        """Score the missing pairs, streaming each result, then write the outputs and decide the exit code.

        Raises:
            asyncio.CancelledError: when cancelled; the partial file keeps every finished result.
        """
        from ragqa.render.records import read_result_record

        plan = self.plan
        for output in plan.outputs:  # from here on no old file looks like this run's
            if not output.streams:
                output.path.unlink(missing_ok=True)
        keys = [m.key for m in plan.metrics]
        metric_of = {key: i for i, key in enumerate(keys)}
        judge_ids = [j.id for j in evaluator.judges]
        summary = RunSummary(
            judge_ids,
            keys,
            prepared.n_samples,
            confidence=evaluator.options.confidence,
            ranges={m.key: m.value_range for m in plan.metrics},
            labels=prepared.labels,
        )
        made: dict[tuple[int, int], PanelResult] = {}  # (position, metric index) -> result, with keep_results
        jury = evaluator.jury(plan.metrics)  # the verdicts behind the reliability section (voting runs)
        tally = evaluator.cascade(plan.metrics)  # calls per tier and escalations (cascade runs)
        flaky = FlakySamples(plan.thresholds)

        def keep(position: int, result: PanelResult) -> None:
            summary.add(position, result)
            flaky.add(position, result)
            if jury is not None:
                jury.add(result)
            if tally is not None:
                tally.add(result)
            if self.keep_results:
                made[(position, metric_of[result.metric])] = result

        if prepared.kept:  # a resumed run: its results count as if made now
            labels = prepared.labels
            position_of = (  # the index the ids kept for a resumed run, else one built here
                labels.position
                if isinstance(labels, CompactIds) and labels.indexed
                else {label: i for i, label in enumerate(labels)}.get
            )
            for (label, key), old in prepared.kept.items():
                position = position_of(label)
                if position is not None and key in metric_of:
                    keep(position, read_result_record(old))
        resumed = summary.count
        header = run_header(self.plan, prepared, evaluator)
        journal = plan.journal
        if journal is not None:
            # the records being retried stay in the partial file until their new record follows
            # (the last record of a pair wins), so an interrupted retry loses nothing
            kept = {**prepared.kept, **prepared.retry}
            self.stream = ResultStream(
                journal.path, header, kept, final=journal.streams, layout=(prepared.labels, keys)
            )
            self.stream.open()

        def record(position: int, rows: Sequence[PanelResult | CompactResult]) -> None:
            for result in rows:
                if isinstance(result, PanelResult):
                    keep(position, result)
                    if self.stream is not None:
                        self.stream.write(result, position=position)
                    if self.on_result is not None:
                        self.on_result(result)
                else:  # an engine's compact row: asked for only when nothing but these read the result
                    line, row = result
                    summary.add_row(position, row)
                    flaky.add_row(position, row)
                    if self.stream is not None:
                        assert line is not None  # asked for with "lines" when the run streams
                        self.stream.write_line(line, (row[0], row[1]), position=position)
                if self.on_progress is not None:
                    self.on_progress()

        def reuse(label: str, key: str) -> dict[str, JudgeOutcome]:
            """The outcomes that scored in a retried pair's kept record, by judge id: not asked again, kept exactly."""
            old = prepared.retry.get((label, key))
            return {o.judge_id: o for o in read_result_record(old).judges if o.ok} if old is not None else {}

        if evaluator.probe is not None:
            evaluator.probe.reset()
        cache = None if plan.no_cache else self.container.cache()
        counts0 = cache_counts(cache)
        started = time.perf_counter()
        counts1: dict[str, int] | None = None  # the lookups an engine's workers made
        try:
            if self.engine is None:
                await evaluator.score_stream(
                    prepared.todo(plan.metrics), record, reuse=reuse if prepared.retry else None
                )
            else:
                compact: CompactMode | None = None
                if not self.keep_results and jury is None and tally is None and self.on_result is None:
                    compact = "lines" if self.stream is not None else "rows"
                todo = prepared.todo(plan.metrics)
                made_elsewhere = await self.engine.score(self, evaluator, todo, record, compact=compact)
                counts1 = {name: counts0[name] + made_elsewhere.get(name, 0) for name in counts0}
        finally:
            if self.stream is not None:
                self.stream.close()
        wall = time.perf_counter() - started

        order = [made[k] for k in sorted(made)] if self.keep_results else summary.failed_results()
        summaries = jury.attach(summary.summaries()) if jury is not None else summary.summaries()
        # reporting only: the per-item reliability section never changes a score or a figure
        summaries = attach_item_reliability(summaries, judge_ids, plan.reliability_thresholds, summary.score_chunks)
        report = Report(
            results=order,
            summaries=flaky.mark(tally.attach(summaries) if tally is not None else summaries, prepared.labels),
            skipped=[_skipped(p) for p in prepared.validation.problems],
            wall_time_s=wall,
            cache=_cache_stats(cache, counts0, counts1),
            samples=list(prepared.samples) if self.keep_results else [],
            results_kept=self.keep_results,
            call_plan=evaluator.options.call_plan,
            run_id=header.run_id,
            dataset=header.dataset,
            started_at=header.started_at,
            order_probe=evaluator.probe.result() if evaluator.probe is not None else None,
        )
        self._write_outputs(
            report, RenderOptions(language=evaluator.options.language, thresholds=dict(plan.thresholds))
        )
        if self.stream is not None:  # last: the partial file keeps every result until the other outputs exist
            final = dataclasses.replace(
                self.stream.header,
                dataset_fingerprint=prepared.finish_fingerprint(),
                intervals=header_intervals(report.summaries),
                probe=report.order_probe.model_dump(mode="json") if report.order_probe is not None else None,
            )
            # a dawid-skene run's per-sample values exist once the run's fit does: added to the final records
            amend = (
                {pair: {"dawid_skene": value} for pair, value in jury.dawid_skene.items()}
                if jury is not None and evaluator.options.strategy == "dawid-skene"
                else None
            )
            self.stream.finish(None, header=final, amend=amend)
        written = [(output.option, str(output.path)) for output in plan.outputs]
        verdicts = threshold_verdicts(report, plan.thresholds, on_undecided=plan.on_undecided)
        return RunResult(
            report=report,
            estimate=estimate,
            verdicts=tuple(verdicts),
            incomplete=tuple(incomplete_results(report.results)),
            resumed=resumed,
            exit_code=exit_code_for(report, verdicts, allow_incomplete=plan.allow_incomplete),
            written=tuple(written),
            language=evaluator.options.language,
        )


def _skipped(problem: SampleError) -> SkippedSample:
    return SkippedSample(
        sample_id=problem.sample_id or "?", metric=problem.metric, field=problem.field, message=str(problem)
    )


def _cache_stats(cache: Any, before: dict[str, int], after: dict[str, int] | None = None) -> CacheStats | None:
    """The cache's lookups from ``before`` to ``after`` (default: now; :func:`cache_counts`); ``None`` without cache."""
    if cache is None:
        return None
    now = cache_counts(cache) if after is None else after
    return CacheStats(**{name: count - before[name] for name, count in now.items()})
