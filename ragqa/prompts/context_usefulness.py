"""Context usefulness: was one retrieved chunk useful for arriving at the answer?

Used by context precision. One call per retrieved context, in retrieval order. The ``answer`` is
the reference (reference-based precision) or the response (response-based precision, RAGAS's
"context utilization"). Mirrors RAGAS's context-precision prompt: output ``{reason, verdict}``
with verdict 1 when the context was useful.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["CONTEXT_USEFULNESS", "ContextUsefulnessInput", "ContextUsefulnessOutput"]


class ContextUsefulnessInput(BaseModel):
    """The question, the answer the context is judged against, and one retrieved context."""

    question: str = Field(description="The user's question")
    context: str = Field(description="One retrieved context")
    answer: str = Field(description="The answer (reference or response) the context should help arrive at")


class ContextUsefulnessOutput(BaseModel):
    """The usefulness verdict for one context, as an LLM may give it.

    Only what an LLM is asked for is a field; any other key in its JSON (such as ``support``) is
    ignored, so an LLM's verdict is always binary.
    """

    reason: str = Field(description="Why the context is or is not useful for the answer")
    verdict: int = Field(ge=0, le=1, description="1 if the context was useful in arriving at the answer, else 0")

    @property
    def value(self) -> float:
        """The verdict as a number, 0.0 or 1.0 (graded subclasses of non-LLM judges return their grade)."""
        return float(self.verdict)


CONTEXT_USEFULNESS: Prompt[ContextUsefulnessInput, ContextUsefulnessOutput] = Prompt(
    name="context_usefulness",
    version="2",
    input_model=ContextUsefulnessInput,
    output_model=ContextUsefulnessOutput,
    instructions={
        "en": (
            "Given a question, an answer and one retrieved context, decide whether the context was useful "
            "in arriving at the answer. Return verdict 1 if the context contains information that the answer "
            "uses or that directly supports it, and verdict 0 if the context is off-topic or does not help "
            "to reach the answer. Judge only this context; give a short reason first."
        ),
    },
    examples={
        "en": [
            Example(
                ContextUsefulnessInput(
                    question="Which river flows through Vienna?",
                    context=(
                        "Vienna, the capital of Austria, lies on the Danube. The river divides the city's "
                        "older districts from the newer ones to the north-east."
                    ),
                    answer="The Danube flows through Vienna.",
                ),
                ContextUsefulnessOutput(
                    reason="The context states that Vienna lies on the Danube, which is exactly the answer.",
                    verdict=1,
                ),
            ),
            Example(
                ContextUsefulnessInput(
                    question="Which river flows through Vienna?",
                    context="The Vienna State Opera opened in 1869 and stages more than 300 performances a year.",
                    answer="The Danube flows through Vienna.",
                ),
                ContextUsefulnessOutput(
                    reason="The context is about the opera house and says nothing about rivers.",
                    verdict=0,
                ),
            ),
        ],
    },
)
