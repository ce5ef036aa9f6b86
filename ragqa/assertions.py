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

The failure message lists every judge's score, verdict and reason, the statements that failed
(unsupported / incorrect statements from the metric's details), the judges that were excluded
with the step and cause, the aggregate, the threshold and the direction.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ragqa.errors import ConfigError
from ragqa.schema import JudgeOutcome, MetricScore, PanelResult, Sample

if TYPE_CHECKING:
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric

__all__ = [
    "MetricAssertionError",
    "MetricVerdict",
    "ParsedPolicy",
    "Policy",
    "assert_metric",
    "check_metric",
    "close_private_loop",
    "failed_statements",
    "format_score",
    "format_verdict",
    "judge_ids",
    "parse_policy",
    "passes",
    "resolve_metric",
    "resolve_threshold",
    "run_sync",
    "score_metric",
    "verdict_for",
]

T = TypeVar("T")

Policy = Literal["aggregate", "all"] | int | str
"""``"aggregate"``, ``"all"``, an int ``k`` or ``"at_least:k"`` (see the module docstring)."""

_AT_LEAST = re.compile(r"^at[_-]least:(\d+)$")
_KEY = re.compile(r"^\s*([A-Za-z_][\w]*)\s*\((.*)\)\s*$")


@dataclass(frozen=True)
class ParsedPolicy:
    """A validated panel policy.

    Attributes:
        kind: ``aggregate``, ``all`` or ``at_least``.
        k: the number of judges that must pass (``at_least`` only; 0 otherwise).
    """

    kind: Literal["aggregate", "all", "at_least"]
    k: int = 0

    @property
    def label(self) -> str:
        """The policy as written by users (``aggregate``, ``all``, ``at_least:2``)."""
        return f"at_least:{self.k}" if self.kind == "at_least" else self.kind


def parse_policy(policy: Policy) -> ParsedPolicy:
    """Validate a policy.

    Args:
        policy: ``"aggregate"``, ``"all"``, an int ``k >= 1`` or ``"at_least:k"``.

    Returns:
        The parsed policy.

    Raises:
        ValueError: for anything else (including ``k < 1`` and booleans).
    """
    if isinstance(policy, bool):
        raise ValueError(f"policy must be 'aggregate', 'all', an int or 'at_least:k', not {policy!r}")
    if isinstance(policy, int):
        if policy < 1:
            raise ValueError(f"policy at_least:k needs k >= 1, got {policy}")
        return ParsedPolicy("at_least", policy)
    text = str(policy).strip().lower()
    if text in ("aggregate", "all"):
        return ParsedPolicy("aggregate" if text == "aggregate" else "all")
    match = _AT_LEAST.match(text)
    if match and int(match.group(1)) >= 1:
        return ParsedPolicy("at_least", int(match.group(1)))
    raise ValueError(f"unknown policy {policy!r}; use 'aggregate', 'all', an int k or 'at_least:k' (k >= 1)")


def passes(value: float, threshold: float, direction: Literal["higher", "lower"]) -> bool:
    """Whether one score passes a threshold.

    Args:
        value: the score (NaN = unscored).
        threshold: the pass threshold, in the metric's range.
        direction: ``higher`` (pass when ``value >= threshold``) or ``lower`` (``value <= threshold``).

    Returns:
        The verdict; always False for NaN.
    """
    if math.isnan(value):
        return False
    return value >= threshold if direction == "higher" else value <= threshold


def format_score(value: float | None) -> str:
    """Format a score for messages: three decimals, ``unscored`` for NaN, ``-`` for ``None``."""
    if value is None:
        return "-"
    return "unscored" if math.isnan(value) else f"{value:.3f}"


def failed_statements(score: MetricScore) -> list[str]:
    """The statements a judge found failing, read from a score's ``details``.

    Recognised shapes, first match wins:

    - an explicit list under ``failed_statements``, ``unsupported_statements``,
      ``incorrect_statements``, ``unsupported`` or ``incorrect`` (strings, or dicts with a
      ``statement``/``text`` key);
    - ``statements`` with parallel ``counted`` flags (noise sensitivity): the statements counted
      against the response (flag >= 0.5);
    - ``statements`` with parallel ``verdicts`` (faithfulness, hallucination): the statements whose
      verdict is below 0.5.

    Returns:
        The failing statements in order (empty when the details hold none).
    """
    details = score.details
    for key in ("failed_statements", "unsupported_statements", "incorrect_statements", "unsupported", "incorrect"):
        items = details.get(key)
        if isinstance(items, list):
            out = []
            for item in items:
                if isinstance(item, str):
                    out.append(item)
                elif isinstance(item, Mapping):
                    text = item.get("statement", item.get("text"))
                    if isinstance(text, str):
                        out.append(text)
            return out
    statements, counted = details.get("statements"), details.get("counted")
    if isinstance(statements, list) and isinstance(counted, list) and len(statements) == len(counted):
        return [
            str(s)
            for s, c in zip(statements, counted, strict=True)
            if isinstance(c, int | float) and not isinstance(c, bool) and c >= 0.5
        ]
    verdicts = details.get("verdicts")
    if isinstance(statements, list) and isinstance(verdicts, list) and len(statements) == len(verdicts):
        return [
            str(s)
            for s, v in zip(statements, verdicts, strict=True)
            if isinstance(v, int | float) and not isinstance(v, bool) and v < 0.5
        ]
    return []


@dataclass(frozen=True)
class MetricVerdict:
    """The pass/fail decision for one panel result under a threshold and a policy.

    Attributes:
        result: the panel result judged.
        threshold: the threshold applied.
        policy: the policy applied.
        passed: the overall verdict.
        passing_judges: judges whose own score passes the threshold.
        failing_judges: judges that scored (or returned NaN) and do not pass.
        excluded_judges: judges that failed (errors) and were excluded.
        why: one line saying what the policy required and what happened.
    """

    result: PanelResult
    threshold: float
    policy: ParsedPolicy
    passed: bool
    passing_judges: list[str] = field(default_factory=list)
    failing_judges: list[str] = field(default_factory=list)
    excluded_judges: list[str] = field(default_factory=list)
    why: str = ""

    @property
    def direction(self) -> Literal["higher", "lower"]:
        """The metric's direction."""
        return self.result.direction

    def message(self) -> str:
        """The full human-readable explanation (the failure message of :class:`MetricAssertionError`)."""
        return format_verdict(self)


def _comparator(direction: Literal["higher", "lower"]) -> str:
    return ">=" if direction == "higher" else "<="


def verdict_for(result: PanelResult, *, threshold: float, policy: Policy = "aggregate") -> MetricVerdict:
    """Decide pass/fail for a panel result (pure).

    Args:
        result: one metric on one sample across the panel.
        threshold: the pass threshold (see :func:`passes` for the direction).
        policy: the panel policy (see the module docstring).

    Returns:
        The verdict with the judges sorted into passing, failing and excluded.

    Raises:
        ValueError: for an invalid policy.
    """
    parsed = parse_policy(policy)
    direction = result.direction
    cmp = _comparator(direction)
    passing, failing, excluded = [], [], []
    for outcome in result.judges:
        if not outcome.ok or outcome.score is None:
            excluded.append(outcome.judge_id)
        elif passes(outcome.score.value, threshold, direction):
            passing.append(outcome.judge_id)
        else:
            failing.append(outcome.judge_id)
    agg = result.aggregate
    if parsed.kind == "aggregate":
        ok = passes(agg.value, threshold, direction)
        shown = format_score(agg.value)
        if math.isnan(agg.value):
            shown += (
                f" (quorum {agg.quorum} not met: {agg.n_ok} judge(s) scored)" if not agg.quorum_met else " (no score)"
            )
        why = f"policy 'aggregate' needs the {agg.strategy} aggregate {cmp} {threshold:g}; it is {shown}"
    elif parsed.kind == "all":
        scored = len(passing) + len(failing)
        ok = scored > 0 and not failing and agg.quorum_met
        if scored == 0:
            detail = "no judge produced a score"
        elif not agg.quorum_met:
            detail = f"only {agg.n_ok} judge(s) scored, below the quorum of {agg.quorum}"
        else:
            detail = f"{len(passing)} of {scored} passed" + (f"; failing: {', '.join(failing)}" if failing else "")
        why = f"policy 'all' needs every non-excluded judge {cmp} {threshold:g}; {detail}"
    else:
        ok = len(passing) >= parsed.k
        why = (
            f"policy '{parsed.label}' needs at least {parsed.k} judge(s) {cmp} {threshold:g}; "
            f"{len(passing)} of {len(result.judges)} passed"
        )
        if parsed.k > len(result.judges):
            why += f" (the panel has only {len(result.judges)} judge(s))"
    return MetricVerdict(
        result=result,
        threshold=threshold,
        policy=parsed,
        passed=ok,
        passing_judges=passing,
        failing_judges=failing,
        excluded_judges=excluded,
        why=why,
    )


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _judge_lines(outcome: JudgeOutcome, verdict: MetricVerdict, width: int) -> list[str]:
    name = outcome.judge_id.ljust(width)
    if outcome.failure is not None or outcome.score is None:
        f = outcome.failure
        cause = "failed" if f is None else f"{f.error_type}" + (f" at step '{f.step}'" if f.step else "")
        message = "" if f is None else f": {_one_line(f.message)}"
        return [f"  {name}  {'excluded':<9} {'-':<5} {cause}{message}"]
    score = outcome.score
    mark = "pass" if outcome.judge_id in verdict.passing_judges else "FAIL"
    lines = [f"  {name}  {format_score(score.value):<9} {mark:<5} {score.reason or ''}".rstrip()]
    failed = failed_statements(score)
    if failed and not all(s in (score.reason or "") for s in failed):
        lines.append(f"  {' ' * width}  failed statements:")
        lines.extend(f"  {' ' * width}    - {s}" for s in failed)
    return lines


def format_verdict(verdict: MetricVerdict) -> str:
    """Render a verdict as a multi-line message: headline, one row per judge, the aggregate.

    The headline names the metric, the sample, PASSED/FAILED, the policy's requirement, the
    threshold and the direction. Each judge row shows its score (``unscored`` for NaN), its own
    pass/FAIL against the threshold, its reason and its failed statements; excluded judges show
    the error type, the step and the cause.
    """
    r = verdict.result
    a = r.aggregate
    better = "higher is better" if r.direction == "higher" else "lower is better"
    head = (
        f"{r.metric} {'PASSED' if verdict.passed else 'FAILED'} on sample {r.sample_id!r}: {verdict.why} "
        f"(threshold {verdict.threshold:g}, {better})"
    )
    width = max([len("judge"), *(len(o.judge_id) for o in r.judges)])
    lines = [head, f"  {'judge'.ljust(width)}  {'score':<9} {'':<5} reason"]
    for outcome in r.judges:
        lines.extend(_judge_lines(outcome, verdict, width))
    lines.append(
        f"  aggregate: {format_score(a.value)} ({a.strategy} of {a.n_ok} judge(s), spread {format_score(a.spread)}; "
        f"{a.n_nan} unscored, {a.n_failed} excluded; quorum {a.quorum} {'met' if a.quorum_met else 'NOT met'})"
    )
    if verdict.excluded_judges:
        lines.append(f"  excluded judges: {', '.join(verdict.excluded_judges)}")
    return "\n".join(lines)


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


def _parse_key(text: str) -> tuple[str, dict[str, Any]]:
    match = _KEY.match(text)
    if not match:
        return text.strip(), {}
    import yaml

    options: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in match.group(2).split(","))):
        name, sep, raw = part.partition("=")
        if not sep:
            raise ConfigError(f"bad metric key {text!r}: expected name(option=value, ...)", key="metric")
        options[name.strip()] = yaml.safe_load(raw.strip())
    return match.group(1), options


