"""Dataset records to samples: field names, aliases, the column map, type checks and located errors.

Part of :mod:`ragqa.datasets` (its public names are re-exported there): every reader yields
``(where, record)`` pairs (:mod:`ragqa.datasets._readers`), and this module turns them into
:class:`~ragqa.schema.Sample` objects, collecting every bad record into one error that names the
file, the line/item/row or id, the field and the fix.
"""

from __future__ import annotations

import difflib
import json
import math
import numbers
from array import array
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from ragqa._ids import CompactIds
from ragqa.errors import DatasetError, DatasetProblems
from ragqa.messages import parse_messages, parse_tool_calls
from ragqa.schema import Sample

__all__ = [
    "ALIASES",
    "FIELDS",
    "MAX_PROBLEMS_SHOWN",
]

ALIASES: Mapping[str, str] = {
    "question": "user_input",
    "answer": "response",
    "contexts": "retrieved_contexts",
    "ground_truth": "reference",
    "ground_truths": "reference",
    "query": "user_input",
    "context": "retrieved_contexts",
    "contextChunks": "context_chunks",
    "noiseContext": "noise_context",
}
"""Foreign column names and the :class:`~ragqa.schema.Sample` field each becomes (RAGAS v0.1, promptfoo)."""

FIELDS: tuple[str, ...] = tuple(Sample.model_fields)
"""Every :class:`~ragqa.schema.Sample` field name."""

_STRING_FIELDS = frozenset({"id", "user_input", "response", "reference", "noise_context"})
_JSON_FIELDS = frozenset(
    {
        "retrieved_contexts",
        "reference_contexts",
        "context_chunks",
        "messages",
        "reference_tool_calls",
        "reference_topics",
        "rubrics",
        "metadata",
        "contexts",
        "ground_truths",
        "contextChunks",
    }
)
"""Columns whose CSV cells hold JSON (lists or objects)."""

MAX_PROBLEMS_SHOWN = 20
"""Lines a :class:`~ragqa.errors.DatasetProblems` shows (a problem that repeats is one line); the rest are counted."""
_MAX_PROBLEMS_KEPT = 10_000
"""Bad records kept to group repeated problems; past this they are only counted."""

_Record = dict[str, Any] | DatasetError
"""What a reader yields per record: the record, or the problem that makes it unreadable."""


class _Where:
    """Where a record came from, for error messages: ``data.jsonl line 7 (id 'q1')``."""

    def __init__(self, source: str, unit: str, number: int) -> None:
        self.source = source
        self.unit = unit
        self.number = number
        self.sample_id: str | None = None
        self.text_checked = False
        """The record's text is known to hold no lone surrogate (its JSON line has no ``\\ud`` escape)."""

    @property
    def default_id(self) -> str:
        """The id a record without an ``id`` field gets, and its place in the file: ``line 7``."""
        return f"{self.unit} {self.number}"

    @property
    def record(self) -> str:
        """The record without the file: ``line 7 (id 'q1')``."""
        where = self.default_id
        if self.sample_id is not None and self.sample_id != where:
            where += f" (id {self.sample_id!r})"
        return where

    def __str__(self) -> str:
        return f"{self.source} {self.record}" if self.source else self.record

    def error(self, message: str, *, field: str | None = None) -> DatasetError:
        """A :class:`DatasetError` located here, with ``sample_id``, ``field``, ``reason`` and ``record`` set."""
        prefix = f"{self}, field {field!r}" if field else str(self)
        exc = DatasetError(f"{prefix}: {message}")
        exc.sample_id = self.sample_id or self.default_id
        exc.field = field
        exc.reason = message
        exc.record = self.record
        return exc


def _to_samples(
    records: Iterable[tuple[_Where, _Record]],
    column_map: Mapping[str, str] | None,
    source: str,
) -> list[Sample]:
    return list(_iter_samples(records, column_map, source))


class _SeenIds:
    """The ids a pass has seen, with where each first appeared, kept compactly (:class:`ragqa._ids.CompactIds`)."""

    def __init__(self) -> None:
        self._ids = CompactIds()
        self._numbers = array("q")
        self._units: list[str] = []
        self._unit_of = bytearray()

    def get(self, sample_id: str) -> tuple[str, int] | None:
        """``(unit, number)`` of the record that first had ``sample_id``, else ``None``."""
        position = self._ids.position(sample_id)
        if position is None:
            return None
        return self._units[self._unit_of[position]], self._numbers[position]

    def setdefault(self, sample_id: str, unit: str, number: int) -> None:
        """Remember where ``sample_id`` appeared, unless it was seen before."""
        if self._ids.position(sample_id) is None:
            self.add(sample_id, unit, number)

    def add(self, sample_id: str, unit: str, number: int) -> None:
        """Remember where ``sample_id`` appeared; the caller knows it is new (:meth:`get` gave ``None``)."""
        if unit not in self._units:
            self._units.append(unit)
        self._ids.append(sample_id)
        self._numbers.append(number)
        self._unit_of.append(self._units.index(unit))


