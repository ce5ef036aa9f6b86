"""A judge's score details laid out for the HTML drill-down: per-row tables and the other values as text.

A metric's :attr:`~ragqa.schema.MetricScore.details` is a free JSON-like mapping. Some of its lists
run in parallel, one entry per statement, claim, generated question, topic or context (for
example ``statements``, ``attributed`` and ``reasons`` of context recall). :data:`TABLES` names
those groups; each group present becomes one table with a row per entry, its text columns
wrapping and its number columns kept on one line. Every other value is shown under its key as
plain text. A group whose lists differ in length is not a table (its lists stay plain values), so
no value is ever hidden or paired with the wrong row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragqa.render.numbers import fmt_score
from ragqa.report import finite_json

__all__ = ["TABLES", "DetailsTable", "DetailsView", "detail_text", "details_view"]

ColumnKind = Literal["text", "number"]
"""``text`` columns wrap inside the judge's card; ``number`` columns stay on one line."""

INDEX = "#"
"""The first column of a table whose rows have no text of their own (``context_precision``'s contexts)."""

TABLES: tuple[tuple[str | None, tuple[str, ...]], ...] = (
    ("statements", ("verdicts", "attributed", "answer_in_reference", "counted", "answer_in_context", "reasons")),
    ("response_claims", ("precision_verdicts", "precision_reasons")),
    ("reference_claims", ("recall_verdicts", "recall_reasons")),
    ("questions", ("noncommittal",)),
    ("topics", ("answered", "on_topic")),
    (None, ("verdicts", "scores", "reasons")),
    (None, ("context_relevant", "relevance_source")),
)
"""``(row key, column keys)`` of the details' per-row groups, in the order they are shown.

The row key's list gives the first column (a ``None`` row key numbers the rows instead); a column
key joins when its value is a list of the row key's length. A key already shown in a table is not
used again, so ``verdicts`` beside ``statements`` (faithfulness) and ``verdicts`` alone
(context precision's contexts, aspect critic's repeats) each land in one table."""


@dataclass
class DetailsTable:
    """One per-row table of a judge's details.

    Attributes:
        columns: the details keys shown, the row key first (``#`` for numbered rows).
        kinds: one :data:`ColumnKind` per column.
        rows: ``rows[i][j]`` is the text of entry ``i`` in column ``j``; shape ``[n_rows][len(columns)]``.
    """

    columns: list[str]
    kinds: list[ColumnKind]
    rows: list[list[str]]


@dataclass
class DetailsView:
    """A judge's details as the drill-down shows them.

    Attributes:
        tables: the per-row groups present (:data:`TABLES`), in order.
        rest: ``(key, text)`` for every other detail, in the details' order.
    """

    tables: list[DetailsTable] = field(default_factory=list)
    rest: list[tuple[str, str]] = field(default_factory=list)


def details_view(details: Mapping[str, Any]) -> DetailsView:
    """Lay out ``details`` (see the module docstring).

    Args:
        details: a :attr:`~ragqa.schema.MetricScore.details` mapping (any JSON-like values).

    Returns:
        The tables and the remaining ``(key, text)`` pairs; every key of ``details`` is shown
        exactly once, in a table or in ``rest``.
    """
    used: set[str] = set()
    tables: list[DetailsTable] = []
    for row_key, column_keys in TABLES:
        table = _table(details, row_key, [k for k in column_keys if k not in used])
        if table is not None:
            tables.append(table)
            used.update(c for c in table.columns if c != INDEX)
    rest = [(key, detail_text(value)) for key, value in details.items() if key not in used]
    return DetailsView(tables=tables, rest=rest)


def _table(details: Mapping[str, Any], row_key: str | None, column_keys: Sequence[str]) -> DetailsTable | None:
    if row_key is not None:
        anchor = details.get(row_key)
        if not isinstance(anchor, list) or not anchor:
            return None
        n = len(anchor)
        columns = [row_key] + [k for k in column_keys if _is_list_of(details.get(k), n)]
        values = [details[c] for c in columns]
    else:
        lists = [k for k in column_keys if isinstance(details.get(k), list) and details[k]]
        if len(lists) < 2 or len({len(details[k]) for k in lists}) != 1:
            return None  # numbered rows only for two or more parallel lists
        n = len(details[lists[0]])
        columns = [INDEX, *lists]
        values = [list(range(1, n + 1)), *(details[k] for k in lists)]
    kinds: list[ColumnKind] = [_kind(v) for v in values]
    rows = [[detail_text(column[i]) for column in values] for i in range(n)]
    return DetailsTable(columns=columns, kinds=kinds, rows=rows)


def _is_list_of(value: Any, n: int) -> bool:
    return isinstance(value, list) and len(value) == n


def _is_number(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float))


def _kind(values: list[Any]) -> ColumnKind:
    """``number`` for a column of single numbers or booleans; else ``text`` (a list of numbers wraps)."""
    return "number" if all(_is_number(v) for v in values) else "text"


def detail_text(value: Any) -> str:
    """One detail value as the text shown.

    Strings as they are, floats with three decimals (``nan`` for NaN), booleans ``true``/``false``,
    ``None`` as ``-``, a list of numbers space-separated, a list of strings one per line, any
    other value as compact JSON (NaN as ``null``).

    Args:
        value: a JSON-like value.

    Returns:
        The text (the template escapes it).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return fmt_score(value) if math.isfinite(value) or math.isnan(value) else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list) and value and all(_is_number(v) for v in value):
        return " ".join(detail_text(v) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json.dumps(finite_json(value), ensure_ascii=False)
