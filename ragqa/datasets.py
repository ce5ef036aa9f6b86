"""Datasets in: JSONL, JSON and CSV samples (results go out through :mod:`ragqa.render`).

Field names follow RAGAS (``user_input``, ``response``, ``reference``, ``retrieved_contexts``,
``reference_contexts``, ...; see :class:`~ragqa.schema.Sample`). Also accepted, and renamed on load:

- RAGAS v0.1 names: ``question`` -> ``user_input``, ``answer`` -> ``response``, ``contexts`` ->
  ``retrieved_contexts``, ``ground_truth`` -> ``reference``, ``ground_truths`` (a list) ->
  ``reference`` (the items joined with newlines);
- promptfoo test variables: ``query`` -> ``user_input``, ``context`` (a string, or a list) ->
  ``retrieved_contexts``, ``contextChunks`` -> ``context_chunks``, ``noiseContext`` -> ``noise_context``;
- any name, through a user column map ``{dataset_column: sample_field}`` applied before the aliases
  (the direction of :meth:`pandas.DataFrame.rename`; RAGAS's ``column_map`` goes the other way).

Every problem is a :class:`~ragqa.errors.DatasetError` that names the file, the line (JSONL), item
(JSON) or row (CSV), the sample id when known, the field, and the fix. The whole file is checked
in one pass: one bad record raises its own error; several raise one
:class:`~ragqa.errors.DatasetProblems` listing the first :data:`MAX_PROBLEMS_SHOWN` (one problem
per record, records with the same problem of the same field on one line) and counting the rest.
Nothing is sent to a judge here: loading is pure parsing and type checking, plus two guards (a
lone surrogate is not text, a blank context is not a context); which fields each metric needs, and the size limits, are
checked once per run by :mod:`ragqa.run.validate`.
"""

from __future__ import annotations

import csv
import difflib
import importlib
import io
import json
import math
import numbers
from array import array
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from pydantic import ValidationError

from ragqa._ids import CompactIds
from ragqa.errors import DatasetError, DatasetProblems, MissingExtraError
from ragqa.messages import parse_messages, parse_tool_calls
from ragqa.schema import Sample

__all__ = [
    "ALIASES",
    "DatasetFormat",
    "iter_jsonl",
    "load_dataset",
    "parse_column_map",
    "samples_from_columns",
    "samples_from_records",
]

DatasetFormat = Literal["auto", "jsonl", "json", "csv", "parquet"]
"""Formats :func:`load_dataset` reads; ``auto`` picks by extension (``.jsonl``/``.ndjson``, ``.json``, ``.csv``,
``.parquet``)."""

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

_EXTENSIONS: Mapping[str, DatasetFormat] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}

PARQUET_MISSING = (
    "reading Parquet needs pyarrow, which is not installed: pip install 'ragqa[ray]' (or pip install pyarrow)"
)
"""The error when a ``.parquet`` dataset is read without pyarrow (the ``ray`` extra installs it)."""

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
        return f"{self.unit} {self.number}"

    @property
    def record(self) -> str:
        """The record without the file: ``line 7 (id 'q1')``."""
        where = f"{self.unit} {self.number}"
        if self.sample_id is not None and self.sample_id != self.default_id:
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


