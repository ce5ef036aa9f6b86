"""What the general-purpose metrics share: the submission they show, option checks and the majority vote.

A sample with ``messages`` is judged in RAGAS's multi-turn form (``AspectCritic``,
``SimpleCriteriaScore`` and ``RubricsScore`` ``_multi_turn_ascore``): the judge sees the whole
conversation as ``user_input`` (:func:`ragqa.messages.render_conversation`, RAGAS's
``pretty_repr``) and no ``response`` or contexts.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from ragqa.errors import SampleError
from ragqa.judges.base import Judge
from ragqa.messages import render_conversation
from ragqa.metrics.base import Metric
from ragqa.prompts.base import Prompt
from ragqa.schema import Language, Sample

__all__ = [
    "SubmissionMetric",
    "ask_votes",
    "check_label",
    "is_conversation",
    "majority_vote",
    "odd_strictness",
    "submission",
]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def is_conversation(sample: Sample) -> bool:
    """Whether ``sample`` is judged in the multi-turn form: it has ``messages`` (RAGAS ``MultiTurnSample``)."""
    return bool(sample.messages)


def submission(sample: Sample, *, reference: bool = True, conversation_reference: bool = False) -> dict[str, Any]:
    """The sample's fields a general-purpose judge sees, ``None`` where absent (left out of the prompt).

    Args:
        sample: the sample.
        reference: include ``reference`` in the single-turn form (RAGAS's single-turn inputs do).
        conversation_reference: include ``reference`` in the multi-turn form (RAGAS's
            ``SimpleCriteriaScore`` does; its ``AspectCritic`` and ``RubricsScore`` do not).

    Returns:
        ``{user_input, response, retrieved_contexts, reference_contexts, reference}``; the
        contexts are :meth:`Sample.contexts` (``context_chunks`` count), ``None`` when empty.
        For a conversation (:func:`is_conversation`), ``user_input`` is the rendered
        conversation and ``response`` and the contexts are ``None``.
    """
    if is_conversation(sample):
        return {
            "user_input": render_conversation(sample.messages or []),
            "response": None,
            "retrieved_contexts": None,
            "reference_contexts": None,
            "reference": sample.reference if conversation_reference else None,
        }
    contexts = sample.contexts()
    return {
        "user_input": sample.user_input,
        "response": sample.response,
        "retrieved_contexts": contexts or None,
        "reference_contexts": sample.reference_contexts or None,
        "reference": sample.reference if reference else None,
    }


class SubmissionMetric(Metric):
    """A general-purpose metric (aspect critic, simple criteria, rubrics): it judges a submission.

    The submission is a single turn (``response``, with what else the sample has) or a whole
    conversation (``messages``, RAGAS's multi-turn form; see :func:`submission`).
    """

    def validate(self, sample: Sample) -> None:
        """Check for a conversation (``messages``), else for this metric's fields.

        Raises:
            SampleError: naming the sample, the field and the fix, when there is neither a
                conversation nor a non-blank ``response``.
        """
        if is_conversation(sample):
            return
        if sample.response is None:
            raise SampleError(
                "missing; add the answer to judge as 'response', or the conversation as 'messages'",
                sample_id=sample.label,
                field="response",
                metric=self.key,
            )
        super().validate(sample)


def odd_strictness(strictness: int) -> int:
    """RAGAS's rule: an even ``strictness`` is raised by one so that a binary vote cannot tie.

    Raises:
        ValueError: when ``strictness`` is not an integer >= 1.
    """
    if isinstance(strictness, bool) or not isinstance(strictness, int) or strictness < 1:
        raise ValueError(f"strictness must be an integer >= 1, got {strictness!r}")
    return strictness if strictness % 2 else strictness + 1


def majority_vote(values: Sequence[int]) -> int:
    """RAGAS's self-consistency vote: the most common value (``Counter.most_common(1)``).

    Args:
        values: one value per call, in call order (non-empty).

    Returns:
        The most common value; on a tie, the one that occurred first (``Counter`` keeps
        insertion order), as RAGAS. With binary verdicts and odd ``strictness`` there is no tie.

    Raises:
        ValueError: when ``values`` is empty.
    """
    if not values:
        raise ValueError("majority_vote needs at least one value")
    return Counter(values).most_common(1)[0][0]


def check_label(value: str, option: str) -> str:
    """Check that an aspect or criterion name can stand in a result key (``aspect_critic(name=x)``).

    Raises:
        ValueError: when it is not a letter or ``_`` followed by letters, digits, ``_`` or ``-``.
    """
    if not isinstance(value, str) or not _LABEL.fullmatch(value):
        raise ValueError(f"{option} must be a word of letters, digits, '_' or '-' (e.g. tone_ok), got {value!r}")
    return value


async def ask_votes(
    judge: Judge, prompt: Prompt[In, Out], make_input: Callable[[int], In], strictness: int, language: Language
) -> list[Out]:
    """Ask ``prompt`` ``strictness`` times at once for a self-consistency vote.

    Each call's input carries its attempt number (``make_input(1)`` ... ``make_input(strictness)``),
    so the shared-call layer and the cache keep the votes apart instead of answering them once.

    Args:
        judge: the judge to ask.
        prompt: the verdict prompt.
        make_input: the prompt's input for attempt ``n`` (1-based).
        strictness: the number of votes (>= 1; odd, see :func:`odd_strictness`).
        language: prompt language.

    Returns:
        ``strictness`` answers, in attempt order.

    Raises:
        ragqa.errors.JudgeError: when a call fails (the other votes are cancelled).
    """
    return list(
        await asyncio.gather(
            *(judge.ask(prompt, make_input(attempt), language=language) for attempt in range(1, strictness + 1))
        )
    )
