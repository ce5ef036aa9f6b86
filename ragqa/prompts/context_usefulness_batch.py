"""Every retrieved context's usefulness in one call: the batched call plan's context precision step.

The ``batched`` call plan's form of :mod:`ragqa.prompts.context_usefulness`: the question, the
answer (reference or response) and all N contexts in one call, answered with one verdict per
context, each naming the context's number. A verdict has the per-context prompt's fields and
meaning (``reason``, then ``verdict`` 1 when that context was useful in arriving at the answer),
judged for each context on its own. N calls become one;
:func:`ragqa.metrics._batched.judge_usefulness` asks the per-context prompt again only for the
contexts the answer left out.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt
from ragqa.prompts.numbered import NumberedText

__all__ = [
    "CONTEXT_USEFULNESS_BATCH",
    "ContextUsefulnessBatchInput",
    "ContextUsefulnessBatchOutput",
    "ContextUsefulnessVerdict",
]


class ContextUsefulnessBatchInput(BaseModel):
    """The question, the answer the contexts are judged against, and the numbered contexts."""

    question: str = Field(description="The user's question")
    answer: str = Field(description="The answer (reference or response) the contexts should help arrive at")
    contexts: list[NumberedText] = Field(description="The retrieved contexts, numbered from 1 in retrieval order")


class ContextUsefulnessVerdict(BaseModel):
    """One context's usefulness verdict (the per-context prompt's fields, plus the context's number).

    Only what an LLM is asked for is a field, so an LLM's verdict is always binary.
    """

    context: int = Field(ge=1, description="The number of the context this verdict is about")
    reason: str = Field(description="Why the context is or is not useful for the answer")
    verdict: int = Field(ge=0, le=1, description="1 if the context was useful in arriving at the answer, else 0")

    @property
    def value(self) -> float:
        """The verdict as a number, 0.0 or 1.0 (graded subclasses of non-LLM judges return their grade)."""
        return float(self.verdict)


class ContextUsefulnessBatchOutput(BaseModel):
    """One verdict per context, in the order of the contexts."""

    verdicts: list[ContextUsefulnessVerdict]


_QUESTION = "Which river flows through Vienna?"
_ANSWER = "The Danube flows through Vienna."

CONTEXT_USEFULNESS_BATCH: Prompt[ContextUsefulnessBatchInput, ContextUsefulnessBatchOutput] = Prompt(
    name="context_usefulness_batch",
    version="2",  # 1 was the one-message shape of the per-item prompts; never reused
    input_model=ContextUsefulnessBatchInput,
    output_model=ContextUsefulnessBatchOutput,
    instructions={
        "en": (
            "Given a question, an answer and several numbered retrieved contexts, decide for each context on its "
            "own whether it was useful in arriving at the answer. Return verdict 1 if the context contains "
            "information that the answer uses or that directly supports it, and verdict 0 if the context is "
            "off-topic or does not help to reach the answer. Judge each context independently of the others; "
            "return exactly one verdict per context with the context's number, in the order given, each with a "
            "short reason first."
        ),
    },
    examples={
        "en": [
            Example(
                ContextUsefulnessBatchInput(
                    question=_QUESTION,
                    answer=_ANSWER,
                    contexts=[
                        NumberedText(
                            number=1,
                            text="The Vienna State Opera opened in 1869 and stages more than 300 performances a year.",
                        ),
                        NumberedText(
                            number=2,
                            text=(
                                "Vienna, the capital of Austria, lies on the Danube. The river divides the city's "
                                "older districts from the newer ones to the north-east."
                            ),
                        ),
                    ],
                ),
                ContextUsefulnessBatchOutput(
                    verdicts=[
                        ContextUsefulnessVerdict(
                            context=1,
                            reason="The context is about the opera house and says nothing about rivers.",
                            verdict=0,
                        ),
                        ContextUsefulnessVerdict(
                            context=2,
                            reason="The context states that Vienna lies on the Danube, which is exactly the answer.",
                            verdict=1,
                        ),
                    ]
                ),
            ),
        ],
    },
)