def load_dataset(
    path: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    fmt: DatasetFormat = "auto",
) -> list[Sample]:
    """Load samples from a JSONL, JSON, CSV or Parquet file.

    - JSONL: one JSON object per line; blank lines are skipped.
    - JSON: a list of objects, or an object ``{"samples": [...]}``.
    - CSV: a header row of field names; list and object columns (``retrieved_contexts``,
      ``reference_contexts``, ``context_chunks``, ``metadata``, ...) hold JSON, e.g.
      ``["first chunk", "second chunk"]``; an empty cell means the field is absent.
    - Parquet (needs pyarrow, which the ``ray`` extra installs): one row per sample, list columns
      as Parquet lists, read one row group at a time; a null cell means the field is absent.

    A record without ``id`` gets its position as id: ``line N`` (JSONL, 1-based file line),
    ``item N`` (JSON, 1-based) or ``row N`` (CSV and Parquet, 1-based data row, header excluded).

    Args:
        path: the file.
        column_map: ``{dataset_column: sample_field}`` renames applied before the aliases of
            :data:`ALIASES` (e.g. ``{"question_text": "user_input"}``).
        fmt: the format; ``auto`` chooses by file extension.

    Returns:
        The samples in file order.

    Raises:
        DatasetError: when the file is missing or unreadable, a line is not JSON, a list column is
            not a JSON list, a field is unknown (with the closest known names) or has the wrong
            type, two records share an id, a column map entry names no field, or the file holds no
            sample. The message names the file, the line/item/row or id, the field and the fix.
            Several bad records raise one :class:`~ragqa.errors.DatasetProblems` listing them.
        MissingExtraError: a Parquet file without pyarrow installed (naming ``pip install 'ragqa[ray]'``).
    """
    path = Path(path)
    source = str(path)
    if fmt == "auto":
        chosen = _EXTENSIONS.get(path.suffix.lower())
        if chosen is None:
            raise DatasetError(
                f"{source}: cannot tell the format from the extension {path.suffix!r}; "
                "use .jsonl, .json, .csv or .parquet, or pass the format explicitly (fmt='jsonl', --format jsonl)"
            )
        fmt = chosen
    if fmt == "parquet":
        samples = _to_samples(_parquet_records(path, source), column_map, source)
        if not samples:
            raise DatasetError(f"{source}: the file holds no sample")
        return samples
    with _reading(source):
        text = path.read_text(encoding="utf-8-sig")
    if fmt == "jsonl":
        records = _jsonl_records(text, source)
    elif fmt == "json":
        records = _json_records(text, source)
    elif fmt == "csv":
        records = _csv_records(text, source)
    else:
        raise ValueError(f"unknown dataset format {fmt!r}; use auto, jsonl, json, csv or parquet")
    samples = _to_samples(records, column_map, source)
    if not samples:
        raise DatasetError(f"{source}: the file holds no sample")
    return samples


@contextmanager
def _reading(source: str) -> Iterator[None]:
    """Turn the errors of reading a dataset file into a :class:`DatasetError` naming the file and the fix."""
    try:
        yield
    except FileNotFoundError:
        raise DatasetError(f"{source}: no such file; check the path") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise DatasetError(f"{source}: cannot read the file ({exc.strerror})") from None


def iter_jsonl(
    path: str | Path,
    *,
    column_map: Mapping[str, str] | None = None,
    unique_ids: bool = True,
    digest: _Digest | None = None,
) -> Iterator[Sample]:
    """The samples of a JSON Lines file, read one line at a time (the file is never held in memory).

    Same fields, aliases, column map, default ids (``line N``) and checks as :func:`load_dataset`
    with ``fmt="jsonl"``; each problem is raised when its line is reached, and the checks that
    need the whole file (a repeated id, a column map entry no record uses, no sample at all)
    when the line or the end is reached. Problems of records are collected: the first bad
    record ends the samples, and the end of the file raises them all (one error, or a
    :class:`~ragqa.errors.DatasetProblems`). Iterate once to check a file before using its samples.

    Args:
        path: the ``.jsonl`` file.
        column_map: ``{dataset_column: sample_field}`` renames.
        unique_ids: check that no two records share an id (the ids seen are kept compactly,
            about ``len(id) + 30`` bytes each, until the end of the file). A pass over a file
            already checked may leave it out.
        digest: a :mod:`hashlib` object fed every byte of the file as it is read (a
            fingerprint of the file taken in the same pass).

    Yields:
        The samples in file order, each with an ``id``.

    Raises:
        DatasetError: as :func:`load_dataset`.
    """
    source = str(path)
    with _reading(source), _open_text(Path(path), digest) as lines:
        count = 0
        for sample in _iter_samples(_jsonl_records(lines, source), column_map, source, unique_ids=unique_ids):
            count += 1
            yield sample
    if not count:
        raise DatasetError(f"{source}: the file holds no sample")


