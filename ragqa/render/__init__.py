"""Renderers: a finished (or streaming) run shown or written in one format each.

- :mod:`ragqa.render.console`: the per-metric tables of ``ragqa evaluate`` (rich) and their plain text,
  with :mod:`ragqa.render.console_jury` (the reliability and cascade sections) and
  :mod:`ragqa.render.numbers` (how every view writes a score, a ``±``, tokens and costs);
- :mod:`ragqa.render.junit`: JUnit XML, one writer for ``ragqa evaluate``, ``ragqa test`` and
  the pytest plugin's properties;
- :mod:`ragqa.render.records`: the one JSON shape of a panel result (and its JSON Schema), and
  the JSON document of a whole report;
- :mod:`ragqa.render.tables`: results as flat rows (wide and long), the source of
  :mod:`ragqa.render.csvfile` (the CSV renderer) and :mod:`ragqa.render.frames` (pandas);
- :mod:`ragqa.render.registry`: the :class:`Renderer` protocol and the format registry
  (:func:`renderer_for` picks a renderer by file suffix, :func:`suffix_help` lists them for the
  ``--out`` help); :mod:`ragqa.render.files` registers the JSON, JSONL and JUnit renderers,
  :mod:`ragqa.render.csvfile` the CSV one; installed packages add theirs through the entry-point
  group ``ragqa.renderers``;
- :mod:`ragqa.render.html`: the self-contained HTML report (Jinja2), registered for ``.html``;
- :mod:`ragqa.render.parquet`: results as Parquet (a ``.parquet`` file or a directory of parts),
  registered for ``.parquet``; pyarrow is imported only when one is written or read.
"""

from __future__ import annotations

from ragqa.render.console import DIRECTION_LABELS, render_report, report_renderable, report_to_text
from ragqa.render.csvfile import CsvRenderer, report_to_csv
from ragqa.render.files import JsonlRenderer, JsonRenderer, JUnitRenderer
from ragqa.render.html import HtmlRenderer, report_to_html
from ragqa.render.parquet import ParquetRenderer
from ragqa.render.records import read_result_record, report_record, report_to_json, result_record
from ragqa.render.registry import RENDERERS, Renderer, RenderOptions, register, renderer_for, suffix_help

__all__ = [
    "DIRECTION_LABELS",
    "RENDERERS",
    "CsvRenderer",
    "HtmlRenderer",
    "JUnitRenderer",
    "JsonRenderer",
    "JsonlRenderer",
    "ParquetRenderer",
    "RenderOptions",
    "Renderer",
    "read_result_record",
    "register",
    "render_report",
    "renderer_for",
    "report_record",
    "report_renderable",
    "report_to_csv",
    "report_to_html",
    "report_to_json",
    "report_to_text",
    "result_record",
    "suffix_help",
]
