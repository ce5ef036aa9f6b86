"""Statements-vs-contexts verdicts in one call: the batched call plan's NLI matrix.

The ``batched`` call plan's form of :mod:`ragqa.prompts.nli`: one call judges a list of
statements against *each* of several contexts and answers one row per context, each row one
verdict per statement, in order (an ``N x S`` matrix for N contexts and S statements; the metric
reads it as the ``S x N`` statement-by-context matrix). A verdict has the per-context prompt's
fields and meaning: 1 when the statement can be directly inferred from *that* context alone,
else 0. Noise sensitivity's per-context calls (2N + 1 in the ``ragas`` plan) become two.

Rows name their context's number; :func:`ragqa.metrics._batched.judge_matrix` checks the shape
and asks the per-context prompt again only for the rows that are missing or malformed.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt
from ragqa.prompts.nli import StatementVerdict
from ragqa.prompts.numbered import NumberedText

__all__ = ["NLI_MATRIX", "ContextVerdicts", "NLIMatrixInput", "NLIMatrixOutput"]


class NLIMatrixInput(BaseModel):
    """The statements, and the numbered contexts to judge each of them against."""

    statements: list[str] = Field(description="Statements to judge, in order")
    contexts: list[NumberedText] = Field(description="The contexts, numbered from 1; judge against each separately")


class ContextVerdicts(BaseModel):
    """One row of the matrix: every statement's verdict against one context."""

    context: int = Field(ge=1, description="The number of the context this row judges against")
    verdicts: list[StatementVerdict] = Field(description="One verdict per statement, in the order given")


class NLIMatrixOutput(BaseModel):
    """One row per context, each with one verdict per statement."""

    rows: list[ContextVerdicts]


_MARIA = (
    "Maria is a nurse at the city hospital. She works night shifts three times a week "
    "and volunteers at an animal shelter on Sundays."
)
_PET = "Maria adopted a grey cat from the shelter last spring."

NLI_MATRIX: Prompt[NLIMatrixInput, NLIMatrixOutput] = Prompt(
    name="nli_matrix",
    version="2",  # 1 was the one-message shape of the per-item prompts; never reused
    input_model=NLIMatrixInput,
    output_model=NLIMatrixOutput,
    instructions={
        "en": (
            "Your task is to judge the faithfulness of a series of statements against each of several numbered "
            "contexts, separately. For every context return one row with the context's number and, for each "
            "statement, verdict 1 if the statement can be directly inferred from that context alone or verdict 0 "
            "if it cannot (it contradicts that context or that context does not say it). Do not combine "
            "contexts: a statement supported only by another context gets verdict 0 in this row. Return exactly "
            "one row per context and exactly one verdict per statement in each row, in the same order."
        ),
    },
    examples={
        "en": [
            Example(
                NLIMatrixInput(
                    statements=["Maria works at the city hospital.", "Maria is a doctor.", "Maria owns a cat."],
                    contexts=[NumberedText(number=1, text=_MARIA), NumberedText(number=2, text=_PET)],
                ),
                NLIMatrixOutput(
                    rows=[
                        ContextVerdicts(
                            context=1,
                            verdicts=[
                                StatementVerdict(
                                    statement="Maria works at the city hospital.",
                                    reason="The context says she is a nurse at the city hospital.",
                                    verdict=1,
                                ),
                                StatementVerdict(
                                    statement="Maria is a doctor.",
                                    reason="The context says she is a nurse, not a doctor.",
                                    verdict=0,
                                ),
                                StatementVerdict(
                                    statement="Maria owns a cat.",
                                    reason="This context mentions a shelter but no pet of hers.",
                                    verdict=0,
                                ),
                            ],
                        ),
                        ContextVerdicts(
                            context=2,
                            verdicts=[
                                StatementVerdict(
                                    statement="Maria works at the city hospital.",
                                    reason="This context does not mention where she works.",
                                    verdict=0,
                                ),
                                StatementVerdict(
                                    statement="Maria is a doctor.",
                                    reason="This context does not mention her job.",
                                    verdict=0,
                                ),
                                StatementVerdict(
                                    statement="Maria owns a cat.",
                                    reason="The context says she adopted a cat.",
                                    verdict=1,
                                ),
                            ],
                        ),
                    ]
                ),
            ),
        ],
    },
)
