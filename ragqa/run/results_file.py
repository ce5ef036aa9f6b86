"""The results file's layout: its header, its lines, and reading it back (``--resume``, replay, merge, compare).

Format (UTF-8 JSON Lines, documented in ``docs/cli.md``):

- line 1, the header (:class:`ResultsHeader`): ``{"ragqa_results": 1, "run_id", "ragqa_version",
  "config_fingerprint", "dataset", "dataset_fingerprint", "samples", "metrics", "judges",
  "started_at", "confidence", "intervals"}`` (and ``"repeats"`` when a run judges each pair more
  than once); no setting and no secret is in it (the fingerprint is a SHA-256 of the judges'
  identities and the panel options); ``intervals`` is ``null`` until the run finishes, then holds
  each metric's confidence intervals (:func:`header_intervals`);
- then one :func:`ragqa.render.records.result_record` per finished (sample, metric), one
  :func:`result_line` each.

Lines end with a line feed only; the line and paragraph separators U+2028, U+2029 and U+0085,
legal inside a JSON string, are written as JSON escapes, and :func:`read_results` splits on line
feeds only, so any text a judge returns reads back as it was written.

A ``.parquet`` file, or a directory of parts, holds the same records as :mod:`ragqa.render.parquet`
lays them out, the header in the file's metadata; :func:`read_results` reads either.

:class:`ragqa.run.stream.ResultStream` writes these files while a run goes (to ``<name>.partial``,
:func:`partial_path`). A truncated last line (a run killed while writing it) is ignored when the
file is read back; a partial without one complete line holds nothing yet (:func:`complete_lines`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragqa.errors import ConfigError
from ragqa.render.atomic import os_reason
from ragqa.render.parquet import is_parquet_results, read_parquet_results
from ragqa.render.records import result_record
from ragqa.report import MetricSummary, finite_json
from ragqa.schema import PanelResult

__all__ = [
    "FORMAT_VERSION",
    "Pair",
    "ResultsHeader",
    "complete_lines",
    "header_intervals",
    "partial_path",
    "read_results",
    "result_bytes",
    "result_line",
]

FORMAT_VERSION = 1
"""The value of ``ragqa_results`` in the header; raised when the layout changes incompatibly."""

Pair = tuple[str, str]
"""``(sample id, metric key)``."""


@dataclass(frozen=True)
class ResultsHeader:
    """The first line of a results file: what run wrote it.

    Attributes:
        run_id: a random id of the run (kept when the run is resumed).
        ragqa_version: the version of ragqa that started the run.
        config_fingerprint: ``sha256:<hex>`` of the judges' identities (provider, endpoint, model,
            decoding options; never a key) and the panel options; resume refuses another.
        dataset: the dataset's path as given, or a description (``3 record(s) from Python``).
        dataset_fingerprint: ``sha256:<hex>`` of the samples; resume refuses another dataset.
        samples: samples in the dataset.
        metrics: metric keys of the run, in order.
        judges: judge ids of the panel, in order.
        started_at: when the run first started, ISO 8601 UTC.
        shard: ``"K/N"`` for one part of a sharded run (``--shard``), else ``None`` (not written).
        dataset_samples: samples in the whole dataset of a sharded run (``samples`` counts the
            shard's), else ``None`` (not written).
        repeats: times each judge scored each pair (:mod:`ragqa.repeats`); written only when > 1,
            so a single-repeat header is unchanged.
        confidence: the level of the run's confidence intervals (``None`` in files of older runs).
        extractor: the judge that extracted the statements of a voting run (``claim-vote``,
            ``dawid-skene``; :mod:`ragqa.jury.panel`), whose verdict settles a tied vote; written
            only then, so other headers are unchanged.
        intervals: per metric key, ``{"aggregate": interval, "judges": {judge id: interval}}``
            with each interval as :class:`~ragqa.schema.Interval`'s fields (``estimate``, ``low``,
            ``high``, ``confidence``, ``method``, ``n``) or ``None`` when there is none; ``None``
            until the run finishes (see :func:`header_intervals`).
        cascade: the run's cascade (``ragqa.jury.cascade``): tier 2, the escalation rule, ``source``
            (``settings``, or the labelled data a fitted rule came from) and ``audit``; ``None``
            without one (not written).
        thresholds: ``{metric key: threshold}`` of the per-item reliability section: the run's
            resolved thresholds, else each metric's default
            (:attr:`ragqa.run.plan.RunPlan.reliability_thresholds`), which the report rebuilt from
            the file needs; ``None`` (not written) when no metric has one. Never a gate.
        probe: the order probe's figures (:class:`~ragqa.schema.OrderProbeResult`'s fields) of a
            finished run made with ``--probe order``; ``None`` (not written) otherwise.
    """

    run_id: str
    ragqa_version: str
    config_fingerprint: str
    dataset: str
    dataset_fingerprint: str
    samples: int
    metrics: tuple[str, ...]
    judges: tuple[str, ...]
    started_at: str
    shard: str | None = None
    dataset_samples: int | None = None
    repeats: int = 1
    confidence: float | None = None
    intervals: Mapping[str, Any] | None = None
    cascade: Mapping[str, Any] | None = None
    probe: Mapping[str, Any] | None = None
    extractor: str | None = None
    thresholds: Mapping[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        """The header line's object (``ragqa_results`` first; shard fields only when sharded, ``repeats`` when > 1)."""
        data = asdict(self)
        data["metrics"], data["judges"] = list(self.metrics), list(self.judges)
        data["intervals"] = finite_json(dict(self.intervals)) if self.intervals is not None else None
        data["probe"] = finite_json(dict(self.probe)) if self.probe is not None else None
        data["thresholds"] = dict(self.thresholds) if self.thresholds is not None else None
        for key in ("shard", "dataset_samples", "probe", "cascade", "extractor", "thresholds"):
            if data[key] is None:
                del data[key]
        if self.repeats == 1:
            del data["repeats"]
        return {"ragqa_results": FORMAT_VERSION, **data}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ResultsHeader:
        """Read a header line's object.

        Raises:
            KeyError, TypeError: when a field is missing or of the wrong kind.
        """
        return cls(
            run_id=str(data["run_id"]),
            ragqa_version=str(data["ragqa_version"]),
            config_fingerprint=str(data["config_fingerprint"]),
            dataset=str(data["dataset"]),
            dataset_fingerprint=str(data["dataset_fingerprint"]),
            samples=int(data["samples"]),
            metrics=tuple(data["metrics"]),
            judges=tuple(data["judges"]),
            started_at=str(data["started_at"]),
            shard=str(data["shard"]) if data.get("shard") is not None else None,
            dataset_samples=int(data["dataset_samples"]) if data.get("dataset_samples") is not None else None,
            repeats=int(data.get("repeats", 1)),
            confidence=float(data["confidence"]) if data.get("confidence") is not None else None,
            intervals=data.get("intervals"),
            cascade=data.get("cascade"),
            probe=data.get("probe"),
            extractor=str(data["extractor"]) if data.get("extractor") is not None else None,
            thresholds={str(k): float(v) for k, v in data["thresholds"].items()}
            if data.get("thresholds") is not None
            else None,
        )


