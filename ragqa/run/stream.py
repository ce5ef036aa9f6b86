"""The streaming results file (``--out results.jsonl``): durable while the run goes, resumable after.

Format (UTF-8 JSON Lines, documented in ``docs/cli.md``):

- line 1, the header: ``{"ragqa_results": 1, "run_id", "ragqa_version", "config_fingerprint",
  "dataset", "dataset_fingerprint", "samples", "metrics", "judges", "started_at", "confidence",
  "intervals"}`` (and ``"repeats"`` when a run judges each pair more than once); no setting and no
  secret is in it (the fingerprint is a SHA-256 of the judges' identities and the panel options);
  ``intervals`` is ``null`` until the run finishes, then holds each metric's confidence intervals;
- then one :func:`ragqa.render.records.result_record` per finished (sample, metric), appended
  and flushed the moment it exists, to ``<name>.partial`` beside the target;
- at the end, the header (with the intervals of the run's summaries) and every record in dataset
  order (sample order, then metric order) are written to a temporary file that is renamed over the
  target, and the partial file is removed.

Lines end with a line feed only; the line and paragraph separators U+2028, U+2029 and U+0085,
legal inside a JSON string, are written as JSON escapes, and :func:`read_results` splits on line
feeds only, so any text a judge returns reads back as it was written.

A ``.parquet`` target, or a directory of parts (``--out results/``), streams to the same JSON
Lines ``.partial`` file (a Parquet file is unreadable until its footer is written, so the partial
file is what survives a kill and what ``--resume`` reads); at the end the records are written in
the same order, a row group at a time, as :mod:`ragqa.render.parquet` lays them out, the header
in the file's metadata.

A run whose outputs are not results files (``--out report.html``) streams the same records to
``<output>.partial`` all the same (``final=False``): the file keeps what was paid for until the
outputs are written, and ``--resume`` continues from it.

A run killed at any moment leaves a ``.partial`` file whose complete lines are valid JSON; a
truncated last line is ignored when it is read back. ``--resume`` reads the partial (or the
finished) file with :func:`read_results`; a partial without one complete line holds nothing yet
(:func:`complete_lines`). A write that fails (a full disk) raises
:class:`~ragqa.errors.OutputError` naming the partial file and what it keeps.
"""

from __future__ import annotations

import contextlib
import json
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from ragqa.errors import ConfigError, OutputError
from ragqa.render.atomic import os_reason, replace_file, temporary_path
from ragqa.render.parquet import (
    is_parquet_results,
    read_parquet_results,
    remove_parts,
    write_parquet_parts,
    write_parquet_results,
)
from ragqa.render.records import result_record
from ragqa.report import MetricSummary, finite_json
from ragqa.schema import PanelResult

