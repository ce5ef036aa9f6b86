"""JSON Schemas of ragqa's outputs, shipped with the package as plain ``.json`` files.

- ``result-record.schema.json``: one panel result as every output writes it (a line of the
  results JSONL, an entry of the JSON report's ``results``), generated from
  :class:`ragqa.render.records.ResultRecord`.

The files are generated; after changing the record shape, regenerate them from a source checkout
with ``python -m ragqa.schemas`` (a test fails while a file is out of date).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["RESULT_RECORD", "SCHEMA_DIR", "dump", "generate", "load", "write_all"]

SCHEMA_DIR = Path(__file__).parent
"""The folder holding the shipped schema files."""

RESULT_RECORD = "result-record.schema.json"
"""File name of the result record's schema."""


def _generators() -> dict[str, Callable[[], dict[str, Any]]]:
    from ragqa.render.records import result_record_schema

    return {RESULT_RECORD: result_record_schema}


def generate(name: str) -> dict[str, Any]:
    """The schema ``name`` (a file name such as :data:`RESULT_RECORD`) as the code builds it now.

    Raises:
        KeyError: for a name ragqa has no schema for.
    """
    return _generators()[name]()


def load(name: str) -> dict[str, Any]:
    """The shipped schema file ``name`` (such as :data:`RESULT_RECORD`), parsed.

    Raises:
        FileNotFoundError: when no such file ships.
    """
    loaded: dict[str, Any] = json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8"))
    return loaded


def dump(schema: dict[str, Any]) -> str:
    """The text a schema file holds: 2-space indented JSON, non-ASCII kept, a final newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def write_all(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Regenerate every schema file into ``directory`` (default: this package's folder).

    Returns:
        The files written.
    """
    written = []
    for name, build in _generators().items():
        path = directory / name
        path.write_text(dump(build()), encoding="utf-8")
        written.append(path)
    return written
