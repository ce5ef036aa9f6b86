"""How the console and the HTML report write numbers: scores, means with their ``±``, tokens, costs.

Shared by :mod:`ragqa.render.console`, :mod:`ragqa.render.console_jury`, :mod:`ragqa.render.details`
and :mod:`ragqa.render.html`, so every view shows a figure the same way.
"""

from __future__ import annotations

import math

from ragqa.schema import Interval, Usage

__all__ = ["fmt_cost", "fmt_mean", "fmt_score", "fmt_tokens", "fmt_two", "plus_minus"]


def fmt_score(value: float) -> str:
    """A score with 3 decimals; NaN as ``n/a``."""
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def plus_minus(interval: Interval) -> float:
    """The ``±`` shown for ``interval``: the larger distance from its estimate to a bound.

    It is the half-width of a symmetric interval, and stays so when one bound was clamped to the
    metric's range (the other side keeps the full half-width); the bounds themselves are in the
    JSON report and the CSV.
    """
    return max(interval.estimate - interval.low, interval.high - interval.estimate)


def fmt_mean(value: float, interval: Interval | None) -> str:
    """A mean with 3 decimals and its interval's ``±`` (:func:`plus_minus`): ``0.645 ± 0.038``.

    ``n/a`` for NaN; the mean alone when there is no interval (fewer than two samples).
    """
    if interval is None or math.isnan(value):
        return fmt_score(value)
    return f"{fmt_score(value)} ± {plus_minus(interval):.3f}"


def fmt_cost(cost: float | None) -> str:
    """A cost with 4 decimals in the price table's currency; ``-`` when no price is configured."""
    return "-" if cost is None else f"{cost:.4f}"


def fmt_tokens(usage: Usage) -> str:
    """Total tokens with thousands separators; ``-`` when no call reported usage (e.g. cached or local)."""
    return "-" if usage.calls == 0 and usage.total_tokens == 0 else f"{usage.total_tokens:,}"


def fmt_two(value: float) -> str:
    """A figure with 2 decimals (agreement, reliability: the console's glance); NaN as ``n/a``."""
    return "n/a" if math.isnan(value) else f"{value:.2f}"
