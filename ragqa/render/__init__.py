"""Renderers: a finished (or streaming) run shown or written in one format each.

- :mod:`ragqa.render.console`: the per-metric tables of ``ragqa evaluate`` (rich), and JSON text;
- :mod:`ragqa.render.junit`: JUnit XML, one writer for ``ragqa evaluate``, ``ragqa test`` and
  the pytest plugin's properties.
"""

from __future__ import annotations

from ragqa.render.console import (
    DIRECTION_LABELS,
    render_report,
    report_renderable,
    report_to_json,
    report_to_text,
)

__all__ = ["DIRECTION_LABELS", "render_report", "report_renderable", "report_to_json", "report_to_text"]
