"""Threshold gates: pass, fail or undecided, for every entry point (CLI, settings, pytest, promptfoo).

A *gate* compares a score with a threshold in the metric's direction: a *higher-is-better*
metric (faithfulness) passes when ``score >= threshold``, a *lower-is-better* one
(hallucination, noise sensitivity) when ``score <= threshold``. NaN ("unscored") never passes.

When the score comes with a confidence interval (:class:`~ragqa.schema.Interval`, computed by
:mod:`ragqa.uncertainty`), the gate is **undecided** whenever the interval's two ends would get
different verdicts, i.e. the threshold lies inside the interval: for a higher-is-better metric
``low < threshold <= high``, for a lower-is-better one ``low <= threshold < high``. Then the
data cannot tell pass from fail at the interval's confidence level, and the next run may flip
it; more samples, judges or repeats narrow the interval. Without an interval (one sample, one
value, or intervals not computed) the gate is pass or fail exactly as :func:`passes` says. The
rule is the usual reading of a confidence interval as a test: the threshold is rejected at level
``1 - confidence`` when it lies outside the interval (the duality of tests and confidence
intervals, Casella & Berger, *Statistical Inference*, 2nd ed., 2002, Theorem 9.2.2); see
"Adding Error Bars to Evals" (Miller, 2024) for intervals on eval scores.

What an undecided gate means for a CI is a policy (:data:`OnUndecided`): ``fail`` (the default,
so no gate opens silently), ``pass``, or ``warn`` (pass, with a warning).

A sample is **flaky** against a threshold when the values behind its score (each judge's score,
and each repeat's with repeats) fall on both sides of it (:func:`straddles`): its verdict depends
on which judge or which repeat is asked. One sample's gate (:func:`sample_gate`, used by the pytest
plugin, the assertion helpers and ``ragqa test``) is undecided only when the sample is flaky *and*
its interval across judges x repeats contains the threshold: when every judge and repeat falls on
one side, that side is the verdict. (With two or three values the t interval of one sample is so
wide, e.g. ``[0, 1]`` for two judges, that it would otherwise leave a sample undecided even when
every judge fails it.)

Panel policies (which judges must pass) are parsed here too (:func:`parse_policy`).

This module sits on the ground floor: it imports only :mod:`ragqa.errors` and
:mod:`ragqa.schema`, so renderers, the run layer, assertions and comparisons all use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ragqa._math import nan_padded
from ragqa.errors import ConfigError
from ragqa.schema import Interval, PanelResult

__all__ = [
    "ON_UNDECIDED",
    "Direction",
    "Gate",
    "OnUndecided",
    "ParsedPolicy",
    "Policy",
    "UndecidedWarning",
    "comparator",
    "counts_as_passed",
    "format_interval",
    "format_score",
    "gate",
    "is_flaky",
    "parse_on_undecided",
    "parse_policy",
    "passes",
    "sample_gate",
    "sample_scores",
    "sample_values",
    "straddles",
    "undecided_message",
]

Direction = Literal["higher", "lower"]
"""Whether higher or lower scores are better."""

Gate = Literal["pass", "fail", "undecided"]
"""A gate's verdict (see the module docstring)."""

OnUndecided = Literal["fail", "pass", "warn"]
"""What an undecided gate counts as: ``fail`` (default), ``pass``, or ``warn`` (pass with a warning)."""

ON_UNDECIDED: tuple[OnUndecided, ...] = ("fail", "pass", "warn")
"""The accepted :data:`OnUndecided` values, default first."""

Policy = Literal["aggregate", "all"] | int | str
"""``"aggregate"``, ``"all"``, an int ``k`` or ``"at_least:k"`` (see :mod:`ragqa.assertions`)."""

_AT_LEAST = re.compile(r"^at[_-]least:(\d+)$")


class UndecidedWarning(UserWarning):
    """A gate is undecided: its interval contains its threshold.

    Issued when an assertion passes undecided because ``on_undecided`` is ``warn``, and by
    ``ragqa.evaluate`` for each undecided threshold of the run (which returns the report where
    the CLI would exit 4). Turn it into an error with ``-W error::ragqa.thresholds.UndecidedWarning``
    (or ``warnings.simplefilter("error", UndecidedWarning)``) where an undecided gate must fail.
    """


def passes(value: float, threshold: float, direction: Direction) -> bool:
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


def gate(value: float, interval: Interval | None, threshold: float, direction: Direction) -> Gate:
    """Pass, fail or undecided: a score and its confidence interval against a threshold.

    Args:
        value: the score (NaN = unscored, which fails).
        interval: the score's confidence interval, or ``None`` (then the verdict is
            :func:`passes`'s). An interval with a NaN bound counts as none.
        threshold: the pass threshold, in the metric's range.
        direction: ``higher`` or ``lower`` is better.

    Returns:
        ``"undecided"`` when the interval's ends get different verdicts (the threshold lies inside
        it: ``low < threshold <= high`` for a higher-is-better metric, ``low <= threshold < high``
        for a lower-is-better one); otherwise ``"pass"`` or ``"fail"`` as :func:`passes` says of
        ``value``. A zero-width interval is a certain value, never undecided.
    """
    if math.isnan(value):
        return "fail"
    if (
        interval is not None
        and not (math.isnan(interval.low) or math.isnan(interval.high))
        and passes(interval.low, threshold, direction) != passes(interval.high, threshold, direction)
    ):
        return "undecided"
    return "pass" if passes(value, threshold, direction) else "fail"


