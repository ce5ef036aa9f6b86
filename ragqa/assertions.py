"""Threshold assertions over a panel of judges, for pytest and CI.

:func:`assert_metric` scores one sample with one metric across the panel and raises
:class:`MetricAssertionError` (an ``AssertionError``, so pytest reports it as a test failure)
when the panel's verdict is "fail". :func:`check_metric` is its twin for synchronous tests.

Direction is taken from the metric: for a *higher-is-better* metric (faithfulness) a score passes
when ``score >= threshold``; for a *lower-is-better* metric (hallucination, noise sensitivity) when
``score <= threshold``. NaN ("unscored": the metric is undefined for the sample, or the quorum was
not met) never passes.

Policies decide what must pass:

- ``"aggregate"`` (default): the panel's aggregate (mean, median... as configured) passes.
- ``"all"``: every judge that was not excluded passes, and the quorum is met.
- ``k`` (an int) or ``"at_least:k"``: at least ``k`` judges pass.

A failed verdict is *incomplete* (:attr:`MetricVerdict.decided` is False) when only judge
failures stand in its way: had the excluded judges scored, the policy could have passed (e.g.
every judge failed). It still fails the assertion; ``ragqa test`` reports it as incomplete.

Under the ``aggregate`` policy, a sample whose aggregate comes with a confidence interval (across
judges x repeats, :func:`ragqa.uncertainty.sample_interval`) gets the gate of
:func:`ragqa.thresholds.sample_gate`: **undecided** when its judges or repeats fall on both sides
of the threshold and the interval contains it. What an
undecided verdict does is ``on_undecided`` (:data:`ragqa.thresholds.OnUndecided`): ``fail`` (the
default: the assertion fails with ``undecided: 0.612 [0.570, 0.655] against 0.6, add samples or
repeats``), ``pass``, or ``warn`` (it passes with an :class:`~ragqa.thresholds.UndecidedWarning`).
Without an interval (one judge and one repeat, or too few values) the verdict is today's pass or
fail. The ``all`` and ``at_least`` policies count judges and keep today's rule.

Every assertion goes through the run layer's single-sample path (:mod:`ragqa.run.check`): the
threshold is resolved by :func:`ragqa.run.spec.resolve_threshold` and metric strings parsed by
:class:`ragqa.run.spec.MetricSpec`, the sample is checked by the one validator of every run
(:func:`ragqa.run.validate.validate_run`, with the size guards of ``ragqa.limits``), and the
verdict is :func:`ragqa.verdicts.verdict_for`'s, as for ``ragqa test``; the synchronous helpers
run on ragqa's loop thread (:mod:`ragqa.run.loop`).

The failure message lists every judge's score, verdict and reason, the statements that failed
(:attr:`ragqa.schema.MetricScore.failed_statements`), the judges that were excluded
with the step and cause, the aggregate, the threshold and the direction.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ragqa.run.check import SampleRunner, check_plan
from ragqa.run.loop import run_sync
from ragqa.run.spec import MetricSpec, resolve_threshold, spec_of
from ragqa.schema import MetricScore, PanelResult, Sample
from ragqa.thresholds import (
    OnUndecided,
    ParsedPolicy,
    Policy,
    UndecidedWarning,
    format_score,
    parse_on_undecided,
    parse_policy,
    passes,
)
from ragqa.verdicts import MetricVerdict, check_judge_thresholds, format_verdict, verdict_for, with_judge_thresholds

if TYPE_CHECKING:
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric

__all__ = [
    "MetricAssertionError",
    "MetricVerdict",
    "OnUndecided",
    "ParsedPolicy",
    "Policy",
    "UndecidedWarning",
    "assert_metric",
    "check_judge_thresholds",
    "check_metric",
    "failed_statements",
    "format_score",
    "format_verdict",
    "parse_policy",
    "passes",
    "raise_on_fail",
    "resolve_metric",
    "resolve_threshold",
    "run_sync",
    "score_metric",
    "verdict_for",
    "with_judge_thresholds",
]


def failed_statements(score: MetricScore) -> list[str]:
    """The statements a judge found failing: :attr:`ragqa.schema.MetricScore.failed_statements` (kept by this name).

    Returns:
        The failing statements in order (empty when the details hold none); the detail keys read
        are the contract of :mod:`ragqa.score_details`.
    """
    return score.failed_statements


class MetricAssertionError(AssertionError):
    """A metric assertion failed; the message shows every judge (see :func:`format_verdict`).

    Attributes:
        verdict: the verdict, with the full :class:`~ragqa.schema.PanelResult`.
    """

    def __init__(self, verdict: MetricVerdict) -> None:
        super().__init__(verdict.message())
        self.verdict = verdict

    @property
    def result(self) -> PanelResult:
        """The panel result that failed."""
        return self.verdict.result


def resolve_metric(evaluator: PanelEvaluator, metric: Metric | str) -> Metric:
    """Turn a metric or a metric spec into a metric.

    A string is parsed as a :class:`~ragqa.run.spec.MetricSpec` (``name`` or
    ``name(option=value, ...)``) and looked up among the evaluator's configured metrics first (a
    metric whose spec equals it, then, for a bare name, one of that name), so configured options
    apply; otherwise it is built from the registry with the spec's options.

    Raises:
        ConfigError: for a malformed spec, an unknown metric name (with the closest names) or
            options the metric rejects.
    """
    from ragqa.metrics.base import Metric

    if isinstance(metric, Metric):
        return metric
    spec = MetricSpec.parse(metric, source="metric")
    for configured in evaluator.metrics:
        if spec_of(configured) == spec:
            return configured
    if not spec.options:
        for configured in evaluator.metrics:
            if configured.name == spec.name:
                return configured
    return spec.build()


async def score_metric(
    evaluator: PanelEvaluator,
    metric: Metric | str,
    sample: Sample,
    *,
    threshold: float | None = None,
    policy: Policy = "aggregate",
    thresholds: Mapping[str, float] | None = None,
    on_undecided: OnUndecided = "fail",
    confidence: float | None = None,
) -> MetricVerdict:
    """Score ``sample`` with ``metric`` across the panel and decide pass, fail or undecided, without raising.

    Args:
        evaluator: the panel evaluator.
        metric: a metric, or a spec such as ``"noise_sensitivity(mode=irrelevant)"`` (see
            :func:`resolve_metric`).
        sample: the sample to score.
        threshold: the pass threshold; default: the configured one matched by spec, else the
            metric's default (see :func:`ragqa.run.spec.resolve_threshold`).
        policy: the panel policy.
        thresholds: configured thresholds by metric spec (``ragqa.thresholds``).
        on_undecided: what an undecided gate counts as: ``fail`` (default), ``pass`` or ``warn``.
        confidence: the confidence level of the sample's interval across judges x repeats
            (default: the evaluator's, ``ragqa.confidence``).

    Returns:
        The verdict (its ``gate`` is ``undecided`` when the sample's interval contains the threshold).

    Raises:
        ConfigError: for an invalid policy or ``on_undecided``, an unknown metric, a bad or
            missing threshold (before any judge call).
        ragqa.errors.SampleError: when the sample lacks a field the metric needs or breaks a size
            guard of ``ragqa.limits`` (before any judge call).
    """
    parse_policy(policy)
    parse_on_undecided(on_undecided, key="on_undecided")
    chosen = resolve_metric(evaluator, metric)
    plan = check_plan(evaluator, chosen, threshold=threshold, configured=thresholds, on_undecided=on_undecided)
    return await SampleRunner(plan, evaluator).verdict(sample, policy=policy, confidence=confidence)


def raise_on_fail(verdict: MetricVerdict) -> PanelResult:
    """What an assertion does with a verdict: raise when it did not pass, warn when it passed undecided.

    Returns:
        The panel result, when the verdict passed.

    Raises:
        MetricAssertionError: when ``verdict.passed`` is False (an undecided gate with
            ``on_undecided="fail"`` included; its message starts with ``undecided:``).
    """
    __tracebackhide__ = True
    if not verdict.passed:
        raise MetricAssertionError(verdict)
    if verdict.undecided and verdict.on_undecided == "warn":
        warnings.warn(UndecidedWarning(verdict.headline()), stacklevel=2)
    return verdict.result


async def assert_metric(
    evaluator: PanelEvaluator,
    metric: Metric | str,
    sample: Sample,
    *,
    threshold: float | None = None,
    policy: Policy = "aggregate",
    thresholds: Mapping[str, float] | None = None,
    on_undecided: OnUndecided = "fail",
    confidence: float | None = None,
) -> PanelResult:
    """Assert that the panel passes ``metric`` on ``sample``.

    Args:
        evaluator: the panel evaluator (its judges are the panel).
        metric: a metric, or a spec such as ``"faithfulness"`` or ``"noise_sensitivity(mode=irrelevant)"``.
        sample: the sample to score.
        threshold: the pass threshold in the metric's range; default: ``thresholds`` matched by
            spec, else ``metric.default_threshold``. Higher-is-better metrics pass when
            ``score >= threshold``, lower-is-better ones when ``score <= threshold``; NaN never passes.
        policy: ``"aggregate"`` (default), ``"all"``, an int ``k`` or ``"at_least:k"``.
        thresholds: configured thresholds by metric spec (``ragqa.thresholds``).
        on_undecided: what an undecided gate does (the sample's interval across judges x
            repeats contains the threshold): ``fail`` (default), ``pass``, or ``warn`` (pass with
            an :class:`~ragqa.thresholds.UndecidedWarning`).
        confidence: the confidence level of that interval (default: the evaluator's).

    Returns:
        The panel result (when the assertion passes).

    Raises:
        MetricAssertionError: when the policy's verdict is "fail", or "undecided" with
            ``on_undecided="fail"``; the message lists every judge.
        ConfigError: for an invalid policy, an unknown metric, a bad or missing threshold.
        ragqa.errors.SampleError: when the sample lacks a field the metric needs.
    """
    __tracebackhide__ = True
    verdict = await score_metric(
        evaluator,
        metric,
        sample,
        threshold=threshold,
        policy=policy,
        thresholds=thresholds,
        on_undecided=on_undecided,
        confidence=confidence,
    )
    return raise_on_fail(verdict)


def check_metric(
    evaluator: PanelEvaluator,
    metric: Metric | str,
    sample: Sample,
    *,
    threshold: float | None = None,
    policy: Policy = "aggregate",
    thresholds: Mapping[str, float] | None = None,
    on_undecided: OnUndecided = "fail",
    confidence: float | None = None,
) -> PanelResult:
    """Synchronous twin of :func:`assert_metric`, for plain tests and scripts.

    The coroutine runs on ragqa's loop thread (:func:`ragqa.run.loop.run_sync`), so this works
    with or without a running event loop in the caller's thread (a notebook cell, an async test);
    inside a running loop it blocks that loop until the panel is done, so in async code prefer
    ``await assert_metric(...)``. Judges' HTTP clients stay bound to ragqa's loop from one call to
    the next.

    Returns:
        The panel result (when the assertion passes).

    Raises:
        MetricAssertionError: when the assertion fails (see :func:`assert_metric`).
        ConfigError, ragqa.errors.SampleError: as :func:`assert_metric`, before any judge call.
        KeyboardInterrupt: when interrupted (the panel's calls were cancelled first).
    """
    __tracebackhide__ = True
    return run_sync(
        assert_metric(
            evaluator,
            metric,
            sample,
            threshold=threshold,
            policy=policy,
            thresholds=thresholds,
            on_undecided=on_undecided,
            confidence=confidence,
        )
    )