def _iter_samples(
    records: Iterable[tuple[_Where, _Record]],
    column_map: Mapping[str, str] | None,
    source: str,
    *,
    unique_ids: bool = True,
) -> Iterator[Sample]:
    """The samples of ``records``; every bad record is collected and raised at the end, together.

    Samples are yielded until the first bad record; the records after it are still checked.
    """
    column_map = dict(column_map or {})
    _check_column_map(column_map, source)
    count = 0
    seen = _SeenIds() if unique_ids else None
    used_map_columns: set[str] = set()
    is_csv = False
    problems: list[DatasetError] = []
    n_problems = 0
    for where, record in records:
        is_csv = where.unit == "row"
        if isinstance(record, DatasetError):
            problem: DatasetError | None = record
        else:
            used_map_columns.update(c for c in column_map if c in record)
            try:
                sample = _to_sample(where, record, column_map)
                problem = _repeated_id(where, sample, seen) if seen is not None else None
            except DatasetError as exc:
                problem = exc
        if problem is not None:
            if where.sample_id is not None and seen is not None:  # a bad record's id is taken all the same
                seen.setdefault(where.sample_id, where.unit, where.number)  # (a later repeat is reported)
            n_problems += 1
            if len(problems) < _MAX_PROBLEMS_KEPT:
                problems.append(problem)
            continue
        assert sample.id is not None
        if seen is not None:  # new: _repeated_id looked it up already
            seen.add(sample.id, where.unit, where.number)
        count += 1
        if not n_problems:
            yield sample
    unused = sorted(set(column_map) - used_map_columns)
    if unused and count:
        prefix = f"{source}: " if source else ""
        what = "column" if is_csv or not source else "field"
        n_problems += 1
        problems.append(
            DatasetError(
                f"{prefix}the column map renames {', '.join(repr(c) for c in unused)}, but no record has that "
                f"{what}; check the spelling (the map goes dataset_column=sample_field)"
            )
        )
    if n_problems == 1:
        raise problems[0]
    if n_problems:
        raise DatasetProblems(source, problems, n_problems, limit=MAX_PROBLEMS_SHOWN)


def _repeated_id(where: _Where, sample: Sample, seen: _SeenIds) -> DatasetError | None:
    """The error for a sample whose id an earlier record already has, else ``None``."""
    assert sample.id is not None
    first = seen.get(sample.id)
    if first is None:
        return None
    unit, number = first
    return where.error(f"id {sample.id!r} is also used by {unit} {number}; ids must be unique", field="id")


def _check_column_map(column_map: Mapping[str, str], source: str) -> None:
    prefix = f"{source}: " if source else ""
    known = set(FIELDS) | set(ALIASES)
    for column, target in column_map.items():
        if target in known:
            continue
        if column in known:
            raise DatasetError(
                f"{prefix}column map entry {column}={target}: {target!r} is not a sample field. ragqa's map goes "
                f"dataset_column=sample_field (RAGAS's column_map goes the other way); write {target}={column}"
            )
        raise DatasetError(
            f"{prefix}column map entry {column}={target}: {target!r} is not a sample field.{_did_you_mean(target)} "
            f"Fields: {', '.join(FIELDS)}"
        )


