"""Levenshtein distance: the number of single-character edits from the response to the reference, no judge.

The raw edit distance (insertions, deletions and substitutions, each costing 1), as promptfoo's
``levenshtein`` assertion computes it (``fastest-levenshtein``'s ``distance(output, value)``);
it passes when the distance is at most the threshold (promptfoo's default 5). For a similarity in
[0, 1] use :class:`~ragqa.metrics.text.string_similarity.StringSimilarity`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragqa.metrics.base import Direction
from ragqa.metrics.text._base import TextMetric, TextScore

__all__ = ["LevenshteinDistance", "levenshtein_distance"]


def levenshtein_distance(response: str, reference: str) -> float:
    """Unit-cost edit distance between the strings (rapidfuzz ``Levenshtein.distance``), in Unicode code points.

    Returns:
        The distance, an integer >= 0 as a float; 0 for identical strings. Lower is better.
    """
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.distance(response, reference))


class LevenshteinDistance(TextMetric):
    """Edit distance between ``response`` and ``reference`` (promptfoo ``levenshtein``).

    - Fields: ``response``, ``reference`` (both non-empty).
    - Range 0..inf (whole numbers), lower is better; default threshold 5 (pass when the
      distance is at most 5, as promptfoo). No judge call. No options.
    """

    name: ClassVar[str] = "levenshtein_distance"
    direction: ClassVar[Direction] = "lower"
    description: ClassVar[str] = "Number of character edits between the response and the reference (no judge)"
    value_range: ClassVar[tuple[float, float]] = (0.0, float("inf"))
    default_threshold: ClassVar[float | None] = 5.0

    def compute(self, response: str, reference: str) -> TextScore:
        """The edit distance, with both lengths in the details."""
        return levenshtein_distance(response, reference), {
            "response_chars": len(response),
            "reference_chars": len(reference),
        }

    def explain(self, value: float, details: Mapping[str, Any]) -> str:
        """``3 edit(s) apart``."""
        return f"{value:g} edit(s) between the response and the reference"
