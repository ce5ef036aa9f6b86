"""Pass, fail or undecided for one panel result: the verdict of an assertion, and its message.

:func:`verdict_for` decides a :class:`MetricVerdict` for one (sample, metric) across the panel
under a threshold and a policy; :func:`with_judge_thresholds` adds per-judge gates;
:func:`format_verdict` tells it with every judge's row. They are pure and shared by every entry
point that judges one sample at a time: the assertion helpers (:mod:`ragqa.assertions`), the
pytest plugin and ``ragqa test`` (through :mod:`ragqa.run.check`, which turns their verdicts into
the one exit code, :func:`ragqa.run.exit_codes.decide_exit_code`).

Direction is taken from the result: a *higher-is-better* metric passes when
``score >= threshold``, a *lower-is-better* one when ``score <= threshold``
(:func:`ragqa.thresholds.passes`); NaN never passes. The policies (``aggregate``, ``all``,
``at_least:k``), the undecided gate and incomplete verdicts are described in :mod:`ragqa.assertions`.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ragqa.errors import ConfigError
from ragqa.schema import Interval, JudgeOutcome, PanelResult
from ragqa.thresholds import (
    Gate,
    OnUndecided,
    ParsedPolicy,
    Policy,
    comparator,
    counts_as_passed,
    format_score,
    is_flaky,
    parse_on_undecided,
    parse_policy,
    passes,
    sample_gate,
    undecided_message,
)

__all__ = ["MetricVerdict", "check_judge_thresholds", "format_verdict", "verdict_for", "with_judge_thresholds"]


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
        decided: False when the verdict is "fail" only because judges failed (it is incomplete):
            had the excluded judges scored, the policy could have passed. ``ragqa test`` then
            exits 3 (incomplete) rather than 1, and reports a JUnit ``error`` rather than a ``failure``.
        gate: ``pass``, ``fail`` or ``undecided`` (the interval contains the threshold; see
            :func:`ragqa.thresholds.gate`), before ``on_undecided`` applies.
        interval: the confidence interval of the sample's aggregate across judges x repeats that
            the gate used, or ``None`` (then the gate is pass or fail).
        on_undecided: what an undecided gate counts as; ``passed`` already applies it.
    """

    result: PanelResult
    threshold: float
    policy: ParsedPolicy
    passed: bool
    passing_judges: list[str] = field(default_factory=list)
    failing_judges: list[str] = field(default_factory=list)
    excluded_judges: list[str] = field(default_factory=list)
    why: str = ""
    decided: bool = True
    gate: Gate = "pass"
    interval: Interval | None = None
    on_undecided: OnUndecided = "fail"

    @property
    def direction(self) -> Literal["higher", "lower"]:
        """The metric's direction."""
        return self.result.direction

    @property
    def undecided(self) -> bool:
        """True when the gate is undecided (the interval contains the threshold), whatever ``on_undecided`` says."""
        return self.gate == "undecided"

    @property
    def flaky(self) -> bool:
        """True when the sample's judges or repeats fall on both sides of the threshold."""
        return is_flaky(self.result, self.threshold)

    def message(self) -> str:
        """The full human-readable explanation (the failure message of :class:`MetricAssertionError`)."""
        return format_verdict(self)

    def headline(self) -> str:
        """One short line for summaries (pytest's short test summary): metric, sample, scores, requirement.

        Under the ``aggregate`` policy it shows the aggregate against the threshold
        (``faithfulness 0.417 < 0.8 (mean of 3 judges), sample 'q3'``); under ``all`` and
        ``at_least`` it counts the passing judges. :meth:`message` has every judge's row.
        """
        r = self.result
        a = r.aggregate
        cmp = comparator(r.direction)
        if self.undecided and self.interval is not None:
            line = f"{r.metric} {undecided_message(a.value, self.interval, self.threshold)}"
            line += f" ({a.strategy} of {a.n_ok} judges), sample {r.sample_id!r}"
        elif self.policy.kind == "aggregate":
            shown = _versus(format_score(a.value), self.threshold, r.direction, passed=self.passed)
            line = f"{r.metric} {shown} ({a.strategy} of {a.n_ok} judges), sample {r.sample_id!r}"
        else:
            line = (
                f"{r.metric}: {len(self.passing_judges)} of {len(r.judges)} judges {cmp} {self.threshold:g} "
                f"(policy {self.policy.label}), sample {r.sample_id!r}"
            )
        if self.excluded_judges:
            line += f"; {len(self.excluded_judges)} judges failed"
        return line


