"""Question generation: the question a response answers, and whether the response is noncommittal.

Used by response relevancy, ``strictness`` times per sample. Mirrors RAGAS's response-relevance
prompt: from the response alone, write one question it answers and flag ``noncommittal`` = 1 for
evasive answers ("I don't know", "it depends"). The ``attempt`` number makes the N calls distinct
(so they are not merged or cached as one) and asks for a differently worded question each time,
which RAGAS's low-temperature sequential calls do not get.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["QUESTION_GENERATION", "QuestionGenerationInput", "QuestionGenerationOutput"]


class QuestionGenerationInput(BaseModel):
    """The response, and which of the N generations this is."""

    response: str = Field(description="The answer to write a question for")
    attempt: int = Field(
        default=1, ge=1, description="Generation number, 1..N; word the question differently each time"
    )


class QuestionGenerationOutput(BaseModel):
    """One generated question and the noncommittal flag."""

    question: str = Field(description="A question that the response answers")
    noncommittal: int = Field(ge=0, le=1, description="1 if the response is evasive, vague or non-committal, else 0")


QUESTION_GENERATION: Prompt[QuestionGenerationInput, QuestionGenerationOutput] = Prompt(
    name="question_generation",
    version="2",
    input_model=QuestionGenerationInput,
    output_model=QuestionGenerationOutput,
    instructions={
        "en": (
            "Write one question that the given response answers, using only the response. Then flag whether the "
            "response is noncommittal: noncommittal 1 if it avoids answering, is vague or says it does not know "
            '("I don\'t know", "I\'m not sure", "it depends"), noncommittal 0 if it commits to an answer. '
            "When the attempt number is above 1, word the question differently from an obvious first phrasing."
        ),
    },
    examples={
        "en": [
            Example(
                QuestionGenerationInput(response="Mount Kilimanjaro is in Tanzania and rises 5,895 metres."),
                QuestionGenerationOutput(question="Where is Mount Kilimanjaro and how high is it?", noncommittal=0),
            ),
            Example(
                QuestionGenerationInput(
                    response="I can't say for sure which battery the 2019 model uses; it may vary by market."
                ),
                QuestionGenerationOutput(question="Which battery does the 2019 model use?", noncommittal=1),
            ),
        ],
    },
)
