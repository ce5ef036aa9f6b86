"""A run's samples after the checks that need no judge, taken in one pass over the dataset.

:func:`check_samples` goes over the samples once before any judge is built: the loading checks of
a JSON Lines file, the validation of every (sample, metric) pair against the metrics and the size
guards, the sample count and ids, and the sums of the call estimate (:class:`EstimateTally`).
Of a :class:`~ragqa.run.source.JsonlSamples` file it also takes a digest of the bytes (the
provisional dataset fingerprint of the ``.partial`` header, :data:`FILE_DIGEST_PREFIX`): the
samples' own fingerprint (:func:`dataset_fingerprint`, which costs more than reading them) is
taken on the scoring pass (:meth:`Prepared.todo`), so the file is read once before the first
judge call and once while scoring. A list whose run writes no results file (nothing reads the
fingerprint before the run ends) and is not sharded takes it on the scoring pass too, so the
checking pass before the first judge call stays short (with ``--engine ray`` the driver then
hashes while the workers score). A list whose run writes a results file (its ``.partial`` header
holds the fingerprint from the start), or a resumed run (which must compare fingerprints before
scoring), takes the samples' fingerprint in the first pass, as before. Either way the value is the
same: the same bytes are hashed in the same order.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragqa._ids import CompactIds
from ragqa.errors import DatasetError, SampleError
from ragqa.run.estimate import EstimateTally
from ragqa.run.results_file import Pair, ResultsHeader
from ragqa.run.shard import Shard, ShardedSamples
from ragqa.run.source import JsonlSamples
from ragqa.run.validate import Limits, Validation, validate_sample
from ragqa.schema import Sample

if TYPE_CHECKING:
    from ragqa.metrics.base import Metric

__all__ = ["DatasetFingerprint", "Prepared", "check_samples", "dataset_fingerprint"]


def dataset_fingerprint(samples: Iterable[Sample]) -> str:
    """``sha256:<hex>`` of the samples (every field, in order): resume refuses a changed dataset."""
    fingerprint = DatasetFingerprint()
    for sample in samples:
        fingerprint.add(sample)
    return fingerprint.value


class DatasetFingerprint:
    """:func:`dataset_fingerprint` taken one sample at a time (the samples need not be in memory together).

    It hashes exactly the bytes of the JSON list of every sample's ``model_dump(mode="json")``
    (sorted keys), so it equals the fingerprint of the same samples taken as one list.
    """

    def __init__(self) -> None:
        """Start with no sample."""
        self._hash = hashlib.sha256(b"[")
        self._first = True

    def add(self, sample: Sample) -> None:
        """Hash the next sample."""
        text = json.dumps(sample.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, default=str)
        self._hash.update((text if self._first else ", " + text).encode("utf-8"))
        self._first = False

    @property
    def value(self) -> str:
        """``sha256:<hex>`` of the samples added so far."""
        final = self._hash.copy()
        final.update(b"]")
        return "sha256:" + final.hexdigest()


@dataclasses.dataclass
class Prepared:
    """A run after the checks that need no judge (see :meth:`Runner.prepare <ragqa.run.runner.Runner.prepare>`).

    Attributes:
        samples: the samples, with ids, in dataset order: a list, or a source read again on each
            pass (:class:`~ragqa.run.source.JsonlSamples`); iterate it, do not index it.
        validation: every problem found (empty unless ``on_invalid="skip"``).
        kept: records read back for ``resume``, by (sample id, metric key).
        header: the resumed run's header, if any.
        labels: every sample's id, in dataset order (a sample's position is its index here), kept
            compactly (:class:`~ragqa._ids.CompactIds`, a sequence of ``str``).
        fingerprint: :func:`dataset_fingerprint` of the whole dataset (every shard's samples); until
            the scoring pass has read every sample whose fingerprint it takes (:attr:`pending`),
            the file's digest (``file-sha256:<hex>``), or ``""`` for a list.
        dataset_samples: samples in the whole dataset (more than :attr:`n_samples` with ``--shard``).
        retry: with ``retry_failed``, the records read back that hold a judge failure, by (sample
            id, metric key): scored again, asking only the judges that failed.
        tally: the call estimate's sums of every valid pair, taken in the checking pass (``None``
            when the run's panel options were not known then, or a resumed run keeps pairs).
        pending: the whole dataset (a file, or a list of an unsharded run without a results
            file), while :attr:`fingerprint` is provisional: the scoring pass (:meth:`todo`) takes
            the samples' fingerprint and clears it.
        shard: the shard the run scores (``--shard``), else ``None``.
        digest: the file's digest (``file-sha256:<hex>``) of a :class:`~ragqa.run.source.JsonlSamples`,
            else ``None``: what a ``.partial`` header written before the fingerprint was known holds.
    """

    samples: Iterable[Sample]
    validation: Validation
    kept: dict[Pair, dict[str, Any]]
    header: ResultsHeader | None
    labels: Sequence[str]
    fingerprint: str
    dataset_samples: int = 0
    retry: dict[Pair, dict[str, Any]] = dataclasses.field(default_factory=dict)
    tally: EstimateTally | None = None
    pending: JsonlSamples | Sequence[Sample] | None = None
    shard: Shard | None = None
    digest: str | None = None

    def failed_judges(self) -> dict[Pair, list[str]]:
        """The judge ids whose outcome failed, per record of :attr:`retry`."""
        return {
            pair: [str(j["judge_id"]) for j in record.get("judges", []) if j.get("failure") is not None]
            for pair, record in self.retry.items()
        }

    @property
    def n_samples(self) -> int:
        """Samples this run scores: the dataset's, or its shard's with ``--shard``."""
        return len(self.labels)

    def todo(self, metrics: Sequence[Metric]) -> Iterator[tuple[int, Sample, tuple[Metric, ...]]]:
        """``(position, sample, metrics still to score)`` per sample, in dataset order, read lazily.

        Pairs already kept (``resume``) or invalid are left out, and so are samples with nothing left.
        While :attr:`pending`, the samples' fingerprint is taken on the way (every sample of the
        dataset, the other shards' too) and set as :attr:`fingerprint` once the last is read.

        Raises:
            DatasetError: when the file no longer holds the samples the checking pass read.
        """
        pending = self.pending
        if pending is None:
            yield from self._missing(enumerate(self.samples), metrics)
            return
        fingerprint = DatasetFingerprint()
        read = (
            self._fingerprinted(pending, fingerprint)
            if isinstance(pending, JsonlSamples)
            else _hashed(pending, fingerprint)  # a list: the samples themselves, in order
        )
        yield from self._missing(read, metrics)
        self.fingerprint = fingerprint.value
        self.pending = None

    def _fingerprinted(self, source: JsonlSamples, fingerprint: DatasetFingerprint) -> Iterator[tuple[int, Sample]]:
        position = 0
        labels, shard = self.labels, self.shard
        for sample in source.read(unique_ids=False):  # the checking pass found the ids unique
            fingerprint.add(sample)
            if shard is not None and not shard.holds(sample.label):
                continue
            if position >= len(labels) or labels[position] != sample.label:
                raise DatasetError(
                    f"{source.path}: the file changed while the run read it (sample {position + 1} of this run "
                    "is not the one read before scoring); leave the dataset unchanged until the run ends, "
                    "then run again with --resume"
                )
            yield position, sample
            position += 1
        if position != len(labels):
            raise DatasetError(
                f"{source.path}: the file changed while the run read it ({position} samples now, {len(labels)} "
                "before scoring); leave the dataset unchanged until the run ends, then run again with --resume"
            )

    def _missing(
        self, samples: Iterable[tuple[int, Sample]], metrics: Sequence[Metric]
    ) -> Iterator[tuple[int, Sample, tuple[Metric, ...]]]:
        kept, invalid = self.kept, self.validation.invalid
        for position, sample in samples:
            missing = tuple(
                m for m in metrics if (sample.label, m.key) not in kept and (sample.label, m.key) not in invalid
            )
            if missing:
                yield position, sample, missing

    def finish_fingerprint(self) -> str:
        """:attr:`fingerprint`, reading the dataset again first when the scoring pass did not reach its end."""
        if self.pending is not None:
            for _ in self.todo(()):
                pass
        return self.fingerprint


def _hashed(samples: Sequence[Sample], fingerprint: DatasetFingerprint) -> Iterator[tuple[int, Sample]]:
    """``(position, sample)`` of a list, adding each sample to ``fingerprint`` on the way."""
    for position, sample in enumerate(samples):
        fingerprint.add(sample)
        yield position, sample


def check_samples(
    samples: Iterable[Sample],
    metrics: Sequence[Metric],
    *,
    limits: Limits,
    shard: Shard | None = None,
    tally: EstimateTally | None = None,
    defer_fingerprint: bool = True,
    defer_list: bool = False,
    kept: Mapping[Pair, object] | None = None,
) -> Prepared:
    """Go over ``samples`` once: loading checks, validation, ids, count, estimate sums, fingerprint.

    Args:
        samples: a list of samples with ids, or a :class:`~ragqa.run.source.JsonlSamples`.
        metrics: the run's metrics.
        limits: the size guards.
        shard: validate and count only this shard's samples (the fingerprint is of every sample).
        tally: where to add every valid pair of the run (the estimate's sums), when given.
        defer_fingerprint: for a :class:`~ragqa.run.source.JsonlSamples`, leave the samples'
            fingerprint to the scoring pass (see :attr:`Prepared.pending`).
        defer_list: for a sequence of an unsharded run, the same (only when nothing reads the
            fingerprint before the run ends: no results file, no resume).
        kept: pairs a resumed run already has, by (sample id, metric key): left out of ``tally``
            (they are not scored again). The returned :class:`Prepared` has none kept yet.

    Returns:
        The run's samples with their problems; no resume state yet (``kept`` empty).

    Raises:
        DatasetError: from a source that reads a file, for the first bad record.
    """
    deferred = isinstance(samples, JsonlSamples) and defer_fingerprint
    listed = defer_list and shard is None and isinstance(samples, Sequence)  # its fingerprint on the scoring pass
    problems: list[SampleError] = []
    invalid: set[Pair] = set()
    labels = CompactIds(indexed=bool(kept))  # a resumed run finds its kept records' positions
    fingerprint = None if deferred or listed else DatasetFingerprint()
    in_dataset = 0
    passing = samples.read(digest=True) if isinstance(samples, JsonlSamples) else samples
    for sample in passing:
        if fingerprint is not None:
            fingerprint.add(sample)  # of the whole dataset, so the parts of a sharded run can be matched
        in_dataset += 1
        if shard is not None and not shard.holds(sample.label):
            continue
        valid = validate_sample(sample, metrics, limits, problems, invalid)
        labels.append(sample.label)
        if tally is not None:
            tally.add(sample, [m for m in valid if (sample.label, m.key) not in kept] if kept else valid)
    scored: Iterable[Sample] = samples
    if shard is not None:
        scored = (
            [s for s in samples if shard.holds(s.label)]
            if isinstance(samples, Sequence)
            else (ShardedSamples(samples, shard))
        )
    digest = samples.digest if isinstance(samples, JsonlSamples) else None
    pending: JsonlSamples | Sequence[Sample] | None
    if deferred:
        assert isinstance(samples, JsonlSamples) and digest is not None
        value, pending = digest, samples
    elif listed:
        assert isinstance(samples, Sequence)
        value, pending = "", samples
    else:
        assert fingerprint is not None
        value, pending = fingerprint.value, None
    return Prepared(
        scored,
        Validation(tuple(problems), frozenset(invalid)),
        {},
        None,
        labels,
        value,
        in_dataset,
        tally=tally,
        pending=pending,
        shard=shard,
        digest=digest,
    )