def resolve_metric(evaluator: PanelEvaluator, metric: Metric | str) -> Metric:
    """Turn a metric or a metric name into a metric.

    A string is looked up among the evaluator's configured metrics first (by key, e.g.
    ``noise_sensitivity(mode=irrelevant)``, then by name, so configured options apply); otherwise
    it is built from the registry, with options parsed from a key of the form
    ``name(option=value, ...)``.

    Raises:
        ConfigError: for an unknown metric name or rejected options.
    """
    from ragqa.metrics.base import Metric

    if isinstance(metric, Metric):
        return metric
    wanted = metric.strip()
    for configured in evaluator.metrics:
        if configured.key == wanted:
            return configured
    for configured in evaluator.metrics:
        if configured.name == wanted:
            return configured
    from ragqa.metrics import build_metric

    name, options = _parse_key(wanted)
    return build_metric(name, options)


def resolve_threshold(
    metric: Metric, threshold: float | None = None, thresholds: Mapping[str, float] | None = None
) -> float:
    """Pick the threshold: explicit, else configured (``ragqa.thresholds``), else the metric's default.

    Args:
        metric: the metric (its ``key`` is looked up before its ``name`` in ``thresholds``).
        threshold: an explicit threshold, which wins.
        thresholds: configured thresholds by metric key or name.

    Returns:
        The threshold.

    Raises:
        ConfigError: when no threshold is given, configured or defaulted (key ``ragqa.thresholds``).
    """
    if threshold is not None:
        return float(threshold)
    for key in (metric.key, metric.name):
        if thresholds and key in thresholds:
            return float(thresholds[key])
    if metric.default_threshold is not None:
        return float(metric.default_threshold)
    raise ConfigError(
        f"no threshold for metric {metric.key!r}: pass threshold=... or set ragqa.thresholds.{metric.name}",
        key=f"ragqa.thresholds.{metric.name}",
    )


