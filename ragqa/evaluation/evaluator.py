"""The panel evaluator: every metric, on every sample, with every judge, concurrently.

:class:`PanelEvaluator` validates, streams samples through a bounded window, asks every judge
(tier 1 first, then tier 2 where a cascade escalates), aggregates, runs the order probe after the
scores, and attaches the jury's reliability and cascade sections to the report. One (metric,
judge) computation is :mod:`ragqa.evaluation.calls`'s, the cascade's and the probe's steps are
:mod:`ragqa.evaluation.phases`'s, the options and input checks :mod:`ragqa.evaluation.options`'s.
The package docstring (:mod:`ragqa.evaluation`) describes the run's guarantees (failures
recorded, deadline, cancellation).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragqa._heap import frozen_heap
from ragqa.aggregate import aggregate
from ragqa.errors import ConfigError, SampleError
from ragqa.evaluation.calls import NoJudge, copy_for, gather_or_cancel, require_judges, run_by
from ragqa.evaluation.options import PanelOptions, ProgressCallback, metric_objects, panel_problems, validate_samples
from ragqa.evaluation.phases import escalated, probe_order, tier_positions
from ragqa.judges.base import Embedder, Embedders, Judge, SharedCallJudge
from ragqa.judges.offload import all_local, run_inline
from ragqa.judges.ratelimit import request_priority
from ragqa.jury.cascade import Cascade, CascadeTally
from ragqa.jury.panel import extractor_index, jury_collector, voted_aggregate, voting_judges
from ragqa.jury.probe import OrderProbe
from ragqa.metrics.base import Metric, MetricContext
from ragqa.repeats import combine_repeats
from ragqa.report import MetricSummary, Report, SkippedSample, summarize
from ragqa.schema import Aggregate, JudgeOutcome, PanelResult, Sample

if TYPE_CHECKING:
    from ragqa.jury.reliability import JuryCollector

__all__ = ["PanelEvaluator"]


class PanelEvaluator:
    """Runs metrics across a panel of judges and aggregates per sample.

    A metric that needs no judge (``needs_judge`` False: text similarity, tool-call accuracy,
    semantic similarity) is scored once per sample and its outcome shown under every judge (the
    same score; its usage counted once).

    Args:
        judges: the panel; it may be empty when every metric needs no judge (their outcomes are
            then shown under the judge id :data:`NO_JUDGE`).
        metrics: the default metrics of :meth:`evaluate`.
        embedders: embedding models for metrics that embed.
        options: aggregation and run options.

    Raises:
        ValueError: when two judges share an id.
        ConfigError: when the quorum is larger than the panel (no aggregate could exist), or the
            extractor is not a judge of the panel. An
            empty panel asked to score a metric that needs a judge raises it when scoring starts.
    """

    def __init__(
        self,
        judges: Sequence[Judge],
        metrics: Sequence[Metric] = (),
        *,
        embedders: Sequence[Embedder] = (),
        options: PanelOptions | None = None,
    ) -> None:
        """Create the evaluator (no I/O)."""
        ids = [j.id for j in judges]
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise ValueError(f"judge ids must be unique; repeated: {', '.join(duplicates)}")
        self.judges: tuple[Judge, ...] = tuple(judges)
        self.metrics: tuple[Metric, ...] = tuple(metrics)
        self.embedders: tuple[Embedder, ...] = tuple(embedders)
        self._embedders_unavailable = embedders.unavailable if isinstance(embedders, Embedders) else None
        self.options = options or PanelOptions()
        if self.judges and self.options.quorum > len(self.judges):
            raise ConfigError(
                f"quorum {self.options.quorum} is more than the {len(self.judges)} judge(s) of the panel, so no "
                f"aggregate could ever exist; lower ragqa.aggregation.quorum (or --quorum) or add judges",
                key="ragqa.aggregation.quorum",
            )
        self._extractor = extractor_index(ids, self.options.extractor) if self.options.votes and ids else 0
        self._cascade = self.options.cascade
        if self.options.cascade_audit:
            if self._cascade is None:
                raise ConfigError(
                    "--cascade-audit needs a cascade: set ragqa.jury.cascade.enabled: true and its tier-2 judges",
                    key="ragqa.jury.cascade.enabled",
                )
            self._cascade = dataclasses.replace(self._cascade, audit=True)
        if self._cascade is not None:
            self._cascade.check(ids, extractor=ids[self._extractor] if self.options.votes and ids else None)
        self._context = MetricContext(
            language=self.options.language,
            embedders=self.embedders,
            call_plan=self.options.call_plan,
            claim_vote=self.options.votes,
        )
        self.probe: OrderProbe | None = (
            OrderProbe(self.options.order_probe, ids, self.options.call_plan)
            if "order" in self.options.probes and ids
            else None
        )
        """The order probe's tally when the run probes (``probes`` holds ``order``), else ``None``."""

    def validate(self, samples: Sequence[Sample], metrics: Sequence[Metric] | None = None) -> list[SampleError]:
        """Check the panel and every sample against every metric; no judge is called.

        Returns:
            Every problem found (empty when all samples are valid): first one per metric that
            needs an embedding model none is configured for, or a judge when the panel is empty
            (``sample_id`` ``None``), then :func:`validate_samples`'s with the options' size guards.
        """
        chosen = tuple(metrics) if metrics is not None else self.metrics
        problems = panel_problems(chosen, bool(self.embedders), self._embedders_unavailable, bool(self.judges))
        return problems + validate_samples(samples, chosen, self.options.limits)

    async def evaluate(
        self,
        samples: Sequence[Sample],
        *,
        metrics: Sequence[Metric] | None = None,
        on_result: ProgressCallback | None = None,
        validated: bool = False,
    ) -> Report:
        """Score every sample with every metric across the panel.

        Args:
            samples: the samples, each with a unique ``id`` (missing ids become their index).
            metrics: the metrics (default: the evaluator's own); metric objects, not names
                (:func:`ragqa.evaluate` takes names).
            on_result: called after each (sample, metric) result, e.g. for a progress bar.
            validated: True when the caller (the run layer) already validated these samples
                against these metrics; they are not checked again.

        Returns:
            The report: per-sample panel results and per-metric summaries.

        Raises:
            SampleError: when samples are invalid and ``on_invalid == "raise"``; the message
                lists every problem. Raised before any judge call.
            TypeError: when ``metrics`` holds something other than metric objects (e.g. names).
            ConfigError: when the panel is empty and a metric needs a judge, before any work.
        """
        chosen = metric_objects(metrics) if metrics is not None else self.metrics
        require_judges(self.judges, chosen)
        samples = [s if s.id is not None else s.model_copy(update={"id": str(i)}) for i, s in enumerate(samples, 1)]
        problems = [] if validated else self.validate(samples, chosen)
        skipped: list[SkippedSample] = []
        if problems:
            if self.options.on_invalid == "raise":
                shown = "\n".join(f"  - {p}" for p in problems[:20])
                more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
                raise SampleError(f"{len(problems)} invalid sample(s); nothing was scored:\n{shown}{more}")
            of_panel = [p for p in problems if p.sample_id is None]
            if of_panel:  # not a sample's fault: skipping samples cannot help
                raise of_panel[0]
            bad = {p.sample_id for p in problems}
            skipped = [
                SkippedSample(sample_id=p.sample_id or "?", metric=p.metric, field=p.field, message=str(p))
                for p in problems
            ]
            samples = [s for s in samples if s.id not in bad]

        started = time.perf_counter()
        by_sample: list[list[PanelResult]] = [[] for _ in samples]
        if self.probe is not None:
            self.probe.reset()

        def keep(index: int, rows: list[PanelResult]) -> None:
            by_sample[index] = rows
            if on_result is not None:
                for row in rows:
                    on_result(row)

        await self.score_stream(((i, s, chosen) for i, s in enumerate(samples)), keep)
        results = [row for rows in by_sample for row in rows]
        return Report(
            results=results,
            summaries=self._with_jury(
                chosen,
                summarize(
                    results,
                    [j.id for j in self.judges],
                    confidence=self.options.confidence,
                    ranges={m.key: m.value_range for m in chosen},
                ),
                results,
            ),
            skipped=skipped,
            wall_time_s=time.perf_counter() - started,
            call_plan=self.options.call_plan,
            order_probe=self.probe.result() if self.probe is not None else None,
        )

    async def score_stream(
        self,
        todo: Iterable[tuple[int, Sample, Sequence[Metric]]],
        on_rows: Callable[[int, list[PanelResult]], None],
        window: int | None = None,
        reuse: Callable[[str, str], Mapping[str, JudgeOutcome]] | None = None,
    ) -> None:
        """Score (already validated) samples as they come, holding only a bounded window in flight.

        ``todo`` is consumed lazily: a sample is taken from it only when one of the ``window``
        slots is free, so memory stays flat however many samples there are (a generator over a
        file is never read ahead). Each sample's metrics run together (shared steps once per
        judge). One deadline (:attr:`PanelOptions.deadline_s`) covers the whole stream. The objects
        alive when the stream starts are kept out of the garbage collector's way while it runs
        (:func:`ragqa._heap.frozen_heap`), so full collections do not stall the loop. Each
        sample's requests are ranked by the order the sample entered the stream
        (:data:`ragqa.judges.ratelimit.request_priority`), so a judge's waiting requests are served
        earliest sample first; a panel of local judges only computes in place instead of in the
        local judge's worker thread (:mod:`ragqa.judges.offload`). Neither changes what is asked
        or answered.

        Args:
            todo: ``(tag, sample, metrics)`` triples; every sample has an ``id``; ``tag`` is the
                caller's (e.g. the sample's position in the dataset) and is handed back.
            on_rows: called once per sample when it is finished, with its tag and one
                :class:`~ragqa.schema.PanelResult` per metric, in the order given; samples come in
                the order they finish.
            window: samples in flight at once (default :attr:`PanelOptions.max_concurrent_samples`;
                at least 1).
            reuse: ``reuse(sample id, metric key)`` gives outcomes to keep instead of asking
                their judges again, by judge id (``--resume --retry-failed``): only the other
                judges of the panel are asked, and the aggregate is taken over both. Ignored for a
                metric that needs no judge (scored once for the panel).

        Raises:
            asyncio.CancelledError: when cancelled; every in-flight computation is cancelled and
                awaited first, and no further sample is taken from ``todo``.
        """
        deadline = self._deadline()

        admitted = itertools.count()

        async def one(rank: int, tag: int, sample: Sample, metrics: Sequence[Metric]) -> None:
            # This task's requests wait behind earlier samples' only (see request_priority).
            request_priority.set(rank)
            on_rows(tag, await self._score_sample(sample, metrics, deadline, reuse))

        limit = max(1, window if window is not None else self.options.max_concurrent_samples)
        in_flight: set[asyncio.Future[None]] = set()
        with frozen_heap(), run_inline(all_local(self.judges)):
            try:
                items = iter(todo)
                while True:
                    if len(in_flight) >= limit:  # a slot first, then the next sample: none waits in memory
                        done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                        for task in done:
                            task.result()
                    item = next(items, None)
                    if item is None:
                        break
                    in_flight.add(asyncio.ensure_future(one(next(admitted), *item)))
                while in_flight:
                    done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        task.result()
            except BaseException:
                for task in in_flight:
                    task.cancel()
                await asyncio.gather(*in_flight, return_exceptions=True)
                raise

    async def score_sample(self, sample: Sample, metrics: Sequence[Metric] | None = None) -> list[PanelResult]:
        """Score one (already validated) sample with several metrics; shared steps run once per judge.

        Returns:
            One panel result per metric, in the order given.
        """
        chosen = tuple(metrics) if metrics is not None else self.metrics
        return await self._score_sample(sample, chosen, self._deadline())

    def _deadline(self) -> float | None:
        """The event-loop time at which a run starting now must end, or ``None``."""
        if self.options.deadline_s is None:
            return None
        return asyncio.get_running_loop().time() + self.options.deadline_s

    async def _score_sample(
        self,
        sample: Sample,
        chosen: Sequence[Metric],
        deadline: float | None,
        reuse: Callable[[str, str], Mapping[str, JudgeOutcome]] | None = None,
    ) -> list[PanelResult]:
        require_judges(self.judges, chosen)
        n = self.options.repeats
        # one SharedCallJudge per judge and repeat: shared steps are shared within a repeat, never across
        rounds: list[list[Judge]] = [[SharedCallJudge(j) for j in self.judges] for _ in range(n)]
        shared = rounds[0]
        # a metric that needs no judge (text similarity, tool calls, embeddings only) is scored once
        # and its outcome shown for every judge: the same score, its usage counted once
        alone = shared[:1] or [NoJudge()]  # an empty panel still scores judge-free metrics
        kept = {m.key: reuse(sample.label, m.key) for m in chosen if m.needs_judge} if reuse is not None else {}
        judged = [m for m in chosen if m.needs_judge]
        # the judges asked per metric, by panel position: all, or those without a kept outcome
        asked = {m.key: [i for i, j in enumerate(shared) if j.id not in kept.get(m.key, {})] for m in judged}
        cascade = self._cascade if self._cascade is not None and not self._cascade.audit else None
        first, tier2 = tier_positions(cascade, [j.id for j in self.judges], asked)
        found, free = await self._ask(deadline, sample, chosen, rounds, first, alone)
        if cascade is not None:  # tier 2 only where tier 1 is unsure (ragqa.jury.cascade)
            later = escalated(
                cascade, judged, asked, tier2, lambda metric: self._outcomes(metric, kept, found), self._combine
            )
            more, _ = await self._ask(deadline, sample, judged, rounds, later, alone)
            for key, by_position in more.items():
                found[key].update(by_position)
        results = []
        for metric in chosen:
            if not metric.needs_judge:
                got = free[metric.key]
                got += [copy_for(got[0], judge.id) for judge in shared[1:]]
            else:
                got = self._outcomes(metric, kept, found)
            results.append(self._panel(metric, sample, got))
        if self.probe is not None:  # after the scores: the original verdicts come from the shared judges' memory
            extractor = self._extractor if self.options.votes else None
            await probe_order(self.probe, sample, chosen, results, shared, extractor, self._context, deadline)
        return results

    async def _ask(
        self,
        deadline: float | None,
        sample: Sample,
        metrics: Sequence[Metric],
        rounds: list[list[Judge]],
        positions: Mapping[str, Sequence[int]],
        alone: Sequence[Judge],
    ) -> tuple[dict[str, dict[int, JudgeOutcome]], dict[str, list[JudgeOutcome]]]:
        """Ask every metric's judges at ``positions`` (each repeat), all concurrently, in metric order.

        A metric that needs no judge is scored once by ``alone``. Returns the judged metrics'
        outcomes by panel position (repeats combined), and the judge-free metrics' outcomes.
        """
        calls: list[Coroutine[Any, Any, JudgeOutcome]] = []
        for metric in metrics:
            if not metric.needs_judge:
                calls.extend(self._run_by(deadline, metric, sample, judge) for judge in alone)
                continue
            for index, judges in enumerate(rounds):
                # claim-vote: within a repeat, the extractor's statements for every judge
                voters = voting_judges(judges, metric, self._extractor) if self.options.votes else judges
                calls.extend(self._run_by(deadline, metric, sample, voters[i], index) for i in positions[metric.key])
        outcomes = iter(await gather_or_cancel(calls) if calls else [])
        found: dict[str, dict[int, JudgeOutcome]] = {}
        free: dict[str, list[JudgeOutcome]] = {}
        for metric in metrics:
            if not metric.needs_judge:
                free[metric.key] = [next(outcomes) for _ in alone]
                continue
            where = positions[metric.key]
            if len(rounds) == 1:
                new = [next(outcomes) for _ in where]
            else:
                by_round = [[next(outcomes) for _ in where] for _ in rounds]
                reducer = self.options.reducer
                new = [combine_repeats([row[k] for row in by_round], reducer) for k in range(len(where))]
            found[metric.key] = dict(zip(where, new, strict=True))
        return found, free

    def _outcomes(
        self,
        metric: Metric,
        kept: Mapping[str, Mapping[str, JudgeOutcome]],
        found: Mapping[str, Mapping[int, JudgeOutcome]],
    ) -> list[JudgeOutcome]:
        """A metric's outcomes in panel order: the kept ones, the new ones; judges not asked are absent."""
        old = kept.get(metric.key, {})
        new = found.get(metric.key, {})
        return [
            old[judge.id] if judge.id in old else new[i]
            for i, judge in enumerate(self.judges)
            if judge.id in old or i in new
        ]

    async def score(self, sample: Sample, metric: Metric) -> PanelResult:
        """Validate and score one sample with one metric across the panel.

        Raises:
            SampleError: when the sample lacks a field the metric needs.
        """
        problems = self.validate([sample], [metric])
        if problems:
            raise problems[0]
        if sample.id is None:
            sample = sample.model_copy(update={"id": "1"})
        return (await self.score_sample(sample, [metric]))[0]

    def _panel(self, metric: Metric, sample: Sample, outcomes: list[JudgeOutcome]) -> PanelResult:
        return PanelResult(
            sample_id=sample.label,
            metric=metric.key,
            direction=metric.direction,
            judges=outcomes,
            aggregate=self._combine(metric, outcomes),
        )

    def _combine(self, metric: Metric, outcomes: Sequence[JudgeOutcome]) -> Aggregate:
        """The aggregate of ``outcomes`` (panel order; under a cascade, the judges asked) by the run's strategy."""
        scores = [o.score.value for o in outcomes if o.score is not None]
        strategy = self.options.strategy
        if strategy == "claim-vote" or strategy == "dawid-skene":
            extractor = self.judges[self._extractor].id if self.judges else None
            ids = [o.judge_id for o in outcomes]
            return voted_aggregate(
                metric,
                outcomes,
                strategy=strategy,
                quorum=self.options.quorum,
                tie_breaker=ids.index(extractor) if extractor in ids else 0,
                reducer=self.options.reducer,
            )
        n_failed = sum(1 for o in outcomes if not o.ok)
        return aggregate(scores, n_failed=n_failed, strategy=strategy, quorum=self.options.quorum)

    @property
    def extractor(self) -> int:
        """The index in :attr:`judges` of the judge that extracts statements for the panel when voting."""
        return self._extractor

    def jury(self, metrics: Sequence[Metric]) -> JuryCollector | None:
        """A collector of the run's per-statement verdicts for the reliability section; ``None`` unless voting."""
        if not self.options.votes:
            return None
        return jury_collector(metrics, [j.id for j in self.judges], tie_breaker=self._extractor)

    @property
    def cascade_rule(self) -> Cascade | None:
        """The run's cascade (with ``audit`` set by ``cascade_audit``), or ``None``."""
        return self._cascade

    def cascade(self, metrics: Sequence[Metric]) -> CascadeTally | None:
        """A tally of the run's cascade (calls per tier, escalations, audit); ``None`` without a cascade."""
        if self._cascade is None:
            return None
        return CascadeTally(self._cascade, metrics, [j.id for j in self.judges], self._combine)

    def _with_jury(
        self, metrics: Sequence[Metric], summaries: list[MetricSummary], results: Sequence[PanelResult]
    ) -> list[MetricSummary]:
        """``summaries`` with a voting run's reliability section (:mod:`ragqa.jury.reliability`) and the cascade's."""
        jury = self.jury(metrics)
        summaries = jury.attach(summaries, results) if jury is not None else summaries
        tally = self.cascade(metrics)
        if tally is not None:
            for result in results:
                tally.add(result)
            summaries = tally.attach(summaries)
        return summaries

    def _run_by(
        self, deadline: float | None, metric: Metric, sample: Sample, judge: Judge, repeat: int = 0
    ) -> Coroutine[Any, Any, JudgeOutcome]:
        """:func:`~ragqa.evaluation.calls.run_by` with this run's metric context and deadline."""
        return run_by(
            deadline, metric, sample, judge, repeat, context=self._context, deadline_s=self.options.deadline_s
        )
