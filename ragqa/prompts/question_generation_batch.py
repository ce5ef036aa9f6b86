"""k generated questions in one call: the batched call plan's response relevancy step.

The ``batched`` call plan's form of :mod:`ragqa.prompts.question_generation`: one call asks for
``count`` (the metric's ``strictness``) questions, each numbered like the per-item prompt's
``attempt`` and each with its own ``noncommittal`` flag (same fields, same meaning: from the
response alone, a question it answers, and 1 for an evasive response). ``strictness`` calls become
one; :func:`ragqa.metrics._batched.generate_questions` asks the per-item prompt again only for
the generations the answer left out.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = [
    "QUESTION_GENERATION_BATCH",
    "GeneratedQuestion",
    "QuestionGenerationBatchInput",
    "QuestionGenerationBatchOutput",
]


class QuestionGenerationBatchInput(BaseModel):
    """The response, and how many questions to write."""

    response: str = Field(description="The answer to write questions for")
    count: int = Field(ge=1, description="How many questions to write, each worded differently")


class GeneratedQuestion(BaseModel):
    """One generated question: its attempt number, the question and the noncommittal flag."""

    attempt: int = Field(ge=1, description="The question's number, 1..count")
    question: str = Field(description="A question that the response answers")
    noncommittal: int = Field(ge=0, le=1, description="1 if the response is evasive, vague or non-committal, else 0")


class QuestionGenerationBatchOutput(BaseModel):
    """``count`` generated questions, numbered from 1."""

    questions: list[GeneratedQuestion]


QUESTION_GENERATION_BATCH: Prompt[QuestionGenerationBatchInput, QuestionGenerationBatchOutput] = Prompt(
    name="question_generation_batch",
    version="2",  # 1 was the one-message shape of the per-item prompts; never reused
    input_model=QuestionGenerationBatchInput,
    output_model=QuestionGenerationBatchOutput,
    instructions={
        "en": (
            "Write as many questions as the count says, each one a question that the given response answers, "
            "using only the response; number them from 1 and word each differently from the others. For each, "
            "flag whether the response is noncommittal: noncommittal 1 if it avoids answering, is vague or says "
            'it does not know ("I don\'t know", "I\'m not sure", "it depends"), noncommittal 0 if it commits to '
            "an answer."
        ),
    },
    examples={
        "en": [
            Example(
                QuestionGenerationBatchInput(
                    response="Mount Kilimanjaro is in Tanzania and rises 5,895 metres.", count=2
                ),
                QuestionGenerationBatchOutput(
                    questions=[
                        GeneratedQuestion(
                            attempt=1, question="Where is Mount Kilimanjaro and how high is it?", noncommittal=0
                        ),
                        GeneratedQuestion(
                            attempt=2, question="In which country does Kilimanjaro rise 5,895 metres?", noncommittal=0
                        ),
                    ]
                ),
            ),
            Example(
                QuestionGenerationBatchInput(
                    response="I can't say for sure which battery the 2019 model uses; it may vary by market.",
                    count=1,
                ),
                QuestionGenerationBatchOutput(
                    questions=[
                        GeneratedQuestion(attempt=1, question="Which battery does the 2019 model use?", noncommittal=1)
                    ]
                ),
            ),
        ],
    },
)
