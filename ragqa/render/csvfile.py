"""The CSV renderer: one row per (sample, metric), a score and a failure column per judge.

Each row flattens a :func:`~ragqa.render.records.result_record` (the shape the JSON outputs
write), leaving out reasons and intermediate steps, which are in the JSONL.

Columns (see :mod:`ragqa.render.tables` for their meaning): ``sample_id``, ``metric``,
``direction``, ``aggregate``, ``strategy``, ``spread``, ``n_ok``, ``n_nan``, ``n_failed``,
``quorum``, ``quorum_met``, then ``score:<judge>`` for each judge of the panel, then
``failure:<judge>`` (the error type of a failed judge, such as ``JudgeTimeout``) for each judge.

Cells: numbers in Python's shortest round-trip form (``0.75``), so the file holds the exact
scores; NaN (unscored, below quorum, failed judge) and absent values as empty cells, which
spreadsheets and ``pandas.read_csv`` read as missing; booleans as ``true`` / ``false``. UTF-8,
the ``excel`` dialect of the :mod:`csv` module (comma, CRLF line ends, quotes where needed).
Registered for the ``.csv`` suffix.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any

from ragqa.render.atomic import replace_text
from ragqa.render.registry import RenderOptions, register, write_to
from ragqa.render.tables import wide_rows
from ragqa.report import Report, register_writer

__all__ = ["CsvRenderer", "report_to_csv"]


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    return str(value)


def report_to_csv(report: Report) -> str:
    """The CSV text of ``report`` (header and one line per sample and metric; see the module docstring)."""
    columns, rows = wide_rows(report)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, dialect="excel")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row[c]) for c in columns])
    return buffer.getvalue()


class CsvRenderer:
    """CSV of a run, one row per (sample, metric) (see :func:`report_to_csv`)."""

    name = "csv"
    suffixes = (".csv",)

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write the CSV to ``path`` (atomically: a reader never sees half a file)."""
        replace_text(path, report_to_csv(report))


register(CsvRenderer())


register_writer("csv", lambda report, path: write_to(report, CsvRenderer(), path))
