"""Statement decomposition: split an answer into atomic, self-contained statements.

Shared by faithfulness, hallucination, noise sensitivity and context recall style metrics.
Mirrors RAGAS's statement generator (one call per text; output ``{"statements": [...]}``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["STATEMENTS", "StatementsInput", "StatementsOutput"]


class StatementsInput(BaseModel):
    """The question (for resolving references) and the text to decompose."""

    question: str = Field(description="The question the text answers")
    answer: str = Field(description="The text to break into statements")


class StatementsOutput(BaseModel):
    """The statements, in the order they appear in the text."""

    statements: list[str] = Field(description="Atomic, self-contained statements")


STATEMENTS: Prompt[StatementsInput, StatementsOutput] = Prompt(
    name="statements",
    version="2",
    input_model=StatementsInput,
    output_model=StatementsOutput,
    instructions={
        "en": (
            "Given a question and an answer, break the answer into atomic statements. Each statement "
            "must be understandable on its own: replace pronouns and vague references with the names "
            "they refer to, keep numbers, dates and units exactly, and do not add facts that the answer "
            "does not state. Return an empty list when the answer makes no factual claim."
        ),
    },
    examples={
        "en": [
            Example(
                StatementsInput(
                    question="Who designed the Golden Gate Bridge and when did it open?",
                    answer=(
                        "The bridge was designed mainly by Joseph Strauss, with Leon Moisseiff and Charles Ellis. "
                        "It opened to traffic on May 28, 1937."
                    ),
                ),
                StatementsOutput(
                    statements=[
                        "The Golden Gate Bridge was designed mainly by Joseph Strauss.",
                        "Leon Moisseiff and Charles Ellis also worked on the design of the Golden Gate Bridge.",
                        "The Golden Gate Bridge opened to traffic on May 28, 1937.",
                    ]
                ),
            ),
        ],
    },
)
