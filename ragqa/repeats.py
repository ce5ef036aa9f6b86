"""Repeats (Inspect AI's epochs): each judge scores each (sample, metric) N times; a reducer gives its score.

A run with ``repeats`` N > 1 (``--repeats``, ``ragqa.repeats``, ``repeats=``) asks every judge
for every (sample, metric) N times with independent calls: the evaluator gives each repeat its
own :class:`~ragqa.judges.base.SharedCallJudge`, so a step that metrics share (the response's
statements used by faithfulness and hallucination, a batched verdict matrix) is made once *per
repeat* and never reused across repeats, and sets :data:`repeat_index` for the repeat's calls,
which enters the disk cache key from repeat 1 on (:meth:`ragqa.cache.JudgeCache.key`): repeat 0
has exactly the key of a single-repeat run, so an existing cache stays valid and a warm cache
replays all N repeats.

The judge's score for the pair is then reduced over its repeats (:func:`combine_repeats`) with a
reducer named as Inspect AI's score reducers (``inspect_ai.scorer``: ``mean``, ``median``,
``mode``):

- ``mean`` (default): the arithmetic mean of the repeats' finite scores;
- ``median``: their median (robust to one odd repeat);
- ``mode``: their most common value, for binary or discrete metrics (``aspect_critic``,
  ``agent_goal_accuracy``, ``rubrics_score``); on a tie, the value that came first in repeat
  order, as Inspect AI's ``mode_score`` (``Counter.most_common``). Use an odd N for binary
  metrics so a tie cannot happen. On continuous scores repeats rarely coincide, so ``mode`` then
  mostly returns repeat 0's value: use ``mean`` or ``median`` there.

Failures: a judge's outcome fails only when *every* repeat failed (its failure is repeat 0's).
A *partly* failed judge is scored from the repeats that succeeded; it counts as a judge with a
score in the aggregate, and its failed repeats stay in :attr:`~ragqa.schema.JudgeOutcome.repeats`
(and the results file) with their failures. NaN ("unscored", e.g. a response with no statements)
repeats are left out of the reduction like NaN judges are left out of the aggregate; when every
successful repeat is NaN, the judge's score is NaN.

The local judge is deterministic: its N repeats are N real computations that give the same
answer, so its repeat-to-repeat variance is exactly zero. No noise is added to imitate an LLM.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import Literal, get_args

from ragqa.aggregate import combine
from ragqa.schema import JudgeOutcome, MetricScore, RepeatOutcome, Usage

__all__ = ["REDUCERS", "Reducer", "combine_repeats", "reduce_scores", "repeat_index"]

Reducer = Literal["mean", "median", "mode"]
"""How a judge's repeats become its score (names of Inspect AI's score reducers)."""

repeat_index: ContextVar[int] = ContextVar("ragqa_repeat_index", default=0)
"""The repeat (0-based) that the judge calls of the current task belong to.

The panel evaluator sets it for every (metric, judge) computation of repeat 1 and later; the disk
cache (:class:`ragqa.cache.CachingJudge`) adds it to the key from 1 on, so repeats are
independent calls and repeat 0 keeps a single-repeat run's key. Default 0."""


def _mode(values: Sequence[float]) -> float:
    """The most common value; on a tie the one that came first (``Counter`` keeps insertion order)."""
    return float(Counter(values).most_common(1)[0][0])


REDUCERS: Mapping[Reducer, Callable[[Sequence[float]], float]] = {
    "mean": lambda values: combine(values, "mean"),
    "median": lambda values: combine(values, "median"),
    "mode": _mode,
}
"""Each reducer maps a non-empty list of finite scores to one score."""

assert set(REDUCERS) == set(get_args(Reducer))


def reduce_scores(values: Sequence[float], reducer: Reducer = "mean") -> float:
    """Reduce one judge's repeat scores to its score, ignoring NaN (unscored) repeats.

    Args:
        values: one score per successful repeat, in repeat order, in the metric's range (NaN allowed).
        reducer: ``mean``, ``median`` or ``mode`` (see the module docstring).

    Returns:
        The reduced score, in the metric's range (each reducer returns a value between the
        smallest and the largest finite score), or NaN when no value is finite. Identical values
        reduce to that value exactly (a floating-point mean of N equal values may be off by one
        unit in the last place), so a deterministic judge's repeats give its single-repeat score.

    Raises:
        ValueError: for an unknown reducer.
    """
    if reducer not in REDUCERS:
        raise ValueError(f"unknown repeat reducer {reducer!r}; use one of {', '.join(REDUCERS)}")
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return math.nan
    if all(v == finite[0] for v in finite):
        return finite[0]
    return REDUCERS[reducer](finite)


def _representative(scored: Sequence[MetricScore], value: float) -> MetricScore:
    """The first scored repeat nearest ``value`` (the first one when ``value`` or every score is NaN)."""
    finite = [s for s in scored if not s.is_nan]
    if math.isnan(value) or not finite:
        return scored[0]
    return min(finite, key=lambda s: abs(s.value - value))  # min keeps the first of equals


def combine_repeats(outcomes: Sequence[JudgeOutcome], reducer: Reducer = "mean") -> JudgeOutcome:
    """One judge's outcome for a (sample, metric) from its repeats' outcomes.

    Args:
        outcomes: the judge's outcome of each repeat, in repeat order (at least one; all of one judge).
        reducer: how the repeats' scores are reduced (:func:`reduce_scores`).

    Returns:
        The judge's outcome: ``score`` is the reduced value, with the reason and details of the
        representative repeat (the first successful one whose score is nearest the reduced
        value, so with identical repeats they are exactly a single repeat's); ``failure`` is set
        (repeat 0's failure, no score) only when every repeat failed; ``usage`` is the sum over
        the repeats; ``latency_s`` the longest repeat (they run concurrently); ``repeats`` holds
        every repeat's score, failure, latency and usage.

    Raises:
        ValueError: when ``outcomes`` is empty or the reducer is unknown.
    """
    if not outcomes:
        raise ValueError("combine_repeats needs at least one repeat")
    repeats = [
        RepeatOutcome(index=i, score=o.score, failure=o.failure, latency_s=o.latency_s, usage=o.usage)
        for i, o in enumerate(outcomes)
    ]
    usage = sum((o.usage for o in outcomes), Usage())
    latency = max(o.latency_s for o in outcomes)
    judge_id = outcomes[0].judge_id
    scored = [o.score for o in outcomes if o.ok and o.score is not None]
    if not scored:
        failure = next((o.failure for o in outcomes if o.failure is not None), None)
        return JudgeOutcome(judge_id=judge_id, failure=failure, latency_s=latency, usage=usage, repeats=repeats)
    value = reduce_scores([s.value for s in scored], reducer)
    like = _representative(scored, value)
    score = MetricScore(value=value, reason=like.reason, details=like.details)
    return JudgeOutcome(judge_id=judge_id, score=score, latency_s=latency, usage=usage, repeats=repeats)
