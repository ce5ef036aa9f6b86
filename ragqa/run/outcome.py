"""What a finished run means for a CI: threshold verdicts, incomplete pairs and the exit code."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragqa.report import Report
from ragqa.run.estimate import RunEstimate
from ragqa.run.exit_codes import ExitCode
from ragqa.schema import Language, PanelResult

__all__ = ["RunResult", "ThresholdVerdict", "exit_code_for", "incomplete_results", "threshold_verdicts"]


@dataclass(frozen=True)
class ThresholdVerdict:
    """One metric's aggregate mean against its threshold.

    Attributes:
        metric: the metric key.
        value: the mean of the per-sample aggregates (NaN when none exists).
        threshold: the threshold.
        direction: ``higher`` (pass when ``value >= threshold``) or ``lower`` (``value <= threshold``).
        passed: the verdict; False for NaN.
    """

    metric: str
    value: float
    threshold: float
    direction: str
    passed: bool

    def __str__(self) -> str:
        """``PASS faithfulness: aggregate mean 0.812, needs >= 0.8``."""
        sign = ">=" if self.direction == "higher" else "<="
        shown = "n/a" if math.isnan(self.value) else f"{self.value:.3f}"
        word = "PASS" if self.passed else "FAIL"
        return f"{word} {self.metric}: aggregate mean {shown}, needs {sign} {self.threshold:g}"


def threshold_verdicts(report: Report, thresholds: Mapping[str, float]) -> list[ThresholdVerdict]:
    """Compare each thresholded metric's aggregate mean with its threshold, in the metric's direction.

    Args:
        report: the run.
        thresholds: ``{metric key: threshold}`` (resolved by :func:`ragqa.run.spec.resolve_thresholds`).

    Returns:
        One verdict per metric of the report that has a threshold, in report order.
    """
    from ragqa.assertions import passes

    out = []
    for summary in report.summaries:
        limit = thresholds.get(summary.metric)
        if limit is not None:
            value = summary.aggregate_mean
            out.append(
                ThresholdVerdict(
                    summary.metric, value, limit, summary.direction, passes(value, limit, summary.direction)
                )
            )
    return out


def incomplete_results(results: Sequence[PanelResult]) -> list[PanelResult]:
    """Results without an aggregate because judges failed (not those where the metric is undefined, NaN)."""
    return [r for r in results if math.isnan(r.aggregate.value) and r.aggregate.n_failed > 0]


def exit_code_for(report: Report, verdicts: Sequence[ThresholdVerdict], *, allow_incomplete: bool) -> ExitCode:
    """The exit code of a finished run (see :class:`~ragqa.run.exit_codes.ExitCode`).

    ``INCOMPLETE`` when nothing was scored (no result has an aggregate), whatever
    ``allow_incomplete`` says, or when some result has no aggregate because judges failed and
    ``allow_incomplete`` is False; else ``THRESHOLD`` when a verdict failed; else ``OK``.
    """
    scored = any(s.n_scored for s in report.summaries) or any(not math.isnan(r.aggregate.value) for r in report.results)
    if not scored or (incomplete_results(report.results) and not allow_incomplete):
        return ExitCode.INCOMPLETE
    if any(not v.passed for v in verdicts):
        return ExitCode.THRESHOLD
    return ExitCode.OK


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
