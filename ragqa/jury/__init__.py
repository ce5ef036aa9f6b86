"""The panel as a jury: claim-level voting and judge reliability estimated without labels.

Pure statistics over the verdicts a run already keeps; no judge calls. :mod:`.dawid_skene` fits
each judge's sensitivity and specificity from the panel's agreements alone (Dawid and Skene 1979);
:mod:`.vote` votes each statement's verdict across judges, optionally weighted by reliability.
"""

from __future__ import annotations

from ragqa.jury.dawid_skene import DawidSkeneFit, fit_dawid_skene, majority_posterior, residual_correlation
from ragqa.jury.vote import log_odds_weights, vote_verdicts

__all__ = [
    "DawidSkeneFit",
    "fit_dawid_skene",
    "log_odds_weights",
    "majority_posterior",
    "residual_correlation",
    "vote_verdicts",
]
