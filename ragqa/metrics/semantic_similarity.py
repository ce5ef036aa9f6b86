"""Semantic similarity: the cosine of the response's and the reference's embeddings.

RAGAS ``SemanticSimilarity`` (``metrics/_answer_similarity.py``, alias ``answer_similarity``)::

    score = cos(E(reference), E(response))            # raw cosine, in [-1, 1]
    score = 1.0 if score >= threshold else 0.0        # only when a threshold is set

RAGAS L2-normalises both vectors and takes their dot product, which is the cosine; a zero vector
gives NaN there and here (with a threshold RAGAS then scores 0.0, because ``nan >= threshold`` is
false; ragqa keeps NaN: an undefined cosine is unscored, not a failed comparison). ragqa
computes the cosine with *every* configured embedding model and
reports their mean, each model's value in ``details`` (spring-ai-ragas averages over embedding
models too; with a threshold each model's value is 0 or 1 before the mean, as in Java). The two
texts go to each model in one batched request (RAGAS makes two).

No judge is asked: the score is the same whichever judge of the panel runs it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import ClassVar

from ragqa._math import cosine, mean_or_nan
from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Embedder, Judge
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.metrics.response_relevancy import embed_texts
from ragqa.schema import MetricScore, Sample

__all__ = ["SemanticSimilarity", "cosine_by_model", "semantic_similarity_score"]


def semantic_similarity_score(cosines: Sequence[float], threshold: float | None = None) -> float:
    """RAGAS's semantic similarity over one or more embedding models.

    Args:
        cosines: ``float[E]``, the cosine of response and reference per embedding model, each
            in [-1, 1] (NaN for a zero vector).
        threshold: when set, each model's cosine becomes 1.0 if ``>= threshold`` else 0.0
            (RAGAS's binary mode) before the mean.

    Returns:
        The mean over models, in [-1, 1] (in {0, 1/E, ..., 1} with a threshold); higher is
        better. NaN when ``cosines`` is empty or holds a NaN.
    """
    if threshold is None:
        return mean_or_nan(cosines)
    if any(math.isnan(c) for c in cosines):
        return math.nan
    return mean_or_nan([1.0 if c >= threshold else 0.0 for c in cosines])


async def cosine_by_model(embedders: Sequence[Embedder], a: str, b: str) -> dict[str, float]:
    """The cosine of ``a`` and ``b`` with each embedding model (one batched request per model, concurrent).

    Returns:
        Embedder id -> cosine in [-1, 1] (NaN when a vector has zero norm), in ``embedders`` order;
        a floating-point excess (``1.0000000000000002`` for identical vectors) is clipped to the range.

    Raises:
        JudgeError: when a model fails (step ``embed``).
        JudgeOutputError: when a model returns the wrong number of vectors or vectors of
            different lengths.
    """
    per_model = await asyncio.gather(*(embed_texts(e, [a, b]) for e in embedders))
    out: dict[str, float] = {}
    for embedder, (va, vb) in zip(embedders, per_model, strict=True):
        try:
            value = cosine(va, vb)
        except ValueError as exc:
            raise JudgeOutputError(
                f"embedding model {embedder.id!r} returned vectors of different lengths",
                judge_id=embedder.id,
                step="embed",
            ) from exc
        # identical texts give 1.0000000000000002 in floating point: keep the cosine in its range
        out[embedder.id] = value if math.isnan(value) else min(1.0, max(-1.0, value))
    return out


def _check_threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold <= 1:
        raise ValueError(
            f"threshold must be a number in (0, 1] or None, not {threshold!r} "
            "(RAGAS treats 0 as no threshold; leave it unset instead)"
        )
    return float(threshold)


class SemanticSimilarity(Metric):
    """Semantic similarity of the response to the reference, by embedding cosine.

    - Fields: ``response``, ``reference``; needs at least one embedding model, no judge.
    - Range -1..1 (raw cosine, ~0..1 in practice; 0 or 1 per model with ``threshold``), higher
      is better.
    - Judge calls per sample: 0. Embedding calls: 1 per embedding model (both texts batched).
    - NaN when an embedding model returns a zero vector.
    - It asks no judge: the panel evaluator scores it once per sample and shows that outcome
      under every judge (the same value; the embedding requests are made once).
    - Raises :class:`~ragqa.errors.JudgeError` when an embedding model fails,
      :class:`~ragqa.errors.JudgeUnsupported` when none is configured.

    Args:
        threshold: ``None`` (default, RAGAS) for the raw cosine, or a number in (0, 1]: each
            model's score is 1.0 when its cosine is at least the threshold, else 0.0.

    Raises:
        ValueError: for a threshold outside (0, 1].
    """

    name: ClassVar[str] = "semantic_similarity"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("response", "reference")
    description: ClassVar[str] = "Cosine of the response's and the reference's embeddings (mean over embedding models)"
    calls_per_sample: ClassVar[str] = "0 (1 embedding request per embedding model)"
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    needs_judge: ClassVar[bool] = False
    needs_embeddings: ClassVar[bool] = True
    default_threshold: ClassVar[float | None] = 0.75

    def __init__(self, threshold: float | None = None) -> None:
        """Create the metric (see the class docstring for ``threshold``)."""
        self.threshold = _check_threshold(threshold)

    @property
    def key(self) -> str:
        """``semantic_similarity``, or ``semantic_similarity(threshold=<t>)`` when binary."""
        return self.name if self.threshold is None else f"{self.name}(threshold={self.threshold:g})"

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring); ``judge`` is not asked."""
        context.require_embedders(self.name, judge.id)
        cosines = await cosine_by_model(context.embedders, sample.response or "", sample.reference or "")
        value = semantic_similarity_score(list(cosines.values()), self.threshold)
        details: dict[str, object] = {
            "embedders": {
                model: {"cosine": c, "score": semantic_similarity_score([c], self.threshold)}
                for model, c in cosines.items()
            },
        }
        if self.threshold is None:
            reason = f"cosine {value:.3f} (mean over {len(cosines)} embedding model(s))"
        else:
            passed = sum(1 for c in cosines.values() if c >= self.threshold)
            reason = (
                f"{passed} of {len(cosines)} embedding model(s) give a cosine of at least {self.threshold:g}"
                f" ({', '.join(f'{c:.3f}' for c in cosines.values())})"
            )
        return MetricScore(value=value, reason=reason, details=details)
