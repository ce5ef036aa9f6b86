"""The panel evaluator: every metric, on every sample, with every judge, concurrently.

For each sample, each judge gets one :class:`~ragqa.judges.base.SharedCallJudge` (identical
steps across metrics are made once), and every (metric, judge) pair runs as its own task. A judge
that fails is recorded as a :class:`~ragqa.schema.JudgeFailure` and excluded from the aggregate;
it never stops the run. Samples are validated against every metric before the first judge call.
Provider concurrency and rate limits are enforced by the judges themselves (per provider), so
this package only bounds how many samples are in flight: :meth:`PanelEvaluator.score_stream` takes a
sample from its input only when one of ``max_concurrent_samples`` slots is free, so no coroutine
exists for a sample that is not being scored and memory does not grow with the dataset.

A run may have a deadline (:attr:`PanelOptions.deadline_s`): when it passes, every (metric,
judge) computation not yet finished is cancelled (its in-flight requests with it) and recorded as
a :class:`~ragqa.errors.JudgeTimeout` failure naming the deadline, and the report is returned.
Cancelling :meth:`PanelEvaluator.evaluate` itself (task cancel, ``asyncio.wait_for``, Ctrl-C)
cancels every in-flight judge call, shared ones included; no request starts afterwards.

Modules: :mod:`~ragqa.evaluation.options` (:class:`PanelOptions`, :func:`validate_samples`, the
panel's own problems), :mod:`~ragqa.evaluation.calls` (one (metric, judge) computation, the
deadline, the empty panel's stand-in), :mod:`~ragqa.evaluation.phases` (the cascade's tiers, the
order probe) and :mod:`~ragqa.evaluation.evaluator` (:class:`PanelEvaluator`: streaming, asking,
aggregating, the jury's sections). Import from ``ragqa.evaluation``.
"""

from __future__ import annotations

from ragqa.evaluation.calls import NO_JUDGE as NO_JUDGE
from ragqa.evaluation.evaluator import PanelEvaluator
from ragqa.evaluation.options import PanelOptions, ProgressCallback, validate_samples

__all__ = ["PanelEvaluator", "PanelOptions", "ProgressCallback", "validate_samples"]
