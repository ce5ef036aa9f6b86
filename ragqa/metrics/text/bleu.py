"""BLEU: clipped n-gram precision with a brevity penalty (Papineni et al., 2002), without a judge.

Three variants, each reproducing one library's numbers:

- ``java`` (default): spring-ai-ragas's ``BleuScore`` (``metrics/nlp``), sentence-level, its own
  tokeniser (:func:`~ragqa.metrics.text.tokenize.java_tokens`) and add-one smoothing.
- ``ragas``: RAGAS's ``bleu_score``: sacreBLEU's ``corpus_bleu`` with both texts split on
  ``". "`` and each reference sentence passed as one reference stream, divided by 100.
- ``promptfoo``: promptfoo's ``bleu`` assertion: lower-cased whitespace words, 4-gram weights of
  0.25, zero precisions replaced by ``1e-7``, orders longer than the response skipped.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal, get_args

from ragqa.metrics.text._base import TextMetric, TextScore, check_choice, check_positive_int
from ragqa.metrics.text.tokenize import java_tokens, ngram_counts

__all__ = ["BleuScore", "BleuVariant", "java_bleu", "promptfoo_bleu", "ragas_bleu"]

BleuVariant = Literal["java", "ragas", "promptfoo"]


def _clipped(response: list[str], reference: list[str], n: int) -> tuple[int, int]:
    """Clipped matching n-grams of ``response`` against ``reference``, and the response's n-gram count."""
    hyp = ngram_counts(response, n)
    ref = ngram_counts(reference, n)
    return sum(min(count, ref[gram]) for gram, count in hyp.items()), sum(hyp.values())


def java_bleu(response: str, reference: str, *, max_ngram: int = 4, smoothing: bool = True) -> float:
    """spring-ai-ragas's sentence BLEU.

    Both texts are tokenised by :func:`~ragqa.metrics.text.tokenize.java_tokens`. For each order
    ``n = 1..max_ngram``: when the response has fewer than ``n`` words the precision is
    ``1 / (c + 1)`` with smoothing, else 0; otherwise it is the clipped n-gram precision,
    ``(clipped + 1) / (total + 1)`` with smoothing. Orders with a zero precision are left out
    of the geometric mean (spring-ai-ragas's quirk: they count as 1, so an unsmoothed score can
    exceed the smoothed one) but the mean still divides by ``max_ngram``. The brevity penalty is
    ``1`` when ``c >= r``, else ``exp(1 - r / c)`` (``c``, ``r``: response and reference words).

    Args:
        response: the text scored.
        reference: the ground truth.
        max_ngram: the highest n-gram order (>= 1).
        smoothing: add-one smoothing of every order's precision.

    Returns:
        The score in [0, 1], higher is better; 0 when either text has no word or every precision is 0.
    """
    hyp, ref = java_tokens(response), java_tokens(reference)
    if not hyp or not ref:
        return 0.0
    precisions = []
    for n in range(1, max_ngram + 1):
        if len(hyp) < n:
            precisions.append(1.0 / (len(hyp) + 1) if smoothing else 0.0)
            continue
        clipped, total = _clipped(hyp, ref, n)
        precisions.append((clipped + 1) / (total + 1) if smoothing else clipped / total)
    if all(p <= 0 for p in precisions):
        return 0.0
    c, r = len(hyp), len(ref)
    brevity = 1.0 if c >= r else math.exp(1 - r / c)
    score = brevity * math.exp(sum(math.log(p) for p in precisions if p > 0) / max_ngram)
    return min(1.0, max(0.0, score))


def ragas_bleu(response: str, reference: str) -> float:
    """RAGAS's ``bleu_score``: sacreBLEU corpus BLEU of the ``". "``-split sentences, over 100.

    RAGAS passes the response's sentences as hypotheses and each reference sentence as its own
    reference stream of one line; sacreBLEU pairs hypotheses and streams line by line, so with
    several response sentences only the first is compared (this reproduces RAGAS, quirk
    included). sacreBLEU's defaults apply: ``13a`` tokenisation, case-sensitive, ``exp``
    smoothing.

    Returns:
        The score in [0, 1], higher is better.
    """
    from sacrebleu import corpus_bleu

    references = [[sentence] for sentence in reference.split(". ")]
    return float(corpus_bleu(response.split(". "), references).score) / 100


def promptfoo_bleu(response: str, reference: str) -> float:
    """BLEU as promptfoo's ``bleu`` assertion computes it with one reference (``calculateBleuScore``).

    Words are the lower-cased, whitespace-split text. For ``n = 1..4`` with at least one
    response n-gram, the clipped precision (``1e-7`` when 0) enters a geometric mean whose
    weights of 0.25 are renormalised over the orders present; the brevity penalty is 1 when
    ``c > r``, else ``exp(1 - r / c)``.

    Returns:
        The score in [0, 1], higher is better.
    """
    hyp, ref = response.lower().split(), reference.lower().split()
    if not hyp:
        return 0.0
    orders = []
    for n in range(1, 5):
        clipped, total = _clipped(hyp, ref, n)
        if total:
            orders.append(clipped / total)
    c, r = len(hyp), len(ref)
    brevity = 1.0 if c > r else math.exp(1 - r / c)
    return brevity * math.exp(sum(math.log(p if p else 1e-7) for p in orders) / len(orders))


class BleuScore(TextMetric):
    """BLEU of ``response`` against ``reference`` (spring-ai-ragas ``BleuScore``, RAGAS ``bleu_score``).

    - Fields: ``response``, ``reference`` (both non-empty).
    - Range 0..1, higher is better. No judge call.
    - Options: ``variant`` (``java``, ``ragas``, ``promptfoo``; default ``java``), ``max_ngram``
      (default 4) and ``smoothing`` (default true), both for the ``java`` variant only.

    Raises:
        ValueError: for an unknown variant, a ``max_ngram`` below 1, or a non-boolean smoothing
            (``build_metric`` reports it as a ConfigError).
    """

    name: ClassVar[str] = "bleu_score"
    description: ClassVar[str] = "BLEU n-gram precision of the response against the reference (no judge)"
    default_threshold: ClassVar[float | None] = 0.5
    defaults: ClassVar[dict[str, Any]] = {"variant": "java", "max_ngram": 4, "smoothing": True}

    def __init__(self, variant: BleuVariant = "java", max_ngram: int = 4, smoothing: bool = True) -> None:
        """Create the metric (see the class docstring for the options)."""
        self.variant: BleuVariant = check_choice("variant", variant, get_args(BleuVariant))
        self.max_ngram = check_positive_int("max_ngram", max_ngram)
        if not isinstance(smoothing, bool):
            raise ValueError(f"smoothing must be true or false, not {smoothing!r}")
        self.smoothing = smoothing
        if variant != "java" and (max_ngram != 4 or not smoothing):
            raise ValueError(f"max_ngram and smoothing apply to the java variant only, not to {variant!r}")

    def compute(self, response: str, reference: str) -> TextScore:
        """BLEU of ``response`` against ``reference`` by the chosen variant."""
        if self.variant == "ragas":
            return ragas_bleu(response, reference), {"variant": "ragas"}
        if self.variant == "promptfoo":
            return promptfoo_bleu(response, reference), {"variant": "promptfoo"}
        value = java_bleu(response, reference, max_ngram=self.max_ngram, smoothing=self.smoothing)
        return value, {"variant": "java", "response_words": len(java_tokens(response))}