def samples_from_records(
    records: Iterable[Mapping[str, Any]],
    *,
    column_map: Mapping[str, str] | None = None,
) -> list[Sample]:
    """Build samples from in-memory records, e.g. ``DataFrame.to_dict("records")``.

    Same field names, aliases and column map as :func:`load_dataset`. pandas conventions are
    understood without importing pandas: a float NaN (or ``None``) cell is an absent field, array
    cells with ``tolist()`` become lists, integer ids become strings. Missing ids become
    ``index N`` (0-based, like a default DataFrame index).

    Raises:
        DatasetError: as :func:`load_dataset`, located by ``index N``.
    """
    located = ((_Where("", "index", i), dict(r)) for i, r in enumerate(records))
    return _to_samples(located, column_map, "")


def samples_from_columns(
    columns: Mapping[str, Any],
    *,
    column_map: Mapping[str, str] | None = None,
) -> list[Sample]:
    """Build samples from a dict of columns, RAGAS's ``Dataset.from_dict`` shape.

    ``{"question": ["q1", "q2"], "answer": ["a1", "a2"], "contexts": [["c1"], ["c2"]]}`` is two
    samples: item ``i`` of every column makes sample ``i``. Field names, aliases, the column map
    and the checks are those of :func:`samples_from_records` (``None`` or NaN: the field is absent
    for that sample); missing ids become ``index N``.

    Raises:
        DatasetError: when a column is not a list (naming it and the shape to use) or the columns
            have different lengths (naming each column's length), before any sample is built;
            else as :func:`samples_from_records`.
    """
    lists: dict[str, list[Any]] = {}
    for name, values in columns.items():
        if hasattr(values, "tolist") and not isinstance(values, str | bytes):  # numpy arrays, pandas Series
            values = values.tolist()
        if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
            raise DatasetError(
                f"column {name!r} of the dict is {_json_type(values)}, not a list: a dict of columns holds one list "
                "per field with one item per sample, e.g. {'user_input': ['q1', 'q2'], 'response': ['a1', 'a2']}; "
                "for samples given one by one, pass a list of dicts"
            )
        lists[str(name)] = list(values)
    lengths = {name: len(values) for name, values in lists.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{name} {n}" for name, n in lengths.items())
        raise DatasetError(
            f"the dict's columns have different lengths ({shown}); every column needs one item per sample "
            "(None where a sample has no value)"
        )
    n = next(iter(lengths.values()), 0)
    return samples_from_records(
        ({name: values[i] for name, values in lists.items()} for i in range(n)), column_map=column_map
    )


def parse_column_map(text: str) -> dict[str, str]:
    """Parse ``"col=field,col2=field2"`` (the CLI's ``--column-map``) into a dict.

    Raises:
        DatasetError: when an entry is not ``column=field``.
    """
    mapping: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        column, sep, target = (s.strip() for s in part.partition("="))
        if not sep or not column or not target:
            raise DatasetError(f"column map entry {part!r} is not column=field; write e.g. question_text=user_input")
        mapping[column] = target
    return mapping


# -- readers: each yields (where, record) ---------------------------------------------------------


def _jsonl_records(text: str | Iterable[str], source: str) -> Iterator[tuple[_Where, _Record]]:
    lines = text.splitlines() if isinstance(text, str) else text
    for number, line in enumerate(lines, 1):
        if not line or line.isspace():  # (not line.strip(): no copy of a long line)
            continue
        where = _Where(source, "line", number)
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield (
                where,
                where.error(
                    f"not valid JSON ({exc.msg} at column {exc.colno}); each line must be one JSON object "
                    'such as {"user_input": "...", "response": "..."}'
                ),
            )
            continue
        if not isinstance(record, dict):
            yield where, where.error(f"expected a JSON object, got {_json_type(record)}")
            continue
        # a line read as UTF-8 holds no surrogate: only a \ud800-\udfff escape can make one
        where.text_checked = "\\ud" not in line and "\\uD" not in line
        yield where, record


def _json_records(text: str, source: str) -> Iterator[tuple[_Where, _Record]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{source} line {exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno}); "
            'a .json dataset is a list of objects or {"samples": [...]} (use .jsonl for one object per line)'
        ) from None
    if isinstance(data, dict) and isinstance(data.get("samples"), list):
        data = data["samples"]
    if not isinstance(data, list):
        raise DatasetError(
            f'{source}: expected a list of sample objects or {{"samples": [...]}}, got {_json_type(data)}'
            + (f" with keys {', '.join(sorted(data))[:200]}" if isinstance(data, dict) else "")
        )
    for number, record in enumerate(data, 1):
        where = _Where(source, "item", number)
        if not isinstance(record, dict):
            yield where, where.error(f"expected a JSON object, got {_json_type(record)}")
            continue
        yield where, record


