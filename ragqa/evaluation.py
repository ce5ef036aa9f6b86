"""The panel evaluator: every metric, on every sample, with every judge, concurrently.

For each sample, each judge gets one :class:`~ragqa.judges.base.SharedCallJudge` (identical
steps across metrics are made once), and every (metric, judge) pair runs as its own task. A judge
that fails is recorded as a :class:`~ragqa.schema.JudgeFailure` and excluded from the aggregate;
it never stops the run. Samples are validated against every metric before the first judge call.
Provider concurrency and rate limits are enforced by the judges themselves (per provider), so
this module only bounds how many samples are in flight.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ragqa.aggregate import Strategy, aggregate
from ragqa.errors import JudgeError, SampleError
from ragqa.judges.base import Embedder, Judge, SharedCallJudge
from ragqa.metrics.base import Metric, MetricContext
from ragqa.report import Report, SkippedSample, summarize
from ragqa.schema import JudgeFailure, JudgeOutcome, Language, PanelResult, Sample
from ragqa.usage import usage_scope

__all__ = ["PanelEvaluator", "PanelOptions", "ProgressCallback", "validate_samples"]

log = logging.getLogger(__name__)

ProgressCallback = Callable[[PanelResult], None]
"""Called once per finished (sample, metric) result."""


@dataclass(frozen=True)
class PanelOptions:
    """How the panel combines and runs.

    Attributes:
        strategy: aggregation strategy (see :mod:`ragqa.aggregate`).
        quorum: minimum number of judges with a finite score for an aggregate to exist.
        language: prompt and explanation language.
        max_concurrent_samples: samples in flight at once (judge calls are further bounded per
            provider by the judges).
        on_invalid: ``raise`` a :class:`~ragqa.errors.SampleError` listing every invalid sample
            before any judge call, or ``skip`` them and list them in the report.
    """

    strategy: Strategy = "mean"
    quorum: int = 1
    language: Language = "en"
    max_concurrent_samples: int = 16
    on_invalid: Literal["raise", "skip"] = "raise"


def validate_samples(samples: Sequence[Sample], metrics: Sequence[Metric]) -> list[SampleError]:
    """Check every sample against every metric's required fields; no judge is involved.

    Args:
        samples: the samples, in dataset order.
        metrics: the metrics they will be scored with.

    Returns:
        Every problem (sample, field, metric, fix), in sample then metric order; empty when all
        samples are valid.
    """
    problems: list[SampleError] = []
    for sample in samples:
        for metric in metrics:
            try:
                metric.validate(sample)
            except SampleError as exc:
                problems.append(exc)
    return problems


def _metric_objects(metrics: Sequence[Metric]) -> tuple[Metric, ...]:
    """``metrics`` as a tuple, refusing names and other non-metrics with a clear TypeError."""
    bad = [m for m in metrics if not isinstance(m, Metric)]
    if isinstance(metrics, str) or bad:
        shown = metrics if isinstance(metrics, str) else bad[0]
        raise TypeError(
            f"metrics must be Metric objects, got {shown!r}; build them with ragqa.build_metric(name), "
            "or call ragqa.evaluate(data, metrics=[...]), which takes names"
        )
    return tuple(metrics)


class PanelEvaluator:
    """Runs metrics across a panel of judges and aggregates per sample.

    Args:
        judges: the panel (at least one judge unless every metric needs none).
        metrics: the default metrics of :meth:`evaluate`.
        embedders: embedding models for metrics that embed.
        options: aggregation and run options.
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
        self.options = options or PanelOptions()
        self._context = MetricContext(language=self.options.language, embedders=self.embedders)

    def validate(self, samples: Sequence[Sample], metrics: Sequence[Metric] | None = None) -> list[SampleError]:
        """Check the panel and every sample against every metric; no judge is called.

        Returns:
            Every problem found (empty when all samples are valid): first one per metric that
            needs an embedding model none is configured for (``sample_id`` ``None``), then
            :func:`validate_samples`'s.
        """
        chosen = tuple(metrics) if metrics is not None else self.metrics
        problems = (
            []
            if self.embedders
            else [
                SampleError(
                    "needs an embedding model; configure spring.ai.embedding-models.list "
                    "(or use --profile local with the embeddings extra)",
                    metric=metric.key,
                )
                for metric in chosen
                if metric.needs_embeddings
            ]
        )
        return problems + validate_samples(samples, chosen)

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
        """
        chosen = _metric_objects(metrics) if metrics is not None else self.metrics
        samples = [s if s.id is not None else s.model_copy(update={"id": str(i)}) for i, s in enumerate(samples, 1)]
        problems = [] if validated else self.validate(samples, chosen)
        skipped: list[SkippedSample] = []
        if problems:
            if self.options.on_invalid == "raise":
                shown = "\n".join(f"  - {p}" for p in problems[:20])
                more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
                raise SampleError(f"{len(problems)} invalid sample(s); nothing was scored:\n{shown}{more}")
            panel_problems = [p for p in problems if p.sample_id is None]
            if panel_problems:  # not a sample's fault: skipping samples cannot help
                raise panel_problems[0]
            bad = {p.sample_id for p in problems}
            skipped = [
                SkippedSample(sample_id=p.sample_id or "?", metric=p.metric, field=p.field, message=str(p))
                for p in problems
            ]
            samples = [s for s in samples if s.id not in bad]

        started = time.perf_counter()
        gate = asyncio.Semaphore(self.options.max_concurrent_samples)

        async def one(sample: Sample) -> list[PanelResult]:
            async with gate:
                rows = await self.score_sample(sample, chosen)
            if on_result is not None:
                for row in rows:
                    on_result(row)
            return rows

        per_sample = await asyncio.gather(*(one(s) for s in samples))
        results = [row for rows in per_sample for row in rows]
        return Report(
            results=results,
            summaries=summarize(results, [j.id for j in self.judges]),
            skipped=skipped,
            wall_time_s=time.perf_counter() - started,
        )

    async def score_sample(self, sample: Sample, metrics: Sequence[Metric] | None = None) -> list[PanelResult]:
        """Score one (already validated) sample with several metrics; shared steps run once per judge.

        Returns:
            One panel result per metric, in the order given.
        """
        chosen = tuple(metrics) if metrics is not None else self.metrics
        shared = [SharedCallJudge(j) for j in self.judges]
        outcomes = await asyncio.gather(*(self._run(metric, sample, judge) for metric in chosen for judge in shared))
        n = len(shared)
        return [self._panel(metric, sample, list(outcomes[i * n : (i + 1) * n])) for i, metric in enumerate(chosen)]

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
        scores = [o.score.value for o in outcomes if o.score is not None]
        return PanelResult(
            sample_id=sample.label,
            metric=metric.key,
            direction=metric.direction,
            judges=outcomes,
            aggregate=aggregate(
                scores,
                n_failed=sum(1 for o in outcomes if not o.ok),
                strategy=self.options.strategy,
                quorum=self.options.quorum,
            ),
        )

    async def _run(self, metric: Metric, sample: Sample, judge: Judge) -> JudgeOutcome:
        started = time.perf_counter()
        with usage_scope() as meter:
            try:
                score = await metric.score(sample, judge, self._context)
                metric.check_score(score, judge_id=judge.id)  # the one range check of every score
            except (JudgeError, SampleError) as exc:
                failure = JudgeFailure(
                    judge_id=judge.id,
                    metric=metric.key,
                    sample_id=sample.label,
                    step=getattr(exc, "step", None),
                    error_type=type(exc).__name__,
                    message=str(exc),
                    raw=getattr(exc, "raw", None),
                )
                return JudgeOutcome(
                    judge_id=judge.id, failure=failure, latency_s=time.perf_counter() - started, usage=meter.total
                )
            except Exception as exc:  # a bug or an unmapped provider error: record it, keep the run going
                log.exception("unexpected error in %s with judge %s on sample %s", metric.key, judge.id, sample.label)
                failure = JudgeFailure(
                    judge_id=judge.id,
                    metric=metric.key,
                    sample_id=sample.label,
                    error_type=type(exc).__name__,
                    message=str(exc),
                )
                return JudgeOutcome(
                    judge_id=judge.id, failure=failure, latency_s=time.perf_counter() - started, usage=meter.total
                )
        return JudgeOutcome(judge_id=judge.id, score=score, latency_s=time.perf_counter() - started, usage=meter.total)
