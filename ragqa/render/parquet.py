"""Results as Parquet: one ``.parquet`` file, or a directory of parts, holding the JSON Lines records exactly.

A results file in Parquet holds the same :func:`~ragqa.render.records.result_record` records as
the JSON Lines one, one row per (sample, metric), in the same order. Columns:

- ``sample_id``, ``metric``, ``direction``: strings, as in the record;
- ``aggregate``, ``judges``: the record's nested objects as JSON text (the same text a JSON Lines
  line holds for them), so every float reads back bit for bit (Python writes the shortest text
  that round-trips) and every ``null`` stays ``null``; nothing is reshaped, so a field added to the
  record later is kept too;
- ``extra``: the record's other keys as one JSON object (a ``dawid-skene`` run's ``dawid_skene``),
  or null when it has none;
- ``value``: the aggregate's value as a float64 column (null when the aggregate is ``null``), for
  queries (``SELECT avg(value) ... GROUP BY metric``); derived from ``aggregate``, never read back.

The run header (:class:`ragqa.run.results_file.ResultsHeader`, the JSON Lines file's first line) is the
JSON text of the file's key-value metadata under ``ragqa_results``. Rows are written
``row_group`` at a time (one row group each), so writing holds one row group in memory, and
reading (:func:`read_parquet_results`) goes one row group at a time.

A directory of parts (``--out results/``) holds ``part-00000.parquet``, ``part-00001.parquet``...
in record order, a new part every ``part_records`` records; every part carries the header. A run
with no record writes one empty part, so the header is always there.

pyarrow is optional (the ``ray`` extra installs it); without it every function here raises
:class:`~ragqa.errors.MissingExtraError` naming ``pip install 'ragqa[ray]'``.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ragqa.errors import MissingExtraError, OutputError
from ragqa.render.atomic import os_reason, replace_file
from ragqa.render.records import result_record
from ragqa.render.registry import RenderOptions, register
from ragqa.report import Report

__all__ = [
    "HEADER_KEY",
    "PARQUET_RESULTS_MISSING",
    "PART_RECORDS",
    "ROW_GROUP",
    "ParquetPartsRenderer",
    "ParquetRenderer",
    "is_parquet_results",
    "part_files",
    "read_parquet_results",
    "remove_parts",
    "require_pyarrow",
    "write_parquet_parts",
    "write_parquet_results",
]

HEADER_KEY = b"ragqa_results"
"""The key-value metadata key whose value is the run header as JSON text."""

ROW_GROUP = 1000
"""Records per row group written (and the batch size read)."""

PART_RECORDS = 100_000
"""Records per part of a parts directory (the last part holds the rest)."""

PARQUET_RESULTS_MISSING = (
    "writing or reading Parquet results needs pyarrow, which is not installed: pip install 'ragqa[ray]' "
    "(or pip install pyarrow), or write JSON Lines (--out results.jsonl)"
)
"""The error when a Parquet results file is written or read without pyarrow (the ``ray`` extra installs it)."""

_FIXED = ("sample_id", "metric", "direction", "aggregate", "judges")
"""The record's keys that have their own column; any other key goes to ``extra``."""

_PART_PREFIX, _PART_SUFFIX = "part-", ".parquet"


def require_pyarrow(what: str) -> Any:
    """``pyarrow.parquet``, imported here only (pyarrow is optional).

    Args:
        what: the file or option the Parquet is for, for the message (``--out results.parquet``).

    Raises:
        MissingExtraError: when pyarrow is not installed; names ``pip install 'ragqa[ray]'`` (extra ``ray``).
    """
    try:
        importlib.import_module("pyarrow")
        return importlib.import_module("pyarrow.parquet")
    except ImportError as exc:
        raise MissingExtraError(f"{what}: {PARQUET_RESULTS_MISSING}", extra="ray") from exc


def is_parquet_results(path: Path) -> bool:
    """Whether ``path`` names Parquet results: a ``.parquet`` file or a directory (of parts)."""
    return path.suffix.lower() == _PART_SUFFIX or path.is_dir()


def part_files(directory: Path) -> list[Path]:
    """The parts of a parts directory in order (``part-00000.parquet`` first); empty when there is none."""
    try:
        names = sorted(
            p.name for p in directory.iterdir() if p.name.startswith(_PART_PREFIX) and p.name.endswith(_PART_SUFFIX)
        )
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [directory / name for name in names]


