"""The streaming results file (``--out results.jsonl``): durable while the run goes, resumable after.

The file's layout, its header and its reading back are in :mod:`ragqa.run.results_file`
(re-exported here). :class:`ResultStream` writes it:

- the header, then one :func:`ragqa.render.records.result_record` per finished (sample, metric),
  appended and flushed the moment it exists, to ``<name>.partial`` beside the target;
- at the end, the header (with the intervals of the run's summaries) and every record in dataset
  order (sample order, then metric order) are written to a temporary file that is renamed over the
  target, and the partial file is removed.

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
from pathlib import Path
from typing import IO, Any

from ragqa.errors import OutputError
from ragqa.render.atomic import os_reason, replace_file, temporary_path
from ragqa.render.parquet import (
    is_parquet_results,
    remove_parts,
    write_parquet_parts,
    write_parquet_results,
)
from ragqa.run import results_file
from ragqa.run.results_file import FORMAT_VERSION as FORMAT_VERSION  # re-exported: the former import paths
from ragqa.run.results_file import Pair as Pair
from ragqa.run.results_file import ResultsHeader as ResultsHeader
from ragqa.run.results_file import complete_lines as complete_lines
from ragqa.run.results_file import header_intervals as header_intervals
from ragqa.run.results_file import partial_path as partial_path
from ragqa.run.results_file import read_results as read_results
from ragqa.run.results_file import result_bytes as result_bytes
from ragqa.run.results_file import result_line as result_line
from ragqa.schema import PanelResult

__all__ = ["ResultStream", *results_file.__all__]


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

    def _append(self, file: IO[bytes], pair: Pair, data: bytes, slot: int | None = None) -> None:
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
                    self._append(file, pair, result_line(record).encode("utf-8"))
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
        if self._file is not None:
            self.write_line(result_bytes(result), (result.sample_id, result.metric), position=position)

    def write_line(self, line: bytes, pair: Pair, *, position: int | None = None) -> None:
        """Append one result's line, already encoded (:func:`~ragqa.run.results_file.result_bytes`), and flush it.

        What :meth:`write` does once it has the line: a Ray worker makes the line
        (:mod:`ragqa.run.rows`), so the driver only appends it.

        Args:
            line: the result's line of the results file, ending in a line feed.
            pair: its ``(sample id, metric key)``.
            position: as for :meth:`write`.

        Raises:
            OutputError: as :meth:`write`.
        """
        if self._file is None:
            return
        slot = None
        if position is not None and self._layout is not None:
            slot = position * len(self._layout[1]) + self._metric_index[pair[1]]
        before = self._slots[slot] if slot is not None else -1
        try:
            self._append(self._file, pair, line, slot)
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