async def score_metric(
    evaluator: PanelEvaluator,
    metric: Metric | str,
    sample: Sample,
    *,
    threshold: float | None = None,
    policy: Policy = "aggregate",
    thresholds: Mapping[str, float] | None = None,
) -> MetricVerdict:
    """Score ``sample`` with ``metric`` across the panel and decide pass/fail, without raising on "fail".

    Args:
        evaluator: the panel evaluator.
        metric: a metric, or a name/key (see :func:`resolve_metric`).
        sample: the sample to score.
        threshold: the pass threshold (default: see :func:`resolve_threshold`).
        policy: the panel policy.
        thresholds: configured thresholds by metric key or name (``ragqa.thresholds``).

    Returns:
        The verdict.

    Raises:
        ValueError: for an invalid policy (raised before any judge call).
        ConfigError: for an unknown metric or a missing threshold (before any judge call).
        ragqa.errors.SampleError: when the sample lacks a field the metric needs (before any judge call).
    """
    parse_policy(policy)
    chosen = resolve_metric(evaluator, metric)
    limit = resolve_threshold(chosen, threshold, thresholds)
    result = await evaluator.score(sample, chosen)
    return verdict_for(result, threshold=limit, policy=policy)


async def assert_metric(
    evaluator: PanelEvaluator,
    metric: Metric | str,
    sample: Sample,
    *,
    threshold: float | None = None,
    policy: Policy = "aggregate",
    thresholds: Mapping[str, float] | None = None,
) -> PanelResult:
    """Assert that the panel passes ``metric`` on ``sample``.

    Args:
        evaluator: the panel evaluator (its judges are the panel).
        metric: a metric, or a name/key such as ``"faithfulness"`` or ``"noise_sensitivity(mode=irrelevant)"``.
        sample: the sample to score.
        threshold: the pass threshold; default ``thresholds[metric]``, else ``metric.default_threshold``.
            Higher-is-better metrics pass when ``score >= threshold``, lower-is-better ones when
            ``score <= threshold``; NaN never passes.
        policy: ``"aggregate"`` (default), ``"all"``, an int ``k`` or ``"at_least:k"``.
        thresholds: configured thresholds by metric key or name (``ragqa.thresholds``).

    Returns:
        The panel result (when the assertion passes).

    Raises:
        MetricAssertionError: when the policy's verdict is "fail"; the message lists every judge.
        ValueError: for an invalid policy.
        ConfigError: for an unknown metric or a missing threshold.
        ragqa.errors.SampleError: when the sample lacks a field the metric needs.
    """
    __tracebackhide__ = True
    verdict = await score_metric(evaluator, metric, sample, threshold=threshold, policy=policy, thresholds=thresholds)
    if not verdict.passed:
        raise MetricAssertionError(verdict)
    return verdict.result


