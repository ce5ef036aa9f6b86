"""Topic adherence: does the agent answer on its topics and refuse the others?

RAGAS ``TopicAdherenceScore`` (``metrics/_topic_adherence.py``, name ``topic_adherence``):

1. ``topic_extraction``: the topics of the human's turns (one call, on RAGAS's transcript);
2. ``topic_refusal``: per topic, did the AI refuse to answer about it? (one call per topic; here
   they run concurrently, RAGAS runs them one after another); ``answered = not refused``;
3. ``topic_classification``: per topic, does it fall into any of ``reference_topics``? (one call).

With ``TP = answered and on-topic``, ``FP = answered and off-topic``, ``FN = refused and
on-topic``: ``precision = TP / (TP + FP + 1e-10)``, ``recall = TP / (TP + FN + 1e-10)``,
``f1 = 2 P R / (P + R + 1e-10)`` (RAGAS's epsilons). A refused off-topic question counts in none.

Differences from RAGAS, each on the metric's page: no topic extracted is NaN (RAGAS's
collections API; the legacy metric returns 0.0); a classification list whose length differs from
the topics is that judge's failure (RAGAS pads with False or truncates); blank topics are dropped;
more than ``max_topics`` topics is that judge's failure, so that the run's call estimate
(``max_topics + 2``) stays an upper bound. spring-ai-ragas has no refusal step (precision =
on-topic share of the topics, recall = share of reference topics matched).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import ClassVar, Literal, get_args

from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Judge
from ragqa.messages import render_conversation
from ragqa.metrics.base import CallPlan, Direction, Metric, MetricContext
from ragqa.prompts.topics import (
    TOPIC_CLASSIFICATION,
    TOPIC_EXTRACTION,
    TOPIC_REFUSAL,
    TopicClassificationInput,
    TopicExtractionInput,
    TopicRefusalInput,
)
from ragqa.schema import MetricScore, Sample

__all__ = ["TOPIC_EPS", "TopicAdherence", "TopicMode", "topic_adherence_score"]

TopicMode = Literal["precision", "recall", "f1"]
"""Which of RAGAS's three figures is the score."""

TOPIC_EPS = 1e-10
"""RAGAS's epsilon in the precision, recall and f1 denominators."""


def topic_adherence_score(answered: Sequence[bool], on_topic: Sequence[bool], mode: TopicMode = "f1") -> float:
    """RAGAS's topic adherence from per-topic answered and on-topic flags.

    Args:
        answered: ``bool[T]``, True when the AI answered about topic t (did not refuse).
        on_topic: ``bool[T]``, True when topic t falls into a reference topic.
        mode: ``precision``, ``recall`` or ``f1``.

    Returns:
        The score in [0, 1), higher is better (never exactly 1 because of the epsilons); NaN
        when there is no topic.

    Raises:
        ValueError: when the lengths differ or the mode is unknown.
    """
    if len(answered) != len(on_topic):
        raise ValueError(f"{len(answered)} answered flags for {len(on_topic)} classifications")
    if mode not in get_args(TopicMode):
        raise ValueError(f"mode must be 'precision', 'recall' or 'f1', not {mode!r}")
    if not answered:
        return math.nan
    tp = sum(1 for a, o in zip(answered, on_topic, strict=True) if a and o)
    fp = sum(1 for a, o in zip(answered, on_topic, strict=True) if a and not o)
    fn = sum(1 for a, o in zip(answered, on_topic, strict=True) if not a and o)
    precision = tp / (tp + fp + TOPIC_EPS)
    recall = tp / (tp + fn + TOPIC_EPS)
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 2 * (precision * recall) / (precision + recall + TOPIC_EPS)


