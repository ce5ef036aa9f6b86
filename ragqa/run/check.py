"""One sample at a time through the run layer: the path of the assertions, the pytest plugin and ``ragqa test``.

A dataset run goes through :class:`~ragqa.run.runner.Runner`; an assertion (``check_metric``, the
``ragqa_panel`` fixture) and a ``ragqa test`` case judge one sample with one metric, but through
the same steps and the same code:

1. :func:`check_plan` builds a :class:`~ragqa.run.plan.RunPlan` for the one metric: its threshold is
   resolved by :func:`ragqa.run.spec.resolve_threshold` (explicit, else ``ragqa.thresholds`` matched
   by spec, else the entry point's default, else the metric's) and the size guards are the panel's
   (``ragqa.limits``);
2. :class:`SampleRunner` validates the sample with the one validator of every run
   (:func:`ragqa.run.validate.validate_run`) and the panel's own checks (embedding models, an empty
   panel), before any judge call; scores it; and decides the verdict
   (:func:`ragqa.verdicts.verdict_for`) with the sample's interval across judges x repeats;
3. :func:`exit_code_of` turns the verdicts of a session or a file into the one exit code
   (:func:`ragqa.run.exit_codes.decide_exit_code`: incomplete 3 > failed 1 > undecided 4 > 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from ragqa.errors import InvalidSamples, SampleError
from ragqa.run.exit_codes import ExitCode, decide_exit_code
from ragqa.run.plan import RunPlan
from ragqa.run.spec import resolve_threshold
from ragqa.run.validate import validate_run
from ragqa.schema import PanelResult, Sample
from ragqa.thresholds import OnUndecided, Policy, parse_on_undecided, parse_policy, sample_scores
from ragqa.verdicts import MetricVerdict, verdict_for

if TYPE_CHECKING:
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric

__all__ = ["SampleRunner", "check_plan", "exit_code_of"]


def check_plan(
    evaluator: PanelEvaluator,
    metric: Metric,
    *,
    threshold: float | None = None,
    configured: Mapping[str, float] | None = None,
    default: float | None = None,
    on_undecided: OnUndecided | str = "fail",
) -> RunPlan:
    """The run plan of one check: one metric, its resolved threshold, the panel's size guards.

    Args:
        evaluator: the panel (its :attr:`~ragqa.evaluation.PanelOptions.limits` are the plan's).
        metric: the metric, built.
        threshold: the check's own threshold (an assertion's ``threshold=``), in the metric's range.
        configured: ``ragqa.thresholds`` by metric spec.
        default: the entry point's default before the metric's own (promptfoo's per type).
        on_undecided: what an undecided gate counts as: ``fail``, ``pass`` or ``warn``.

    Returns:
        A plan whose :attr:`~ragqa.run.plan.RunPlan.thresholds` holds ``metric.key``.

    Raises:
        ConfigError: a bad or missing threshold, or a bad ``on_undecided``; before any judge call.
    """
    limit = resolve_threshold(metric, explicit=threshold, configured=configured, default=default)
    return RunPlan(
        metrics=(metric,),
        thresholds={metric.key: limit},
        limits=evaluator.options.limits,
        on_undecided=parse_on_undecided(on_undecided, key="on_undecided"),
    )


class SampleRunner:
    """Runs a plan one sample at a time with a panel evaluator (see the module docstring).

    Args:
        plan: the plan (:func:`check_plan` for one metric).
        evaluator: the panel; it is never changed.
    """

    def __init__(self, plan: RunPlan, evaluator: PanelEvaluator) -> None:
        """Remember the plan and the evaluator; nothing is called."""
        self.plan = plan
        self.evaluator = evaluator

    @staticmethod
    def with_id(sample: Sample) -> Sample:
        """``sample``, with the id ``"1"`` when it has none (a run's first sample gets that id too)."""
        return sample if sample.id is not None else sample.model_copy(update={"id": "1"})

    def problems(self, sample: Sample) -> list[SampleError]:
        """Every reason this panel cannot score ``sample`` with the plan's metrics; no judge is called.

        Returns:
            The panel's problems (an embedding model or a judge missing; ``sample_id`` ``None``),
            then :func:`~ragqa.run.validate.validate_run`'s with the plan's size guards.
        """
        panel = self.evaluator.validate([], self.plan.metrics)
        return panel + list(validate_run([self.with_id(sample)], self.plan.metrics, self.plan.limits).problems)

    def check(self, sample: Sample) -> Sample:
        """Validate ``sample`` (see :meth:`problems`) and return it with an id.

        Raises:
            SampleError: the one problem; :class:`~ragqa.errors.InvalidSamples` listing them when several.
        """
        found = self.problems(sample)
        if len(found) == 1:
            raise found[0]
        if found:
            raise InvalidSamples(found)
        return self.with_id(sample)

    async def score(self, sample: Sample, *, validated: bool = False) -> list[PanelResult]:
        """Validate, then score ``sample`` with every metric of the plan across the panel.

        Args:
            sample: the sample.
            validated: True when the caller already checked it (:meth:`problems`, as ``ragqa
                test`` does for a whole file first); it is not checked again.

        Raises:
            SampleError: as :meth:`check`, before any judge call.
        """
        checked = self.with_id(sample) if validated else self.check(sample)
        return await self.evaluator.score_sample(checked, self.plan.metrics)

    async def verdict(
        self,
        sample: Sample,
        *,
        policy: Policy = "aggregate",
        confidence: float | None = None,
        validated: bool = False,
    ) -> MetricVerdict:
        """Validate, score and judge ``sample`` with the plan's (one) metric and threshold.

        Args:
            sample: the sample.
            policy: the panel policy (``aggregate``, ``all``, ``k`` or ``at_least:k``).
            confidence: the level of the sample's interval across judges x repeats (default: the
                panel's, ``ragqa.confidence``).
            validated: as :meth:`score`.

        Returns:
            The verdict of :func:`ragqa.verdicts.verdict_for`.

        Raises:
            ConfigError: an invalid policy, before any judge call.
            SampleError: as :meth:`check`, before any judge call.
        """
        parse_policy(policy)
        (metric,) = self.plan.metrics
        result = (await self.score(sample, validated=validated))[0]
        from ragqa.uncertainty import sample_interval  # numpy: kept off `import ragqa` (tests/test_startup_imports.py)

        level = confidence if confidence is not None else self.evaluator.options.confidence
        interval = sample_interval(sample_scores(result), confidence=level, bounds=metric.value_range)
        return verdict_for(
            result,
            threshold=self.plan.thresholds[metric.key],
            policy=policy,
            interval=interval,
            on_undecided=self.plan.on_undecided,
        )


def exit_code_of(verdicts: Iterable[MetricVerdict]) -> ExitCode:
    """The exit code of judged samples, decided as every run's (:func:`~ragqa.run.exit_codes.decide_exit_code`).

    A verdict is *incomplete* when it is not :attr:`~ragqa.verdicts.MetricVerdict.decided` (only the
    failed judges could have passed it), *failed* when it failed outright, *undecided* when its
    gate is undecided and counts as failed. No verdict at all is incomplete (nothing was decided).

    Returns:
        ``INCOMPLETE`` (3), else ``THRESHOLD`` (1), else ``UNDECIDED`` (4), else ``OK`` (0).
    """
    listed = list(verdicts)
    return decide_exit_code(
        incomplete=not listed or any(not v.decided for v in listed),
        failed=any(not v.passed and v.decided and not v.undecided for v in listed),
        undecided=any(not v.passed for v in listed),
    )
