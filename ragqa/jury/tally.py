"""The numbers of claim-level voting: each sample's verdict matrix, the vote, the voted aggregate. numpy.

Kept apart from :mod:`ragqa.jury.panel` so that a run that does not vote never imports numpy
(``tests/cli/test_startup_imports.py``); the rule and its sources are in :mod:`ragqa.jury.panel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ragqa.aggregate import PanelStrategy, aggregate
from ragqa.jury.vote import vote_verdicts
from ragqa.metrics.base import ClaimVote, Metric, VoteFormula
from ragqa.repeats import Reducer, reduce_scores
from ragqa.schema import Aggregate, JudgeOutcome, MetricScore

__all__ = [
    "Matrices",
    "Scored",
    "Unit",
    "repeat_units",
    "vote_unit",
    "voted_aggregate",
    "voted_verdicts",
]


def _binary(values: Any) -> list[float] | None:
    if not isinstance(values, list):
        return None
    return [1.0 if float(v) >= 0.5 else 0.0 for v in values]


class Scored(Protocol):
    """A judge's outcome or one of its repeats: anything with a score (``None`` when it failed)."""

    @property
    def score(self) -> MetricScore | None:
        """The score, or ``None``."""
        ...


class _Unscored:
    score: MetricScore | None = None


_NONE = _Unscored()

Matrices = list[NDArray[np.float64]]
"""One ``(n_statements, n_judges)`` verdict matrix per list of a :class:`~ragqa.metrics.base.ClaimVote`."""


Unit = tuple[Matrices, VoteFormula]
"""One repeat's verdict matrices of a (sample, metric) and the formula that scores their voted verdicts."""


def vote_unit(outcomes: Sequence[Scored], vote: ClaimVote) -> Unit | None:
    """The panel's verdict matrices on one sample's voted lists (:meth:`~ragqa.metrics.base.ClaimVote.layout_of`).

    Args:
        outcomes: the judges' outcomes (or their outcomes of one repeat) of one (sample, metric), in panel order.
        vote: the metric's :class:`~ragqa.metrics.base.ClaimVote`.

    Returns:
        ``(matrices, formula)``: one ``(n_items, n_judges)`` array of 0, 1 or NaN per list (NaN: the
        judge failed, or its keys of that list differ from the first scoring judge's), and the
        formula of the first scoring judge's layout; ``None`` when no judge's details give one.
    """
    layouts = [vote.layout_of(o.score.details) if o.score is not None and o.score.details else None for o in outcomes]
    first = next((layout for layout in layouts if layout is not None), None)
    if first is None:
        return None
    matrices: Matrices = []
    for i, (keys, _) in enumerate(first[0]):
        matrix = np.full((len(keys), len(outcomes)), np.nan)
        for j, layout in enumerate(layouts):
            if layout is not None and len(layout[0]) == len(first[0]) and layout[0][i][0] == keys:
                column = _binary(layout[0][i][1])
                if column is not None and len(column) == len(keys):
                    matrix[:, j] = column
        matrices.append(matrix)
    return matrices, first[1]


def repeat_units(outcomes: Sequence[JudgeOutcome], vote: ClaimVote) -> list[Unit]:
    """The panel's verdict matrices and formula of each repeat (one entry without repeats), see :func:`vote_unit`.

    Returns:
        Per repeat in which some judge scored, its :data:`Unit`.
    """
    n = max((len(o.repeats) for o in outcomes), default=0)
    rounds: list[list[Scored]] = (
        [[o.repeats[r] if r < len(o.repeats) else _NONE for o in outcomes] for r in range(n)] if n else [list(outcomes)]
    )
    return [unit for row in rounds if (unit := vote_unit(row, vote)) is not None]


def voted_verdicts(
    matrix: NDArray[np.float64], *, weights: Sequence[float] | None = None, tie_breaker: int = 0
) -> list[float]:
    """The voted verdict of each statement that has one (:func:`ragqa.jury.vote.vote_verdicts`), as floats."""
    voted = vote_verdicts(matrix, weights=weights, tie_breaker=tie_breaker)
    return [float(v) for v in voted if not np.isnan(v)]


def voted_aggregate(
    metric: Metric,
    outcomes: Sequence[JudgeOutcome],
    *,
    strategy: PanelStrategy,
    quorum: int,
    tie_breaker: int = 0,
    weights: Sequence[float] | None = None,
    reducer: Reducer = "mean",
) -> Aggregate:
    """The panel's aggregate of one (sample, metric) by claim-level voting.

    The spread and counts are those of the judges' own scores (as with ``mean``); the value is
    the metric's formula on the voted verdicts, NaN below quorum. A metric without a
    ``ClaimVote`` is aggregated by ``mean``, and its aggregate says so.

    Args:
        metric: the metric.
        outcomes: the judges' outcomes, in panel order.
        strategy: ``claim-vote`` or ``dawid-skene`` (recorded in the aggregate; within one sample both
            vote by majority, the run's Dawid-Skene fit comes after the run, see
            :mod:`ragqa.jury.reliability`).
        quorum: minimum judges with a finite score (>= 1).
        tie_breaker: the extractor's index, whose verdict settles a tie.
        weights: per-judge vote weights (``None``: one vote each).
        reducer: how the voted scores of the repeats are reduced (see the module docstring).

    Returns:
        The :class:`~ragqa.schema.Aggregate`.
    """
    scores = [o.score.value for o in outcomes if o.score is not None]
    n_failed = sum(1 for o in outcomes if not o.ok)
    vote = metric.claim_vote
    if vote is None:
        return aggregate(scores, n_failed=n_failed, strategy="mean", quorum=quorum)
    base = aggregate(scores, n_failed=n_failed, strategy="mean", quorum=quorum)
    value = float("nan")
    if base.quorum_met:
        per_repeat = [
            float(formula([voted_verdicts(m, weights=weights, tie_breaker=tie_breaker) for m in matrices]))
            for matrices, formula in repeat_units(outcomes, vote)
        ]
        value = reduce_scores(per_repeat, reducer)
    return base.model_copy(update={"value": value, "strategy": strategy})
