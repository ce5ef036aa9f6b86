"""Attribution: which sentences of the reference can be attributed to the retrieved contexts?

Used by context recall. One call: the joined contexts and the reference; the judge splits the
reference into sentences and classifies each as attributable (1) or not (0). Mirrors RAGAS's
context-recall classification prompt (output ``{"classifications": [{statement, reason,
attributed}]}``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["ATTRIBUTION", "Attribution", "AttributionInput", "AttributionOutput"]


class AttributionInput(BaseModel):
    """The question, the retrieved contexts (joined) and the reference answer to classify."""

    question: str = Field(description="The user's question")
    context: str = Field(description="The retrieved contexts, joined by newlines")
    answer: str = Field(description="The reference answer whose sentences are classified")


class Attribution(BaseModel):
    """The classification of one reference sentence, as an LLM may give it.

    Only what an LLM is asked for is a field; any other key in its JSON (such as ``support``) is
    ignored, so an LLM's classification is always binary.
    """

    statement: str = Field(description="The sentence of the reference, copied")
    reason: str = Field(description="Why it can or cannot be attributed to the context")
    attributed: int = Field(ge=0, le=1, description="1 if the sentence can be attributed to the context, else 0")

    @property
    def value(self) -> float:
        """The classification as a number, 0.0 or 1.0 (graded subclasses of non-LLM judges return their grade)."""
        return float(self.attributed)


class AttributionOutput(BaseModel):
    """One classification per sentence of the reference, in order."""

    classifications: list[Attribution]


ATTRIBUTION: Prompt[AttributionInput, AttributionOutput] = Prompt(
    name="attribution",
    version="2",
    input_model=AttributionInput,
    output_model=AttributionOutput,
    instructions={
        "en": (
            "Given a question, a context and an answer, split the answer into its sentences and classify each "
            "one: attributed 1 if what the sentence says can be found in (or directly follows from) the context, "
            "attributed 0 if it cannot. Paraphrases count as attributable; facts the context does not state do "
            "not. Give a short reason for each sentence and keep the sentences in order."
        ),
    },
    examples={
        "en": [
            Example(
                AttributionInput(
                    question="Tell me about Marie Curie.",
                    context=(
                        "Marie Curie was a physicist and chemist born in Warsaw in 1867. She shared the 1903 "
                        "Nobel Prize in Physics with Pierre Curie and Henri Becquerel."
                    ),
                    answer=(
                        "Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903. "
                        "She won a second Nobel Prize, in Chemistry, in 1911."
                    ),
                ),
                AttributionOutput(
                    classifications=[
                        Attribution(
                            statement="Marie Curie was born in Warsaw in 1867.",
                            reason="The context gives Warsaw and 1867 as her birthplace and year.",
                            attributed=1,
                        ),
                        Attribution(
                            statement="She won the Nobel Prize in Physics in 1903.",
                            reason="The context says she shared the 1903 Nobel Prize in Physics.",
                            attributed=1,
                        ),
                        Attribution(
                            statement="She won a second Nobel Prize, in Chemistry, in 1911.",
                            reason="The context does not mention a Chemistry prize or 1911.",
                            attributed=0,
                        ),
                    ]
                ),
            ),
        ],
    },
)
