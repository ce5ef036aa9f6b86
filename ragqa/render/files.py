"""File renderers of a finished report: JSON, JSONL and JUnit XML (registered in :mod:`ragqa.render.registry`).

JSON and JSONL carry every result as :func:`~ragqa.render.records.result_record`, the one JSON
shape of a panel result (its schema: ``ragqa/schemas/result-record.schema.json``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ragqa.render.atomic import replace_text
from ragqa.render.junit import JUnitCase, JUnitSuite, result_properties, write_junit
from ragqa.render.records import report_to_json, result_record
from ragqa.render.registry import RenderOptions, register, write_to
from ragqa.report import Report, register_writer
from ragqa.thresholds import passes

__all__ = ["JUnitRenderer", "JsonRenderer", "JsonlRenderer", "report_junit_cases"]


class JsonRenderer:
    """The whole report as one JSON document (see :func:`ragqa.render.records.report_record`)."""

    name = "json"
    suffixes = (".json",)

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write the report as JSON to ``path`` (atomically)."""
        replace_text(path, report_to_json(report) + "\n")


class JsonlRenderer:
    """One :func:`~ragqa.render.records.result_record` per line, in report order."""

    name = "jsonl"
    suffixes = (".jsonl", ".ndjson")

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write one record per (sample, metric) to ``path`` (atomically)."""
        lines = [json.dumps(result_record(r), ensure_ascii=False, allow_nan=False) for r in report.results]
        replace_text(path, "".join(line + "\n" for line in lines))


def report_junit_cases(report: Report, thresholds: dict[str, float] | None = None) -> list[JUnitSuite]:
    """One suite per metric, one case per sample: a failure when a threshold is missed, an error when unscored.

    A sample's aggregate is compared with its metric's threshold in the metric's direction (higher
    or lower is better); an aggregate that does not exist (every judge failed, or below quorum) is
    an ``error`` case naming the judges' failures.
    """
    suites: dict[str, list[JUnitCase]] = {}
    for result in report.results:
        limit = (thresholds or {}).get(result.metric)
        value = result.aggregate.value
        failure = error = None
        if math.isnan(value) and result.failures:
            causes = "\n".join(f"{f.judge_id}: {f.error_type} at {f.step or '?'}: {f.message}" for f in result.failures)
            error = ("no aggregate: judges failed", causes)
        elif limit is not None and not passes(value, limit, result.direction):
            sign = ">=" if result.direction == "higher" else "<="
            failure = (f"aggregate {value:.3f} needs {sign} {limit:g}", f"{result.metric} on sample {result.sample_id}")
        suites.setdefault(result.metric, []).append(
            JUnitCase(
                name=f"{result.metric} [{result.sample_id}]",
                classname=f"ragqa.{result.metric}",
                time_s=max((o.latency_s for o in result.judges), default=0.0),
                properties=result_properties(result, threshold=limit),
                failure=failure,
                error=error,
            )
        )
    return [JUnitSuite(metric, cases) for metric, cases in suites.items()]


class JUnitRenderer:
    """JUnit XML of a run: a suite per metric, a case per sample (see :func:`report_junit_cases`)."""

    name = "junit"
    suffixes = (".xml",)

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write JUnit XML to ``path`` (atomically)."""
        write_junit(path, report_junit_cases(report, dict(options.thresholds)))


for _renderer in (JsonRenderer(), JsonlRenderer(), JUnitRenderer()):
    register(_renderer)


register_writer("jsonl", lambda report, path: write_to(report, JsonlRenderer(), path))
