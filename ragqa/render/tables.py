"""Report results as flat rows: the shared source of the CSV file and the pandas DataFrames.

Two forms, both in report order (sample order, then metric order):

- **wide**: one row per (sample, metric): :data:`WIDE_COLUMNS`, then ``score:<judge>`` for every
  judge of the panel, then ``failure:<judge>`` for every judge (the error type of a failed judge,
  e.g. ``JudgeTimeout``; ``None`` otherwise). A judge's score is NaN when the metric was undefined
  for it or when it failed (the failure column tells which).
- **long**: one row per (sample, metric, judge): :data:`LONG_COLUMNS`.

Both carry the confidence intervals of the summaries (:mod:`ragqa.uncertainty`): the metric's
aggregate interval, its level and method on every row of the metric, each judge's interval in the
long form, and in the wide form the sample's own interval across its judges x repeats
(:func:`ragqa.uncertainty.sample_interval`).

Rows are flattened :func:`~ragqa.render.records.result_record` records, the one JSON shape of a
panel result, so the CSV and the DataFrames hold exactly what the JSON outputs hold. Values stay
Python values here: floats (a record's ``null`` number back to NaN), ints, bools, strings and
``None``. Each output formats them its own way (the CSV writes NaN and ``None`` as empty cells).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ragqa.metrics import value_ranges
from ragqa.render.records import result_record
from ragqa.report import MetricSummary, Report
from ragqa.schema import DEFAULT_CONFIDENCE, Interval, PanelResult

__all__ = [
    "LONG_COLUMNS",
    "WIDE_COLUMNS",
    "failure_column",
    "long_rows",
    "score_column",
    "wide_columns",
    "wide_rows",
]

WIDE_COLUMNS: tuple[str, ...] = (
    "sample_id",
    "metric",
    "direction",
    "aggregate",
    "strategy",
    "spread",
    "n_ok",
    "n_nan",
    "n_failed",
    "quorum",
    "quorum_met",
    "sample_ci_low",
    "sample_ci_high",
    "metric_ci_low",
    "metric_ci_high",
    "ci_confidence",
    "ci_method",
)
"""The leading columns of the wide form, from :class:`~ragqa.schema.PanelResult` and its aggregate.

``aggregate`` is the panel's score (NaN below quorum or when no judge scored), ``spread`` is
max - min of the judges' finite scores (NaN with none), ``n_ok`` / ``n_nan`` / ``n_failed`` count
judges with a finite score / NaN / a failure, ``quorum_met`` is ``n_ok >= quorum``.
``sample_ci_low`` / ``sample_ci_high`` bound this sample's score across its judges x repeats
(judges as clusters; NaN with fewer than two values); ``metric_ci_low`` / ``metric_ci_high`` bound
the metric's aggregate mean over the run (the same on every row of the metric; NaN without an
interval), at level ``ci_confidence`` (e.g. 0.95) by method ``ci_method`` (``clustered-se``).
"""

LONG_COLUMNS: tuple[str, ...] = (
    "sample_id",
    "metric",
    "direction",
    "judge_id",
    "status",
    "score",
    "reason",
    "failure_type",
    "failure_step",
    "failure_message",
    "latency_s",
    "calls",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "aggregate",
    "strategy",
    "judge_ci_low",
    "judge_ci_high",
    "metric_ci_low",
    "metric_ci_high",
    "ci_confidence",
    "ci_method",
)
"""The columns of the long form.

``status`` is ``scored`` (a finite score), ``nan`` (the judge ran but the metric is undefined for
it) or ``failed`` (excluded; ``failure_*`` say why). ``score`` is NaN unless ``scored``.
``latency_s`` is the judge's wall time on this sample and metric in seconds; ``calls`` and tokens
count provider requests; ``cost`` is in the price table's currency (NaN when no price is known).
``aggregate`` and ``strategy`` repeat the panel's score of the (sample, metric).
``judge_ci_low`` / ``judge_ci_high`` bound the judge's mean over the run, ``metric_ci_low`` /
``metric_ci_high`` the metric's aggregate mean (both repeated on the rows they concern; NaN without
an interval), at level ``ci_confidence`` by method ``ci_method``.
"""


def score_column(judge_id: str) -> str:
    """The wide form's score column of ``judge_id``: ``score:<judge_id>``."""
    return f"score:{judge_id}"


def failure_column(judge_id: str) -> str:
    """The wide form's failure-type column of ``judge_id``: ``failure:<judge_id>``."""
    return f"failure:{judge_id}"


def wide_columns(judge_ids: list[str]) -> list[str]:
    """Every column of the wide form for a panel of ``judge_ids`` (in panel order)."""
    return [*WIDE_COLUMNS, *(score_column(j) for j in judge_ids), *(failure_column(j) for j in judge_ids)]


