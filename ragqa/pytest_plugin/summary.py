"""What the pytest plugin keeps of a session: recorded assertions, the metric x judge table, the exit code.

Every piece here reads what a test report carries (its ``user_properties`` and the
:data:`EXIT_ATTRIBUTE` the plugin sets on a failed report), so it works the same on the xdist
controller as in a single process, and it imports nothing of ragqa but the exit-code decision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragqa.run.exit_codes import ExitCode, decide_exit_code

__all__ = ["EXIT_ATTRIBUTE", "PROPERTY_PREFIX", "STATE", "parse_properties", "session_exit_code", "summary_table"]

PROPERTY_PREFIX = "ragqa:"  # ragqa.render.junit.PROPERTY_PREFIX, without importing the renderers at start-up

EXIT_ATTRIBUTE = "ragqa_exit_code"
"""The attribute of a failed test's report holding ragqa's exit code for it (an ``int``; xdist ships it)."""


@dataclass
class _Row:
    """One recorded assertion, rebuilt from a test report's properties (works across xdist workers)."""

    metric: str
    sample: str = "?"
    aggregate: float = math.nan
    passed: bool | None = None
    gate: str | None = None
    """``pass``, ``fail`` or ``undecided``, when recorded."""
    judges: dict[str, float | None] = field(default_factory=dict)
    """``None`` = the judge was excluded."""


@dataclass
class _State:
    rows: list[_Row] = field(default_factory=list)
    results_path: Path | None = None
    exit_codes: list[int | None] = field(default_factory=list)
    """One entry per failed test: ragqa's exit code for it (:data:`EXIT_ATTRIBUTE`), ``None`` when not ragqa's."""


_STATE = pytest.StashKey[_State]()


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def parse_properties(properties: Sequence[tuple[str, object]]) -> list[_Row]:
    """Rebuild recorded assertions from a test's ``user_properties`` (pure).

    Each assertion is a block starting with ``ragqa:<metric>:sample``; then ``:aggregate``,
    ``:threshold``, ``:passed``, ``:gate`` and one ``:judge:<id>`` per judge (``excluded`` for
    failed judges).

    Returns:
        One row per assertion, in order.
    """
    rows: list[_Row] = []
    for name, value in properties:
        if not name.startswith(PROPERTY_PREFIX):
            continue
        body = name[len(PROPERTY_PREFIX) :]
        text = str(value)
        if body.endswith(":sample"):
            rows.append(_Row(metric=body[: -len(":sample")], sample=text))
            continue
        if not rows:
            continue
        row = rows[-1]
        metric, sep, judge = body.partition(":judge:")
        if sep and metric == row.metric:
            row.judges[judge] = None if text == "excluded" else _float(text)
        elif body == f"{row.metric}:aggregate":
            row.aggregate = _float(text)
        elif body == f"{row.metric}:passed":
            row.passed = text == "true"
        elif body == f"{row.metric}:gate":
            row.gate = text
    return rows


class _Reporter:
    """Collects ragqa scores from every test report (on the xdist controller too) for the summary."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Parse the ragqa properties of a finished test call; note the exit code of a failed test."""
        if report.when == "call" and report.user_properties:
            self.state.rows.extend(parse_properties(report.user_properties))
        if report.failed:
            code = getattr(report, EXIT_ATTRIBUTE, None)
            self.state.exit_codes.append(code if isinstance(code, int) else None)


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return "nan" if math.isnan(value) else f"{value:.3f}"


def summary_table(rows: Sequence[_Row]) -> list[str]:
    """Render the metric x judge table (pure).

    Columns: metric, assertions, passed (with ``(u undecided)`` when u assertions were undecided,
    passed or not), then each judge's mean score over the assertions it scored (with ``(k excl)``
    when it was excluded k times), then the mean aggregate.

    Returns:
        The table's lines (empty when there are no rows).
    """
    if not rows:
        return []
    judges: dict[str, None] = {}
    metrics: dict[str, list[_Row]] = {}
    for row in rows:
        metrics.setdefault(row.metric, []).append(row)
        for j in row.judges:
            judges.setdefault(j, None)
    header = ["metric", "n", "passed", *judges, "aggregate"]
    table = [header]
    for metric, group in metrics.items():
        undecided = sum(1 for r in group if r.gate == "undecided")
        passed = f"{sum(1 for r in group if r.passed)}/{len(group)}"
        passed += f" ({undecided} undecided)" if undecided else ""
        cells = [metric, str(len(group)), passed]
        for j in judges:
            values = [r.judges[j] for r in group if j in r.judges]
            finite = [v for v in values if v is not None and not math.isnan(v)]
            excluded = sum(1 for v in values if v is None)
            cell = _fmt(math.fsum(finite) / len(finite)) if finite else ("nan" if values else "-")
            if excluded:
                cell += f" ({excluded} excl)"
            cells.append(cell)
        aggregates = [r.aggregate for r in group if not math.isnan(r.aggregate)]
        cells.append(_fmt(math.fsum(aggregates) / len(aggregates)) if aggregates else "nan")
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table]


STATE = pytest.StashKey[_State]()


def session_exit_code(codes: Sequence[int | None]) -> ExitCode | None:
    """The exit code ragqa gives a session's failed tests, or ``None`` when one failure is not ragqa's (pure).

    Each code is what one failed test would make ``ragqa evaluate`` or ``ragqa test`` exit with:
    ``USAGE`` (2) for a configuration or sample error raised before any judge call, else the
    verdict's (:func:`ragqa.run.check.exit_code_of`). ``USAGE`` wins, then the one precedence of
    :func:`~ragqa.run.exit_codes.decide_exit_code` (3 > 1 > 4).

    Returns:
        The session's code (``OK`` when no test failed), or ``None`` to keep pytest's own.
    """
    if any(code is None for code in codes):
        return None
    if ExitCode.USAGE in codes:
        return ExitCode.USAGE
    return decide_exit_code(
        incomplete=ExitCode.INCOMPLETE in codes,
        failed=ExitCode.THRESHOLD in codes,
        undecided=ExitCode.UNDECIDED in codes,
    )