def verdict_for(
    result: PanelResult,
    *,
    threshold: float,
    policy: Policy = "aggregate",
    interval: Interval | None = None,
    on_undecided: OnUndecided = "fail",
) -> MetricVerdict:
    """Decide pass, fail or undecided for a panel result (pure).

    Args:
        result: one metric on one sample across the panel.
        threshold: the pass threshold (see :func:`~ragqa.thresholds.passes` for the direction).
        policy: the panel policy (see the module docstring).
        interval: the confidence interval of the sample's aggregate (across judges x repeats), or
            ``None``; only the ``aggregate`` policy uses it (:func:`ragqa.thresholds.sample_gate`).
        on_undecided: what an undecided gate counts as (``fail``, ``pass`` or ``warn``).

    Returns:
        The verdict with the judges sorted into passing, failing and excluded; without an
        interval, exactly today's pass/fail.

    Raises:
        ConfigError: for an invalid policy or ``on_undecided``.
    """
    parsed = parse_policy(policy)
    on_undecided = parse_on_undecided(on_undecided, key="on_undecided")
    direction = result.direction
    cmp = comparator(direction)
    passing, failing, excluded = [], [], []
    for outcome in result.judges:
        if not outcome.ok or outcome.score is None:
            excluded.append(outcome.judge_id)
        elif passes(outcome.score.value, threshold, direction):
            passing.append(outcome.judge_id)
        else:
            failing.append(outcome.judge_id)
    agg = result.aggregate
    used: Interval | None = None
    if parsed.kind == "aggregate":
        verdict = sample_gate(result, interval, threshold)
        used = interval if interval is not None and not math.isnan(agg.value) else None
        ok = counts_as_passed(verdict, on_undecided)
        shown = format_score(agg.value, against=threshold)
        if math.isnan(agg.value):
            shown += (
                f" (quorum {agg.quorum} not met: {agg.n_ok} judge(s) scored)" if not agg.quorum_met else " (no score)"
            )
        why = f"policy 'aggregate' needs the {agg.strategy} aggregate {cmp} {threshold:g}; it is {shown}"
        if verdict == "undecided" and used is not None:
            why += f"; {undecided_message(agg.value, used, threshold)}"
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
    if parsed.kind != "aggregate":
        verdict = "pass" if ok else "fail"
    decided = ok or not _failures_could_pass(parsed, passing, failing, excluded, agg.quorum_met)
    if not decided:
        why += f"; incomplete: {len(excluded)} judge(s) failed"
    return MetricVerdict(
        result=result,
        threshold=threshold,
        policy=parsed,
        passed=ok,
        passing_judges=passing,
        failing_judges=failing,
        excluded_judges=excluded,
        why=why,
        decided=decided,
        gate=verdict,
        interval=used,
        on_undecided=on_undecided,
    )


