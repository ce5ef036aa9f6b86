"""What a finished run means for a CI: threshold gates (pass, fail, undecided), incomplete pairs, the exit code."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ragqa.report import MetricSummary, Report
from ragqa.run.estimate import RunEstimate
from ragqa.run.exit_codes import ExitCode, decide_exit_code
from ragqa.run.rows import LOWER, SummaryRow, row_values
from ragqa.schema import Interval, Language, PanelResult
from ragqa.thresholds import (
    Direction,
    Gate,
    OnUndecided,
    comparator,
    counts_as_passed,
    format_interval,
    gate,
    is_flaky,
    straddles,
    undecided_message,
)

__all__ = [
    "FlakySamples",
    "RunResult",
    "ThresholdVerdict",
    "exit_code_for",
    "incomplete_results",
    "threshold_verdicts",
]


@dataclass(frozen=True)
class ThresholdVerdict:
    """One metric's aggregate mean (and its confidence interval) against its threshold.

    Attributes:
        metric: the metric key.
        value: the mean of the per-sample aggregates (NaN when none exists).
        threshold: the threshold.
        direction: ``higher`` (pass when ``value >= threshold``) or ``lower`` (``value <= threshold``).
        passed: whether the gate lets the run pass: True for ``pass``, False for ``fail`` (and for
            NaN), and for ``undecided`` True unless ``on_undecided`` is ``fail``.
        gate: ``pass``, ``fail`` or ``undecided`` (the interval contains the threshold, see
            :func:`ragqa.thresholds.gate`).
        interval: the confidence interval of ``value`` (:attr:`ragqa.report.MetricSummary.interval`),
            or ``None`` (then the gate is pass or fail as before intervals existed).
        on_undecided: the policy ``passed`` applied.
        flaky: samples whose judges or repeats fall on both sides of the threshold.
    """

    metric: str
    value: float
    threshold: float
    direction: str
    passed: bool
    gate: Gate = "pass"
    interval: Interval | None = None
    on_undecided: OnUndecided = "fail"
    flaky: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        """A verdict built with ``passed=False`` and no gate (as before gates had three ways) is a ``fail``."""
        if self.gate == "pass" and not self.passed:
            object.__setattr__(self, "gate", "fail")

    @property
    def undecided(self) -> bool:
        """True when the interval contains the threshold (whatever ``on_undecided`` made of it)."""
        return self.gate == "undecided"

    @property
    def label(self) -> str:
        """``PASS``, ``FAIL`` or ``UNDECIDED``."""
        return {"pass": "PASS", "fail": "FAIL", "undecided": "UNDECIDED"}[self.gate]

    def __str__(self) -> str:
        """``PASS faithfulness: aggregate mean 0.812 [0.774, 0.851], needs >= 0.8``.

        An undecided gate reads ``UNDECIDED faithfulness: 0.612 [0.570, 0.655] against 0.6, add
        samples or repeats (needs >= 0.6; --on-undecided fail: exit 4)``.
        """
        sign = comparator("higher" if self.direction == "higher" else "lower")
        if self.undecided and self.interval is not None:
            tail = {"fail": "exit 4", "pass": "counted as pass", "warn": "counted as pass, with a warning"}
            return (
                f"{self.label} {self.metric}: "
                f"{undecided_message(self.value, self.interval, self.threshold).removeprefix('undecided: ')} "
                f"(needs {sign} {self.threshold:g}; --on-undecided {self.on_undecided}: {tail[self.on_undecided]})"
            )
        shown = "n/a" if math.isnan(self.value) else f"{self.value:.3f}"
        if self.interval is not None and not math.isnan(self.value):
            shown += f" {format_interval(self.interval)}"
        return f"{self.label} {self.metric}: aggregate mean {shown}, needs {sign} {self.threshold:g}"


def threshold_verdicts(
    report: Report, thresholds: Mapping[str, float], *, on_undecided: OnUndecided = "fail"
) -> list[ThresholdVerdict]:
    """Gate each thresholded metric's aggregate mean, with its interval, in the metric's direction.

    Args:
        report: the run (each summary's ``interval``, when computed, makes the gate three-way).
        thresholds: ``{metric key: threshold}`` (resolved by :func:`ragqa.run.spec.resolve_thresholds`).
        on_undecided: what an undecided gate counts as (``fail``, ``pass`` or ``warn``).

    Returns:
        One verdict per metric of the report that has a threshold, in report order. Without an
        interval each is pass or fail exactly as :func:`ragqa.thresholds.passes` says.
    """
    out = []
    for summary in report.summaries:
        limit = thresholds.get(summary.metric)
        if limit is not None:
            value = summary.aggregate_mean
            direction: Direction = summary.direction
            # one sample's interval is across its judges x repeats: undecided only when they straddle
            # the threshold, as an assertion on that sample (ragqa.thresholds.sample_gate)
            one = summary.n_scored == 1 and not summary.flaky_samples
            verdict = gate(value, None if one else summary.interval, limit, direction)
            out.append(
                ThresholdVerdict(
                    summary.metric,
                    value,
                    limit,
                    direction,
                    counts_as_passed(verdict, on_undecided),
                    gate=verdict,
                    interval=summary.interval,
                    on_undecided=on_undecided,
                    flaky=tuple(summary.flaky_samples),
                )
            )
    return out


class FlakySamples:
    """Collects, as results stream in, the samples that are flaky against their metric's threshold.

    A sample is flaky when its judges' scores (or, with repeats, every repeat's score) fall on
    both sides of the threshold (:func:`ragqa.thresholds.is_flaky`). Only positions are kept, so
    memory stays small on any dataset.

    Args:
        thresholds: ``{metric key: threshold}`` of the run; metrics without one have no flaky samples.
    """

    def __init__(self, thresholds: Mapping[str, float]) -> None:
        """Start with no flaky sample."""
        self.thresholds = dict(thresholds)
        self.positions: dict[str, set[int]] = {}
        """Flaky sample positions (0-based dataset order) by metric key."""

    def add(self, position: int, result: PanelResult) -> None:
        """Check one result (a later result for the same position replaces the earlier verdict)."""
        limit = self.thresholds.get(result.metric)
        if limit is not None:
            self._mark(result.metric, position, is_flaky(result, limit))

    def add_row(self, position: int, row: SummaryRow) -> None:
        """:meth:`add` from the result's compact row (:mod:`ragqa.run.rows`): the same verdict, read from its values."""
        limit = self.thresholds.get(row[1])
        if limit is not None:
            direction: Direction = "lower" if row[2] & LOWER else "higher"
            self._mark(row[1], position, straddles(row_values(row), limit, direction))

    def _mark(self, metric: str, position: int, flaky: bool) -> None:
        marked = self.positions.setdefault(metric, set())
        if flaky:
            marked.add(position)
        else:
            marked.discard(position)

    def mark(self, summaries: Sequence[MetricSummary], labels: Sequence[str]) -> list[MetricSummary]:
        """The summaries with :attr:`~ragqa.report.MetricSummary.flaky_samples` filled (sample ids, dataset order).

        Args:
            summaries: the run's summaries.
            labels: every sample's id by position.
        """
        out = []
        for summary in summaries:
            flaky = [labels[p] for p in sorted(self.positions.get(summary.metric, ()))]
            out.append(summary.model_copy(update={"flaky_samples": flaky}) if flaky else summary)
        return out


