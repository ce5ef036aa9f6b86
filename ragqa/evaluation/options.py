"""How a panel run is configured, and the checks on its inputs that need no judge.

:class:`PanelOptions` (strategy, quorum, deadline, repeats, cascade, probes, size guards),
:func:`validate_samples` (every sample against every metric, before any judge call) and the
``metrics`` argument's type check. Used by :class:`~ragqa.evaluation.PanelEvaluator`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragqa.aggregate import PanelStrategy
from ragqa.errors import SampleError
from ragqa.jury.cascade import Cascade
from ragqa.jury.probe import OrderProbeOptions, parse_probes
from ragqa.metrics.base import CallPlan, Metric
from ragqa.metrics.validation import Limits, validate_run
from ragqa.repeats import REDUCERS, Reducer
from ragqa.schema import DEFAULT_CONFIDENCE, Language, PanelResult, Sample, check_confidence

__all__ = ["PanelOptions", "ProgressCallback", "metric_objects", "panel_problems", "validate_samples"]

ProgressCallback = Callable[[PanelResult], None]
"""Called once per finished (sample, metric) result."""


@dataclass(frozen=True)
class PanelOptions:
    """How the panel combines and runs.

    Attributes:
        strategy: aggregation strategy (see :mod:`ragqa.aggregate`); ``claim-vote`` and
            ``dawid-skene`` vote per statement (:mod:`ragqa.jury.panel`).
        quorum: minimum number of judges with a finite score for an aggregate to exist.
        language: prompt and explanation language.
        max_concurrent_samples: samples in flight at once (judge calls are further bounded per
            provider by the judges).
        on_invalid: ``raise`` a :class:`~ragqa.errors.SampleError` listing every invalid sample
            before any judge call, or ``skip`` them and list them in the report.
        deadline_s: the longest a run (:meth:`PanelEvaluator.evaluate`, or one
            :meth:`~PanelEvaluator.score_sample`) may take, seconds from its start; when it passes,
            unfinished (metric, judge) computations end as ``JudgeTimeout`` failures naming the
            deadline and the report is returned. ``None``: no deadline.
        call_plan: how metrics ask the judges (:data:`~ragqa.metrics.base.CallPlan`): ``batched``
            (one call per step for all items) or ``ragas`` (RAGAS's calls, one per item).
        repeats: how many times every judge scores every (sample, metric), with independent
            calls (>= 1; :mod:`ragqa.repeats`). Metrics that need no judge are scored once.
        reducer: how a judge's repeats become its score: ``mean``, ``median`` or ``mode``
            (:func:`ragqa.repeats.reduce_scores`); unused with one repeat.
        confidence: level of the report's confidence intervals, in (0, 1) (:mod:`ragqa.uncertainty`).
        extractor: the judge id that extracts the statements for the whole panel under
            ``claim-vote``/``dawid-skene`` (``ragqa.jury.extractor``); ``None``: the first judge.
        cascade: tier 2's judges and the rule that escalates an item to them
            (:class:`ragqa.jury.cascade.Cascade`, ``ragqa.jury.cascade``); ``None``: every judge scores
            every item.
        cascade_audit: every tier scores every item (the full panel's scores and aggregates), and the
            report compares the cascade's verdicts with the full panel's (``--cascade-audit``).
        probes: the bias probes the run makes (``("order",)`` or empty; ``--probe``,
            ``ragqa.probe.enabled``): extra calls on a share of the samples, reported beside the
            scores, never changing them (:mod:`ragqa.jury.probe`).
        order_probe: the order probe's sample share, seed and flag rate (``ragqa.probe.order``).
        limits: the input-size guards every sample is checked against (``ragqa.limits``;
            :func:`ragqa.metrics.validation.validate_run`), as a dataset run checks them.
    """

    strategy: PanelStrategy = "mean"
    quorum: int = 1
    language: Language = "en"
    max_concurrent_samples: int = 16
    on_invalid: Literal["raise", "skip"] = "raise"
    deadline_s: float | None = None
    call_plan: CallPlan = "batched"
    repeats: int = 1
    reducer: Reducer = "mean"
    confidence: float = DEFAULT_CONFIDENCE
    extractor: str | None = None
    cascade: Cascade | None = None
    cascade_audit: bool = False
    probes: tuple[str, ...] = ()
    order_probe: OrderProbeOptions = field(default_factory=OrderProbeOptions)
    limits: Limits = field(default_factory=Limits)

    @property
    def votes(self) -> bool:
        """Whether the panel votes per statement (``claim-vote`` or ``dawid-skene``)."""
        return self.strategy in ("claim-vote", "dawid-skene")

    def __post_init__(self) -> None:
        """Reject a non-positive deadline, fewer than one repeat, an unknown reducer, a confidence outside (0, 1)."""
        if self.deadline_s is not None and not self.deadline_s > 0:
            raise ValueError(f"deadline_s must be > 0 seconds or None, got {self.deadline_s}")
        if isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or self.repeats < 1:
            raise ValueError(f"repeats must be an integer >= 1, got {self.repeats!r}")
        if self.reducer not in REDUCERS:
            raise ValueError(f"reducer must be one of {', '.join(REDUCERS)}, got {self.reducer!r}")
        check_confidence(self.confidence)
        object.__setattr__(self, "probes", parse_probes(self.probes))


def validate_samples(
    samples: Sequence[Sample], metrics: Sequence[Metric], limits: Limits | None = None
) -> list[SampleError]:
    """Check every sample against every metric's required fields and the size guards; no judge is involved.

    The same check as a dataset run's (:func:`ragqa.metrics.validation.validate_run`).

    Args:
        samples: the samples, in dataset order.
        metrics: the metrics they will be scored with.
        limits: the size guards (default: :class:`~ragqa.metrics.validation.Limits`'s defaults,
            those of ``ragqa.limits``).

    Returns:
        Every problem (sample, field, metric, fix), in sample then metric order; empty when all
        samples are valid.
    """
    return list(validate_run(samples, metrics, limits).problems)


def panel_problems(
    metrics: Sequence[Metric], has_embedders: bool, unavailable: str | None, has_judges: bool
) -> list[SampleError]:
    """The problems of the panel itself for ``metrics`` (``sample_id`` ``None``); no judge is called.

    Args:
        metrics: the metrics to score.
        has_embedders: whether the run has an embedding model.
        unavailable: why no embedding model could be built (named in the message), or ``None``.
        has_judges: whether the panel has a judge.

    Returns:
        One :class:`~ragqa.errors.SampleError` per metric that needs an embedding model when there
        is none, then one per metric that needs a judge when the panel is empty; each names the
        metric and the fix (the setting to configure).
    """
    problems: list[SampleError] = (
        []
        if has_embedders
        else [
            SampleError(
                f"needs an embedding model, but {unavailable}"
                if unavailable
                else "needs an embedding model; configure spring.ai.embedding-models.list "
                "(or use --profile local with the embeddings extra)",
                metric=metric.key,
            )
            for metric in metrics
            if metric.needs_embeddings
        ]
    )
    if not has_judges:  # an empty panel scores judge-free metrics only
        problems += [
            SampleError(
                "needs a judge, but the panel has none; add judges to spring.ai.chat-models.list, "
                "or choose judge-free metrics only",
                metric=metric.key,
            )
            for metric in metrics
            if metric.needs_judge
        ]
    return problems


def metric_objects(metrics: Sequence[Metric]) -> tuple[Metric, ...]:
    """``metrics`` as a tuple, refusing names and other non-metrics with a clear TypeError."""
    bad = [m for m in metrics if not isinstance(m, Metric)]
    if isinstance(metrics, str) or bad:
        shown = metrics if isinstance(metrics, str) else bad[0]
        raise TypeError(
            f"metrics must be Metric objects, got {shown!r}; build them with ragqa.build_metric(name), "
            "or call ragqa.evaluate(data, metrics=[...]), which takes names"
        )
    return tuple(metrics)
