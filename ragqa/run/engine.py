"""Which engine scores a run: this process (default) or a Ray cluster (``--engine ray``, ``ragqa[ray]``).

Ray is an optional dependency: :mod:`ragqa.run.ray_engine` (which imports it) is imported only here,
only when a run asks for ``ray``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ragqa.errors import ConfigError

if TYPE_CHECKING:
    from ragqa.run.runner import Engine

__all__ = ["ENGINES", "RAY_MISSING", "make_engine", "parse_workers"]

ENGINES = ("local", "ray")
"""The engines a run may name: ``local`` (one process, the default) and ``ray``."""

RAY_MISSING = "--engine ray needs Ray, an optional dependency: pip install 'ragqa[ray]'"
"""The error when Ray is asked for but not installed."""


def parse_workers(value: int | str | None, default: int) -> tuple[int, int]:
    """``(MIN, MAX)`` actors from ``--workers``: ``N``, ``"N"``, ``"MIN:MAX"``, or ``None`` for ``default``.

    Raises:
        ConfigError: not a count or a ``MIN:MAX`` range with ``1 <= MIN <= MAX`` (names the option and the fix).
    """
    if value is None:
        return default, default
    text = str(value).strip()
    low, colon, high = text.partition(":")
    try:
        pair = (int(low), int(high)) if colon else (int(text), int(text))
    except ValueError:
        pair = (0, -1)
    if not 1 <= pair[0] <= pair[1]:
        raise ConfigError(
            f"--workers {text!r}: give a number of workers (4) or a range MIN:MAX (2:8) with 1 <= MIN <= MAX",
            key="--workers",
        )
    return pair


def make_engine(
    name: str | None,
    *,
    address: str | None = None,
    workers: int | str | None = None,
    batch_size: int | None = None,
) -> Engine | None:
    """The engine of a run, or ``None`` for this process.

    Args:
        name: ``local`` / ``None`` (this process) or ``ray``.
        address: with ``ray``: ``auto`` or ``ray://host:port`` of an existing cluster; ``None``
            starts a local cluster listening on 127.0.0.1 only.
        workers: with ``ray``: panel actors, one CPU each: a count, or ``"MIN:MAX"`` to start ``MIN``
            and add actors up to ``MAX`` while batches wait (default: this machine's CPUs).
        batch_size: with ``ray``: samples per batch handed to a worker (default 64).

    Raises:
        ConfigError: an unknown engine, a Ray option without ``ray``, a count below 1, a
            ``--workers`` that is no count or ``MIN:MAX`` range, or Ray not installed (naming
            ``pip install 'ragqa[ray]'``).
    """
    if name is None or name == "local":
        given = [
            opt
            for opt, value in (("--address", address), ("--workers", workers), ("--batch-size", batch_size))
            if value is not None
        ]
        if given:
            raise ConfigError(f"{', '.join(given)} need --engine ray", key="--engine")
        return None
    if name != "ray":
        raise ConfigError(f"--engine {name!r}: use one of {', '.join(ENGINES)}", key="--engine")
    if batch_size is not None and batch_size < 1:
        raise ConfigError(f"--batch-size {batch_size}: give 1 or more", key="--batch-size")
    low, high = parse_workers(workers, os.cpu_count() or 2)
    try:
        from ragqa.run.ray_engine import RayEngine
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] == "ray":
            raise ConfigError(RAY_MISSING, key="--engine") from None
        raise
    return RayEngine(address=address, workers=high, min_workers=low, batch_size=batch_size or 64)
