r"""Deterministic string checks of the response against the reference (promptfoo's string assertions), no judge.

One metric, ``string_match``, scores 1 when the check holds and 0 when it does not; ``negate``
inverts it (promptfoo's ``not-`` prefix). The modes are promptfoo's assertions:

==============  ==========================================================  ==================
mode            holds when                                                  promptfoo type
==============  ==========================================================  ==================
``equals``      ``response == reference``                                   ``equals``
``contains``    ``reference`` is a substring of ``response``                ``contains``
``icontains``   the same after lower-casing both                            ``icontains``
``starts_with`` ``response`` starts with ``reference``                      ``starts-with``
``regex``       the pattern ``reference`` matches somewhere in ``response`` ``regex``
==============  ==========================================================  ==================

``regex`` uses Python's :func:`re.search` with no flags, as promptfoo uses JavaScript's
``new RegExp(value).test(output)``. Most patterns mean the same in both; a few differ: ``\d``
and ``\w`` also match non-ASCII digits and letters in Python, and a ``/.../flags`` literal is
read as plain text (write ``(?i)`` for case-insensitivity).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal, get_args

from ragqa.errors import SampleError
from ragqa.metrics.text._base import TextMetric, TextScore, check_choice
from ragqa.schema import Sample

__all__ = ["MatchMode", "StringMatch", "string_matches"]

MatchMode = Literal["equals", "contains", "icontains", "starts_with", "regex"]


def string_matches(response: str, reference: str, mode: MatchMode) -> bool:
    """Whether ``response`` passes the check ``mode`` against ``reference`` (see the module table).

    Raises:
        re.error: in ``regex`` mode, when ``reference`` is not a valid pattern.
    """
    if mode == "equals":
        return response == reference
    if mode == "contains":
        return reference in response
    if mode == "icontains":
        return reference.lower() in response.lower()
    if mode == "starts_with":
        return response.startswith(reference)
    return re.search(reference, response) is not None


class StringMatch(TextMetric):
    """1 when ``response`` passes a string check against ``reference``, else 0 (promptfoo's string assertions).

    - Fields: ``response``, ``reference`` (the expected text, substring, prefix or pattern).
    - Range 0..1 (0 or 1), higher is better; default threshold 1. No judge call.
    - Options: ``mode`` (``equals``, ``contains``, ``icontains``, ``starts_with``, ``regex``;
      default ``contains``), ``negate`` (default false: score 1 when the check fails instead).

    Raises:
        ValueError: for an unknown mode or a non-boolean negate (``build_metric`` reports it as a
            ConfigError).
    """

    name: ClassVar[str] = "string_match"
    description: ClassVar[str] = "1 when the response equals, contains, starts with or matches the reference (no judge)"
    default_threshold: ClassVar[float | None] = 1.0
    defaults: ClassVar[dict[str, Any]] = {"mode": "contains", "negate": False}

    def __init__(self, mode: MatchMode = "contains", negate: bool = False) -> None:
        """Create the metric (see the class docstring for the options)."""
        self.mode: MatchMode = check_choice("mode", mode, get_args(MatchMode))
        if not isinstance(negate, bool):
            raise ValueError(f"negate must be true or false, not {negate!r}")
        self.negate = negate

    @property
    def key(self) -> str:
        """``string_match(mode=<mode>)``, plus ``negate=true`` when negated: the mode is always named."""
        return f"{self.name}(mode={self.mode}{', negate=true' if self.negate else ''})"

    def validate(self, sample: Sample) -> None:
        """Check both fields, and in ``regex`` mode that ``reference`` compiles.

        Raises:
            SampleError: naming the sample, the field and the fix.
        """
        super().validate(sample)
        if self.mode == "regex":
            try:
                re.compile(sample.reference or "")
            except re.error as exc:
                raise SampleError(
                    f"is not a valid regular expression ({exc}); fix the pattern",
                    sample_id=sample.label,
                    field="reference",
                    metric=self.key,
                ) from exc

    def compute(self, response: str, reference: str) -> TextScore:
        """1.0 when the check holds (fails, with ``negate``), else 0.0."""
        matched = string_matches(response, reference, self.mode)
        return float(matched != self.negate), {"mode": self.mode, "matched": matched, "negate": self.negate}

    def explain(self, value: float, details: Mapping[str, Any]) -> str:
        """``the response contains the reference`` (or ``does not contain``), and the score."""
        holds, fails = _VERBS[self.mode]
        verb = holds if details["matched"] else fails
        return f"the response {verb} the reference{' (negated)' if self.negate else ''}: {value:g}"


_VERBS: dict[str, tuple[str, str]] = {
    "equals": ("equals", "does not equal"),
    "contains": ("contains", "does not contain"),
    "icontains": ("contains (ignoring case)", "does not contain (ignoring case)"),
    "starts_with": ("starts with", "does not start with"),
    "regex": ("matches the pattern in", "does not match the pattern in"),
}
