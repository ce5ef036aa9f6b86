"""Claim-level voting: the panel decides each statement's verdict, then the metric's formula runs.

Pure numpy. Errors happen at the level of a claim (one judge misreads one statement), so a panel that
votes per statement and scores the voted verdicts is less moved by one judge's slip than a mean of
the judges' scores ("Replacing Judges with Juries", Verga et al. 2024, arXiv:2404.18796, votes on
final answers; the same majority rule applied per claim).

Rule: each judge's verdict counts with its weight (1 without reliability weights); a statement is
voted 1 when the weighted votes for 1 exceed those for 0, and 0 when they fall short. A tie goes to
the tie-breaking judge's verdict (by default the first judge, the one that extracted the statements)
and, when that judge gave none, to 0, the conservative verdict ("not supported" for faithfulness).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ragqa.jury.dawid_skene import _as_verdicts

__all__ = ["log_odds_weights", "vote_verdicts"]


def log_odds_weights(accuracy: Sequence[float] | NDArray[np.float64], *, floor: float = 1e-3) -> NDArray[np.float64]:
    """Weights of the optimal weighted majority for independent voters: ``log(p / (1 - p))``.

    Nitzan, S. and Paroush, J. (1982), "Optimal Decision Rules in Uncertain Dichotomous Choice
    Situations", International Economic Review 23(2), 289-297. A judge at or below chance (p <= 0.5)
    gets weight 0 rather than a negative one: its verdicts are ignored, never inverted.

    Args:
        accuracy: each judge's accuracy in [0, 1] (e.g. :attr:`DawidSkeneFit.accuracy`).
        floor: accuracies are clipped to ``[floor, 1 - floor]`` so a perfect judge gets a finite weight.

    Returns:
        ``(n_judges,)`` non-negative weights.

    Raises:
        ValueError: for an accuracy outside [0, 1] or NaN.
    """
    p = np.asarray(accuracy, dtype=np.float64)
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"accuracies must lie in [0, 1], got {p.tolist()}")
    p = np.clip(p, floor, 1 - floor)
    return np.maximum(np.log(p / (1 - p)), 0.0)


def vote_verdicts(
    verdicts: ArrayLike, *, weights: Sequence[float] | NDArray[np.float64] | None = None, tie_breaker: int = 0
) -> NDArray[np.float64]:
    """Vote each statement's verdict across the panel (the rule is in the module docstring).

    Args:
        verdicts: ``(n_statements, n_judges)`` array of 0, 1 or NaN (the judge gave no verdict).
        weights: ``(n_judges,)`` non-negative weights; ``None`` counts every judge once.
        tie_breaker: index of the judge whose verdict settles a tie.

    Returns:
        ``(n_statements,)`` voted verdicts, 0.0 or 1.0; NaN for a statement no judge gave a verdict on.

    Raises:
        ValueError: for a bad verdict array, weights of the wrong length or negative, or a
            ``tie_breaker`` outside the panel.
    """
    matrix = _as_verdicts(verdicts)
    n_judges = matrix.shape[1]
    if not 0 <= tie_breaker < max(n_judges, 1):
        raise ValueError(f"tie_breaker {tie_breaker} is not a judge of a panel of {n_judges}")
    w = np.ones(n_judges) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (n_judges,) or np.any(w < 0) or np.any(np.isnan(w)):
        raise ValueError(f"weights must be {n_judges} non-negative numbers, got {w.tolist()}")
    seen = ~np.isnan(matrix)
    signed = np.where(seen, 2.0 * np.nan_to_num(matrix) - 1.0, 0.0) @ w
    breaker = matrix[:, tie_breaker] if n_judges else np.full(matrix.shape[0], np.nan)
    tie = np.where(np.isnan(breaker), 0.0, breaker)
    voted = np.where(signed > 1e-12, 1.0, np.where(signed < -1e-12, 0.0, tie))
    return np.where(seen.any(axis=1), voted, np.nan)
