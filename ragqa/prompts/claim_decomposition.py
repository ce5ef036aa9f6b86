"""Claim decomposition: break a text into standalone, verifiable claims at a chosen granularity.

Used by factual correctness (both directions: the response's claims, the reference's claims).
Mirrors RAGAS's ``ClaimDecompositionPrompt`` (``metrics/_factual_correctness.py``): one call per
text, output ``{"claims": [...]}``, and the few-shot examples chosen by two settings:

- ``atomicity`` ``low`` | ``high``: how far a sentence is split (one claim per sentence, or one
  per fact);
- ``coverage`` ``low`` | ``high``: whether minor details are kept (``high`` keeps every detail).

Each of the four combinations has its own examples, as in RAGAS (the Charles Babbage and Albert
Einstein sentences at different granularity); :func:`claim_decomposition_prompt` picks the
prompt of a combination. Unlike RAGAS's legacy prompt, the input also states the two levels
(RAGAS 0.4's collections prompt does the same), so the judge, and the offline local judge, know
which granularity is asked for. The four prompts share name and version; the levels are part of
the input and therefore of every cache key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt
from ragqa.schema import Language

__all__ = [
    "CLAIM_DECOMPOSITION",
    "Atomicity",
    "ClaimDecompositionInput",
    "ClaimDecompositionOutput",
    "Coverage",
    "claim_decomposition_prompt",
]

Atomicity = Literal["low", "high"]
Coverage = Literal["low", "high"]


class ClaimDecompositionInput(BaseModel):
    """The text to decompose and the granularity asked for."""

    response: str = Field(description="The text to break into claims")
    atomicity: Atomicity = Field(
        default="low", description="low: one claim per sentence; high: one claim per single fact"
    )
    coverage: Coverage = Field(default="low", description="low: main facts only; high: every detail")


class ClaimDecompositionOutput(BaseModel):
    """The claims, in the order they appear in the text."""

    claims: list[str] = Field(description="Standalone claims that can be verified independently")


_INSTRUCTIONS: Mapping[Language, str] = {
    "en": (
        "Decompose and break down each of the input sentences into one or more standalone statements. "
        "Each statement should be a standalone claim that can be independently verified. "
        "Follow the level of atomicity and coverage as shown in the examples."
    ),
}

_BABBAGE = {
    "en": "Charles Babbage was a French mathematician, philosopher, and food critic.",
}
_EINSTEIN = {
    "en": (
        "Albert Einstein was a German theoretical physicist. He developed the theory of relativity and also "
        "contributed to the development of quantum mechanics."
    ),
}

_CLAIMS: Mapping[tuple[Atomicity, Coverage], Mapping[Language, tuple[Sequence[str], Sequence[str]]]] = {
    ("low", "low"): {
        "en": (
            ["Charles Babbage was a mathematician and philosopher."],
            [
                "Albert Einstein was a German physicist.",
                "Albert Einstein developed relativity and contributed to quantum mechanics.",
            ],
        ),
    },
    ("low", "high"): {
        "en": (
            ["Charles Babbage was a French mathematician, philosopher, and food critic."],
            [
                "Albert Einstein was a German theoretical physicist.",
                "Albert Einstein developed the theory of relativity and also contributed to the development of "
                "quantum mechanics.",
            ],
        ),
    },
    ("high", "low"): {
        "en": (
            ["Charles Babbage was a mathematician.", "Charles Babbage was a philosopher."],
            [
                "Albert Einstein was a German theoretical physicist.",
                "Albert Einstein developed the theory of relativity.",
            ],
        ),
    },
    ("high", "high"): {
        "en": (
            [
                "Charles Babbage was a mathematician.",
                "Charles Babbage was a philosopher.",
                "Charles Babbage was a food critic.",
                "Charles Babbage was French.",
            ],
            [
                "Albert Einstein was a German theoretical physicist.",
                "Albert Einstein developed the theory of relativity.",
                "Albert Einstein contributed to the development of quantum mechanics.",
            ],
        ),
    },
}
"""RAGAS's example claims per (atomicity, coverage), as in RAGAS (other languages: their pack's
``claim_decomposition/<atomicity>-<coverage>`` examples)."""


def _examples(
    atomicity: Atomicity, coverage: Coverage
) -> dict[Language, list[Example[ClaimDecompositionInput, ClaimDecompositionOutput]]]:
    out: dict[Language, list[Example[ClaimDecompositionInput, ClaimDecompositionOutput]]] = {}
    for language, (babbage, einstein) in _CLAIMS[(atomicity, coverage)].items():
        out[language] = [
            Example(
                ClaimDecompositionInput(response=text, atomicity=atomicity, coverage=coverage),
                ClaimDecompositionOutput(claims=list(claims)),
            )
            for text, claims in ((_BABBAGE[language], babbage), (_EINSTEIN[language], einstein))
        ]
    return out


_PROMPTS: Mapping[tuple[Atomicity, Coverage], Prompt[ClaimDecompositionInput, ClaimDecompositionOutput]] = {
    levels: Prompt(
        name="claim_decomposition",
        version="2",
        input_model=ClaimDecompositionInput,
        output_model=ClaimDecompositionOutput,
        instructions=_INSTRUCTIONS,
        examples=_examples(*levels),
        variant="-".join(levels),
    )
    for levels in _CLAIMS
}


def claim_decomposition_prompt(
    atomicity: Atomicity = "low", coverage: Coverage = "low"
) -> Prompt[ClaimDecompositionInput, ClaimDecompositionOutput]:
    """The claim-decomposition prompt whose examples show ``atomicity`` and ``coverage``.

    Args:
        atomicity: ``low`` (RAGAS default) or ``high``.
        coverage: ``low`` (RAGAS default) or ``high``.

    Returns:
        The prompt (name ``claim_decomposition``); its input must carry the same two levels.

    Raises:
        ValueError: for a level other than ``low`` or ``high``.
    """
    prompt = _PROMPTS.get((atomicity, coverage))
    if prompt is None:
        raise ValueError(f"atomicity and coverage must each be 'low' or 'high', not {atomicity!r}, {coverage!r}")
    return prompt


CLAIM_DECOMPOSITION = claim_decomposition_prompt()
"""The default prompt (low atomicity, low coverage), the one registered in :data:`ragqa.prompts.PROMPTS`."""
