"""Renderers: a finished (or streaming) run shown or written in one format each.

- :mod:`ragqa.render.console`: the per-metric tables of ``ragqa evaluate`` (rich), and JSON text;
- :mod:`ragqa.render.junit`: JUnit XML, one writer for ``ragqa evaluate``, ``ragqa test`` and
  the pytest plugin's properties;
- :mod:`ragqa.render.records`: the one JSON shape of a panel result;
- :mod:`ragqa.render.registry`: the :class:`Renderer` protocol and the format registry
  (:func:`renderer_for` picks a renderer by file suffix); :mod:`ragqa.render.files` registers
  the JSON, JSONL and JUnit renderers.
"""

from __future__ import annotations

from ragqa.render.console import (
    DIRECTION_LABELS,
    render_report,
    report_renderable,
    report_to_json,
    report_to_text,
)
from ragqa.render.files import JsonlRenderer, JsonRenderer, JUnitRenderer
from ragqa.render.registry import RENDERERS, Renderer, RenderOptions, register, renderer_for

__all__ = [
    "DIRECTION_LABELS",
    "RENDERERS",
    "JUnitRenderer",
    "JsonRenderer",
    "JsonlRenderer",
    "RenderOptions",
    "Renderer",
    "register",
    "render_report",
    "renderer_for",
    "report_renderable",
    "report_to_json",
    "report_to_text",
]
