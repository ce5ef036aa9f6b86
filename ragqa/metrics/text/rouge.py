"""ROUGE-1, ROUGE-2 and ROUGE-L (Lin, 2004) of the response against the reference, without a judge.

Two variants:

- ``java`` (default): spring-ai-ragas's ``RougeScore``: words from
  :func:`~ragqa.metrics.text.tokenize.java_tokens` (lower-cased, punctuation removed, no stemming).
- ``ragas``: RAGAS's ``rouge_score``: Google's ``rouge-score`` package with its default
  tokeniser and the Porter stemmer (``RougeScorer([rouge_type], use_stemmer=True)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, get_args

from ragqa.metrics.text._base import TextMetric, TextScore, check_choice
from ragqa.metrics.text.tokenize import java_tokens, ngram_counts

__all__ = ["RougeMode", "RougeScore", "RougeType", "RougeVariant", "java_rouge", "lcs_length", "ragas_rouge"]

RougeType = Literal["rouge1", "rouge2", "rougeL"]
RougeMode = Literal["fmeasure", "precision", "recall"]
RougeVariant = Literal["java", "ragas"]


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (dynamic programming, O(len(a)·len(b)))."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def _pick(precision: float, recall: float, mode: RougeMode) -> float:
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def java_rouge(
    response: str, reference: str, *, rouge_type: RougeType = "rougeL", mode: RougeMode = "fmeasure"
) -> tuple[float, float, float]:
    """spring-ai-ragas's ROUGE.

    ROUGE-N (``rouge1``, ``rouge2``): ``overlap`` = clipped common n-grams; precision =
    ``overlap / response n-grams``, recall = ``overlap / reference n-grams``. When neither text
    has an n-gram of that order the score is 1; when only one has none, 0. ROUGE-L: precision and
    recall are the word LCS over the response's and the reference's word counts. F-measure =
    ``2PR / (P + R)`` (0 when both are 0).

    Args:
        response: the text scored.
        reference: the ground truth.
        rouge_type: ``rouge1``, ``rouge2`` or ``rougeL``.
        mode: which of precision, recall and F-measure is the score.

    Returns:
        ``(score, precision, recall)``, each in [0, 1], higher is better; all 0 when either text
        has no word.
    """
    hyp, ref = java_tokens(response), java_tokens(reference)
    if not hyp or not ref:
        return 0.0, 0.0, 0.0
    if rouge_type == "rougeL":
        common = lcs_length(hyp, ref)
        precision, recall = common / len(hyp), common / len(ref)
        return _pick(precision, recall, mode), precision, recall
    n = 1 if rouge_type == "rouge1" else 2
    hyp_grams, ref_grams = ngram_counts(hyp, n), ngram_counts(ref, n)
    if not hyp_grams and not ref_grams:
        return 1.0, 1.0, 1.0
    if not hyp_grams or not ref_grams:
        return 0.0, 0.0, 0.0
    overlap = sum(min(count, ref_grams[gram]) for gram, count in hyp_grams.items())
    precision, recall = overlap / sum(hyp_grams.values()), overlap / sum(ref_grams.values())
    return _pick(precision, recall, mode), precision, recall


def ragas_rouge(
    response: str, reference: str, *, rouge_type: RougeType = "rougeL", mode: RougeMode = "fmeasure"
) -> tuple[float, float, float]:
    """RAGAS's ROUGE: ``rouge_score.RougeScorer([rouge_type], use_stemmer=True).score(reference, response)``.

    Returns:
        ``(score, precision, recall)``, each in [0, 1], higher is better.
    """
    from rouge_score.rouge_scorer import RougeScorer

    result = RougeScorer([rouge_type], use_stemmer=True).score(reference, response)[rouge_type]
    return float(getattr(result, mode)), float(result.precision), float(result.recall)


class RougeScore(TextMetric):
    """ROUGE of ``response`` against ``reference`` (spring-ai-ragas ``RougeScore``, RAGAS ``rouge_score``).

    - Fields: ``response``, ``reference`` (both non-empty).
    - Range 0..1, higher is better. No judge call.
    - Options: ``rouge_type`` (``rouge1``, ``rouge2``, ``rougeL``; default ``rougeL``), ``mode``
      (``fmeasure``, ``precision``, ``recall``; default ``fmeasure``), ``variant`` (``java``,
      ``ragas``; default ``java``). The defaults are both libraries' defaults.

    Raises:
        ValueError: for an unknown option value (``build_metric`` reports it as a ConfigError).
    """

    name: ClassVar[str] = "rouge_score"
    description: ClassVar[str] = "ROUGE-1/2/L overlap of the response with the reference (no judge)"
    default_threshold: ClassVar[float | None] = 0.5
    defaults: ClassVar[dict[str, Any]] = {"rouge_type": "rougeL", "mode": "fmeasure", "variant": "java"}

    def __init__(
        self, rouge_type: RougeType = "rougeL", mode: RougeMode = "fmeasure", variant: RougeVariant = "java"
    ) -> None:
        """Create the metric (see the class docstring for the options)."""
        self.rouge_type: RougeType = check_choice("rouge_type", rouge_type, get_args(RougeType))
        self.mode: RougeMode = check_choice("mode", mode, get_args(RougeMode))
        self.variant: RougeVariant = check_choice("variant", variant, get_args(RougeVariant))

    def compute(self, response: str, reference: str) -> TextScore:
        """ROUGE of ``response`` against ``reference``, with its precision and recall in the details."""
        scorer = ragas_rouge if self.variant == "ragas" else java_rouge
        value, precision, recall = scorer(response, reference, rouge_type=self.rouge_type, mode=self.mode)
        return value, {"precision": precision, "recall": recall}
