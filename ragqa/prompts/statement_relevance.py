"""Statement relevance: is each statement of the response relevant to the question?

Used by the statement-level LLM response relevancy (the "RAG generator metrics" write-up;
DeepEval's answer relevancy has the same shape). One call judges every statement against the
question; verdicts are consumed positionally and their number is checked.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["STATEMENT_RELEVANCE", "RelevanceVerdict", "StatementRelevanceInput", "StatementRelevanceOutput"]


class StatementRelevanceInput(BaseModel):
    """The question and the response's statements."""

    question: str = Field(description="The user's question")
    statements: list[str] = Field(description="Statements of the response, in order")


class RelevanceVerdict(BaseModel):
    """The relevance verdict for one statement, as an LLM may give it.

    Only what an LLM is asked for is a field; any other key in its JSON (such as ``support``) is
    ignored, so an LLM's verdict is always binary.
    """

    statement: str = Field(description="The statement, copied")
    reason: str = Field(description="Why it is or is not relevant to the question")
    verdict: int = Field(ge=0, le=1, description="1 if the statement is relevant to answering the question, else 0")

    @property
    def value(self) -> float:
        """The verdict as a number, 0.0 or 1.0 (graded subclasses of non-LLM judges return their grade)."""
        return float(self.verdict)


class StatementRelevanceOutput(BaseModel):
    """One verdict per statement, in the order the statements were given."""

    verdicts: list[RelevanceVerdict]


STATEMENT_RELEVANCE: Prompt[StatementRelevanceInput, StatementRelevanceOutput] = Prompt(
    name="statement_relevance",
    version="2",
    input_model=StatementRelevanceInput,
    output_model=StatementRelevanceOutput,
    instructions={
        "en": (
            "Given a question and a list of statements taken from an answer to it, decide for each statement "
            "whether it is relevant to the question. Verdict 1 if the statement answers the question or gives "
            "context that directly helps to answer it; verdict 0 if it is about something else. Judge relevance "
            "only, not whether the statement is true. Return exactly one verdict per statement, in order."
        ),
    },
    examples={
        "en": [
            Example(
                StatementRelevanceInput(
                    question="How long does it take to boil an egg?",
                    statements=[
                        "A soft-boiled egg takes about six minutes.",
                        "A hard-boiled egg takes about ten minutes.",
                        "Chickens were domesticated in Southeast Asia.",
                    ],
                ),
                StatementRelevanceOutput(
                    verdicts=[
                        RelevanceVerdict(
                            statement="A soft-boiled egg takes about six minutes.",
                            reason="It gives a boiling time, which is what the question asks.",
                            verdict=1,
                        ),
                        RelevanceVerdict(
                            statement="A hard-boiled egg takes about ten minutes.",
                            reason="It gives another boiling time.",
                            verdict=1,
                        ),
                        RelevanceVerdict(
                            statement="Chickens were domesticated in Southeast Asia.",
                            reason="The history of chickens does not help with boiling times.",
                            verdict=0,
                        ),
                    ]
                ),
            ),
        ],
    },
)
