"""The renderer seam: one protocol, and a map from format name and file suffix to renderer.

A renderer writes a finished :class:`~ragqa.report.Report` to a file in one format. Entry points
never branch on formats: they ask :func:`renderer_for` for the path the user gave (an unknown
suffix is a :class:`~ragqa.errors.ConfigError` before any judge call) and call ``write``; the
``--out`` help lists :func:`suffix_help`. Adding a format is one new module that registers itself:

- in ragqa or in code imported before the run, :func:`register` (a class decorator too);
- in an installed package, an entry point in the group ``ragqa.renderers`` (``name =
  "module:Class"`` under ``[project.entry-points."ragqa.renderers"]``; the class is built with no
  argument), loaded the first time a suffix is not found among the registered ones, so runs that
  write built-in formats never pay for the look-up. A package whose renderer cannot be loaded
  does not stop other runs; its error is part of the unknown-suffix message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar, cast

from ragqa._plugins import load_entry_points
from ragqa.errors import ConfigError
from ragqa.render.paths import check_output_path
from ragqa.report import Report
from ragqa.schema import Language

__all__ = [
    "ENTRY_POINT_GROUP",
    "RENDERERS",
    "RenderOptions",
    "Renderer",
    "load_installed",
    "register",
    "renderer_for",
    "suffix_help",
    "write_to",
]

ENTRY_POINT_GROUP = "ragqa.renderers"
"""The entry-point group installed packages declare their output formats in."""


@dataclass(frozen=True)
class RenderOptions:
    """What a renderer may need besides the report.

    Attributes:
        language: labels and interpretation bands (``en`` or ``ru``).
        thresholds: ``{metric key: threshold}`` of the run (as resolved by
            :func:`ragqa.run.spec.resolve_thresholds`); renderers that show pass/fail use them.
    """

    language: Language = "en"
    thresholds: Mapping[str, float] = field(default_factory=dict)


class Renderer(Protocol):
    """Writes a report to a file in one format."""

    @property
    def name(self) -> str:
        """The format's name (``json``, ``csv``, ``junit``...)."""
        ...

    @property
    def suffixes(self) -> tuple[str, ...]:
        """File suffixes that select this renderer, lower case with the dot (``.json``)."""
        ...

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write ``report`` to ``path`` (replacing it atomically where the format allows)."""
        ...


RENDERERS: dict[str, Renderer] = {}
"""Every registered renderer by format name, in registration order."""

R = TypeVar("R")

_installed: dict[str, str] = {}
"""Installed renderers that could not be loaded: entry-point name -> the error (filled once)."""
_installed_loaded = False


def register(renderer: R) -> R:
    """Add ``renderer`` to :data:`RENDERERS` (a later one with the same name replaces it); returns it.

    On a class (``@register`` as a decorator) the class is built with no argument and registered;
    the class is returned, so the module keeps its name.

    Raises:
        TypeError: when the renderer has no ``name``, ``suffixes`` or ``write`` (see :class:`Renderer`).
    """
    instance: Renderer = renderer() if isinstance(renderer, type) else cast("Renderer", renderer)
    name, suffixes = getattr(instance, "name", None), getattr(instance, "suffixes", None)
    if (
        not isinstance(name, str)
        or not name
        or not isinstance(suffixes, tuple)
        or not callable(getattr(instance, "write", None))
    ):
        raise TypeError(f"{renderer!r} is not a renderer: give it a name, a tuple of suffixes and write()")
    RENDERERS[name] = instance
    return renderer


def load_installed() -> None:
    """Register the renderers installed packages declare (entry-point group ``ragqa.renderers``), once.

    A renderer that cannot be loaded is logged and kept out; :func:`renderer_for` names it when no
    renderer writes the suffix asked for.
    """
    global _installed_loaded
    if _installed_loaded:
        return
    _installed_loaded = True
    _installed.update(
        load_entry_points(
            ENTRY_POINT_GROUP, lambda _name, loaded: register(loaded), what="output format", skip=RENDERERS
        )
    )


def suffix_help() -> str:
    """The registered formats for help texts: ``.jsonl, .ndjson (jsonl), .json (json), ...``.

    Derived from :data:`RENDERERS` (built-ins and those registered so far), in registration order.
    """
    return ", ".join(f"{', '.join(r.suffixes)} ({r.name})" for r in RENDERERS.values())


def renderer_for(path: str | Path, *, option: str = "--out") -> Renderer:
    """The renderer whose suffix ends ``path`` (``.jsonl``, ``.json``, ``.csv``, ``.xml``...).

    Raises:
        ConfigError: when no renderer writes that suffix; the message lists the known ones (key ``option``).
    """
    suffix = Path(path).suffix.lower()
    for attempt in range(2):
        for renderer in RENDERERS.values():
            if suffix in renderer.suffixes:
                return renderer
        if attempt == 0:
            load_installed()
    known = ", ".join(sorted(s for r in RENDERERS.values() for s in r.suffixes))
    broken = "".join(f"; {error}" for error in _installed.values())
    raise ConfigError(
        f"{option} {path}: no output format writes {suffix or 'files without a suffix'!r}; use one of: {known}{broken}",
        key=option,
    )


def write_to(report: Report, renderer: Renderer, path: str | Path) -> Path:
    """Write ``report`` with ``renderer`` to ``path`` with default options (what ``Report.to_*`` do).

    Returns:
        The path written.

    Raises:
        ConfigError: when ``path`` cannot be written (a directory, a missing folder, no permission),
            checked before anything is written.
    """
    target = check_output_path(path, option="path")
    renderer.write(report, target, RenderOptions())
    return target
