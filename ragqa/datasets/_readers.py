"""Dataset readers: JSON Lines, JSON, CSV and Parquet files as ``(where, record)`` pairs.

Part of :mod:`ragqa.datasets` (its public names are re-exported there); each reader locates every
record (:class:`~ragqa.datasets._records._Where`) so that a problem names the file and the line,
item or row. Parquet is read one row group at a time and pyarrow is imported only here.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Protocol

from ragqa.datasets._records import _json_type, _Record, _Where
from ragqa.errors import DatasetError, MissingExtraError

__all__ = [
    "PARQUET_MISSING",
]

PARQUET_MISSING = (
    "reading Parquet needs pyarrow, which is not installed: pip install 'ragqa[ray]' (or pip install pyarrow)"
)
"""The error when a ``.parquet`` dataset is read without pyarrow (the ``ray`` extra installs it)."""


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
