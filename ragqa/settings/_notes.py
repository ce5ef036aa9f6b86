"""Notes on settings that load but may not mean what they say: a bare-number duration under 1000.

A bare number is milliseconds, as in Spring (``timeout: 60`` is 60 ms). That is kept, but a bare
number under 1000 is almost always meant as seconds, so each one gets a note naming its key. The
notes are logged once per process as WARNINGs of the ``ragqa.settings`` logger (what the CLI
prints on stderr), kept on :attr:`ragqa.settings.Settings.notes`, and shown by ``ragqa config show``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, get_args

from pydantic import BaseModel

from ragqa.settings._binding import _unwrap, container_in, join, kebab, model_in

__all__ = ["BARE_MS_LIMIT", "duration_notes", "log_notes"]

BARE_MS_LIMIT = 1000
"""A bare-number duration below this many milliseconds gets a note."""

log = logging.getLogger("ragqa.settings")

_BARE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*$")
_logged: set[str] = set()


def _bare_number(value: Any) -> float | None:
    """The number of a duration written without a unit (``60``, ``"60"``), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and (match := _BARE.match(value)):
        return float(match[1])
    return None


def duration_notes(data: Mapping[str, Any], model: type[BaseModel], path: str = "") -> list[str]:
    """One note per duration of ``data`` written as a bare number under :data:`BARE_MS_LIMIT`.

    Args:
        data: the merged, normalised settings tree (field names as keys), as the Spring source
            hands it to pydantic.
        model: the settings model ``data`` validates as.
        path: the dotted kebab key of ``data`` (empty at the top).

    Returns:
        ``"<key>: 60 means 60 ms; write 60s for seconds (or 60ms to keep milliseconds)"`` per
        such value, in tree order.
    """
    notes: list[str] = []
    for name, value in data.items():
        field = model.model_fields.get(name)
        if field is not None:
            notes.extend(_notes_for(value, field.annotation, join(path, kebab(name))))
    return notes


def _notes_for(value: Any, annotation: Any, path: str) -> list[str]:
    if timedelta in _unwrap(annotation):
        number = _bare_number(value)
        if number is None or not 0 < number < BARE_MS_LIMIT:
            return []
        shown = f"{number:g}"
        return [f"{path}: {shown} means {shown} ms; write {shown}s for seconds (or {shown}ms to keep milliseconds)"]
    sub = model_in(annotation)
    if sub is not None and isinstance(value, Mapping):
        return duration_notes(value, sub, path)
    mapping = container_in(annotation, dict)
    if mapping is not None and isinstance(value, Mapping):
        value_type = get_args(mapping)[1]
        return [n for k, v in value.items() for n in _notes_for(v, value_type, join(path, str(k)))]
    listing = container_in(annotation, list)
    if listing is not None and isinstance(value, list):
        (item_type,) = get_args(listing)
        return [n for i, v in enumerate(value) for n in _notes_for(v, item_type, f"{path}[{i}]")]
    return []


def log_notes(notes: Sequence[str]) -> None:
    """Log each note as a WARNING of ``ragqa.settings``, once per process however often settings load."""
    for note in notes:
        if note not in _logged:
            _logged.add(note)
            log.warning("%s", note)
