"""chrF and chrF++ (Popović, 2015 and 2017): character n-gram F-score, without a judge.

Two variants:

- ``java`` (default): spring-ai-ragas's ``ChrfScore``: lower-cased text, character n-grams
  over the raw string (spaces and punctuation included), an F-score per order averaged over the
  orders, and for chrF++ the average of that with the word-order F-scores (words from
  :func:`~ragqa.metrics.text.tokenize.java_tokens`).
- ``ragas``: RAGAS's ``chrf_score``: sacreBLEU's ``CHRF`` (whitespace removed, case kept,
  precision and recall averaged over all orders before one F-score), divided by 100.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, get_args

from ragqa._math import mean_or_nan
from ragqa.metrics.text._base import TextMetric, TextScore, check_choice, check_positive_int
from ragqa.metrics.text.tokenize import java_tokens, ngram_counts

__all__ = ["ChrfScore", "ChrfVariant", "java_chrf", "order_fscore", "ragas_chrf"]

ChrfVariant = Literal["java", "ragas"]


def order_fscore(hyp: Counter[tuple[str, ...]], ref: Counter[tuple[str, ...]], beta: float) -> float:
    """F-beta of one n-gram order from clipped counts (spring-ai-ragas).

    ``P = overlap / |hyp|``, ``R = overlap / |ref|``, ``F = (1 + beta²) P R / (beta² P + R)``.

    Returns:
        The F-score in [0, 1]: 1 when both sides have no n-gram of this order, 0 when one has
        none or nothing overlaps.
    """
    total_hyp, total_ref = sum(hyp.values()), sum(ref.values())
    if total_hyp == 0 and total_ref == 0:
        return 1.0
    if total_hyp == 0 or total_ref == 0:
        return 0.0
    overlap = sum(min(count, ref[gram]) for gram, count in hyp.items())
    precision, recall = overlap / total_hyp, overlap / total_ref
    denominator = beta * beta * precision + recall
    return 0.0 if denominator == 0 else (1 + beta * beta) * precision * recall / denominator


def _mean_f(hyp: Sequence[str], ref: Sequence[str], orders: int, beta: float) -> float:
    return mean_or_nan([order_fscore(ngram_counts(hyp, n), ngram_counts(ref, n), beta) for n in range(1, orders + 1)])


def java_chrf(
    response: str, reference: str, *, char_order: int = 6, word_order: int = 0, beta: float = 2.0
) -> tuple[float, float, float | None]:
    """spring-ai-ragas's chrF (``word_order = 0``) or chrF++ (``word_order > 0``).

    ``charF`` is the mean of :func:`order_fscore` over character orders ``1..char_order`` of the
    lower-cased strings (every character counts, spaces too); ``wordF`` the same over word
    orders ``1..word_order``. The score is ``charF``, or ``(charF + wordF) / 2`` for chrF++.

    Args:
        response: the text scored.
        reference: the ground truth.
        char_order: the highest character n-gram order (>= 1).
        word_order: the highest word n-gram order (0 for chrF).
        beta: recall's weight relative to precision (> 0).

    Returns:
        ``(score, charF, wordF or None)``, each in [0, 1], higher is better.
    """
    char_f = _mean_f(list(response.lower()), list(reference.lower()), char_order, beta)
    if word_order <= 0:
        return char_f, char_f, None
    word_f = _mean_f(java_tokens(response), java_tokens(reference), word_order, beta)
    return (char_f + word_f) / 2, char_f, word_f


def ragas_chrf(response: str, reference: str, *, char_order: int = 6, word_order: int = 0, beta: int = 2) -> float:
    """RAGAS's chrF: ``CHRF(char_order, word_order, beta).corpus_score([response], [[reference]]).score / 100``.

    Returns:
        The score in [0, 1], higher is better.
    """
    from sacrebleu.metrics.chrf import CHRF

    chrf = CHRF(char_order=char_order, word_order=word_order, beta=beta)
    return float(chrf.corpus_score([response], [[reference]]).score) / 100


class ChrfScore(TextMetric):
    """chrF / chrF++ of ``response`` against ``reference`` (spring-ai-ragas ``ChrfScore``, RAGAS ``chrf_score``).

    - Fields: ``response``, ``reference`` (both non-empty).
    - Range 0..1, higher is better. No judge call.
    - Options: ``char_order`` (default 6), ``word_order`` (default 0; 2 is chrF++), ``beta``
      (default 2; a whole number for ``ragas``), ``variant`` (``java``, ``ragas``; default
      ``java``). The defaults are both libraries' defaults.

    Raises:
        ValueError: for an order below its minimum, a beta that is not positive, or an unknown
            variant (``build_metric`` reports it as a ConfigError).
    """

    name: ClassVar[str] = "chrf_score"
    description: ClassVar[str] = "chrF / chrF++ character n-gram F-score against the reference (no judge)"
    default_threshold: ClassVar[float | None] = 0.5
    defaults: ClassVar[dict[str, Any]] = {"char_order": 6, "word_order": 0, "beta": 2.0, "variant": "java"}

    def __init__(
        self, char_order: int = 6, word_order: int = 0, beta: float = 2.0, variant: ChrfVariant = "java"
    ) -> None:
        """Create the metric (see the class docstring for the options)."""
        self.char_order = check_positive_int("char_order", char_order)
        self.word_order = check_positive_int("word_order", word_order, minimum=0)
        if isinstance(beta, bool) or not isinstance(beta, int | float) or not beta > 0:
            raise ValueError(f"beta must be a number > 0, not {beta!r}")
        self.beta = float(beta)
        self.variant: ChrfVariant = check_choice("variant", variant, get_args(ChrfVariant))
        if variant == "ragas" and not self.beta.is_integer():
            raise ValueError(f"the ragas variant (sacreBLEU) takes a whole-number beta, not {beta!r}")

    def compute(self, response: str, reference: str) -> TextScore:
        """The chrF score of ``response`` against ``reference``; the java variant details charF and wordF."""
        if self.variant == "ragas":
            value = ragas_chrf(
                response, reference, char_order=self.char_order, word_order=self.word_order, beta=int(self.beta)
            )
            return value, {}
        value, char_f, word_f = java_chrf(
            response, reference, char_order=self.char_order, word_order=self.word_order, beta=self.beta
        )
        return value, {"char_f": char_f, "word_f": word_f}
