"""The panel as a jury: claim-level voting and judge reliability estimated without labels.

Pure statistics over the verdicts a run already keeps; no judge calls. :mod:`.dawid_skene` fits
each judge's sensitivity and specificity from the panel's agreements alone (Dawid and Skene 1979);
:mod:`.vote` votes each statement's verdict across judges, optionally weighted by reliability.
In a run: :mod:`.panel` (one extraction per sample, the vote as the aggregate), :mod:`.tally` (its
numbers) and :mod:`.reliability` (the reliability section).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragqa.jury.dawid_skene import DawidSkeneFit, fit_dawid_skene, majority_posterior, residual_correlation
    from ragqa.jury.vote import log_odds_weights, vote_verdicts

_LAZY = {
    "DawidSkeneFit": "ragqa.jury.dawid_skene",
    "fit_dawid_skene": "ragqa.jury.dawid_skene",
    "majority_posterior": "ragqa.jury.dawid_skene",
    "residual_correlation": "ragqa.jury.dawid_skene",
    "log_odds_weights": "ragqa.jury.vote",
    "vote_verdicts": "ragqa.jury.vote",
}
"""Names imported on first use, so ``ragqa.jury.panel`` (which the evaluator imports) costs no numpy."""

__all__ = [
    "DawidSkeneFit",
    "fit_dawid_skene",
    "log_odds_weights",
    "majority_posterior",
    "residual_correlation",
    "vote_verdicts",
]


def __getattr__(name: str) -> Any:
    """Import the statistics' public names on first use (numpy is loaded then, not before)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragqa.jury' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
