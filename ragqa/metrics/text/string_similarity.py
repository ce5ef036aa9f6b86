"""String similarity (Levenshtein, Hamming, Jaro, Jaro-Winkler) of the response and the reference, no judge.

Two variants:

- ``java`` (default): spring-ai-ragas's ``StringSimilarity``: Levenshtein ``1 - d / max(len)``
  (Apache commons-text), Hamming after right-padding the shorter string with spaces, its own
  Jaro (the transposition half ``t / 2`` is an *integer* division), and commons-text 1.11's
  Jaro-Winkler (``t / 2.0``; the prefix bonus ``0.1 · prefix(≤ 4) · (1 − jaro)`` only when
  ``jaro >= 0.7``). Default measure Jaro-Winkler, case-insensitive.
- ``ragas``: RAGAS's ``non_llm_string_similarity``: ``1 - normalized_distance`` of rapidfuzz's
  ``Levenshtein``, ``Hamming``, ``Jaro`` or ``JaroWinkler``. Default measure Levenshtein,
  case-sensitive.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, get_args

from ragqa.metrics.text._base import TextMetric, TextScore, check_choice

__all__ = [
    "DistanceMeasure",
    "StringSimilarity",
    "StringVariant",
    "java_hamming",
    "java_jaro",
    "java_jaro_winkler",
    "java_levenshtein",
    "java_similarity",
    "ragas_similarity",
]

DistanceMeasure = Literal["levenshtein", "hamming", "jaro", "jaro_winkler"]
StringVariant = Literal["java", "ragas"]


def java_levenshtein(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(len(a), len(b))`` (unit costs; rapidfuzz computes the distance).

    Returns:
        The similarity in [0, 1]; 1 when both strings are empty.
    """
    from rapidfuzz.distance import Levenshtein

    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - Levenshtein.distance(a, b) / longest


def java_hamming(a: str, b: str) -> float:
    """``1 - mismatches / max(len)`` after right-padding the shorter string with spaces (spring-ai-ragas).

    Returns:
        The similarity in [0, 1]; 1 when both strings are empty.
    """
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    a, b = a.ljust(longest), b.ljust(longest)
    return 1.0 - sum(x != y for x, y in zip(a, b, strict=True)) / longest


def _jaro_counts(a: str, b: str) -> tuple[int, int]:
    """Jaro's matching characters ``m`` and matched characters out of order ``t`` (not yet halved).

    Each character of ``a``, in order, takes the first free equal character of ``b`` within the
    window ``max(len(a), len(b)) // 2 - 1`` of its position.
    """
    window = max(len(a), len(b)) // 2 - 1
    taken = [False] * len(b)
    matched_a: list[str] = []
    for i, ch in enumerate(a):
        for j in range(max(0, i - window), min(len(b), i + window + 1)):
            if not taken[j] and b[j] == ch:
                taken[j] = True
                matched_a.append(ch)
                break
    matched_b = [ch for j, ch in enumerate(b) if taken[j]]
    return len(matched_a), sum(x != y for x, y in zip(matched_a, matched_b, strict=True))


