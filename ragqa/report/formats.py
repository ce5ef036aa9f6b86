"""The writer registry behind ``Report.to_jsonl``, ``Report.to_csv`` and ``Report.to_pandas``, and strict JSON.

The report is data; the code that writes it in a format lives in :mod:`ragqa.render`, one floor
up. So the data never imports its writers: each renderer registers its writer here when it is
imported (:mod:`ragqa.render.files`, :mod:`ragqa.render.csvfile`, :mod:`ragqa.render.frames`;
``import ragqa`` imports them), and :meth:`~ragqa.report.Report.to_jsonl` and its siblings look
the writer up by name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ragqa.errors import ConfigError

__all__ = ["ReportWriter", "finite_json", "register_writer", "writer_for"]

ReportWriter = Callable[..., Any]
"""``writer(report, *args)``: what :meth:`Report.to_jsonl`, :meth:`Report.to_csv` and
:meth:`Report.to_pandas` call, registered by the renderers (:func:`register_writer`)."""

_WRITERS: dict[str, ReportWriter] = {}


def register_writer(name: str, writer: ReportWriter) -> None:
    """Make ``writer`` the one behind ``Report.to_<name>`` (``jsonl``, ``csv``, ``pandas``).

    The renderers register themselves when imported (:mod:`ragqa.render.files`,
    :mod:`ragqa.render.csvfile`, :mod:`ragqa.render.frames`; importing :mod:`ragqa` imports them),
    so the report data never imports a renderer. A second registration of a name replaces the first.
    """
    _WRITERS[name] = writer


def writer_for(name: str) -> ReportWriter:
    """The writer registered under ``name``.

    Raises:
        ConfigError: when none is (the renderers were not imported; ``import ragqa`` imports them).
    """
    writer = _WRITERS.get(name)
    if writer is None:
        raise ConfigError(f"no report writer {name!r} is registered; import ragqa (it registers ragqa.render's)")
    return writer


def finite_json(value: Any) -> Any:
    """Replace NaN and infinities by ``None``, recursively (strict JSON has no NaN).

    Args:
        value: a JSON-like value (dicts, lists, tuples, floats and other scalars).

    Returns:
        The same structure with every non-finite float replaced by ``None``; tuples become lists.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):  # the common leaves are kept in place, without a call each
        return {k: v if type(v) in _KEPT else finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [v if type(v) in _KEPT else finite_json(v) for v in value]
    return value


_KEPT = frozenset({str, int, bool, type(None)})
"""Leaf types :func:`finite_json` returns unchanged (exact types: a float subclass is still checked).

A result record has about 70 values, most of them strings, integers and ``None``; skipping the
call for those halves the cost of :func:`ragqa.render.records.result_record`, which every scored
pair goes through (the results file, and a Ray worker's records)."""