def incomplete_results(results: Sequence[PanelResult]) -> list[PanelResult]:
    """Results without an aggregate because judges failed (not those where the metric is undefined, NaN)."""
    return [r for r in results if math.isnan(r.aggregate.value) and r.aggregate.n_failed > 0]


def exit_code_for(report: Report, verdicts: Sequence[ThresholdVerdict], *, allow_incomplete: bool) -> ExitCode:
    """The exit code of a finished run (:func:`~ragqa.run.exit_codes.decide_exit_code`).

    In order of precedence: ``INCOMPLETE`` when nothing was scored (no result has an aggregate),
    whatever ``allow_incomplete`` says, or when some result has no aggregate because judges
    failed and ``allow_incomplete`` is False; else ``THRESHOLD`` when a gate failed outright;
    else ``UNDECIDED`` when a gate is undecided and counts as failed (``on_undecided="fail"``):
    the run's only problem is an interval that contains its threshold; else ``OK``.
    """
    scored = any(s.n_scored for s in report.summaries) or any(not math.isnan(r.aggregate.value) for r in report.results)
    return decide_exit_code(
        incomplete=not scored or bool(incomplete_results(report.results) and not allow_incomplete),
        failed=any(v.gate == "fail" for v in verdicts),
        undecided=any(not v.passed for v in verdicts),
    )


@dataclass(frozen=True)
class RunResult:
    """A finished run.

    Attributes:
        report: every result of the run in dataset order (resumed ones included), with summaries.
        estimate: the estimate printed before the first call.
        verdicts: one per thresholded metric.
        incomplete: results without an aggregate because judges failed.
        resumed: results read back from the output instead of scored now.
        exit_code: what the process should exit with.
        written: ``(option, path)`` for each output written.
        language: the panel's language (for the interpretation bands of renderers).
    """

    report: Report
    estimate: RunEstimate
    verdicts: tuple[ThresholdVerdict, ...]
    incomplete: tuple[PanelResult, ...]
    resumed: int
    exit_code: ExitCode
    written: tuple[tuple[str, str], ...] = ()
    language: Language = "en"
