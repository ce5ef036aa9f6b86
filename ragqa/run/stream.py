"""The streaming results file (``--out results.jsonl``): durable while the run goes, resumable after.

Format (UTF-8 JSON Lines, documented in ``docs/cli.md``):

- line 1, the header: ``{"ragqa_results": 1, "run_id", "ragqa_version", "config_fingerprint",
  "dataset", "dataset_fingerprint", "samples", "metrics", "judges", "started_at"}`` (and
  ``"repeats"`` when a run judges each pair more than once); no setting
  and no secret is in it (the fingerprint is a SHA-256 of the judges' identities and the panel
  options);
- then one :func:`ragqa.render.records.result_record` per finished (sample, metric), appended
  and flushed the moment it exists, to ``<name>.partial`` beside the target;
- at the end, the header and every record in dataset order (sample order, then metric order) are
  written to a temporary file that is renamed over the target, and the partial file is removed.

A run killed at any moment leaves a ``.partial`` file whose complete lines are valid JSON; a
truncated last line is ignored when it is read back. ``--resume`` reads the partial (or the
finished) file with :func:`read_results`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from ragqa.errors import ConfigError
from ragqa.render.records import result_record
from ragqa.schema import PanelResult

__all__ = ["FORMAT_VERSION", "ResultStream", "ResultsHeader", "partial_path", "read_results"]

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

    def to_json(self) -> dict[str, Any]:
        """The header line's object (``ragqa_results`` first; shard fields only when sharded, ``repeats`` when > 1)."""
        data = asdict(self)
        data["metrics"], data["judges"] = list(self.metrics), list(self.judges)
        for key in ("shard", "dataset_samples"):
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
        )


def partial_path(path: Path) -> Path:
    """Where results stream while the run goes: ``<path>.partial``."""
    return path.with_name(path.name + ".partial")


def _line(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n"


def read_results(path: Path) -> tuple[ResultsHeader, dict[Pair, dict[str, Any]]]:
    """Read a results file (partial or finished) back: its header and its records by (sample, metric).

    A last line cut short (the process was killed while writing it) is ignored; every other line
    must be a JSON object.

    Raises:
        ConfigError: when the file cannot be read, has no ragqa header, or a line (other than
            the last) is not a result record (key ``--resume``).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
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
    if not parsed or "ragqa_results" not in parsed[0]:
        raise ConfigError(
            f"--resume: {path} has no ragqa results header (written by an older ragqa or another tool); "
            "run without --resume",
            key="--resume",
        )
    if parsed[0]["ragqa_results"] != FORMAT_VERSION:
        raise ConfigError(
            f"--resume: {path} has results format {parsed[0]['ragqa_results']}, this ragqa writes "
            f"{FORMAT_VERSION}; run without --resume",
            key="--resume",
        )
    try:
        header = ResultsHeader.from_json(parsed[0])
        records = {(str(r["sample_id"]), str(r["metric"])): r for r in parsed[1:]}
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"--resume: {path} is damaged ({exc!r}); run without --resume", key="--resume") from None
    return header, records


class ResultStream:
    """Writes one run's results to ``path`` as they are made (see the module docstring).

    Only the byte offset of each record in the partial file is kept in memory (not the record),
    so a run's memory does not grow with its results; :meth:`finish` copies the lines from the
    partial file in dataset order.

    Args:
        path: the target file (already checked with :func:`ragqa.run.outputs.check_output_path`).
        header: the run's header.
        kept: records of a resumed run, by (sample id, metric key); written first.
    """

    def __init__(self, path: Path, header: ResultsHeader, kept: Mapping[Pair, Mapping[str, Any]] | None = None) -> None:
        """Remember the target; nothing is written before :meth:`open`."""
        self.path = path
        self.partial = partial_path(path)
        self.header = header
        self._kept: Mapping[Pair, Mapping[str, Any]] = kept or {}
        self._offsets: dict[Pair, int] = {}
        self._end = 0
        self._file: IO[bytes] | None = None

    @property
    def count(self) -> int:
        """Records in the file so far (kept and new)."""
        return len(self._offsets)

    def _append(self, pair: Pair, record: Mapping[str, Any]) -> None:
        assert self._file is not None
        data = _line(record).encode("utf-8")
        self._file.write(data)
        self._offsets[pair] = self._end
        self._end += len(data)

    def open(self) -> None:
        """Start the partial file (header, then the kept records) and remove an old file at the target.

        From here on the target never shows an older run's results as if they were this run's.
        """
        self._file = self.partial.open("wb")
        header = _line(self.header.to_json()).encode("utf-8")
        self._file.write(header)
        self._end = len(header)
        for pair, record in self._kept.items():
            self._append(pair, record)
        self._kept = {}
        self._file.flush()
        self.path.unlink(missing_ok=True)

    def write(self, result: PanelResult) -> None:
        """Append ``result``'s record and flush it to the operating system at once."""
        if self._file is not None:
            self._append((result.sample_id, result.metric), result_record(result))
            self._file.flush()

    def close(self) -> None:
        """Close the partial file (it stays, for ``--resume``); idempotent."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def finish(self, order: Iterable[Pair]) -> int:
        """Write the final file in ``order`` (dataset order) atomically and remove the partial file.

        Args:
            order: every (sample id, metric key) of the run in dataset order; pairs without a
                record (skipped as invalid) are left out. A pair written twice keeps its last record.

        Returns:
            The number of records written.
        """
        self.close()
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        written = 0
        with self.partial.open("rb") as source, temporary.open("wb") as target:
            target.write(source.readline())  # the header
            for pair in order:
                offset = self._offsets.get(pair)
                if offset is not None:
                    source.seek(offset)
                    target.write(source.readline())
                    written += 1
        temporary.replace(self.path)
        self.partial.unlink(missing_ok=True)
        return written