def check_judge_thresholds(judge_ids: Sequence[str], judge_thresholds: Mapping[str, float]) -> None:
    """Check per-judge thresholds before any judge call: every id names a judge of the panel, every value is a number.

    Raises:
        ConfigError: naming an unknown judge id (with the closest ids and the panel) or a value
            that is not a finite number (key ``judge_thresholds``).
    """
    for judge_id, value in judge_thresholds.items():
        if judge_id not in judge_ids:
            close = difflib.get_close_matches(judge_id, list(judge_ids), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"judge_thresholds: {judge_id!r} is not a judge of the panel ({', '.join(judge_ids) or 'none'}).{hint}",
                key="judge_thresholds",
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ConfigError(f"judge_thresholds: {judge_id!r} needs a number, got {value!r}", key="judge_thresholds")


def with_judge_thresholds(verdict: MetricVerdict, judge_thresholds: Mapping[str, float]) -> MetricVerdict:
    """``verdict`` with per-judge thresholds added: each named judge's own score must pass its own threshold.

    The panel policy still applies (with the verdict's threshold); on top of it, a judge named
    in ``judge_thresholds`` passes only with a score that passes its threshold in the metric's
    direction (:func:`passes`). A named judge that failed (excluded) does not pass; when that
    alone fails the verdict it is incomplete (:attr:`MetricVerdict.decided` is False). A judge failing its
    own threshold moves to :attr:`MetricVerdict.failing_judges`; :attr:`MetricVerdict.why` gains
    one part per named judge (``judge thresholds: judge-a 0.620 < 0.8``).

    Args:
        verdict: the panel's verdict (:func:`verdict_for`).
        judge_thresholds: ``{judge_id: threshold}``; checked by :func:`check_judge_thresholds`.

    Returns:
        The combined verdict (``verdict`` itself when ``judge_thresholds`` is empty).
    """
    if not judge_thresholds:
        return verdict
    direction = verdict.direction
    cmp = comparator(direction)
    outcomes = {o.judge_id: o for o in verdict.result.judges}
    parts: list[str] = []
    failing = list(verdict.failing_judges)
    passing = list(verdict.passing_judges)
    missed_by_score = missed_by_failure = False
    for judge_id, limit in judge_thresholds.items():
        outcome = outcomes.get(judge_id)
        if outcome is None or not outcome.ok or outcome.score is None:
            parts.append(f"{judge_id} excluded (needs {cmp} {limit:g})")
            missed_by_failure = True
            continue
        value = outcome.score.value
        ok = passes(value, limit, direction)
        parts.append(f"{judge_id} {_versus(format_score(value, against=limit), limit, direction, passed=ok)}")
        if ok:
            continue
        missed_by_score = True
        if judge_id in passing:
            passing.remove(judge_id)
        if judge_id not in failing:
            failing.append(judge_id)
    passed = verdict.passed and not missed_by_score and not missed_by_failure
    decided = passed or (verdict.decided and not verdict.passed) or missed_by_score
    return replace(
        verdict,
        passed=passed,
        passing_judges=passing,
        failing_judges=failing,
        why=f"{verdict.why}; judge thresholds: {', '.join(parts)}",
        decided=decided,
        gate="fail" if missed_by_score else verdict.gate,
    )


def _versus(shown: str, threshold: float, direction: Literal["higher", "lower"], *, passed: bool) -> str:
    """``shown`` against ``threshold``: ``0.620 < 0.8`` (the comparator when it passed, its negation when not)."""
    cmp = comparator(direction)
    return f"{shown} {cmp if passed else {'>=': '<', '<=': '>'}[cmp]} {threshold:g}"


def _failures_could_pass(
    policy: ParsedPolicy, passing: list[str], failing: list[str], excluded: list[str], quorum_met: bool
) -> bool:
    """Whether a failed verdict could have passed had the excluded judges scored (then it is incomplete)."""
    if not excluded:
        return False
    if policy.kind == "aggregate":
        return not quorum_met
    if policy.kind == "all":
        return not failing
    return len(passing) + len(excluded) >= policy.k


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
    shown = format_score(score.value, against=verdict.threshold)
    lines = [f"  {name}  {shown:<9} {mark:<5} {score.reason or ''}".rstrip()]
    failed = score.failed_statements
    if failed and not all(s in (score.reason or "") for s in failed):
        lines.append(f"  {' ' * width}  failed statements:")
        lines.extend(f"  {' ' * width}    - {s}" for s in failed)
    return lines


def _word(verdict: MetricVerdict) -> str:
    if verdict.undecided:
        shown = f"UNDECIDED (counted as pass, on_undecided={verdict.on_undecided})"
        return shown if verdict.passed else "UNDECIDED"
    return "PASSED" if verdict.passed else "FAILED"


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
        f"{r.metric} {_word(verdict)} on sample {r.sample_id!r}: {verdict.why} "
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
