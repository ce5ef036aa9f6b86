"""The renderer seam: one protocol, and a map from format name and file suffix to renderer.

A renderer writes a finished :class:`~ragqa.report.Report` to a file in one format. Entry points
never branch on formats: they ask :func:`renderer_for` for the path the user gave (an unknown
suffix is a :class:`~ragqa.errors.ConfigError` before any judge call) and call ``write``. Adding a
format is one new module that registers itself here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ragqa.errors import ConfigError
from ragqa.render.paths import check_output_path
from ragqa.report import Report
from ragqa.schema import Language

__all__ = ["RENDERERS", "RenderOptions", "Renderer", "register", "renderer_for", "write_to"]


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
"""Every registered renderer by format name."""


def register(renderer: Renderer) -> Renderer:
    """Add ``renderer`` to :data:`RENDERERS` (a later one with the same name replaces it)."""
    RENDERERS[renderer.name] = renderer
    return renderer


def renderer_for(path: str | Path, *, option: str = "--out") -> Renderer:
    """The renderer whose suffix ends ``path`` (``.jsonl``, ``.json``, ``.csv``, ``.xml``...).

    Raises:
        ConfigError: when no renderer writes that suffix; the message lists the known ones (key ``option``).
    """
    suffix = Path(path).suffix.lower()
    for renderer in RENDERERS.values():
        if suffix in renderer.suffixes:
            return renderer
    known = ", ".join(sorted(s for r in RENDERERS.values() for s in r.suffixes))
    raise ConfigError(
        f"{option} {path}: no output format writes {suffix or 'files without a suffix'!r}; use one of: {known}",
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