def parse_on_undecided(value: str, *, key: str = "--on-undecided") -> OnUndecided:
    """Validate an ``on-undecided`` policy.

    Args:
        value: ``fail``, ``pass`` or ``warn`` (case and surrounding spaces ignored).
        key: where it was given (``--on-undecided``, ``ragqa.on-undecided``), named in the error.

    Returns:
        The policy.

    Raises:
        ConfigError: for any other value, with ``key``.
    """
    text = str(value).strip().lower()
    for choice in ON_UNDECIDED:
        if text == choice:
            return choice
    raise ConfigError(f"{key} {value!r}: use fail, pass or warn", key=key)


def counts_as_passed(verdict: Gate, on_undecided: OnUndecided) -> bool:
    """Whether a gate's verdict lets the run (or the test) pass under ``on_undecided``.

    Returns:
        True for ``pass``; False for ``fail``; for ``undecided``, True unless ``on_undecided`` is ``fail``.
    """
    if verdict == "undecided":
        return on_undecided != "fail"
    return verdict == "pass"


def comparator(direction: Direction) -> str:
    """``>=`` for a higher-is-better metric, ``<=`` for a lower-is-better one."""
    return ">=" if direction == "higher" else "<="


def format_score(value: float | None, *, against: float | None = None) -> str:
    """Format a score for messages: three decimals, ``unscored`` for NaN, ``-`` for ``None``.

    With ``against`` (the threshold it is compared with), a value that differs from the threshold
    but would print the same with three decimals is printed in full (``0.8999999999999999``), so
    a message never reads "it is 0.900, needs >= 0.9" without showing why it failed.
    """
    if value is None:
        return "-"
    if math.isnan(value):
        return "unscored"
    shown = f"{value:.3f}"
    if against is not None and value != against and shown == f"{against:.3f}":
        return repr(value)
    return shown


def format_interval(interval: Interval) -> str:
    """``[0.570, 0.655]``: an interval's bounds with three decimals."""
    return f"[{interval.low:.3f}, {interval.high:.3f}]"


def undecided_message(value: float, interval: Interval, threshold: float) -> str:
    """The one line an undecided gate reads as, the same at every entry point.

    Returns:
        ``undecided: 0.612 [0.570, 0.655] against 0.6, add samples or repeats``.
    """
    return f"undecided: {format_score(value)} {format_interval(interval)} against {threshold:g}, add samples or repeats"


def straddles(values: Iterable[float], threshold: float, direction: Direction) -> bool:
    """Whether finite ``values`` fall on both sides of a threshold (some pass, some fail).

    NaN values are left out (an unscored value is no side of the threshold).
    """
    verdicts = {passes(v, threshold, direction) for v in values if math.isfinite(v)}
    return len(verdicts) == 2


def sample_values(result: PanelResult) -> list[float]:
    """Every value behind one sample's aggregate: each scoring judge's repeats (its score without repeats).

    Judges that failed are left out; NaN repeats are kept (as NaN).
    """
    return [v for o in result.judges if o.ok for v in o.repeat_values()]


def sample_scores(result: PanelResult) -> list[list[float]]:
    """One sample's scores shaped (judges, repeats), the input of :func:`ragqa.uncertainty.sample_interval`.

    One row per judge that scored (failed judges are left out), each its repeats' values in index
    order (one value without repeats), padded with NaN to the longest row.
    """
    return nan_padded(o.repeat_values() for o in result.judges if o.ok)


def is_flaky(result: PanelResult, threshold: float) -> bool:
    """Whether a sample is flaky against ``threshold``: its judges or repeats fall on both sides of it.

    One judge with one repeat is never flaky (one value has one side).
    """
    return straddles(sample_values(result), threshold, result.direction)


def sample_gate(result: PanelResult, interval: Interval | None, threshold: float) -> Gate:
    """One sample's gate: its aggregate against ``threshold``, undecided only when it is flaky and its interval says so.

    Args:
        result: one metric on one sample across the panel.
        interval: the sample's interval across judges x repeats
            (:func:`ragqa.uncertainty.sample_interval` of :func:`sample_scores`), or ``None``.
        threshold: the pass threshold.

    Returns:
        :func:`gate` of the aggregate with ``interval`` when the sample is flaky
        (:func:`is_flaky`); otherwise :func:`gate` without an interval (today's pass or fail).
    """
    used = interval if is_flaky(result, threshold) else None
    return gate(result.aggregate.value, used, threshold, result.direction)


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


def parse_policy(policy: Policy, *, key: str = "policy") -> ParsedPolicy:
    """Validate a policy.

    Args:
        policy: ``"aggregate"``, ``"all"``, an int ``k >= 1`` or ``"at_least:k"``.
        key: where the policy was given (``policy``, ``tests[0].assert[1].config.policy``), named
            in the error.

    Returns:
        The parsed policy.

    Raises:
        ConfigError: for anything else (including ``k < 1`` and booleans), with ``key``.
    """
    where = "" if key == "policy" else f"{key}: "
    if isinstance(policy, bool):
        raise ConfigError(f"{where}policy must be 'aggregate', 'all', an int or 'at_least:k', not {policy!r}", key=key)
    if isinstance(policy, int):
        if policy < 1:
            raise ConfigError(f"{where}policy at_least:k needs k >= 1, got {policy}", key=key)
        return ParsedPolicy("at_least", policy)
    text = str(policy).strip().lower()
    if text in ("aggregate", "all"):
        return ParsedPolicy("aggregate" if text == "aggregate" else "all")
    match = _AT_LEAST.match(text)
    if match and int(match.group(1)) >= 1:
        return ParsedPolicy("at_least", int(match.group(1)))
    raise ConfigError(
        f"{where}unknown policy {policy!r}; use 'aggregate', 'all', an int k or 'at_least:k' (k >= 1)", key=key
    )
