"""Samples a run reads more than once without holding them: a JSON Lines file read line by line per pass.

The runner reads a :class:`JsonlSamples` file twice: once to check it (loading checks, validation,
the estimate, the file's digest), then once while scoring (the dataset fingerprint is taken on
that pass). A list is gone over from memory; a :class:`JsonlSamples` reads its file again each
time, so a run over 100,000 samples holds only the samples in flight (see
:meth:`ragqa.evaluation.PanelEvaluator.score_stream`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from ragqa.datasets import iter_jsonl
from ragqa.schema import Sample

__all__ = ["FILE_DIGEST_PREFIX", "JsonlSamples"]

FILE_DIGEST_PREFIX = "file-sha256:"
"""Prefix of :attr:`JsonlSamples.digest`: a fingerprint of the file's bytes, not of its samples."""


class JsonlSamples:
    """A JSON Lines dataset, read again line by line each time it is iterated.

    Args:
        path: the ``.jsonl`` file (it must not change during the run: the dataset fingerprint
            taken on the first pass is what a resumed run checks).
        column_map: ``{dataset_column: sample_field}`` renames.

    Iterating raises :class:`~ragqa.errors.DatasetError` as :func:`ragqa.datasets.iter_jsonl`.
    """

    def __init__(self, path: str | Path, *, column_map: Mapping[str, str] | None = None) -> None:
        """Remember the file; nothing is read yet."""
        self.path = Path(path)
        self.column_map = dict(column_map or {})

        self.digest: str | None = None
        """``file-sha256:<hex>`` of the column map and every byte of the file, set by the last
        complete :meth:`read` with ``digest=True`` (the file's identity, cheaper than the samples')."""

    def __iter__(self) -> Iterator[Sample]:
        """The samples in file order, each with an ``id``, read from the file now (every loading check)."""
        return self.read()

    def read(self, *, unique_ids: bool = True, digest: bool = False) -> Iterator[Sample]:
        """The samples in file order, read from the file now.

        Args:
            unique_ids: check that ids are unique (a file already checked may skip it: see
                :func:`ragqa.datasets.iter_jsonl`).
            digest: set :attr:`digest` when the file has been read to its end.

        Raises:
            DatasetError: as :func:`ragqa.datasets.iter_jsonl`.
        """
        if not digest:
            yield from iter_jsonl(self.path, column_map=self.column_map, unique_ids=unique_ids)
            return
        hashed = hashlib.sha256(json.dumps(sorted(self.column_map.items())).encode("utf-8") + b"\n")
        yield from iter_jsonl(self.path, column_map=self.column_map, unique_ids=unique_ids, digest=hashed)
        self.digest = FILE_DIGEST_PREFIX + hashed.hexdigest()

    def __repr__(self) -> str:
        """``JsonlSamples('<path>')``: the file only (its samples are read per pass)."""
        return f"JsonlSamples({str(self.path)!r})"
