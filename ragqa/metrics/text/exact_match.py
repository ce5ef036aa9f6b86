"""Exact match: 1 when the response is exactly the reference (RAGAS ``exact_match``), no judge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragqa.metrics.text._base import TextMetric, TextScore

__all__ = ["ExactMatch", "exact_match"]


def exact_match(response: str, reference: str) -> float:
    """RAGAS's ``float(reference == response)``: case, spaces and punctuation all count.

    Returns:
        1.0 when the strings are identical, else 0.0.
    """
    return float(response == reference)


class ExactMatch(TextMetric):
    """1 when ``response == reference`` character for character, else 0 (RAGAS ``exact_match``).

    - Fields: ``response``, ``reference`` (both non-empty).
    - Range 0..1 (0 or 1), higher is better; default threshold 1. No judge call. No options.
    """

    name: ClassVar[str] = "exact_match"
    description: ClassVar[str] = "1 when the response is exactly the reference, else 0 (no judge)"
    default_threshold: ClassVar[float | None] = 1.0

    def compute(self, response: str, reference: str) -> TextScore:
        """1.0 when identical, else 0.0."""
        return exact_match(response, reference), {}

    def explain(self, value: float, details: Mapping[str, Any]) -> str:
        """Whether the strings are identical."""
        return "the response is exactly the reference" if value else "the response differs from the reference"