def remove_parts(directory: Path) -> None:
    """Remove the parts of ``directory`` (``part-*.parquet``), nothing else; a missing directory is fine."""
    for part in part_files(directory):
        part.unlink(missing_ok=True)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _schema(pa: Any, header: Mapping[str, Any] | None) -> Any:
    fields = [
        pa.field("sample_id", pa.string(), nullable=False),
        pa.field("metric", pa.string(), nullable=False),
        pa.field("direction", pa.string(), nullable=False),
        pa.field("aggregate", pa.string(), nullable=False),
        pa.field("judges", pa.string(), nullable=False),
        pa.field("extra", pa.string()),
        pa.field("value", pa.float64()),
    ]
    metadata = {HEADER_KEY: _json(dict(header)).encode("utf-8")} if header is not None else None
    return pa.schema(fields, metadata=metadata)


def _float(value: object) -> float | None:
    """``value`` as a float for the ``value`` column; ``None`` for ``null`` (or anything not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _table(pa: Any, schema: Any, records: list[Mapping[str, Any]]) -> Any:
    """One row group's table of ``records``."""
    columns: dict[str, list[Any]] = {name: [] for name in (*_FIXED, "extra", "value")}
    for record in records:
        columns["sample_id"].append(str(record["sample_id"]))
        columns["metric"].append(str(record["metric"]))
        columns["direction"].append(str(record["direction"]))
        columns["aggregate"].append(_json(record["aggregate"]))
        columns["judges"].append(_json(record["judges"]))
        extra = {k: v for k, v in record.items() if k not in _FIXED}
        columns["extra"].append(_json(extra) if extra else None)
        value = record["aggregate"].get("value") if isinstance(record["aggregate"], Mapping) else None
        columns["value"].append(_float(value))
    return pa.Table.from_pydict(columns, schema=schema)


def _write_rows(
    parquet: Any,
    target: Path,
    header: Mapping[str, Any] | None,
    records: Iterator[Mapping[str, Any]],
    limit: int | None,
) -> int:
    """Write up to ``limit`` records (all when ``None``) of ``records`` to ``target``, a row group at a time."""
    pa = importlib.import_module("pyarrow")
    schema = _schema(pa, header)
    written = 0
    with parquet.ParquetWriter(str(target), schema, compression="zstd") as writer:
        batch: list[Mapping[str, Any]] = []
        for record in records:
            batch.append(record)
            written += 1
            if len(batch) == ROW_GROUP:
                writer.write_table(_table(pa, schema, batch))
                batch = []
            if limit is not None and written == limit:
                break
        if batch or written == 0:
            writer.write_table(_table(pa, schema, batch))
    return written


def write_parquet_results(target: Path, header: Mapping[str, Any] | None, records: Iterable[Mapping[str, Any]]) -> int:
    """Write ``records`` (result records, in order) to the Parquet file ``target`` atomically.

    Args:
        target: the ``.parquet`` file; written as a hidden sibling, then renamed over it.
        header: the run header's JSON object (``ResultsHeader.to_json()``), kept in the file's
            key-value metadata; ``None`` writes none (a report's results without a run).
        records: :func:`~ragqa.render.records.result_record` dictionaries, consumed one row group at a time.

    Returns:
        The number of records written.

    Raises:
        MissingExtraError: without pyarrow.
        OutputError: when the file cannot be written (the temporary file is removed).
    """
    parquet = require_pyarrow(str(target))
    count = 0

    def write(temporary: Path) -> None:
        nonlocal count
        count = _write_rows(parquet, temporary, header, iter(records), None)

    replace_file(target, write)
    return count


def write_parquet_parts(
    directory: Path,
    header: Mapping[str, Any] | None,
    records: Iterable[Mapping[str, Any]],
    *,
    part_records: int = PART_RECORDS,
) -> int:
    """Write ``records`` as a directory of parts: ``part-00000.parquet``... with ``part_records`` records each.

    The parts are written to a hidden temporary directory beside ``directory`` first; only when
    every part is written are the old parts of ``directory`` removed and the new ones moved in
    (other files in it are left alone). A failure leaves ``directory`` as it was.

    Args:
        directory: the parts directory (created when missing).
        header: the run header's JSON object, kept in every part's metadata (``None``: none).
        records: result records in order.
        part_records: records per part (>= 1).

    Returns:
        The number of records written.

    Raises:
        ValueError: when ``part_records`` < 1.
        MissingExtraError: without pyarrow.
        OutputError: when a part cannot be written.
    """
    if part_records < 1:
        raise ValueError(f"part_records {part_records!r}: use an integer >= 1")
    parquet = require_pyarrow(str(directory))
    source = iter(records)
    count = 0
    try:
        directory.mkdir(exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".tmp", dir=directory.parent))
    except OSError as exc:
        raise OutputError(f"cannot write {directory} ({os_reason(exc)})", path=directory, errno=exc.errno) from exc
    try:
        index = 0
        while True:
            part = staging / f"{_PART_PREFIX}{index:05d}{_PART_SUFFIX}"
            written = _write_rows(parquet, part, header, source, part_records)
            if written == 0 and index > 0:
                part.unlink()
                break
            count += written
            index += 1
            if written < part_records:
                break
        remove_parts(directory)
        for part in sorted(staging.iterdir()):
            os.replace(part, directory / part.name)
    except OSError as exc:
        raise OutputError(f"cannot write {directory} ({os_reason(exc)})", path=directory, errno=exc.errno) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count


