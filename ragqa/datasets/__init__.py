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

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from ragqa.datasets._readers import PARQUET_MISSING as PARQUET_MISSING
from ragqa.datasets._readers import (
    _csv_records,
    _Digest,
    _json_records,
    _jsonl_records,
    _open_text,
    _parquet_records,
    _reading,
)
from ragqa.datasets._records import ALIASES, _iter_samples, _json_type, _to_samples, _Where
from ragqa.datasets._records import FIELDS as FIELDS
from ragqa.datasets._records import MAX_PROBLEMS_SHOWN as MAX_PROBLEMS_SHOWN
from ragqa.errors import DatasetError
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

_EXTENSIONS: Mapping[str, DatasetFormat] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}


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
