"""``ragqa merge``: join the results files of a sharded run (``--shard K/N``) into one run's file.

The parts must be finished results files (``.jsonl``, ``.parquet`` or directories of Parquet parts)
of one run split N ways: the same configuration (judges and panel options), the same dataset, the
same metrics and judges, and shards ``1..N`` each exactly once. Anything else is refused before a
byte is written, with what differs and the fix: a missing shard is a gap, a shard or a (sample,
metric) pair given twice is an overlap, a ``.partial`` file is an unfinished part. The merged file
is what one unsharded run writes (its header has the whole dataset's sample count, no ``shard``, and
the whole run's confidence intervals), so ``ragqa report``, ``ragqa compare`` and
``ragqa evaluate ... --resume`` read it as such. Its records are in dataset order when the dataset
is given (checked against the parts' dataset fingerprint), else part by part.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragqa.errors import ConfigError
from ragqa.jury.probe import merge_probe_results
from ragqa.metrics import value_ranges
from ragqa.render.atomic import replace_text
from ragqa.render.parquet import write_parquet_results
from ragqa.render.records import read_result_record
from ragqa.report import summarize
from ragqa.run.api import samples_from_data
from ragqa.run.results_file import ResultsHeader, header_intervals, read_results, result_line
from ragqa.run.runner import dataset_fingerprint
from ragqa.run.shard import parse_shard
from ragqa.schema import OrderProbeResult

__all__ = ["MergeResult", "dataset_ids", "merge_results"]

_KEY = "merge"


@dataclass(frozen=True)
class MergeResult:
    """What :func:`merge_results` wrote.

    Attributes:
        path: the merged results file.
        parts: the number of parts joined (the N of ``K/N``).
        samples: samples in the whole dataset.
        records: result records written (one per scored (sample, metric)).
        dataset_order: whether the records are in dataset order (else part by part).
    """

    path: Path
    parts: int
    samples: int
    records: int
    dataset_order: bool


def _read_part(path: Path) -> tuple[ResultsHeader, dict[tuple[str, str], dict[str, Any]]]:
    if path.name.endswith(".partial"):
        raise ConfigError(
            f"merge: {path} is an unfinished part (a .partial file); finish it with the same command and "
            "--resume, then merge the finished file",
            key=_KEY,
        )
    if not path.exists():  # a results file, or a directory of Parquet parts
        raise ConfigError(f"merge: {path} does not exist", key=_KEY)
    try:
        header, records = read_results(path)
    except ConfigError as exc:
        raise ConfigError(f"merge: {path} is not a readable ragqa results file: {exc}", key=_KEY) from None
    if header.shard is None:
        raise ConfigError(
            f"merge: {path} is not part of a sharded run (its header has no shard); merge the files written by "
            "ragqa evaluate --shard K/N",
            key=_KEY,
        )
    return header, records


def _check_same(first: tuple[Path, ResultsHeader], other: tuple[Path, ResultsHeader]) -> None:
    (path_a, a), (path_b, b) = first, other
    checks = (
        ("configuration (judges and panel options)", a.config_fingerprint, b.config_fingerprint),
        ("dataset", a.dataset_fingerprint, b.dataset_fingerprint),
        ("metrics", a.metrics, b.metrics),
        ("judges", a.judges, b.judges),
    )
    for what, x, y in checks:
        if x != y:
            raise ConfigError(
                f"merge: {path_b} was made with another {what} than {path_a} ({y} vs {x}); merge only the parts of "
                "one run: the same dataset, settings, profile and options, each with its own --shard K/N",
                key=_KEY,
            )
    count_a, count_b = parse_shard(a.shard), parse_shard(b.shard)
    assert count_a is not None and count_b is not None
    if count_a.count != count_b.count:
        raise ConfigError(
            f"merge: {path_a} is shard {a.shard} but {path_b} is shard {b.shard}; all parts must split the "
            "dataset the same number of ways",
            key=_KEY,
        )


def merge_results(
    parts: Sequence[str | Path], out: str | Path, *, dataset_ids: Iterable[str] | None = None
) -> MergeResult:
    """Join the finished parts of one sharded run into ``out`` (rules in the module docstring).

    Args:
        parts: the parts' results files (``.jsonl``, ``.parquet``, parts directories), in any order.
        out: the merged file to write (replaced atomically; never one of ``parts``): ``.parquet``
            writes Parquet (:mod:`ragqa.render.parquet`), any other name JSON Lines.
        dataset_ids: every sample id of the dataset in dataset order, to write the records in that
            order; ``None`` writes them part by part (shard 1 first), each part in its own order.

    Returns:
        A :class:`MergeResult`.

    Raises:
        ConfigError: (key ``merge``) no part; a missing, unreadable, unfinished or unsharded part;
            parts of different runs; a gap or an overlap; ``out`` among the parts; ``dataset_ids``
            that do not cover a part's samples. Nothing is written then.
        OSError: when ``out`` cannot be written.
    """
    if not parts:
        raise ConfigError("merge: give the parts to join, e.g. ragqa merge part-*.jsonl --out all.jsonl", key=_KEY)
    target = Path(out)
    paths = [Path(p) for p in parts]
    if any(p.resolve() == target.resolve() for p in paths):
        raise ConfigError(f"merge: --out {target} is one of the parts; write the merged file elsewhere", key=_KEY)
    read = [(path, *_read_part(path)) for path in paths]
    for path, header, _ in read[1:]:
        _check_same((read[0][0], read[0][1]), (path, header))
    by_index: dict[int, tuple[Path, ResultsHeader, dict[tuple[str, str], dict[str, Any]]]] = {}
    count = 0
    for path, header, records in read:
        shard = parse_shard(header.shard)
        assert shard is not None
        count = shard.count
        if shard.index in by_index:
            raise ConfigError(
                f"merge: shard {shard} is given twice ({by_index[shard.index][0]} and {path}): an overlap; "
                "give each part once",
                key=_KEY,
            )
        by_index[shard.index] = (path, header, records)
    missing = [k for k in range(1, count + 1) if k not in by_index]
    if missing:
        raise ConfigError(
            f"merge: a gap: shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing; run "
            f"ragqa evaluate ... --shard K/{count} for each and merge all {count} parts",
            key=_KEY,
        )
    owner: dict[tuple[str, str], Path] = {}
    for index in sorted(by_index):
        path, _, records = by_index[index]
        for pair in records:
            if pair in owner:
                raise ConfigError(
                    f"merge: sample {pair[0]!r} metric {pair[1]} is in both {owner[pair]} and {path}: an overlap "
                    "(were the parts made with different sample ids?)",
                    key=_KEY,
                )
            owner[pair] = path
    headers = [by_index[k][1] for k in sorted(by_index)]
    first = headers[0]
    total = first.dataset_samples if first.dataset_samples is not None else sum(h.samples for h in headers)
    if sum(h.samples for h in headers) != total:
        raise ConfigError(
            f"merge: the parts hold {sum(h.samples for h in headers)} sample(s) but the dataset has {total}: "
            "were they made from different versions of the dataset?",
            key=_KEY,
        )
    ordered = _ordered(by_index, list(dataset_ids) if dataset_ids is not None else None, first.metrics)
    merged = ResultsHeader(
        run_id=hashlib.sha256(" ".join(h.run_id for h in headers).encode()).hexdigest()[:32],
        ragqa_version=first.ragqa_version,
        config_fingerprint=first.config_fingerprint,
        dataset=first.dataset,
        dataset_fingerprint=first.dataset_fingerprint,
        samples=total,
        metrics=first.metrics,
        judges=first.judges,
        started_at=min(h.started_at for h in headers),
        repeats=first.repeats,  # equal in every part: the configuration fingerprint covers repeats
        confidence=first.confidence,
        cascade=first.cascade,  # equal in every part: the configuration fingerprint covers the cascade
        extractor=first.extractor,  # and the voting run's extractor
        # thresholds are not in the fingerprint: kept when every part had the same ones
        thresholds=first.thresholds if all(h.thresholds == first.thresholds for h in headers) else None,
    )
    if first.confidence is not None:  # the whole run's intervals, as one unsharded run's header has them
        results = [read_result_record(record) for record in ordered]
        summaries = summarize(results, first.judges, confidence=first.confidence, ranges=value_ranges(first.metrics))
        merged = dataclasses.replace(merged, intervals=header_intervals(summaries))
    probes = [OrderProbeResult.model_validate(h.probe) for h in headers if h.probe is not None]
    if probes:  # the order probe's counts of every part, added up (--probe order)
        joined = merge_probe_results(probes)
        merged = dataclasses.replace(merged, probe=joined.model_dump(mode="json") if joined is not None else None)
    if target.suffix.lower() == ".parquet":  # the same records and header, in Parquet (ragqa.render.parquet)
        write_parquet_results(target, merged.to_json(), ordered)
    else:
        replace_text(target, result_line(merged.to_json()) + "".join(result_line(record) for record in ordered))
    return MergeResult(target, count, total, len(ordered), dataset_ids is not None)


def dataset_ids(data: str | Path, parts: Sequence[str | Path]) -> list[str]:
    """The sample ids of the dataset file ``data``, in order, after checking it is the parts' dataset.

    Samples without an id get their 1-based position, as in a run.

    Raises:
        ConfigError: (key ``merge``) when the file's samples are not those the parts were made from
            (another dataset fingerprint), or a part cannot be read.
        DatasetError: for a bad dataset file.
    """
    samples, _ = samples_from_data(str(data))
    samples = [s if s.id is not None else s.model_copy(update={"id": str(i)}) for i, s in enumerate(samples, 1)]
    expected = _read_part(Path(parts[0]))[0].dataset_fingerprint if parts else None
    if expected is not None and dataset_fingerprint(samples) != expected:
        raise ConfigError(
            f"merge: --dataset {data} is not the dataset the parts were made from (another fingerprint); give that "
            "dataset, or merge without --dataset (records then go part by part)",
            key=_KEY,
        )
    return [s.label for s in samples]


def _ordered(
    by_index: dict[int, tuple[Path, ResultsHeader, dict[tuple[str, str], dict[str, Any]]]],
    dataset_ids: list[str] | None,
    metrics: Sequence[str],
) -> list[dict[str, Any]]:
    if dataset_ids is None:
        return [record for k in sorted(by_index) for record in by_index[k][2].values()]
    records = {pair: record for k in sorted(by_index) for pair, record in by_index[k][2].items()}
    known = set(dataset_ids)
    stray = next((pair[0] for pair in records if pair[0] not in known), None)
    if stray is not None:
        raise ConfigError(
            f"merge: sample {stray!r} of the parts is not in the dataset given; give the dataset the parts were "
            "made from, or merge without it",
            key=_KEY,
        )
    return [records[(sid, m)] for sid in dataset_ids for m in metrics if (sid, m) in records]