_private_loop: asyncio.AbstractEventLoop | None = None
_IN_RUNNING_LOOP = (
    "check_metric() cannot run inside a running event loop (an async test or application); "
    "use `await assert_metric(...)` there instead"
)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on ragqa's private event loop (created once, reused).

    The loop is kept between calls so that HTTP clients opened by judges in one synchronous test
    stay usable in the next.

    Raises:
        RuntimeError: when called while an event loop is running (the coroutine is closed unrun).
    """
    __tracebackhide__ = True
    global _private_loop
    if _loop_running():
        coro.close()
        raise RuntimeError(_IN_RUNNING_LOOP)
    if _private_loop is None or _private_loop.is_closed():
        _private_loop = asyncio.new_event_loop()
    return _private_loop.run_until_complete(coro)


def close_private_loop() -> None:
    """Close ragqa's private event loop, if one was created (the pytest plugin calls this at session end)."""
    global _private_loop
    if _private_loop is not None and not _private_loop.is_closed():
        _private_loop.run_until_complete(_private_loop.shutdown_asyncgens())
        _private_loop.close()
    _private_loop = None


def check_metric(
    evaluator: PanelEvaluator,
    metric: Metric | str,
    sample: Sample,
    *,
    threshold: float | None = None,
    policy: Policy = "aggregate",
    thresholds: Mapping[str, float] | None = None,
) -> PanelResult:
    """Synchronous twin of :func:`assert_metric`, for plain (non-async) tests.

    Runs on a private event loop, and only when no loop is running.

    Returns:
        The panel result (when the assertion passes).

    Raises:
        RuntimeError: when an event loop is running (use ``await assert_metric(...)``).
        MetricAssertionError: when the assertion fails (see :func:`assert_metric`).
    """
    __tracebackhide__ = True
    if _loop_running():
        raise RuntimeError(_IN_RUNNING_LOOP)
    return run_sync(assert_metric(evaluator, metric, sample, threshold=threshold, policy=policy, thresholds=thresholds))


def judge_ids(results: Sequence[PanelResult]) -> list[str]:
    """Judge ids in first-seen order over ``results`` (for tables of several results)."""
    seen: dict[str, None] = {}
    for r in results:
        for o in r.judges:
            seen.setdefault(o.judge_id, None)
    return list(seen)