__all__ = [
    "FORMAT_VERSION",
    "ResultStream",
    "ResultsHeader",
    "complete_lines",
    "header_intervals",
    "partial_path",
    "read_results",
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


class _Offsets:
    """Byte offsets by slot, -1 where none: 4 bytes a slot while every offset fits 32 bits, then 8.

    The array holds ``offset + 1`` (0: no record); the first offset past 4 GiB widens it once.
    """

    __slots__ = ("_array",)

    def __init__(self, n: int) -> None:
        """``n`` slots, none holding an offset."""
        self._array: array[int] = array("I", bytes(array("I").itemsize * n))

    def __getitem__(self, slot: int) -> int:
        return self._array[slot] - 1

    def __setitem__(self, slot: int, offset: int) -> None:
        if offset + 1 >= 1 << (8 * self._array.itemsize):
            self._array = array("Q", self._array)
        self._array[slot] = offset + 1


class ResultStream:
    """Writes one run's results to ``<path>.partial`` as they are made (see the module docstring).

    Only the byte offset of each record in the partial file is kept in memory (not the record),
    so a run's memory does not grow with its results; :meth:`finish` copies the lines from the
    partial file in dataset order. With a ``layout`` the offsets of the records written with a
    ``position`` are kept in one typed array (4 bytes per (sample, metric) while the partial file is
    under 4 GiB, then 8: :class:`_Offsets`), not a dictionary.

    Args:
        path: the target file (already checked with :func:`ragqa.run.outputs.check_output_path`);
            the results stream to ``<path>.partial`` beside it.
        header: the run's header.
        kept: records of a resumed run, by (sample id, metric key); written first.
        final: True (a ``.jsonl`` output) to write the final JSON Lines file at ``path`` in
            :meth:`finish`; False when ``path`` is another format's output (``report.html``): the
            partial file then only keeps the results until the outputs are written, and
            :meth:`finish` removes it.
        layout: ``(sample ids by position, metric keys)`` of the run: :meth:`write` with a
            ``position`` keeps the offset in an array, and :meth:`finish` without an order writes
            the records in this order (sample, then metric).
    """

    def __init__(
        self,
        path: Path,
        header: ResultsHeader,
        kept: Mapping[Pair, Mapping[str, Any]] | None = None,
        *,
        final: bool = True,
        layout: tuple[Sequence[str], Sequence[str]] | None = None,
    ) -> None:
        """Remember the target; nothing is written before :meth:`open`."""
        self.path = path
        self.partial = partial_path(path)
        self.header = header
        self.final = final
        self._kept: Mapping[Pair, Mapping[str, Any]] = kept or {}
        self._offsets: dict[Pair, int] = {}
        self._end = 0
        self._file: IO[bytes] | None = None
        self._layout = layout
        self._metric_index = {key: i for i, key in enumerate(layout[1])} if layout is not None else {}
        self._slots = _Offsets(len(layout[0]) * len(layout[1]) if layout is not None else 0)
        self._in_slots = 0  # records whose offset is in a slot and whose pair has none in _offsets

    @property
    def count(self) -> int:
        """Records in the partial file so far (kept and new)."""
        return len(self._offsets) + self._in_slots

    def _append(self, file: IO[bytes], pair: Pair, record: Mapping[str, Any], slot: int | None = None) -> None:
        data = result_line(record).encode("utf-8")
        file.write(data)
        if slot is None:
            self._offsets[pair] = self._end
        else:
            if self._slots[slot] < 0 and pair not in self._offsets:
                self._in_slots += 1
            self._slots[slot] = self._end
        self._end += len(data)

    def kept_error(self, exc: OSError, path: Path, *, what: str) -> OutputError:
        """The :class:`~ragqa.errors.OutputError` of a failed write: where the results are, and how to go on.

        Args:
            exc: the operating system's error.
            path: the file that could not be written (the partial file, or an output).
            what: how far the run got, for the message (``the run stopped``).
        """
        return OutputError(
            f"cannot write {path} ({os_reason(exc)}); {what}: {self.count} result(s) are kept in {self.partial}. "
            "Free space (or fix the folder), then run the same command with --resume: the judges are "
            "asked only for the pairs it lacks",
            path=path,
            partial=self.partial,
            kept=self.count,
            errno=exc.errno,
        )

    def open(self) -> None:
        """Start the partial file (header, then the kept records) and remove an old file at the target.

        The new partial file is written beside the old one and renamed over it, so a resumed
        run's partial file is never truncated before its records are safe in the new one. From
        here on the target never shows an older run's results as if they were this run's.

        Raises:
            OutputError: when the partial file cannot be written (no judge was called, and no
                earlier file was changed).
        """
        temporary = temporary_path(self.partial)
        try:
            with temporary.open("wb") as file:
                header = result_line(self.header.to_json()).encode("utf-8")
                file.write(header)
                self._end = len(header)
                for pair, record in self._kept.items():
                    self._append(file, pair, record)
            temporary.replace(self.partial)
            self._file = self.partial.open("ab")
            if self.path.is_dir():  # a parts directory: only its parts go
                remove_parts(self.path)
            else:
                self.path.unlink(missing_ok=True)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            self._offsets.clear()
            raise OutputError(
                f"cannot write {self.partial} ({os_reason(exc)}); no judge was called and no earlier file was "
                "changed. Free space (or fix the folder) and run again",
                path=self.partial,
                errno=exc.errno,
            ) from exc
        self._kept = {}

    def write(self, result: PanelResult, *, position: int | None = None) -> None:
        """Append ``result``'s record and flush it to the operating system at once.

        After a failed write the stream is closed and later writes do nothing (the run stops).

        Args:
            result: the result.
            position: its sample's position in the ``layout`` (0-based), to keep its offset in
                the array; ``None`` keeps it by (sample id, metric key).

        Raises:
            OutputError: when the record cannot be written (a full disk); the message names the
                partial file and how many results it keeps.
        """
        if self._file is None:
            return
        pair = (result.sample_id, result.metric)
        slot = None
        if position is not None and self._layout is not None:
            slot = position * len(self._layout[1]) + self._metric_index[result.metric]
        before = self._slots[slot] if slot is not None else -1
        try:
            self._append(self._file, pair, result_record(result), slot)
            self._file.flush()
        except OSError as exc:
            if slot is None:
                self._offsets.pop(pair, None)
            elif self._slots[slot] != before:
                if before < 0 and pair not in self._offsets:
                    self._in_slots -= 1
                self._slots[slot] = before
            self.close()
            raise self.kept_error(exc, self.partial, what="the run stopped") from exc

    def close(self) -> None:
        """Close the partial file (it stays, for ``--resume``); idempotent, never raises.

        Every record was flushed when it was written, so a close that fails (after a failed
        write) loses nothing that was counted.
        """
        if self._file is not None:
            file, self._file = self._file, None
            with contextlib.suppress(OSError):
                file.close()

    def _order(self, order: Iterable[Pair] | None, *, pairs: bool) -> Iterator[tuple[Pair | None, int]]:
        """``(pair, offset)`` of the records to copy, in ``order`` (or the layout's), the last record of a pair.

        In the layout's order the pair is ``None`` unless ``pairs`` is asked for.
        """
        if order is not None:
            for pair in order:
                offset = self._offsets.get(pair)
                if offset is not None:
                    yield pair, offset
            return
        if self._layout is None:
            raise ValueError("finish() needs an order when the stream has no layout")
        labels, keys = self._layout
        slots, offsets, m = self._slots, self._offsets, len(keys)
        named = pairs or bool(offsets)
        for position in range(len(labels)):
            label = labels[position] if named else ""
            for k in range(m):
                offset = slots[position * m + k]
                if offset < 0 and offsets:
                    offset = offsets.get((label, keys[k]), -1)
                if offset >= 0:
                    yield ((label, keys[k]) if named else None), offset

    def finish(
        self,
        order: Iterable[Pair] | None = None,
        *,
        header: ResultsHeader | None = None,
        amend: Mapping[Pair, Mapping[str, Any]] | None = None,
    ) -> int:
        """Write the final file in ``order`` (dataset order) atomically and remove the partial file.

        A ``.parquet`` target or a parts directory gets the same records and header in Parquet
        (:func:`ragqa.render.parquet.write_parquet_results`, :func:`~ragqa.render.parquet.write_parquet_parts`).

        With ``final=False`` nothing is written: the partial file is removed (call this after the
        run's other outputs are written).

        Args:
            order: every (sample id, metric key) of the run in dataset order; pairs without a
                record (skipped as invalid) are left out. A pair written twice keeps its last record.
                ``None``: the order of the ``layout``.
            header: the final header (the run's with its intervals); default: the partial file's.
            amend: fields added to a pair's record in the final file (a ``dawid-skene`` run's
                per-sample ``dawid_skene`` value, known only once the run's fit exists); every
                other record is copied byte for byte.

        Returns:
            The number of records written (with ``final=False``, the records the partial held).

        Raises:
            OutputError: when the final file cannot be written; its temporary file is removed and
                the partial file is kept, and the message says how to write it with ``--resume``.
        """
        self.close()
        if not self.final:
            self.partial.unlink(missing_ok=True)
            return self.count
        written = 0

        def copy(temporary: Path) -> None:
            nonlocal written
            with self.partial.open("rb") as source, temporary.open("wb") as target:
                first = source.readline()  # the header
                target.write(result_line(header.to_json()).encode("utf-8") if header is not None else first)
                for pair, offset in self._order(order, pairs=bool(amend)):
                    source.seek(offset)
                    line, extra = source.readline(), (amend or {}).get(pair) if pair is not None else None
                    if extra:
                        line = result_line({**json.loads(line), **extra}).encode("utf-8")
                    target.write(line)
                    written += 1

        def records() -> Iterator[dict[str, Any]]:  # the same records, for a Parquet target
            nonlocal written
            with self.partial.open("rb") as source:
                for pair, offset in self._order(order, pairs=bool(amend)):
                    source.seek(offset)
                    record = json.loads(source.readline())
                    extra = (amend or {}).get(pair) if pair is not None else None
                    written += 1
                    yield {**record, **extra} if extra else record

        final = (header or self.header).to_json()  # a Parquet file's header is its metadata
        try:
            if self.path.is_dir():
                write_parquet_parts(self.path, final, records())
            elif is_parquet_results(self.path):
                write_parquet_results(self.path, final, records())
            else:
                replace_file(self.path, copy)
        except OSError as exc:
            raise self.kept_error(exc, self.path, what="every result was made") from exc
        self.partial.unlink(missing_ok=True)
        return written
