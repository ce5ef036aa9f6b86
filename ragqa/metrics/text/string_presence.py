"""String presence: 1 when the reference occurs in the response (RAGAS ``string_present``), no judge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragqa.metrics.text._base import TextMetric, TextScore

__all__ = ["StringPresence", "string_present"]


def string_present(response: str, reference: str, *, case_sensitive: bool = True) -> float:
    """RAGAS's ``float(reference in response)``, optionally after lower-casing both.

    Returns:
        1.0 when ``reference`` is a substring of ``response``, else 0.0.
    """
    if not case_sensitive:
        response, reference = response.lower(), reference.lower()
    return float(reference in response)


class StringPresence(TextMetric):
    """1 when ``reference`` is a substring of ``response``, else 0 (RAGAS ``string_present``).

    - Fields: ``response``, ``reference`` (both non-empty).
    - Range 0..1 (0 or 1), higher is better; default threshold 1. No judge call.
    - Options: ``case_sensitive`` (default true, as RAGAS; false lower-cases both first).

    Raises:
        ValueError: for a non-boolean ``case_sensitive`` (``build_metric`` reports it as a ConfigError).
    """

    name: ClassVar[str] = "string_present"
    description: ClassVar[str] = "1 when the reference occurs in the response, else 0 (no judge)"
    default_threshold: ClassVar[float | None] = 1.0
    defaults: ClassVar[dict[str, Any]] = {"case_sensitive": True}

    def __init__(self, case_sensitive: bool = True) -> None:
        """Create the metric (see the class docstring for the option)."""
        if not isinstance(case_sensitive, bool):
            raise ValueError(f"case_sensitive must be true or false, not {case_sensitive!r}")
        self.case_sensitive = case_sensitive

    def compute(self, response: str, reference: str) -> TextScore:
        """1.0 when present, else 0.0."""
        return string_present(response, reference, case_sensitive=self.case_sensitive), {}

    def explain(self, value: float, details: Mapping[str, Any]) -> str:
        """Whether the reference occurs in the response."""
        return "the reference occurs in the response" if value else "the reference does not occur in the response"
