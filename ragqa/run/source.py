"""Samples a run reads more than once without holding them: a JSON Lines file read line by line per pass.

The runner goes over the samples several times (validation and fingerprint, the estimate, the
scoring), each time one sample after another. A list does that from memory; a
:class:`JsonlSamples` reads its file again each time, so a run over 100,000 samples holds only the
samples in flight (see :meth:`ragqa.evaluation.PanelEvaluator.score_stream`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from ragqa.datasets import iter_jsonl
from ragqa.schema import Sample

__all__ = ["JsonlSamples"]


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

    def __iter__(self) -> Iterator[Sample]:
        """The samples in file order, each with an ``id``, read from the file now."""
        return iter_jsonl(self.path, column_map=self.column_map)

    def __repr__(self) -> str:
        return f"JsonlSamples({str(self.path)!r})"