class TopicAdherence(Metric):
    """Whether the agent answers questions on its reference topics and refuses the rest.

    - Fields: ``messages``, ``reference_topics``.
    - Range 0..1, higher is better.
    - Judge calls per sample: ``T + 2`` for T extracted topics (at most ``max_topics + 2``);
      the T refusal calls run concurrently.
    - NaN when no topic is extracted.
    - Raises :class:`~ragqa.errors.JudgeOutputError` when the classifications do not match the
      topics one to one, or more than ``max_topics`` topics are extracted.

    Args:
        mode: ``f1`` (default, as RAGAS), ``precision`` or ``recall``; the result key is
            ``topic_adherence(mode=<mode>)`` (RAGAS's column name).
        max_topics: most topics one sample may have (>= 1, default 10); bounds the call estimate.
    """

    name: ClassVar[str] = "topic_adherence"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("messages", "reference_topics")
    description: ClassVar[str] = "Agent answers on its reference topics and refuses off-topic questions"
    calls_per_sample: ClassVar[str] = "T + 2 (T topics, at most max_topics + 2)"
    default_threshold: ClassVar[float | None] = 0.7

    def __init__(self, mode: TopicMode = "f1", max_topics: int = 10) -> None:
        """Create the metric.

        Raises:
            ValueError: for an unknown mode or ``max_topics`` below 1.
        """
        if mode not in get_args(TopicMode):
            raise ValueError(f"mode must be 'precision', 'recall' or 'f1', not {mode!r}")
        if isinstance(max_topics, bool) or not isinstance(max_topics, int) or max_topics < 1:
            raise ValueError(f"max_topics must be an integer >= 1, not {max_topics!r}")
        self.mode: TopicMode = mode
        self.max_topics = max_topics

    @property
    def key(self) -> str:
        """``topic_adherence(mode=<mode>)``."""
        return f"{self.name}(mode={self.mode})"

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """``max_topics + 2``: the extraction, at most ``max_topics`` refusal calls, the classification."""
        return self.max_topics + 2

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        language = context.language
        transcript = render_conversation(sample.messages or [])
        extracted = await judge.ask(TOPIC_EXTRACTION, TopicExtractionInput(user_input=transcript), language=language)
        topics = [t.strip() for t in extracted.topics if t.strip()]
        if len(topics) > self.max_topics:
            raise JudgeOutputError(
                f"the judge extracted {len(topics)} topics, more than max_topics={self.max_topics} (the bound of "
                "the run's call estimate); raise topic_adherence's max_topics option",
                judge_id=judge.id,
                step=TOPIC_EXTRACTION.name,
                raw=extracted.model_dump_json(),
            )
        if not topics:
            return MetricScore(
                value=math.nan,
                reason="no topic found in the human's turns",
                details={"mode": self.mode, "topics": []},
            )
        refusals = await asyncio.gather(
            *(
                judge.ask(TOPIC_REFUSAL, TopicRefusalInput(user_input=transcript, topic=t), language=language)
                for t in topics
            )
        )
        classified = await judge.ask(
            TOPIC_CLASSIFICATION,
            TopicClassificationInput(reference_topics=list(sample.reference_topics or []), topics=topics),
            language=language,
        )
        on_topic = list(classified.classifications)
        if len(on_topic) != len(topics):
            raise JudgeOutputError(
                f"judge returned {len(on_topic)} classifications for {len(topics)} topics",
                judge_id=judge.id,
                step=TOPIC_CLASSIFICATION.name,
                raw=classified.model_dump_json(),
            )
        answered = [not r.refused_to_answer for r in refusals]
        value = topic_adherence_score(answered, on_topic, self.mode)
        off_answered = [t for t, a, o in zip(topics, answered, on_topic, strict=True) if a and not o]
        on_refused = [t for t, a, o in zip(topics, answered, on_topic, strict=True) if not a and o]
        reason = f"{len(topics)} topic(s), {sum(on_topic)} on the reference topics, {sum(answered)} answered"
        if off_answered:
            reason += f"; answered off-topic: {'; '.join(off_answered)}"
        if on_refused:
            reason += f"; refused on-topic: {'; '.join(on_refused)}"
        return MetricScore(
            value=value,
            reason=reason,
            details={"mode": self.mode, "topics": topics, "answered": answered, "on_topic": on_topic},
        )