def read_parquet_results(path: Path) -> tuple[dict[str, Any] | None, Iterator[dict[str, Any]]]:
    """Read Parquet results back: the header and the records, one row group at a time.

    Args:
        path: a ``.parquet`` results file, or a parts directory (its parts in order).

    Returns:
        ``(header, records)``: the header's JSON object (``None`` when the file has none) and an
        iterator of the records exactly as :func:`~ragqa.render.records.result_record` made them.

    Raises:
        MissingExtraError: without pyarrow.
        OSError: when a file cannot be read.
        ValueError: when a file is not Parquet (pyarrow's ``ArrowInvalid``), a directory has no
            part, or a cell is not JSON (``json.JSONDecodeError``).
        KeyError: when a file lacks one of the columns (not a ragqa results file).
    """
    parquet = require_pyarrow(str(path))
    files = part_files(path) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"{path} holds no part ({_PART_PREFIX}00000{_PART_SUFFIX})")
    metadata = parquet.read_schema(str(files[0])).metadata or {}  # the footer only
    raw = metadata.get(HEADER_KEY)
    header = json.loads(raw.decode("utf-8")) if raw is not None else None
    if header is not None and not isinstance(header, dict):
        raise ValueError(f"{path}: the {HEADER_KEY.decode()} metadata is not a JSON object")
    return header, _rows(parquet, files)


def _rows(parquet: Any, files: list[Path]) -> Iterator[dict[str, Any]]:
    """The records of ``files`` in order, one file open at a time, one row group at a time."""
    for file in files:
        with parquet.ParquetFile(str(file)) as reader:
            if not set(_FIXED) <= set(reader.schema_arrow.names):
                missing = sorted(set(_FIXED) - set(reader.schema_arrow.names))
                raise KeyError(f"{file} has no column {', '.join(missing)}")
            columns = [*_FIXED, "extra"] if "extra" in reader.schema_arrow.names else list(_FIXED)
            for batch in reader.iter_batches(batch_size=ROW_GROUP, columns=columns):
                for row in batch.to_pylist():
                    record = {
                        "sample_id": row["sample_id"],
                        "metric": row["metric"],
                        "direction": row["direction"],
                        "aggregate": json.loads(row["aggregate"]),
                        "judges": json.loads(row["judges"]),
                    }
                    if row.get("extra") is not None:
                        record.update(json.loads(row["extra"]))
                    yield record


class ParquetRenderer:
    """A report's results as one Parquet file (the records of :func:`write_parquet_results`, no run header).

    A run that names a ``.parquet`` output writes its results file (with the header) from its
    stream instead (:mod:`ragqa.run.stream`); this renderer writes a finished report's results,
    as the JSON Lines renderer does (``ragqa report ... -o results.parquet``, a second ``.parquet`` output).
    """

    name = "parquet"
    suffixes = (_PART_SUFFIX,)

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write one row per (sample, metric) to ``path`` (atomically).

        Raises:
            MissingExtraError: without pyarrow.
            OutputError: when the file cannot be written.
        """
        write_parquet_results(path, None, (result_record(r) for r in report.results))


class ParquetPartsRenderer:
    """A report's results as a directory of Parquet parts (``--out results/``).

    Chosen by the path (a directory), not by a suffix, so it is not in the suffix registry:
    :func:`ragqa.run.plan.plan_output` picks it.
    """

    name = "parquet-parts"
    suffixes: tuple[str, ...] = ()

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write the parts of the report's results to the directory ``path``.

        Raises:
            MissingExtraError: without pyarrow.
            OutputError: when a part cannot be written.
        """
        write_parquet_parts(path, None, (result_record(r) for r in report.results))


register(ParquetRenderer())
