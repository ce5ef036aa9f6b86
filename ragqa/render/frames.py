"""pandas DataFrames of a report (:meth:`ragqa.report.Report.to_pandas`); pandas is the ``pandas`` extra.

The frames hold the rows of :mod:`ragqa.render.tables`: ``wide`` (one row per sample and metric,
a ``score:<judge>`` and ``failure:<judge>`` column per judge) or ``long`` (one row per sample,
metric and judge). NaN stays NaN: an unscored sample is never 0.
"""

from __future__ import annotations

import importlib
from typing import Any

from ragqa.errors import MissingExtraError
from ragqa.render.tables import LONG_COLUMNS, long_rows, wide_rows
from ragqa.report import Report, register_writer

__all__ = ["FORMS", "import_pandas", "report_frame"]

FORMS = ("wide", "long")
"""The shapes :func:`report_frame` builds."""


def import_pandas() -> Any:
    """The :mod:`pandas` module.

    Raises:
        MissingExtraError: when pandas is not installed; the message gives ``pip install 'ragqa[pandas]'``.
    """
    try:
        return importlib.import_module("pandas")
    except ImportError as exc:
        raise MissingExtraError(
            "Report.to_pandas() needs pandas, which is not installed: pip install 'ragqa[pandas]'", extra="pandas"
        ) from exc


def report_frame(report: Report, form: str = "wide") -> Any:
    """``report`` as a :class:`pandas.DataFrame` of the given ``form`` (``wide`` or ``long``).

    Returns:
        A DataFrame with the columns of :func:`ragqa.render.tables.wide_columns` (wide) or
        :data:`ragqa.render.tables.LONG_COLUMNS` (long), one row per result (wide) or per judge
        outcome (long), in report order; a frame with those columns and no rows for an empty report.

    Raises:
        ValueError: for another ``form``.
        MissingExtraError: when pandas is not installed.
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
    pandas = import_pandas()
    if form == "wide":
        columns, rows = wide_rows(report)
    else:
        columns, rows = list(LONG_COLUMNS), long_rows(report)
    return pandas.DataFrame.from_records(rows, columns=columns)


register_writer("pandas", report_frame)
