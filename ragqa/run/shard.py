"""``--shard K/N``: a deterministic split of a dataset's samples by id, for any batch scheduler.

A sample belongs to shard ``1 + (first 8 bytes of SHA-256(id as UTF-8), big-endian) mod N``. The
hash is of the id's bytes only, so the split is the same on every machine, operating system and
Python version (Python's own ``hash()`` is salted per process and is not used), and it does not
depend on the order or number of the other samples: a CI matrix, a Kubernetes Job array or a Slurm
array of ``N`` jobs, job ``K`` running ``ragqa evaluate DATA --shard K/N --out part-K.jsonl``,
scores every sample exactly once, and ``ragqa merge`` joins the parts (:mod:`ragqa.run.merge`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ragqa.errors import ConfigError
from ragqa.schema import Sample

__all__ = ["Shard", "ShardedSamples", "parse_shard", "shard_of"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (1-based: ``1 <= index <= count``)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, sample_id: str) -> bool:
        """Whether the sample with this id belongs to this shard (see :func:`shard_of`)."""
        return shard_of(sample_id, self.count) == self.index


def shard_of(sample_id: str, count: int) -> int:
    """The 1-based shard of a sample id among ``count`` shards (the rule is in the module docstring).

    Raises:
        ValueError: when ``count < 1``.
    """
    if count < 1:
        raise ValueError(f"the number of shards must be >= 1, got {count}")
    digest = hashlib.sha256(sample_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str | Shard | None) -> Shard | None:
    """Read ``"K/N"`` (e.g. ``"2/8"``); ``None`` passes through.

    Raises:
        ConfigError: (key ``--shard``) for text that is not ``K/N`` with ``1 <= K <= N``.
    """
    if text is None or isinstance(text, Shard):
        return text
    match = _SHARD.match(text)
    if match is None:
        raise ConfigError(f"--shard {text!r}: write K/N, e.g. --shard 1/4 for the first of four parts", key="--shard")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ConfigError(f"--shard {text}: K must be between 1 and N (1/{count} ... {count}/{count})", key="--shard")
    return Shard(index, count)


class ShardedSamples:
    """The samples of one shard, in dataset order, read again from ``samples`` on each iteration.

    Args:
        samples: every sample of the dataset, each with an id (a list, or a source read again on
            each pass such as :class:`~ragqa.run.source.JsonlSamples`).
        shard: the shard to keep.
    """

    def __init__(self, samples: Iterable[Sample], shard: Shard) -> None:
        """Remember the dataset and the shard; nothing is read yet."""
        self.samples = samples
        self.shard = shard

    def __iter__(self) -> Iterator[Sample]:
        """The shard's samples, in dataset order."""
        return (s for s in self.samples if self.shard.holds(s.label))

    def __repr__(self) -> str:
        return f"ShardedSamples({self.samples!r}, {self.shard})"
