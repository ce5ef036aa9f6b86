"""The ``ragqa_panel`` helper of the pytest plugin: assertions bound to a test's panel, recorded for the reports.

:class:`RagqaHelper` runs each assertion through the run layer's single-sample path (the one
validator, threshold resolution and verdict of every entry point: :mod:`ragqa.run.check`, via
:func:`ragqa.assertions.score_metric`) on the session's loop thread, and records each verdict as
JUnit properties, a ``--ragqa-results`` line (:func:`results_line`) and, with ``allure-pytest``,
Allure attachments (:func:`attach_to_allure`). Import-light: ragqa's heavier modules are imported
when a test first uses the helper.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragqa.run.loop import LoopThread

if TYPE_CHECKING:
    from ragqa.assertions import MetricVerdict, Policy
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric
    from ragqa.schema import PanelResult, Sample
    from ragqa.thresholds import OnUndecided

__all__ = ["RagqaHelper", "attach_to_allure", "results_line", "select_judges"]


def select_judges(
    evaluator: PanelEvaluator, patterns: Sequence[str], *, container: Container | None = None
) -> PanelEvaluator:
    """``evaluator`` narrowed to the judges whose ids match ``patterns`` (ids or shell patterns).

    The panel order is kept; metrics, embedders and options are ``evaluator``'s. The container's
    ``evaluator`` provider builds the narrowed one, with those parts as call-time keywords, so
    ``container`` is not changed (no provider is overridden). Without ``container``, the provider
    of a fresh, unconfigured :class:`~ragqa.container.Container` builds it (every part is given,
    so no settings are read); so does it when the caller replaced ``container.evaluator`` by an
    object, which ignores call-time keywords.

    Raises:
        ValueError: when a pattern matches no judge (the message lists the panel).
    """
    from ragqa.container import Container

    ids = [j.id for j in evaluator.judges]
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(i, p) for i in ids)]
    if unmatched:
        raise ValueError(
            f"@pytest.mark.ragqa(judges=...): {', '.join(map(repr, unmatched))} match no judge; "
            f"the panel is {', '.join(ids) or '(empty)'}"
        )
    chosen = [j for j in evaluator.judges if any(fnmatch.fnmatchcase(j.id, p) for p in patterns)]
    parts = {"judges": chosen, "metrics": evaluator.metrics, "embedders": evaluator.embedders}
    narrowed: PanelEvaluator = (container or Container()).evaluator(**parts, options=evaluator.options)
    if [j.id for j in narrowed.judges] != [j.id for j in chosen]:
        # the caller replaced the container's evaluator by an object, which ignores call-time
        # keywords: the declared provider of a fresh container builds the narrowed panel
        narrowed = Container().evaluator(**parts, options=evaluator.options)
    return narrowed


class RagqaHelper:
    """The ``ragqa`` fixture: assertions bound to the test's evaluator, recorded for the reports.

    Panel work runs on ``loop`` (the session's ragqa loop thread) when given, so the helper works
    in sync tests and in async tests on any event loop; without it, async methods run on the
    caller's loop and sync ones on ragqa's shared loop thread (:func:`ragqa.run.loop.run_sync`).

    Attributes:
        evaluator: the panel evaluator (narrowed by the marker).
        thresholds: configured thresholds by metric name or key.
        policy: the default policy (marker ``policy=``, else ``"aggregate"``).
        on_undecided: what an undecided assertion does: ``fail`` (default), ``pass`` or ``warn``.
        verdicts: every verdict recorded in this test, in order.
    """

    def __init__(
        self,
        evaluator: PanelEvaluator,
        *,
        thresholds: Mapping[str, float] | None = None,
        policy: Policy = "aggregate",
        node: pytest.Item | None = None,
        results_path: Path | None = None,
        loop: LoopThread | None = None,
        on_undecided: OnUndecided = "fail",
    ) -> None:
        """Bind the helper (``node`` receives the JUnit properties; ``results_path`` the JSONL lines)."""
        self.evaluator = evaluator
        self.thresholds = dict(thresholds or {})
        self.policy = policy
        self.on_undecided: OnUndecided = on_undecided
        self.verdicts: list[MetricVerdict] = []
        self._node = node
        self._results_path = results_path
        self._loop = loop

    def _score_metric(
        self, metric: Metric | str, sample: Sample, threshold: float | None, policy: Policy | None
    ) -> Coroutine[Any, Any, MetricVerdict]:
        """The :func:`ragqa.assertions.score_metric` call with this fixture's policy and thresholds."""
        from ragqa.assertions import score_metric

        return score_metric(
            self.evaluator,
            metric,
            sample,
            threshold=threshold,
            policy=policy if policy is not None else self.policy,
            thresholds=self.thresholds,
            on_undecided=self.on_undecided,
        )

    async def _verdict(
        self, metric: Metric | str, sample: Sample, threshold: float | None, policy: Policy | None
    ) -> MetricVerdict:
        coro = self._score_metric(metric, sample, threshold, policy)
        return await (self._loop.arun(coro) if self._loop is not None else coro)

    def _verdict_sync(
        self, metric: Metric | str, sample: Sample, threshold: float | None, policy: Policy | None
    ) -> MetricVerdict:
        from ragqa.run.loop import run_sync

        coro = self._score_metric(metric, sample, threshold, policy)
        return self._loop.run(coro) if self._loop is not None else run_sync(coro)

    def _judge_thresholds(self, judge_thresholds: Mapping[str, float] | None) -> Mapping[str, float]:
        """Per-judge thresholds checked against this test's panel, before any judge call."""
        from ragqa.assertions import check_judge_thresholds

        if judge_thresholds:
            check_judge_thresholds([j.id for j in self.evaluator.judges], judge_thresholds)
        return judge_thresholds or {}

    async def score(
        self,
        metric: Metric | str,
        sample: Sample,
        *,
        threshold: float | None = None,
        policy: Policy | None = None,
        judge_thresholds: Mapping[str, float] | None = None,
    ) -> MetricVerdict:
        """Score and record without raising on "fail" (see :func:`ragqa.assertions.score_metric`).

        ``judge_thresholds`` (``{"judge-a": 0.8}``) adds per-judge gates on top of the policy
        (:func:`ragqa.assertions.with_judge_thresholds`); an unknown judge id is a ``ConfigError``
        before any call.
        """
        gates = self._judge_thresholds(judge_thresholds)
        return self._gate_and_record(await self._verdict(metric, sample, threshold, policy), gates)

    async def assert_metric(
        self,
        metric: Metric | str,
        sample: Sample,
        *,
        threshold: float | None = None,
        policy: Policy | None = None,
        judge_thresholds: Mapping[str, float] | None = None,
    ) -> PanelResult:
        """Assert that the panel passes ``metric`` on ``sample`` (async tests).

        See :func:`ragqa.assertions.assert_metric` for thresholds, direction and policies;
        ``judge_thresholds`` as in :meth:`score`.

        Raises:
            ragqa.assertions.MetricAssertionError: when the assertion fails.
        """
        __tracebackhide__ = True
        verdict = await self.score(
            metric, sample, threshold=threshold, policy=policy, judge_thresholds=judge_thresholds
        )
        return self._raise_on_fail(verdict)

    def check_metric(
        self,
        metric: Metric | str,
        sample: Sample,
        *,
        threshold: float | None = None,
        policy: Policy | None = None,
        judge_thresholds: Mapping[str, float] | None = None,
    ) -> PanelResult:
        """Synchronous twin of :meth:`assert_metric`, for plain tests.

        The panel runs on the session's loop thread, so this works in async tests too, where it
        blocks the test's loop until the panel is done (``await ragqa_panel.assert_metric(...)`` does not).

        Raises:
            ragqa.assertions.MetricAssertionError: when the assertion fails.
        """
        __tracebackhide__ = True
        gates = self._judge_thresholds(judge_thresholds)
        return self._raise_on_fail(self._gate_and_record(self._verdict_sync(metric, sample, threshold, policy), gates))

    @staticmethod
    def _raise_on_fail(verdict: MetricVerdict) -> PanelResult:
        __tracebackhide__ = True
        from ragqa.assertions import raise_on_fail

        return raise_on_fail(verdict)

    def _gate_and_record(self, verdict: MetricVerdict, gates: Mapping[str, float]) -> MetricVerdict:
        """The verdict with the per-judge ``gates`` applied, recorded (shared by score and check_metric)."""
        from ragqa.assertions import with_judge_thresholds

        gated = with_judge_thresholds(verdict, gates)
        self._record(gated)
        return gated

    def _record(self, verdict: MetricVerdict) -> None:
        """Append the verdict's JUnit properties to the test and its line to the results file."""
        self.verdicts.append(verdict)
        result = verdict.result
        if self._node is not None:
            from ragqa.render.junit import result_properties

            self._node.user_properties.extend(
                result_properties(
                    result,
                    threshold=verdict.threshold,
                    policy=verdict.policy.label,
                    passed=verdict.passed,
                    gate=verdict.gate,
                )
            )
        if self._results_path is not None:
            line = results_line(verdict, test=self._node.nodeid if self._node is not None else None)
            with self._results_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        attach_to_allure(verdict, test=self._node.nodeid if self._node is not None else None)


def attach_to_allure(verdict: MetricVerdict, *, test: str | None = None) -> bool:
    """Attach a verdict to the running test's Allure result, when ``allure-pytest`` is installed.

    Two attachments per verdict, named ``ragqa <metric> on <sample>``: the panel table as text
    (:func:`ragqa.assertions.format_verdict`: each judge's score, pass/FAIL, reason and failed
    statements, the aggregate) and the per-judge record as JSON (:func:`results_line`: every
    judge's score, reason, details and failure, the aggregate, threshold and verdict). Without
    ``allure-pytest`` nothing happens; with it but without ``--alluredir`` Allure drops them.

    Returns:
        Whether Allure was there to take them.
    """
    try:
        import allure  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return False
    name = f"ragqa {verdict.result.metric} on {verdict.result.sample_id}"
    allure.attach(verdict.message(), name=f"{name}: panel", attachment_type=allure.attachment_type.TEXT)
    allure.attach(
        json.dumps(results_line(verdict, test=test), ensure_ascii=False, indent=2),
        name=f"{name}: judges",
        attachment_type=allure.attachment_type.JSON,
    )
    return True


def results_line(verdict: MetricVerdict, *, test: str | None) -> dict[str, Any]:
    """One ``--ragqa-results`` line: the panel result's record plus the test's verdict (pure).

    The shape is :func:`ragqa.render.records.result_record`'s (``sample_id``, ``metric``,
    ``direction``, ``aggregate``, ``judges``), so :func:`ragqa.render.records.read_result_record`
    reads a line back, plus ``test`` (the pytest node id, or ``None``), ``threshold``, ``policy``
    (``aggregate``, ``all``, ``at_least:k``), ``passed``, ``decided`` (False when only judge
    failures made it fail), ``gate`` (``pass``, ``fail`` or ``undecided``), ``interval`` (the
    sample's interval across judges x repeats, or ``None``), ``on_undecided`` and ``flaky``.
    """
    from ragqa.render.records import result_record

    return {
        "test": test,
        **result_record(verdict.result),
        "threshold": verdict.threshold,
        "policy": verdict.policy.label,
        "passed": verdict.passed,
        "decided": verdict.decided,
        "gate": verdict.gate,
        "interval": None if verdict.interval is None else verdict.interval.model_dump(mode="json"),
        "on_undecided": verdict.on_undecided,
        "flaky": verdict.flaky,
    }
