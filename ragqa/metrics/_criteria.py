"""What the general-purpose metrics share: the submission they show, option checks and the majority vote."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ragqa.schema import Sample

__all__ = ["check_label", "majority_vote", "odd_strictness", "submission"]

_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def submission(sample: Sample, *, reference: bool = True) -> dict[str, Any]:
    """The sample's fields a general-purpose judge sees, ``None`` where absent (left out of the prompt).

    Args:
        sample: the sample.
        reference: include ``reference`` (RAGAS's single-turn inputs do).

    Returns:
        ``{user_input, response, retrieved_contexts, reference_contexts, reference}``; the
        contexts are :meth:`Sample.contexts` (``context_chunks`` count), ``None`` when empty.
    """
    contexts = sample.contexts()
    return {
        "user_input": sample.user_input,
        "response": sample.response,
        "retrieved_contexts": contexts or None,
        "reference_contexts": sample.reference_contexts or None,
        "reference": sample.reference if reference else None,
    }


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