def _parquet_records(path: Path, source: str) -> Iterator[tuple[_Where, _Record]]:
    """The rows of a Parquet file as records, one row group at a time (pyarrow is imported here only)."""
    try:
        parquet = importlib.import_module("pyarrow.parquet")
    except ImportError as exc:
        raise MissingExtraError(f"{source}: {PARQUET_MISSING}", extra="ray") from exc
    with _reading(source):
        try:
            reader = parquet.ParquetFile(path)
        except ValueError as exc:  # pyarrow's ArrowInvalid: not Parquet
            raise DatasetError(f"{source}: not a Parquet file ({exc}); check the path and the format") from None
    number = 0
    for batch in reader.iter_batches(batch_size=1024):
        for row in batch.to_pylist():
            number += 1
            yield _Where(source, "row", number), row


def _csv_records(text: str, source: str) -> Iterator[tuple[_Where, _Record]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        raise DatasetError(f"{source} line 1: unreadable CSV header ({exc})") from None
    header = [h.strip() for h in header]
    blank = [i + 1 for i, h in enumerate(header) if not h]
    if blank:
        raise DatasetError(f"{source} line 1: header column {blank[0]} has no name; name every column")
    repeated = sorted({h for h in header if header.count(h) > 1})
    if repeated:
        raise DatasetError(f"{source} line 1: repeated column name(s) {', '.join(repeated)}; names must be unique")
    number = 0
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # the reader cannot go on: what came before is still reported
            yield (
                _Where(source, "row", number + 1),
                DatasetError(f"{source} line {reader.line_num}: unreadable CSV ({exc})"),
            )
            return
        if not any(cell.strip() for cell in row):
            continue
        number += 1
        where = _Where(source, "row", number)
        if len(row) != len(header):
            yield (
                where,
                where.error(
                    f"has {len(row)} cells but the header has {len(header)} columns (ends on file line "
                    f"{reader.line_num}); quote cells that contain commas or line breaks"
                ),
            )
            continue
        record: dict[str, Any] = {}
        for column, cell in zip(header, row, strict=True):
            if cell == "":
                continue
            record[column] = cell
        yield where, record


# -- records -> samples ---------------------------------------------------------------------------


def _to_samples(
    records: Iterable[tuple[_Where, _Record]],
    column_map: Mapping[str, str] | None,
    source: str,
) -> list[Sample]:
    return list(_iter_samples(records, column_map, source))


class _Digest(Protocol):
    """What :func:`iter_jsonl` needs of a :mod:`hashlib` object."""

    def update(self, data: bytes | memoryview, /) -> None: ...


class _HashingReader(io.RawIOBase):
    """A binary file that feeds every byte it reads to a digest."""

    def __init__(self, raw: io.RawIOBase, digest: _Digest) -> None:
        self._raw = raw
        self._digest = digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        if n:
            self._digest.update(memoryview(buffer)[:n])
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


def _open_text(path: Path, digest: _Digest | None) -> IO[str]:
    """``path`` as UTF-8 text (a byte order mark dropped, any line end), its bytes fed to ``digest`` when given."""
    if digest is None:
        return path.open(encoding="utf-8-sig", newline=None)
    raw = _HashingReader(path.open("rb", buffering=0), digest)
    return io.TextIOWrapper(io.BufferedReader(raw, 1 << 20), encoding="utf-8-sig", newline=None)


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
