"""The results of a run as data: the report, its summaries, run comparisons and the writer registry.

- :mod:`ragqa.report.model`: :class:`Report` and the per-metric summary shapes (pydantic), with
  :mod:`ragqa.report.jury_model` (its reliability and cascade shapes, re-exported);
- :mod:`ragqa.report.summary`: :func:`summarize`, the summaries of a list of panel results (pure);
- :mod:`ragqa.report.formats`: the writers behind ``Report.to_jsonl/to_csv/to_pandas``, which the
  renderers register (so this package imports no renderer), and :func:`finite_json`;
- :mod:`ragqa.report.compare` and :mod:`ragqa.report.bootstrap`: what changed between two runs'
  results (pure; ``ragqa compare`` reads the files through :mod:`ragqa.compare`).
"""

from __future__ import annotations

from ragqa.report.formats import ReportWriter, finite_json, register_writer
from ragqa.report.model import (
    Agreement,
    CacheStats,
    CascadeSummary,
    ContestedSample,
    JudgeBias,
    JudgeReliability,
    JudgeSummary,
    JuryReliability,
    MetricSummary,
    PairAgreement,
    Report,
    SkippedSample,
    with_uncertainty,
)
from ragqa.report.summary import summarize

__all__ = [
    "Agreement",
    "CacheStats",
    "CascadeSummary",
    "ContestedSample",
    "JudgeBias",
    "JudgeReliability",
    "JudgeSummary",
    "JuryReliability",
    "MetricSummary",
    "PairAgreement",
    "Report",
    "ReportWriter",
    "SkippedSample",
    "finite_json",
    "register_writer",
    "summarize",
    "with_uncertainty",
]
