"""Loading what installed packages declare in one of ragqa's entry-point groups, without letting one break a run.

Output formats (``ragqa.renderers``) and language packs (``ragqa.languages``) are found this way
the first time a name is not a registered one, so runs that use only ragqa's own never pay for the
look-up (``importlib.metadata`` scans every installed distribution).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container
from typing import Any

__all__ = ["load_entry_points"]

log = logging.getLogger(__name__)


def load_entry_points(
    group: str, accept: Callable[[str, Any], None], *, what: str, skip: Container[str] = ()
) -> dict[str, str]:
    """Load every entry point of ``group`` and hand each to ``accept(name, loaded object)``.

    Args:
        group: the entry-point group (``ragqa.renderers``...).
        accept: registers one loaded object; raises (any exception) to refuse it.
        what: what an entry point declares, for messages (``output format``, ``language pack``).
        skip: names already registered, left unloaded.

    Returns:
        ``{name: message}`` for the entry points that could not be loaded or were refused (each
        also logged as a warning): a broken package must not stop runs that do not use it.
    """
    from importlib.metadata import entry_points  # only when asked: it scans every distribution

    broken: dict[str, str] = {}
    for entry in entry_points(group=group):
        if entry.name in skip:
            continue
        try:
            accept(entry.name, entry.load())
        except Exception as exc:  # a broken package must not stop runs that do not use it
            broken[entry.name] = f"{what} {entry.name!r} = {entry.value!r} could not be loaded: {exc}"
            log.warning("%s", broken[entry.name])
    return broken
