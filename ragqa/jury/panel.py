"""Claim-level voting in a run: one extraction per sample, every judge's verdicts, a vote per statement.

Under ``ragqa.aggregation.strategy: claim-vote`` (or ``dawid-skene``) a metric that declares a
:class:`~ragqa.metrics.base.ClaimVote` is scored by each judge through an :class:`ExtractorJudge`:
the extraction prompt (the response's statements) is answered by the designated extractor
(``ragqa.jury.extractor``, default the panel's first judge) once per sample for the whole panel,
and every other prompt (the verdicts) by the judge itself. Each judge's score is then its own
formula on its own verdicts over the shared statements (kept in the results as today), and the
panel's aggregate is the formula on the verdicts voted per statement (:func:`ragqa.jury.vote.vote_verdicts`:
weighted majority, a tie settled by the extractor's verdict, then "not supported"). A graded
verdict (the local judge's values in [0, 1]) counts as 1 when it is at least 0.5, the line
:func:`ragqa.metrics.faithfulness.explain` draws between supported and unsupported.

Metrics without a ``ClaimVote`` keep their judges' own calls and the mean of their scores.

With repeats (``ragqa.repeats`` N > 1) the vote happens per repeat: each repeat has its own
extraction by the extractor (repeats are independent calls, :mod:`ragqa.repeats`), every judge's
verdicts of that repeat vote, the formula gives that repeat's panel score, and the run's reducer
reduces the N voted scores, as it reduces each judge's N scores. Voting on verdicts reduced over
repeats would need the repeats to share one statement list, which independent repeats do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from ragqa.aggregate import PanelStrategy, aggregate
from ragqa.errors import ConfigError
from ragqa.judges.base import Judge
from ragqa.jury.vote import vote_verdicts
from ragqa.metrics.base import ClaimVote, Metric
from ragqa.prompts.base import Prompt
from ragqa.repeats import Reducer, reduce_scores
from ragqa.schema import Aggregate, JudgeOutcome, Language, MetricScore

__all__ = [
    "ExtractorJudge",
    "Scored",
    "extractor_index",
    "repeat_matrices",
    "verdict_matrix",
    "voted_aggregate",
    "voted_verdicts",
    "voting_judges",
]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


class ExtractorJudge:
    """A judge whose extraction prompt is answered by the panel's extractor, every other prompt by itself.

    Wrap each judge's per-sample :class:`~ragqa.judges.base.SharedCallJudge` and give them all the
    extractor's one, so the extraction is made once per sample for the whole panel.

    Args:
        own: the judge (its per-sample shared-call wrapper).
        extractor: the extractor's per-sample shared-call wrapper (``own`` itself for the extractor).
        extraction_prompt: the name of the prompt the extractor answers.
    """

    def __init__(self, own: Judge, extractor: Judge, extraction_prompt: str) -> None:
        """Wrap ``own`` (no I/O)."""
        self._own = own
        self._extractor = extractor
        self._prompt = extraction_prompt

    @property
    def id(self) -> str:
        """The judge's own id (its outcome is its own)."""
        return self._own.id

    @property
    def fingerprint(self) -> str:
        """The judge's own fingerprint: each prompt it forwards is answered by the judge that owns the answer."""
        return self._own.fingerprint

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer through the extractor for the extraction prompt, else through the judge itself.

        Raises:
            ragqa.errors.JudgeError: as the judge answering the prompt raises it (an extractor's
                failure fails every judge's score of that metric on that sample).
        """
        target = self._extractor if prompt.name == self._prompt else self._own
        return await target.ask(prompt, data, language=language)


def extractor_index(judge_ids: Sequence[str], extractor: str | None) -> int:
    """The position of the extractor in the panel.

    Args:
        judge_ids: the panel's judge ids, in order.
        extractor: ``ragqa.jury.extractor`` (a judge id), or ``None`` for the first judge.

    Returns:
        The index in ``judge_ids`` (0 when ``extractor`` is ``None``).

    Raises:
        ConfigError: when ``extractor`` names no judge of the panel (the message lists them).
    """
    if extractor is None:
        return 0
    if extractor not in judge_ids:
        raise ConfigError(
            f"ragqa.jury.extractor {extractor!r} is not a judge of the panel; use one of {', '.join(judge_ids)}",
            key="ragqa.jury.extractor",
        )
    return list(judge_ids).index(extractor)


def voting_judges(shared: Sequence[Judge], metric: Metric, extractor: int) -> list[Judge]:
    """The judges that score ``metric`` under claim-vote: ``shared`` routed through the extractor.

    Args:
        shared: each judge's per-sample shared-call wrapper, in panel order.
        metric: the metric; one without :attr:`~ragqa.metrics.base.Metric.claim_vote` keeps ``shared``.
        extractor: the extractor's index in ``shared``.

    Returns:
        One judge per panel judge, in order.
    """
    vote = metric.claim_vote
    if vote is None or not shared:
        return list(shared)
    return [ExtractorJudge(judge, shared[extractor], vote.extraction_prompt) for judge in shared]


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


def verdict_matrix(outcomes: Sequence[Scored], vote: ClaimVote) -> tuple[list[str], NDArray[np.float64]] | None:
    """The panel's verdicts on one sample's shared statements.

    Args:
        outcomes: the judges' outcomes (or their outcomes of one repeat) of one (sample, metric),
            in panel order.
        vote: the metric's claim-vote description.

    Returns:
        ``(statements, matrix)``: the statements and a ``(n_statements, n_judges)`` array of 0, 1
        or NaN (a judge that failed, or whose statements differ from the first scoring judge's);
        ``None`` when no judge scored.
    """
    statements: list[str] | None = None
    columns: list[list[float] | None] = []
    for outcome in outcomes:
        details = outcome.score.details if outcome.score is not None else None
        said = details.get("statements") if details else None
        verdicts = _binary(details.get(vote.verdicts_key)) if details else None
        if isinstance(said, list) and verdicts is not None and len(verdicts) == len(said):
            if statements is None:
                statements = [str(s) for s in said]
            columns.append(verdicts if said == statements else None)
        else:
            columns.append(None)
    if statements is None:
        return None
    matrix = np.full((len(statements), len(outcomes)), np.nan)
    for j, column in enumerate(columns):
        if column is not None:
            matrix[:, j] = column
    return statements, matrix


class _Unscored:
    score: MetricScore | None = None


_NONE = _Unscored()


def repeat_matrices(outcomes: Sequence[JudgeOutcome], vote: ClaimVote) -> list[NDArray[np.float64] | None]:
    """The panel's verdict matrix of each repeat (one entry without repeats), see :func:`verdict_matrix`.

    Returns:
        Per repeat, the ``(n_statements, n_judges)`` matrix, or ``None`` when no judge scored in it.
    """
    n = max((len(o.repeats) for o in outcomes), default=0)
    rounds: list[list[Scored]] = (
        [[o.repeats[r] if r < len(o.repeats) else _NONE for o in outcomes] for r in range(n)] if n else [list(outcomes)]
    )
    out: list[NDArray[np.float64] | None] = []
    for row in rounds:
        found = verdict_matrix(row, vote)
        out.append(found[1] if found is not None else None)
    return out


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
            float(vote.formula(voted_verdicts(matrix, weights=weights, tie_breaker=tie_breaker)))
            for matrix in repeat_matrices(outcomes, vote)
            if matrix is not None
        ]
        value = reduce_scores(per_repeat, reducer)
    return base.model_copy(update={"value": value, "strategy": strategy})
