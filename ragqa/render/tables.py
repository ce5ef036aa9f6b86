"""Report results as flat rows: the shared source of the CSV file and the pandas DataFrames.

Two forms, both in report order (sample order, then metric order):

- **wide**: one row per (sample, metric): :data:`WIDE_COLUMNS`, then ``score:<judge>`` for every
  judge of the panel, then ``failure:<judge>`` for every judge (the error type of a failed judge,
  e.g. ``JudgeTimeout``; ``None`` otherwise). A judge's score is NaN when the metric was undefined
  for it or when it failed (the failure column tells which).
- **long**: one row per (sample, metric, judge): :data:`LONG_COLUMNS`.

Rows are flattened :func:`~ragqa.render.records.result_record` records, the one JSON shape of a
panel result, so the CSV and the DataFrames hold exactly what the JSON outputs hold. Values stay
Python values here: floats (a record's ``null`` number back to NaN), ints, bools, strings and
``None``. Each output formats them its own way (the CSV writes NaN and ``None`` as empty cells).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ragqa.render.records import result_record
from ragqa.report import Report

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
)
"""The leading columns of the wide form, from :class:`~ragqa.schema.PanelResult` and its aggregate.

``aggregate`` is the panel's score (NaN below quorum or when no judge scored), ``spread`` is
max - min of the judges' finite scores (NaN with none), ``n_ok`` / ``n_nan`` / ``n_failed`` count
judges with a finite score / NaN / a failure, ``quorum_met`` is ``n_ok >= quorum``.
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
)
"""The columns of the long form.

``status`` is ``scored`` (a finite score), ``nan`` (the judge ran but the metric is undefined for
it) or ``failed`` (excluded; ``failure_*`` say why). ``score`` is NaN unless ``scored``.
``latency_s`` is the judge's wall time on this sample and metric in seconds; ``calls`` and tokens
count provider requests; ``cost`` is in the price table's currency (NaN when no price is known).
``aggregate`` and ``strategy`` repeat the panel's score of the (sample, metric).
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
    return wide_columns(judge_ids), [_wide_row(result_record(r), judge_ids) for r in report.results]


def _status(judge: Mapping[str, Any]) -> str:
    if judge["failure"] is not None:
        return "failed"
    return "nan" if judge["score"] is None else "scored"


def long_rows(report: Report) -> list[dict[str, Any]]:
    """The long form of ``report``: one row per (sample, metric, judge) with :data:`LONG_COLUMNS`."""
    rows = []
    for result in report.results:
        record = result_record(result)
        for judge in record["judges"]:
            failure, usage = judge["failure"], judge["usage"]
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
                }
            )
    return rows
