"""One (metric, judge) computation of a panel run, and running many of them together.

:func:`run_metric` scores a sample with a metric by one judge and never raises for a judge's
fault: a :class:`~ragqa.errors.JudgeError` or :class:`~ragqa.errors.SampleError` (or an unexpected
error, logged) becomes a :class:`~ragqa.schema.JudgeFailure` in the outcome. :func:`run_by` adds
the run's deadline; :func:`gather_or_cancel` runs computations concurrently and cancels them all
together. :data:`NO_JUDGE` and :class:`NoJudge` stand in for an empty panel. Used by
:class:`~ragqa.evaluation.PanelEvaluator`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from ragqa.errors import ConfigError, JudgeError, JudgeTimeout, JudgeUnsupported, SampleError
from ragqa.judges.base import Judge
from ragqa.metrics.base import Metric, MetricContext
from ragqa.repeats import repeat_index
from ragqa.schema import JudgeFailure, JudgeOutcome, Language, Sample, Usage
from ragqa.usage import usage_scope

__all__ = [
    "NO_JUDGE",
    "NoJudge",
    "copy_for",
    "gather_or_cancel",
    "require_judges",
    "run_by",
    "run_metric",
]

log = logging.getLogger("ragqa.evaluation")
"""The logger of unexpected errors in a computation (its name from before ``ragqa.evaluation`` was a package)."""

T = TypeVar("T")

NO_JUDGE = "(no judge)"
"""The judge id of judge-free outcomes in a run whose panel is empty."""


async def run_by(
    deadline: float | None,
    metric: Metric,
    sample: Sample,
    judge: Judge,
    repeat: int = 0,
    *,
    context: MetricContext,
    deadline_s: float | None,
) -> JudgeOutcome:
    """:func:`run_metric`, ended as a ``JudgeTimeout`` failure when the run's deadline passes.

    Args:
        deadline: the event-loop time at which the run must end, or ``None`` (no deadline).
        metric: the metric.
        sample: the (validated) sample.
        judge: the judge that scores it.
        repeat: the 0-based repeat, set as :data:`ragqa.repeats.repeat_index` for the
            computation's judge calls (it runs in a task of its own) so that repeats are distinct calls.
        context: the run's metric context (language, embedders, call plan, voting).
        deadline_s: the run's deadline in seconds (:attr:`PanelOptions.deadline_s`), named in the
            failure's message.

    Returns:
        The outcome; a ``JudgeTimeout`` failure (latency in seconds) when the deadline passed first.
    """
    if repeat:
        repeat_index.set(repeat)
    if deadline is None:
        return await run_metric(metric, sample, judge, context)
    started = time.perf_counter()
    if asyncio.get_running_loop().time() < deadline:
        try:
            async with asyncio.timeout_at(deadline):
                return await run_metric(metric, sample, judge, context)
        except TimeoutError:
            pass
    error = JudgeTimeout(
        f"judge {judge.id!r}: the run deadline of {deadline_s:g}s passed before "
        f"{metric.key} finished on sample {sample.label}",
        judge_id=judge.id,
    )
    return _failed(error, metric, sample, judge, started)


async def run_metric(metric: Metric, sample: Sample, judge: Judge, context: MetricContext) -> JudgeOutcome:
    """Score ``sample`` with ``metric`` by ``judge``; a failure is recorded, never raised.

    The score is range-checked (:meth:`~ragqa.metrics.base.Metric.check_score`, the one range
    check of every score). The outcome carries the latency in seconds and the usage metered while
    it ran (:func:`ragqa.usage.usage_scope`). Cancellation propagates.
    """
    started = time.perf_counter()
    with usage_scope() as meter:
        try:
            score = await metric.score(sample, judge, context)
            score = metric.check_score(score, judge_id=judge.id)  # the one range check of every score
        except (JudgeError, SampleError) as exc:
            step, raw = getattr(exc, "step", None), getattr(exc, "raw", None)
            return _failed(exc, metric, sample, judge, started, meter.total, step=step, raw=raw)
        except Exception as exc:  # a bug or an unmapped provider error: record it, keep the run going
            log.exception("unexpected error in %s with judge %s on sample %s", metric.key, judge.id, sample.label)
            return _failed(exc, metric, sample, judge, started, meter.total)
    return JudgeOutcome(judge_id=judge.id, score=score, latency_s=time.perf_counter() - started, usage=meter.total)


def _failed(
    exc: Exception,
    metric: Metric,
    sample: Sample,
    judge: Judge,
    started: float,
    usage: Usage | None = None,
    *,
    step: str | None = None,
    raw: str | None = None,
) -> JudgeOutcome:
    """``exc`` as ``judge``'s failure on (``sample``, ``metric``), timed from ``started`` (perf-counter seconds)."""
    failure = JudgeFailure(
        judge_id=judge.id,
        metric=metric.key,
        sample_id=sample.label,
        step=step,
        error_type=type(exc).__name__,
        message=str(exc),
        raw=raw,
    )
    return JudgeOutcome(
        judge_id=judge.id,
        failure=failure,
        latency_s=time.perf_counter() - started,
        usage=usage if usage is not None else Usage(),
    )


class NoJudge:
    """Stands in for an empty panel so judge-free metrics are scored; it answers no prompt."""

    id = NO_JUDGE
    fingerprint = "no-judge"

    async def ask(self, prompt: Any, data: Any, *, language: Language = "en") -> Any:
        """Refuse every prompt.

        Raises:
            JudgeUnsupported: always (a metric that needs a judge cannot run on an empty panel).
        """
        raise JudgeUnsupported(f"the panel has no judge to answer {prompt.name!r}", judge_id=NO_JUDGE)


def require_judges(judges: Sequence[Judge], metrics: Sequence[Metric]) -> None:
    """Raise ConfigError when the panel is empty and a metric needs a judge (every score would be missing)."""
    judged = [m.key for m in metrics if m.needs_judge] if not judges else []
    if judged:
        raise ConfigError(
            f"{', '.join(judged)} {'needs' if len(judged) == 1 else 'need'} a judge, but the panel has none; "
            "add judges (spring.ai.chat-models.list) or choose judge-free metrics only",
            key="spring.ai.chat-models.list",
        )


def copy_for(outcome: JudgeOutcome, judge_id: str) -> JudgeOutcome:
    """``outcome`` of a judge-free metric shown under ``judge_id``: same score or failure, no usage."""
    failure = outcome.failure.model_copy(update={"judge_id": judge_id}) if outcome.failure is not None else None
    return outcome.model_copy(update={"judge_id": judge_id, "failure": failure, "usage": Usage(), "latency_s": 0.0})


async def gather_or_cancel(coroutines: Sequence[Coroutine[Any, Any, T]]) -> list[T]:
    """Run ``coroutines`` concurrently; results in order.

    If the caller is cancelled (or one of them raises), every other one is cancelled and awaited
    before this returns, so no judge call outlives the run and nothing is left unretrieved.
    """
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
