"""Compact rows: what a run's bookkeeping reads from one result, as plain tuples instead of a pydantic object.

A :class:`~ragqa.schema.PanelResult` carries every judge's reason and details; the run's summary
(:class:`~ragqa.run.summary.RunSummary`) and its flaky samples
(:class:`~ragqa.run.outcome.FlakySamples`) read only a few numbers of it. :func:`summary_row`
takes those numbers out once, as a :data:`SummaryRow`; ``RunSummary.add`` itself reads a result
through it, so a summary built from rows equals one built from the results, bit for bit.

A Ray worker (:mod:`ragqa.run.ray_engine`) sends its driver, per result without a judge failure,
a :data:`CompactResult`: the row and, when the driver streams a results file, the result's line
of that file already encoded (:func:`~ragqa.run.results_file.result_bytes`, the very code the
driver's :class:`~ragqa.run.stream.ResultStream` runs, so the bytes are the same). The driver then
appends bytes and adds numbers: it unpickles a few tuples instead of rebuilding the pydantic
objects, and serialises nothing. A result with a judge failure travels whole (:func:`compact_result`
returns it as it is): the summary keeps those (:attr:`RunSummary.failed
<ragqa.run.summary.RunSummary.failed>`), and they are rare.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from ragqa.run.results_file import result_bytes
from ragqa.schema import PanelResult

__all__ = [
    "ABSENT",
    "ALL_FAILED",
    "FAILED",
    "LOWER",
    "NAN",
    "PRESENT",
    "QUORUM_MET",
    "SCORED",
    "UNSCORED",
    "CompactMode",
    "CompactResult",
    "JudgeRow",
    "SummaryRow",
    "cache_counts",
    "compact_result",
    "row_failed",
    "row_values",
    "summary_row",
]

ABSENT, FAILED, NAN, SCORED = 0, 1, 2, 3
"""A judge's status on one result: not in it, failed (or no score), returned NaN, scored."""

PRESENT, LOWER, QUORUM_MET, ALL_FAILED, UNSCORED = 1, 2, 4, 8, 16
"""Bits of a result's flags: present, lower is better, quorum met, every judge failed, no judge scored."""

JudgeRow = tuple[str, int, float, list[float], bool, int, int, int, float, float | None]
"""One judge outcome: ``(judge_id, status, score, repeat values, failure?, calls, prompt tokens,
completion tokens, latency_s, cost)``; ``score`` is the score's value where the status is
:data:`SCORED` (NaN elsewhere, never read); the repeat values are
:meth:`~ragqa.schema.JudgeOutcome.repeat_values`; the usage fields are the outcome's
:class:`~ragqa.schema.Usage` (``cost`` ``None`` when unknown)."""

SummaryRow = tuple[str, str, int, str, int, float, float, bool, list[JudgeRow]]
"""One result: ``(sample_id, metric, flags, strategy, quorum, aggregate value, spread, failure?, judges)``;
flags are the bits above (:data:`PRESENT` always set), ``strategy`` and ``quorum`` the
aggregate's rule, the value and spread the aggregate's (NaN when none), ``failure?`` whether some
judge failed, one :data:`JudgeRow` per outcome in the result's order."""

CompactResult = tuple[bytes | None, SummaryRow]
"""A result without a judge failure as a worker sends it: its results-file line (``None`` when the
driver writes no results file) and its :data:`SummaryRow`."""

CompactMode = Literal["rows", "lines"]
"""What a driver asks of its workers: ``rows`` (summary rows only: no results file) or ``lines``
(rows and each result's line of the results file)."""


def summary_row(result: PanelResult) -> SummaryRow:
    """The numbers of ``result`` that a run's summary and flaky samples read (see :data:`SummaryRow`)."""
    agg = result.aggregate
    flags = (
        PRESENT
        | (LOWER if result.direction == "lower" else 0)
        | (QUORUM_MET if agg.quorum_met else 0)
        | (ALL_FAILED if agg.n_failed > 0 and agg.n_ok + agg.n_nan == 0 else 0)
        | (UNSCORED if agg.n_ok == 0 else 0)
    )
    judges: list[JudgeRow] = []
    failed = False
    for outcome in result.judges:
        score = outcome.score
        failure = outcome.failure is not None
        failed = failed or failure
        if failure or score is None:
            status, value = FAILED, math.nan
        elif math.isnan(score.value):
            status, value = NAN, math.nan
        else:
            status, value = SCORED, score.value
        usage = outcome.usage
        judges.append(
            (
                outcome.judge_id,
                status,
                value,
                outcome.repeat_values(),
                failure,
                usage.calls,
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.latency_s,
                usage.cost,
            )
        )
    return (result.sample_id, result.metric, flags, agg.strategy, agg.quorum, agg.value, agg.spread, failed, judges)


def row_failed(row: SummaryRow) -> bool:
    """Whether some judge of the row's result failed (the summary keeps such results whole)."""
    return row[7]


def row_values(row: SummaryRow) -> list[float]:
    """:func:`ragqa.thresholds.sample_values` of the row's result: every scoring judge's repeat values."""
    return [value for judge in row[8] if judge[1] != FAILED for value in judge[3]]


def compact_result(result: PanelResult, mode: CompactMode) -> PanelResult | CompactResult:
    """What a worker sends for ``result``: the result itself when a judge failed, else a :data:`CompactResult`.

    Args:
        result: one finished (sample, metric).
        mode: ``lines`` to include the result's line of the results file, ``rows`` for the row only.
    """
    row = summary_row(result)
    if row_failed(row):
        return result
    return (result_bytes(result) if mode == "lines" else None, row)


def cache_counts(cache: Any) -> dict[str, int]:
    """The cache's lookup counters by :class:`~ragqa.report.CacheStats` field (zeros without a cache).

    Returns:
        ``{hits, misses, embedding_hits, embedding_misses}``, counts since the cache was opened.
    """
    names = ("hits", "misses", "embedding_hits", "embedding_misses")
    return {name: getattr(cache, name, 0) if cache is not None else 0 for name in names}
