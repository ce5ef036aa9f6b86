"""Text metrics: scores computed from the response and the reference alone, without a judge.

BLEU, ROUGE, chrF / chrF++, string similarity (spring-ai-ragas's ``metrics/nlp`` and RAGAS's
non-LLM metrics), exact match and string presence (RAGAS), and promptfoo's deterministic string
assertions and edit distance. Each module holds the maths as pure functions next to its metric.
"""

from __future__ import annotations

from ragqa.metrics.text._base import TextMetric
from ragqa.metrics.text.bleu import BleuScore
from ragqa.metrics.text.chrf import ChrfScore
from ragqa.metrics.text.exact_match import ExactMatch
from ragqa.metrics.text.levenshtein_distance import LevenshteinDistance
from ragqa.metrics.text.rouge import RougeScore
from ragqa.metrics.text.string_match import StringMatch
from ragqa.metrics.text.string_presence import StringPresence
from ragqa.metrics.text.string_similarity import StringSimilarity

__all__ = [
    "TEXT_METRICS",
    "BleuScore",
    "ChrfScore",
    "ExactMatch",
    "LevenshteinDistance",
    "RougeScore",
    "StringMatch",
    "StringPresence",
    "StringSimilarity",
    "TextMetric",
]

TEXT_METRICS: tuple[type[TextMetric], ...] = (
    BleuScore,
    RougeScore,
    ChrfScore,
    StringSimilarity,
    ExactMatch,
    StringPresence,
    StringMatch,
    LevenshteinDistance,
)
"""The text metrics, in the order ``ragqa metrics`` lists them."""
