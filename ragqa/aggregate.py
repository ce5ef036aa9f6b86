"""Aggregation of per-judge scores into the panel's score. Pure; the NaN policy lives here only.

- NaN means "unscored": it is excluded, never counted as 0.
- Failed judges are excluded (they are listed in the result, not here).
- A quorum (minimum number of judges with a score) decides whether the aggregate exists; below
  it the aggregate is NaN.
- Strategies: ``mean`` (default), ``median``, ``min``, ``max``, ``majority`` (spring-ai-ragas's
  MAJORITY_VOTING: 1.0 when more than half of the scores are >= 0.5, else 0.0; a tie gives 0.0).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, get_args

from ragqa.schema import Aggregate

__all__ = ["PANEL_STRATEGIES", "STRATEGIES", "VOTE_STRATEGIES", "PanelStrategy", "Strategy", "aggregate", "combine"]

Strategy = Literal["mean", "median", "min", "max", "majority"]
"""Strategies that combine the judges' scores of a sample."""

PanelStrategy = Literal["mean", "median", "min", "max", "majority", "claim-vote", "dawid-skene"]
"""Every ``ragqa.aggregation.strategy``: the score strategies, and the jury's votes per statement
(``claim-vote``, ``dawid-skene``; :mod:`ragqa.jury.panel`), which fall back to ``mean`` for metrics
that have no statements to vote on."""

VOTE_STRATEGIES: tuple[PanelStrategy, ...] = ("claim-vote", "dawid-skene")
"""The strategies that vote per statement (:mod:`ragqa.jury`)."""


def _median(scores: Sequence[float]) -> float:
    import statistics  # imported on use: most runs aggregate by mean

    return float(statistics.median(scores))


def _majority(scores: Sequence[float]) -> float:
    passing = sum(1 for s in scores if s >= 0.5)
    return 1.0 if passing > len(scores) / 2 else 0.0


STRATEGIES: Mapping[Strategy, Callable[[Sequence[float]], float]] = {
    "mean": lambda s: math.fsum(s) / len(s),
    "median": _median,
    "min": lambda s: float(min(s)),
    "max": lambda s: float(max(s)),
    "majority": _majority,
}
"""Each strategy maps a non-empty list of finite scores to one score."""

assert set(STRATEGIES) == set(get_args(Strategy))

PANEL_STRATEGIES: tuple[PanelStrategy, ...] = (*STRATEGIES, *VOTE_STRATEGIES)
"""Every strategy a panel accepts, in the order help texts list them."""

assert set(PANEL_STRATEGIES) == set(get_args(PanelStrategy))


def combine(scores: Sequence[float], strategy: Strategy = "mean") -> float:
    """Combine scores with ``strategy``, ignoring NaNs.

    Returns:
        The combined value, or NaN when no finite score is given.

    Raises:
        ValueError: for an unknown strategy.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown aggregation strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    finite = [s for s in scores if not math.isnan(s)]
    return STRATEGIES[strategy](finite) if finite else float("nan")


def aggregate(scores: Sequence[float], *, n_failed: int = 0, strategy: Strategy = "mean", quorum: int = 1) -> Aggregate:
    """Aggregate one sample's per-judge scores.

    Args:
        scores: scores of the judges that ran (NaN = unscored), in any order.
        n_failed: judges that failed and are excluded.
        strategy: how to combine the finite scores.
        quorum: minimum number of finite scores for the aggregate to exist (>= 1).

    Returns:
        The :class:`~ragqa.schema.Aggregate`: value (NaN below quorum), spread (max - min of the
        finite scores; NaN when none), and the counts.

    Raises:
        ValueError: for an unknown strategy or a quorum below 1.
    """
    if quorum < 1:
        raise ValueError(f"quorum must be >= 1, got {quorum}")
    finite = [s for s in scores if not math.isnan(s)]
    met = len(finite) >= quorum
    return Aggregate(
        value=combine(finite, strategy) if met else float("nan"),
        strategy=strategy,
        spread=(max(finite) - min(finite)) if finite else float("nan"),
        n_ok=len(finite),
        n_nan=len(scores) - len(finite),
        n_failed=n_failed,
        quorum=quorum,
        quorum_met=met,
    )