def _number(value: Any) -> float:
    """A record's number as a float; ``null`` (NaN or unscored) as NaN."""
    return math.nan if value is None else float(value)


def _bounds(interval: Interval | None) -> tuple[float, float]:
    return (interval.low, interval.high) if interval is not None else (math.nan, math.nan)


def _level(summary: MetricSummary | None) -> dict[str, Any]:
    """The metric's interval columns (``metric_ci_*``, ``ci_confidence``, ``ci_method``) of one row."""
    interval = summary.interval if summary is not None else None
    low, high = _bounds(interval)
    return {
        "metric_ci_low": low,
        "metric_ci_high": high,
        "ci_confidence": interval.confidence if interval is not None else math.nan,
        "ci_method": interval.method if interval is not None else None,
    }


def _sample_bounds(result: PanelResult, summary: MetricSummary | None) -> tuple[float, float]:
    """This sample's interval across its judges x repeats, clamped to its metric's registered range."""
    from ragqa.uncertainty import sample_interval, score_cube

    confidence = summary.interval.confidence if summary is not None and summary.interval else DEFAULT_CONFIDENCE
    [scores] = score_cube([[o.repeat_values() for o in result.judges]])
    return _bounds(
        sample_interval(scores, confidence=confidence, bounds=value_ranges([result.metric]).get(result.metric))
    )


def _wide_row(record: Mapping[str, Any], judge_ids: list[str]) -> dict[str, Any]:
    agg = record["aggregate"]
    row: dict[str, Any] = {
        "sample_id": record["sample_id"],
        "metric": record["metric"],
        "direction": record["direction"],
        "aggregate": _number(agg["value"]),
        "strategy": agg["strategy"],
        "spread": _number(agg["spread"]),
        "n_ok": agg["n_ok"],
        "n_nan": agg["n_nan"],
        "n_failed": agg["n_failed"],
        "quorum": agg["quorum"],
        "quorum_met": agg["quorum_met"],
    }
    by_id = {j["judge_id"]: j for j in record["judges"]}
    for judge_id in judge_ids:
        judge = by_id.get(judge_id)
        row[score_column(judge_id)] = _number(judge["score"] if judge is not None else None)
    for judge_id in judge_ids:
        failure = by_id[judge_id]["failure"] if judge_id in by_id else None
        row[failure_column(judge_id)] = failure["error_type"] if failure is not None else None
    return row


def wide_rows(report: Report) -> tuple[list[str], list[dict[str, Any]]]:
    """The wide form of ``report``: its columns (see :func:`wide_columns`) and one row per (sample, metric).

    Judges are the report's panel (:attr:`~ragqa.report.Report.judge_ids`); a judge missing from a
    result has a NaN score and no failure there.
    """
    judge_ids = report.judge_ids
    columns = wide_columns(judge_ids)
    summaries = {s.metric: s for s in report.summaries}
    rows = []
    for result in report.results:
        summary = summaries.get(result.metric)
        row = _wide_row(result_record(result), judge_ids)
        row["sample_ci_low"], row["sample_ci_high"] = _sample_bounds(result, summary)
        row.update(_level(summary))
        rows.append({c: row[c] for c in columns})
    return columns, rows


def _status(judge: Mapping[str, Any]) -> str:
    if judge["failure"] is not None:
        return "failed"
    return "nan" if judge["score"] is None else "scored"


def long_rows(report: Report) -> list[dict[str, Any]]:
    """The long form of ``report``: one row per (sample, metric, judge) with :data:`LONG_COLUMNS`."""
    rows = []
    summaries = {s.metric: s for s in report.summaries}
    for result in report.results:
        record = result_record(result)
        summary = summaries.get(result.metric)
        level = _level(summary)
        judges = {j.judge_id: j.interval for j in summary.judges} if summary is not None else {}
        for judge in record["judges"]:
            failure, usage = judge["failure"], judge["usage"]
            judge_low, judge_high = _bounds(judges.get(judge["judge_id"]))
            rows.append(
                {
                    "sample_id": record["sample_id"],
                    "metric": record["metric"],
                    "direction": record["direction"],
                    "judge_id": judge["judge_id"],
                    "status": _status(judge),
                    "score": _number(judge["score"]),
                    "reason": judge["reason"],
                    "failure_type": failure["error_type"] if failure is not None else None,
                    "failure_step": failure["step"] if failure is not None else None,
                    "failure_message": failure["message"] if failure is not None else None,
                    "latency_s": _number(judge["latency_s"]),
                    "calls": usage["calls"],
                    "prompt_tokens": usage["prompt_tokens"],
                    "completion_tokens": usage["completion_tokens"],
                    "cost": _number(usage["cost"]),
                    "aggregate": _number(record["aggregate"]["value"]),
                    "strategy": record["aggregate"]["strategy"],
                    "judge_ci_low": judge_low,
                    "judge_ci_high": judge_high,
                    **level,
                }
            )
    return rows
