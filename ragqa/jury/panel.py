"""Claim-level voting in a run: one extraction per sample, every judge's verdicts, a vote per statement.

Under ``ragqa.aggregation.strategy: claim-vote`` (or ``dawid-skene``) a metric that declares a
:class:`~ragqa.metrics.base.ClaimVote` is scored by each judge through an :class:`ExtractorJudge`:
the extraction prompt (the response's statements; factual correctness's claim decompositions) is
answered by the designated extractor (``ragqa.jury.extractor``, default the panel's first judge)
once per sample for the whole panel,
and every other prompt (the verdicts) by the judge itself. Each judge's score is then its own
formula on its own verdicts over the shared statements (kept in the results as today), and the
panel's aggregate is the formula on the verdicts voted per statement (:func:`ragqa.jury.vote.vote_verdicts`:
weighted majority, a tie settled by the extractor's verdict, then "not supported"). A graded
verdict (the local judge's values in [0, 1]) counts as 1 when it is at least 0.5, the line
:func:`ragqa.metrics.faithfulness.explain` draws between supported and unsupported.

A metric whose vote extracts nothing (context precision votes on the sample's own contexts,
``extraction_prompt`` ``None``) keeps every judge's own calls and votes on their verdicts; one whose
lists depend on the sample (noise sensitivity's verdict matrices) names them in
:attr:`~ragqa.metrics.base.ClaimVote.layout`. Metrics without a ``ClaimVote`` keep their judges'
own calls and the mean of their scores.

With repeats (``ragqa.repeats`` N > 1) the vote happens per repeat: each repeat has its own
extraction by the extractor (repeats are independent calls, :mod:`ragqa.repeats`), every judge's
verdicts of that repeat vote, the formula gives that repeat's panel score, and the run's reducer
reduces the N voted scores, as it reduces each judge's N scores. Voting on verdicts reduced over
repeats would need the repeats to share one statement list, which independent repeats do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from pydantic import BaseModel

from ragqa.aggregate import PanelStrategy
from ragqa.errors import ConfigError
from ragqa.judges.base import Judge
from ragqa.metrics.base import Metric
from ragqa.prompts.base import Prompt
from ragqa.repeats import Reducer
from ragqa.schema import Aggregate, JudgeOutcome, Language

if TYPE_CHECKING:
    from ragqa.jury.reliability import JuryCollector

__all__ = ["ExtractorJudge", "extractor_index", "jury_collector", "voted_aggregate", "voting_judges"]

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
        metric: the metric; one without :attr:`~ragqa.metrics.base.Metric.claim_vote`, or whose vote
            extracts nothing (context precision), keeps ``shared``.
        extractor: the extractor's index in ``shared``.

    Returns:
        One judge per panel judge, in order.
    """
    vote = metric.claim_vote
    if vote is None or vote.extraction_prompt is None or not shared:
        return list(shared)
    return [ExtractorJudge(judge, shared[extractor], vote.extraction_prompt) for judge in shared]


def voted_aggregate(
    metric: Metric,
    outcomes: Sequence[JudgeOutcome],
    *,
    strategy: PanelStrategy,
    quorum: int,
    tie_breaker: int = 0,
    reducer: Reducer = "mean",
) -> Aggregate:
    """The panel's aggregate of one (sample, metric) by claim-level voting (:func:`ragqa.jury.tally.voted_aggregate`).

    Raises:
        ValueError: for an unknown reducer.
    """
    from ragqa.jury import tally  # numpy, imported by a run that votes only (tests/test_startup_imports.py)

    return tally.voted_aggregate(
        metric, outcomes, strategy=strategy, quorum=quorum, tie_breaker=tie_breaker, reducer=reducer
    )


def jury_collector(metrics: Sequence[Metric], judge_ids: Sequence[str], *, tie_breaker: int = 0) -> JuryCollector:
    """A :class:`~ragqa.jury.reliability.JuryCollector` of a voting run's verdicts (numpy, imported here on use)."""
    from ragqa.jury.reliability import JuryCollector  # numpy, imported by a run that votes only

    return JuryCollector(metrics, judge_ids, tie_breaker=tie_breaker)
