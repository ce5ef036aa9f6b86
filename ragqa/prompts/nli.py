"""Statements-vs-context verdicts (natural language inference).

Shared by faithfulness, hallucination and noise sensitivity. Mirrors RAGAS's NLI statement
prompt: one call judges every statement against one context; verdict 1 when the statement can be
directly inferred from the context, else 0. Verdicts are consumed positionally; the metric checks
that their number matches the statements sent.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["NLI", "NLIInput", "NLIOutput", "StatementVerdict"]


class NLIInput(BaseModel):
    """A context and the statements to check against it."""

    context: str = Field(description="The text the statements are checked against")
    statements: list[str] = Field(description="Statements to judge, in order")


class StatementVerdict(BaseModel):
    """The verdict for one statement, as an LLM may give it.

    Only what an LLM is asked for is a field; any other key in its JSON (a ``support`` it was
    talked into emitting, say) is ignored, so an LLM's verdict is always binary.
    """

    statement: str = Field(description="The statement, copied")
    reason: str = Field(description="Why it is or is not supported")
    verdict: int = Field(ge=0, le=1, description="1 if the statement can be directly inferred from the context, else 0")

    @property
    def value(self) -> float:
        """The verdict as a number, 0.0 or 1.0 (graded subclasses of non-LLM judges return their grade)."""
        return float(self.verdict)


class NLIOutput(BaseModel):
    """One verdict per statement, in the order the statements were given."""

    verdicts: list[StatementVerdict]


NLI: Prompt[NLIInput, NLIOutput] = Prompt(
    name="nli",
    version="2",
    input_model=NLIInput,
    output_model=NLIOutput,
    instructions={
        "en": (
            "Your task is to judge the faithfulness of a series of statements based on a given context. "
            "For each statement return verdict 1 if the statement can be directly inferred from the context "
            "or verdict 0 if it cannot (it contradicts the context or the context does not say it). "
            "Return exactly one verdict per statement, in the same order."
        ),
    },
    examples={
        "en": [
            Example(
                NLIInput(
                    context=(
                        "Maria is a nurse at the city hospital. She works night shifts three times a week "
                        "and volunteers at an animal shelter on Sundays."
                    ),
                    statements=[
                        "Maria works at the city hospital.",
                        "Maria is a doctor.",
                        "Maria volunteers on Sundays.",
                        "Maria owns a dog.",
                    ],
                ),
                NLIOutput(
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
                            statement="Maria volunteers on Sundays.",
                            reason="The context says she volunteers at a shelter on Sundays.",
                            verdict=1,
                        ),
                        StatementVerdict(
                            statement="Maria owns a dog.",
                            reason="The context does not mention any pet of hers.",
                            verdict=0,
                        ),
                    ]
                ),
            ),
            Example(
                NLIInput(
                    context="Photosynthesis turns light, water and carbon dioxide into glucose and oxygen.",
                    statements=["Paris is the capital of France."],
                ),
                NLIOutput(
                    verdicts=[
                        StatementVerdict(
                            statement="Paris is the capital of France.",
                            reason="The context is about photosynthesis and says nothing about Paris.",
                            verdict=0,
                        )
                    ]
                ),
            ),
        ],
    },
)