def header_intervals(summaries: Iterable[MetricSummary]) -> dict[str, Any]:
    """The ``intervals`` of a finished run's header: per metric, the aggregate's and each judge's interval.

    Returns:
        ``{metric key: {"aggregate": {...} | None, "judges": {judge id: {...} | None}}}``, each
        interval as its fields (``estimate``, ``low``, ``high``, ``confidence``, ``method``, ``n``).
    """
    return {
        s.metric: {
            "aggregate": s.interval.model_dump() if s.interval is not None else None,
            "judges": {j.judge_id: j.interval.model_dump() if j.interval is not None else None for j in s.judges},
        }
        for s in summaries
    }


def partial_path(path: Path) -> Path:
    """Where results stream while the run goes: ``<path>.partial``."""
    return path.with_name(path.name + ".partial")


_SEPARATORS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"})
"""Characters other tools read as line ends (``str.splitlines``, editors, JavaScript before ES2019), escaped."""


def result_line(obj: Mapping[str, Any]) -> str:
    """One line of a results file: ``obj`` as JSON (UTF-8 text, line separators escaped), ending in a line feed."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).translate(_SEPARATORS) + "\n"


def result_bytes(result: PanelResult) -> bytes:
    """``result``'s line of a results file, UTF-8: :func:`result_line` of :func:`~ragqa.render.records.result_record`.

    The one serialisation of a result record, whether the driver writes it or a Ray worker makes it
    for the driver to append (:mod:`ragqa.run.rows`): the bytes are the same either way.
    """
    return result_line(result_record(result)).encode("utf-8")


def complete_lines(path: Path) -> int:
    """How many complete (line-feed-ended) lines ``path`` has: 0 for a missing or empty file.

    A results file with no complete line holds nothing yet (a run stopped, or a disk filled,
    before its header was written); one with a single line holds a header and no result.
    """
    count = 0
    try:
        with path.open("rb") as file:
            while chunk := file.read(1 << 20):
                count += chunk.count(b"\n")
    except FileNotFoundError:
        return 0
    return count


def read_results(path: Path) -> tuple[ResultsHeader, dict[Pair, dict[str, Any]]]:
    """Read a results file (partial or finished) back: its header and its records by (sample, metric).

    Lines are split on line feeds only (a U+2028 inside a judge's text is not a line end). A last
    line cut short (the process was killed while writing it) is ignored; every other line must be
    a JSON object. A ``.parquet`` file or a directory of parts (:mod:`ragqa.render.parquet`) is read
    one row group at a time, its header from the file's metadata.

    Raises:
        ConfigError: when the file cannot be read, has no ragqa header, or a line (other than
            the last) is not a result record (key ``--resume``).
        MissingExtraError: for Parquet results without pyarrow.
    """
    if is_parquet_results(path):
        return _read_parquet(path)
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except OSError as exc:
        raise ConfigError(f"--resume: cannot read {path} ({exc.strerror})", key="--resume") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--resume: {path} is not a ragqa results file (not UTF-8)", key="--resume") from None
    parsed: list[dict[str, Any]] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            if number == len(lines):  # cut short by a kill: the record was never complete
                break
            raise ConfigError(
                f"--resume: {path} line {number} is not JSON; the file is damaged, run without --resume",
                key="--resume",
            ) from None
        if not isinstance(obj, dict):
            raise ConfigError(f"--resume: {path} line {number} is not a JSON object", key="--resume")
        parsed.append(obj)
    header = _checked_header(path, parsed[0] if parsed else None)
    try:
        records = {(str(r["sample_id"]), str(r["metric"])): r for r in parsed[1:]}
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"--resume: {path} is damaged ({exc!r}); run without --resume", key="--resume") from None
    return header, records


def _read_parquet(path: Path) -> tuple[ResultsHeader, dict[Pair, dict[str, Any]]]:
    """:func:`read_results` of a ``.parquet`` file or a parts directory."""
    try:
        data, rows = read_parquet_results(path)
        header = _checked_header(path, data)
        records = {(str(r["sample_id"]), str(r["metric"])): r for r in rows}
    except OSError as exc:
        raise ConfigError(f"--resume: cannot read {path} ({os_reason(exc)})", key="--resume") from None
    except (KeyError, TypeError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ConfigError(f"--resume: {path} is damaged ({exc}); run without --resume", key="--resume") from None
    return header, records


def _checked_header(path: Path, data: Mapping[str, Any] | None) -> ResultsHeader:
    """The header of a results file from its JSON object, after checking it is one of this format."""
    if not data or "ragqa_results" not in data:
        raise ConfigError(
            f"--resume: {path} has no ragqa results header (written by an older ragqa or another tool); "
            "run without --resume",
            key="--resume",
        )
    if data["ragqa_results"] != FORMAT_VERSION:
        raise ConfigError(
            f"--resume: {path} has results format {data['ragqa_results']}, this ragqa writes "
            f"{FORMAT_VERSION}; run without --resume",
            key="--resume",
        )
    try:
        return ResultsHeader.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"--resume: {path} is damaged ({exc!r}); run without --resume", key="--resume") from None