def java_jaro(a: str, b: str) -> float:
    """spring-ai-ragas's Jaro: ``(m/|a| + m/|b| + (m - t // 2) / m) / 3`` with an integer ``t // 2``.

    ``m`` is the number of characters of ``a`` (the response) matched in ``b`` within the window
    ``max(len) // 2 - 1``, ``t`` the matched characters out of order. Standard Jaro divides
    ``t / 2`` as a real number.

    Returns:
        The similarity in [0, 1]; 0 when nothing matches, 1 for equal strings.
    """
    if a == b:
        return 1.0
    m, t = _jaro_counts(a, b)
    if m == 0:
        return 0.0
    return (m / len(a) + m / len(b) + (m - t // 2) / m) / 3


def java_jaro_winkler(a: str, b: str) -> float:
    """commons-text 1.11 Jaro-Winkler: Jaro with ``t / 2.0``, plus ``0.1 · prefix · (1 − jaro)`` when jaro >= 0.7.

    ``prefix`` is the common prefix length, at most 4.

    Returns:
        The similarity in [0, 1]; 0 when nothing matches, 1 for equal strings.
    """
    if a == b:
        return 1.0
    shorter, longer = (b, a) if len(a) > len(b) else (a, b)  # commons-text scans the shorter string
    m, t = _jaro_counts(shorter, longer)
    if m == 0:
        return 0.0
    jaro = (m / len(a) + m / len(b) + (m - t / 2) / m) / 3
    if jaro < 0.7:
        return jaro
    prefix = 0
    for x, y in zip(a[:4], b[:4], strict=False):
        if x != y:
            break
        prefix += 1
    return jaro + 0.1 * prefix * (1 - jaro)


_JAVA = {
    "levenshtein": java_levenshtein,
    "hamming": java_hamming,
    "jaro": java_jaro,
    "jaro_winkler": java_jaro_winkler,
}


def java_similarity(
    response: str, reference: str, *, distance_measure: DistanceMeasure = "jaro_winkler", case_sensitive: bool = False
) -> float:
    """spring-ai-ragas's string similarity: equal strings (after case folding unless ``case_sensitive``) score 1.

    Returns:
        The similarity in [0, 1], higher is better.
    """
    if not case_sensitive:
        response, reference = response.lower(), reference.lower()
    if response == reference:
        return 1.0
    return min(1.0, max(0.0, _JAVA[distance_measure](response, reference)))


def ragas_similarity(
    response: str, reference: str, *, distance_measure: DistanceMeasure = "levenshtein", case_sensitive: bool = True
) -> float:
    """RAGAS's string similarity: ``1 - rapidfuzz.distance.<Measure>.normalized_distance(reference, response)``.

    Returns:
        The similarity in [0, 1], higher is better.
    """
    from rapidfuzz.distance import Hamming, Jaro, JaroWinkler, Levenshtein

    measures = {"levenshtein": Levenshtein, "hamming": Hamming, "jaro": Jaro, "jaro_winkler": JaroWinkler}
    if not case_sensitive:
        response, reference = response.lower(), reference.lower()
    return 1.0 - float(measures[distance_measure].normalized_distance(reference, response))


_VARIANT_DEFAULTS: dict[str, tuple[DistanceMeasure, bool]] = {
    "java": ("jaro_winkler", False),
    "ragas": ("levenshtein", True),
}


class StringSimilarity(TextMetric):
    """Character-level similarity of ``response`` and ``reference``.

    spring-ai-ragas ``StringSimilarity``; RAGAS ``non_llm_string_similarity``.

    - Fields: ``response``, ``reference`` (both non-empty).
    - Range 0..1, higher is better. No judge call.
    - Options: ``variant`` (``java``, ``ragas``; default ``java``), ``distance_measure``
      (``levenshtein``, ``hamming``, ``jaro``, ``jaro_winkler``) and ``case_sensitive``; when
      not given, the variant's own defaults apply (java: ``jaro_winkler``, case-insensitive;
      ragas: ``levenshtein``, case-sensitive).

    Raises:
        ValueError: for an unknown option value (``build_metric`` reports it as a ConfigError).
    """

    name: ClassVar[str] = "non_llm_string_similarity"
    description: ClassVar[str] = "Levenshtein / Hamming / Jaro / Jaro-Winkler similarity to the reference (no judge)"
    default_threshold: ClassVar[float | None] = 0.5
    defaults: ClassVar[dict[str, Any]] = {"variant": "java", "distance_measure": None, "case_sensitive": None}

    def __init__(
        self,
        variant: StringVariant = "java",
        distance_measure: DistanceMeasure | None = None,
        case_sensitive: bool | None = None,
    ) -> None:
        """Create the metric (see the class docstring for the options)."""
        self.variant: StringVariant = check_choice("variant", variant, get_args(StringVariant))
        if distance_measure is not None:
            check_choice("distance_measure", distance_measure, get_args(DistanceMeasure))
        if case_sensitive is not None and not isinstance(case_sensitive, bool):
            raise ValueError(f"case_sensitive must be true or false, not {case_sensitive!r}")
        self.distance_measure = distance_measure
        self.case_sensitive = case_sensitive

    def resolved(self) -> tuple[DistanceMeasure, bool]:
        """The measure and case sensitivity in effect (given, else the variant's defaults)."""
        measure, sensitive = _VARIANT_DEFAULTS[self.variant]
        return (
            self.distance_measure if self.distance_measure is not None else measure,
            self.case_sensitive if self.case_sensitive is not None else sensitive,
        )

    def compute(self, response: str, reference: str) -> TextScore:
        """Similarity of ``response`` and ``reference`` under the resolved measure."""
        measure, sensitive = self.resolved()
        scorer = ragas_similarity if self.variant == "ragas" else java_similarity
        value = scorer(response, reference, distance_measure=measure, case_sensitive=sensitive)
        return value, {"distance_measure": measure, "case_sensitive": sensitive}
