"""Score interpretation bands: what a score means, in English (other languages: their pack's ``bands``).

Pure data and one lookup. A band covers ``(low, high]`` of a metric's range (the first band of a
scale also includes its lower bound), so a noise sensitivity of exactly 0.1 is still "ignores
noise", as in spring-ai-ragas (``<= 0.1`` excellent, ``<= 0.3`` good, ``<= 0.5`` moderate,
``> 0.5`` poor). Wording of the noise-sensitivity bands follows the Russian noise-sensitivity
write-up (seed 002) and its English rendering.

Example:
    >>> interpret("noise_sensitivity(mode=relevant)", 0.25, "en")
    'mostly robust to noise (0.1-0.3)'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ragqa.languages import language_pack
from ragqa.schema import Language

__all__ = ["BANDS", "STANDARD", "Band", "ScaleSource", "band_for", "interpret", "register_scale_source", "scale_for"]


@dataclass(frozen=True)
class Band:
    """One interpretation band of a scale.

    Attributes:
        low: lower bound (exclusive, except for the first band of a scale).
        high: upper bound (inclusive).
        level: a short level name (``excellent``, ``good``, ``moderate``, ``poor``).
        text: the meaning in English (``{"en": ...}``); other languages translate it in their
            pack's ``bands`` (:mod:`ragqa.languages`), and a text given here for a language wins.
    """

    low: float
    high: float
    level: str
    text: Mapping[Language, str]

    def label(self, language: Language = "en") -> str:
        """The band's meaning with its range, e.g. ``"mostly robust to noise (0.1-0.3)"``."""
        pack = language_pack(language)
        text = self.text.get(language) or (pack.bands.get(self.text["en"], "") if pack else "") or self.text["en"]
        return f"{text} ({_fmt(self.low)}-{_fmt(self.high)})"


def _fmt(x: float) -> str:
    return f"{x:g}"


_NOISE: tuple[Band, ...] = (
    Band(0.0, 0.1, "excellent", {"en": "ignores noise"}),
    Band(0.1, 0.3, "good", {"en": "mostly robust to noise"}),
    Band(
        0.3,
        0.5,
        "moderate",
        {"en": "sometimes uses noisy information"},
    ),
    Band(
        0.5,
        1.0,
        "poor",
        {"en": "influenced by irrelevant contexts"},
    ),
)

# spring-ai-ragas's standard scale (AbstractScoreExplanation.createStandardScale) for 0..1 metrics
# where higher is better: Excellent >= 0.9, Good >= 0.7, Moderate >= 0.5, Poor < 0.5.
STANDARD: tuple[Band, ...] = (
    Band(0.0, 0.5, "poor", {"en": "poor"}),
    Band(0.5, 0.7, "moderate", {"en": "moderate"}),
    Band(0.7, 0.9, "good", {"en": "good"}),
    Band(0.9, 1.0, "excellent", {"en": "excellent"}),
)
"""spring-ai-ragas's standard scale, for every judged 0..1 metric that is better higher."""
_STANDARD = STANDARD

BANDS: Mapping[str, Sequence[Band]] = {
    "noise_sensitivity": _NOISE,
    # judge-free metrics with the standard scale (every judged 0..1 higher-is-better metric has it
    # by default, see scale_for)
    "semantic_similarity": _STANDARD,
    "tool_call_accuracy": _STANDARD,
    "response_relevancy": _STANDARD,  # a cosine in [-1, 1]: below 0 reads as poor
}

"""Interpretation scales by metric registry name, where a metric's scale is not the default (see :func:`scale_for`)."""


ScaleSource = Callable[[str, Literal["higher", "lower"] | None], "Sequence[Band] | None"]
"""``source(registry_name, direction) -> scale or None``: where scales not in :data:`BANDS` come from."""

_SOURCES: list[ScaleSource] = []


def register_scale_source(source: ScaleSource) -> None:
    """Add a place :func:`scale_for` asks for a scale not in :data:`BANDS` (registering twice is a no-op).

    The metric registry registers one when :mod:`ragqa.metrics` is imported (every metric that asks a
    judge, scores in [0, 1] and is better higher gets the standard scale,
    :meth:`ragqa.metrics.base.Metric.interpretation_scale`), so this module needs no import of the
    metrics above it.
    """
    if source not in _SOURCES:
        _SOURCES.append(source)


def scale_for(metric_name: str, direction: Literal["higher", "lower"] | None = None) -> Sequence[Band] | None:
    """The interpretation scale of ``metric_name`` (a registry name or a result key).

    :data:`BANDS` first; otherwise what a registered scale source gives: spring-ai-ragas's standard
    scale for every metric of the registry that asks a judge, scores in [0, 1] and is better higher
    (a new metric needs no entry here); ``None`` for the rest (text metrics, levels such as rubrics
    1..5, lower-is-better metrics without a scale of their own).

    Args:
        metric_name: a registry name or a result key.
        direction: the result's direction where it is the instance's, not the class's (an aspect
            critic of ``harmfulness`` is better lower, so its 0 is not "poor"); ``None``: the class's.
    """
    base = _base_name(metric_name)
    if base in BANDS:
        return BANDS[base]
    for source in _SOURCES:
        scale = source(base, direction)
        if scale is not None:
            return scale
    return None


def _base_name(metric_name: str) -> str:
    return metric_name.split("(", 1)[0].strip()


def band_for(metric_name: str, value: float, direction: Literal["higher", "lower"] | None = None) -> Band | None:
    """The band ``value`` falls in for ``metric_name``.

    Args:
        metric_name: a registry name (``noise_sensitivity``) or a result key
            (``noise_sensitivity(mode=relevant)``).
        value: the score.
        direction: the result's direction (see :func:`scale_for`); ``None``: the metric class's.

    Returns:
        The band, or ``None`` when the metric has no scale, ``value`` is NaN, or ``value`` is
        outside the scale. A value below a scale whose lowest band is ``poor`` (a negative
        cosine relevancy) falls in that band.
    """
    scale = scale_for(metric_name, direction)
    if scale is None or math.isnan(value):
        return None
    # 1e-9 of slack on the upper bound absorbs float noise at band edges (0.1 + 0.2 = 0.30000000000000004).
    for i, band in enumerate(scale):
        lower_ok = value >= band.low if i == 0 else value > band.low
        if lower_ok and value <= band.high + 1e-9:
            return band
    if scale and value < scale[0].low and scale[0].level == "poor":
        return scale[0]
    return None


def interpret(
    metric_name: str,
    value: float,
    language: Language = "en",
    direction: Literal["higher", "lower"] | None = None,
) -> str | None:
    """Explain ``value`` of ``metric_name`` in words.

    Args:
        metric_name: a registry name or a result key with parameters.
        value: the score (NaN gives ``None``).
        language: ``en`` or ``ru``.
        direction: the result's direction (see :func:`scale_for`); ``None``: the metric class's.

    Returns:
        The band's meaning with its range (``"ignores noise (0-0.1)"``), or ``None`` when the
        metric has no interpretation scale or the value is NaN.
    """
    band = band_for(metric_name, value, direction)
    return band.label(language) if band is not None else None