def _to_sample(where: _Where, record: Mapping[str, Any], column_map: Mapping[str, str]) -> Sample:
    raw_id = record.get("id")
    if raw_id is None:
        for column, target in column_map.items():
            if target == "id" and column in record:
                raw_id = record[column]
    if raw_id is not None and not _missing(raw_id):
        if not isinstance(raw_id, str | numbers.Integral):
            raise where.error(f"expected a string or an integer, got {_describe(raw_id)}", field="id")
        where.sample_id = _id_string(raw_id)
    fields: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for column, value in record.items():
        name = column_map.get(column, column)
        name = ALIASES.get(name, name)
        if name == "user_input" and _is_list(value):
            name = "messages"  # RAGAS's multi-turn shape: user_input is the list of messages
        if name not in FIELDS:
            close = _close_names(column)
            target = ALIASES.get(close[0], close[0]) if close else "<field>"
            raise where.error(
                f"unknown field.{_did_you_mean(column)} Rename it, map it to a sample field with a column map "
                f"(--column-map {column}={target}), or move it under 'metadata'. Fields: {', '.join(FIELDS)}",
                field=column,
            )
        if _missing(value):  # before the clash check: a DataFrame has a NaN cell in every column a row lacks
            continue
        if name in fields:
            raise where.error(f"both {origin[name]!r} and {column!r} give {name!r}; keep one of them", field=name)
        if not where.text_checked:
            _check_text(where, column, value)
        fields[name] = _convert(where, column, name, value)
        origin[name] = column
    fields["id"] = where.sample_id if where.sample_id is not None else where.default_id
    try:
        sample = Sample(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"]]
        bad = loc[0] if loc else None
        bad_column = origin.get(bad, bad) if bad else None
        inner = f" at {'.'.join(loc[1:])}" if len(loc) > 1 else ""
        raise where.error(
            f"wrong type{inner}: {first['msg']} (got {_describe(first.get('input'))})", field=bad_column
        ) from None
    for i, chunk in enumerate(sample.context_chunks or [], 1):
        if not chunk.text.strip():
            raise where.error(
                f"chunk {i} has blank text; remove it (a blank chunk would be sent to the judge as a context)",
                field=origin.get("context_chunks", "context_chunks"),
            )
    return sample


def _check_text(where: _Where, column: str, value: Any) -> None:
    """Reject a lone surrogate (an unpaired UTF-16 JSON escape) anywhere in ``value``; no judge can take it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise where.error(
                f"holds a lone surrogate {value[exc.start]!r} at character {exc.start} (an unpaired \\ud800-\\udfff "
                "JSON escape), which is not text; fix or remove it at the source",
                field=column,
            ) from None
    elif isinstance(value, Mapping):
        for item in value.values():
            _check_text(where, column, item)
    elif isinstance(value, list | tuple):
        for item in value:
            _check_text(where, column, item)


def _convert(where: _Where, column: str, name: str, value: Any) -> Any:
    """Turn CSV text into JSON values, apply alias shapes, and normalise pandas/numpy cells."""
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        value = value.tolist()
    if where.unit == "row" and isinstance(value, str):
        value = _csv_cell(where, column, name, value)
    if column == "ground_truths" or (name == "reference" and isinstance(value, list)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise where.error(f"expected a list of strings, got {_describe(value)}", field=column)
        return "\n".join(value)
    if name == "retrieved_contexts" and column == "context" and isinstance(value, str):
        return [value]
    if name == "id":
        return _id_string(value)
    if name in ("messages", "reference_tool_calls"):
        try:
            return parse_messages(value) if name == "messages" else parse_tool_calls(value, what="tool call")
        except ValueError as exc:
            raise where.error(str(exc), field=column) from None
    if name in _STRING_FIELDS and not isinstance(value, str):
        raise where.error(f"expected a string, got {_describe(value)}", field=column)
    if name in ("retrieved_contexts", "reference_contexts", "reference_topics"):
        if isinstance(value, str):
            raise where.error(
                f'expected a list of strings, got a string; write it as ["{_clip(value, 30)}"]', field=column
            )
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise where.error(f"expected a list of strings, got {_describe(value)}", field=column)
        blank = [i for i, v in enumerate(value, 1) if not v or v.isspace()]  # (strip() would copy each)
        if blank and name != "reference_topics":
            raise where.error(
                f"item {blank[0]} of {len(value)} is blank; remove blank chunks (they would be judged as contexts)",
                field=column,
            )
    return value


def _csv_cell(where: _Where, column: str, name: str, value: str) -> Any:
    if name == "retrieved_contexts" and column == "context" and not value.lstrip().startswith("["):
        return value
    if column in _JSON_FIELDS or name in _JSON_FIELDS:
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            example = '["first chunk", "second chunk"]' if name not in ("metadata", "rubrics") else '{"key": "value"}'
            raise where.error(
                f"not valid JSON ({exc.msg} at character {exc.pos}): {_clip(value, 60)!r}; a list column in CSV "
                f"holds a JSON value such as {example}",
                field=column,
            ) from None
    return value


def _is_list(value: Any) -> bool:
    """True for a list, also a pandas/numpy array cell (``tolist()`` gives a list)."""
    return isinstance(value, list | tuple) or (hasattr(value, "tolist") and isinstance(value.tolist(), list))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _id_string(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return str(value)


def _close_names(name: str) -> list[str]:
    candidates = [*FIELDS, *ALIASES]
    close = difflib.get_close_matches(name, candidates, n=2, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        close = [lowered[n] for n in difflib.get_close_matches(name.lower(), list(lowered), n=2, cutoff=0.6)]
    return close


def _did_you_mean(name: str) -> str:
    close = _close_names(name)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _describe(value: Any) -> str:
    if isinstance(value, str):
        return f"a string {_clip(value, 40)!r}"
    if isinstance(value, list):
        inner = {_json_type(v) for v in value}
        return f"a list of {len(value)} item(s)" + (f" ({', '.join(sorted(inner))})" if inner else "")
    return f"{_json_type(value)} {_clip(repr(value), 40)}" if not isinstance(value, dict) else "an object"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
