"""The NVIDIA-style rating prompts: two differently worded templates per metric (a prompt ensemble).

RAGAS ``AnswerAccuracy``, ``ContextRelevance`` and ``ResponseGroundedness``
(``metrics/collections/{answer_accuracy,context_relevance,response_groundedness}/util.py``; the
legacy ``metrics/_nv_metrics.py`` holds the same templates as free text). Each metric asks the same
judge both templates and averages the two ratings. The templates are **distinct prompts** (their
own names and output models), so the shared-call layer and the caches never merge them.

The output is RAGAS's structured ``{"rating": int}`` with no reason ("do not explain"). The rating
is *not* bounded in the schema: a rating outside the template's scale parses, and the metric
applies RAGAS's rule (ask again, up to ``max_retries`` times, then NaN for that template). The
``attempt`` number makes each retry a distinct call (the shared-call layer and the caches key on
the input), as ``question_generation`` does.

The few-shot examples are RAGAS's (collections ``util.py``); the Russian pack
(``ragqa/languages/ru.json``) translates the same cases for ``language: ru``.
Scales (RAGAS): answer accuracy 0, 2 or 4 (divided by 4); context relevance and response
groundedness 0, 1 or 2 (divided by 2).

Versions start at 2: version 1 named the one-user-message rendering of ragqa's first prompts,
whose cached answers must never be served to these. Version 3 added the Russian examples.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = [
    "ANSWER_ACCURACY_1",
    "ANSWER_ACCURACY_2",
    "CONTEXT_RELEVANCE_1",
    "CONTEXT_RELEVANCE_2",
    "NVIDIA_PROMPTS",
    "RESPONSE_GROUNDEDNESS_1",
    "RESPONSE_GROUNDEDNESS_2",
    "AnswerAccuracy1Output",
    "AnswerAccuracy2Input",
    "AnswerAccuracy2Output",
    "AnswerAccuracyInput",
    "ContextRelevance1Output",
    "ContextRelevance2Output",
    "ContextRelevanceInput",
    "Rating",
    "ResponseGroundedness1Output",
    "ResponseGroundedness2Output",
    "ResponseGroundednessInput",
]

_ATTEMPT = Field(default=1, ge=1, description="Attempt number, 1..max_retries; a new attempt after an invalid rating")


class Rating(BaseModel):
    """A bare rating (RAGAS's ``{"rating": int}``); subclasses name each template's output."""

    rating: int = Field(description="The rating on the scale the instruction gives")

    @property
    def value(self) -> float:
        """The rating as a number on the template's scale: ``rating`` itself for an LLM's answer.

        A graded judge's subclass (the offline local judge's,
        :mod:`ragqa.judges.local.graded`) returns a finer value on the same scale; metrics read
        this, as they read ``value`` of the other graded prompts.
        """
        return float(self.rating)


class AnswerAccuracyInput(BaseModel):
    """Template 1 of answer accuracy: the question, the answer to rate, then the reference."""

    query: str = Field(description="The original question")
    user_answer: str = Field(description="The answer to rate (the response)")
    reference_answer: str = Field(description="The ground-truth reference answer")
    attempt: int = _ATTEMPT


class AnswerAccuracy2Input(BaseModel):
    """Template 2 of answer accuracy: the reference comes **before** the answer (RAGAS legacy order, labels kept)."""

    query: str = Field(description="The original question")
    reference_answer: str = Field(description="The ground-truth reference answer")
    user_answer: str = Field(description="The answer to rate (the response)")
    attempt: int = _ATTEMPT


class AnswerAccuracy1Output(Rating):
    """Template 1's rating: 0, 2 or 4."""


class AnswerAccuracy2Output(Rating):
    """Template 2's rating: 0, 2 or 4."""


class ContextRelevanceInput(BaseModel):
    """The question and the retrieved contexts joined by newlines."""

    user_input: str = Field(description="The question")
    context: str = Field(description="The retrieved contexts, joined by newlines")
    attempt: int = _ATTEMPT


class ContextRelevance1Output(Rating):
    """Template 1's rating: 0, 1 or 2."""


class ContextRelevance2Output(Rating):
    """Template 2's rating: 0, 1 or 2."""


class ResponseGroundednessInput(BaseModel):
    """The response (the assertion) and the retrieved contexts joined by newlines."""

    response: str = Field(description="The assertion to check (the response)")
    context: str = Field(description="The retrieved contexts, joined by newlines")
    attempt: int = _ATTEMPT


class ResponseGroundedness1Output(Rating):
    """Template 1's rating: 0, 1 or 2."""


class ResponseGroundedness2Output(Rating):
    """Template 2's rating: 0, 1 or 2."""


_AA_EN_1 = (
    "You are a world class state of the art assistant for rating a User Answer given a Question. The Question is "
    "completely answered by the Reference Answer.\n"
    "Say 4, if User Answer is full contained and equivalent to Reference Answer in all terms, topics, numbers, "
    "metrics, dates and units.\n"
    "Say 2, if User Answer is partially contained and almost equivalent to Reference Answer in all terms, topics, "
    "numbers, metrics, dates and units.\n"
    "Say 0, if User Answer is not contained in Reference Answer or not accurate in all terms, topics, numbers, "
    "metrics, dates and units or the User Answer do not answer the question.\n"
    "Do not explain or justify your rating. Your rating must be only 4, 2 or 0 according to the instructions above.\n"
    'Return your response as JSON in this format: {"rating": X} where X is 0, 2, or 4.'
)
_AA_EN_2 = (
    "I will rate the User Answer in comparison to the Reference Answer for a given Question.\n"
    "A rating of 4 indicates that the User Answer is entirely consistent with the Reference Answer, covering all "
    "aspects, topics, numbers, metrics, dates, and units.\n"
    "A rating of 2 signifies that the User Answer is mostly aligned with the Reference Answer, with minor "
    "discrepancies in some areas.\n"
    "A rating of 0 means that the User Answer is either inaccurate, incomplete, or unrelated to the Reference "
    "Answer, or it fails to address the Question.\n"
    "I will provide the rating without any explanation or justification, adhering to the following scale: "
    "0 (no match), 2 (partial match), 4 (exact match).\n"
    "Do not explain or justify my rating. My rating must be only 4, 2 or 0 only.\n"
    'Return your response as JSON in this format: {"rating": X} where X is 0, 2, or 4.'
)

_CR_EN_1 = (
    "You are a world class expert designed to evaluate the relevance score of a Context in order to answer the "
    "Question.\n"
    "Your task is to determine if the Context contains proper information to answer the Question.\n"
    "Do not rely on your previous knowledge about the Question.\n"
    "Use only what is written in the Context and in the Question.\n"
    "Follow the instructions below:\n"
    "0. If the context does not contains any relevant information to answer the question, say 0.\n"
    "1. If the context partially contains relevant information to answer the question, say 1.\n"
    "2. If the context contains any relevant information to answer the question, say 2.\n"
    "You must provide the relevance score of 0, 1, or 2, nothing else.\n"
    "Do not explain.\n"
    'Return your response as JSON in this format: {"rating": X} where X is 0, 1, or 2.'
)
_CR_EN_2 = (
    "As a specially designed expert to assess the relevance score of a given Context in relation to a Question, my "
    "task is to determine the extent to which the Context provides information necessary to answer the Question. "
    "I will rely solely on the information provided in the Context and Question, and not on any prior knowledge.\n\n"
    "Here are the instructions I will follow:\n"
    "* If the Context does not contain any relevant information to answer the Question, I will respond with a "
    "relevance score of 0.\n"
    "* If the Context partially contains relevant information to answer the Question, I will respond with a "
    "relevance score of 1.\n"
    "* If the Context contains any relevant information to answer the Question, I will respond with a relevance "
    "score of 2.\n"
    'Return your response as JSON in this format: {"rating": X} where X is 0, 1, or 2.'
)

_RG_EN_1 = (
    "You are a world class expert designed to evaluate the groundedness of an assertion.\n"
    "You will be provided with an assertion and a context.\n"
    "Your task is to determine if the assertion is supported by the context.\n"
    "Follow the instructions below:\n"
    "A. If there is no context or no assertion or context is empty or assertion is empty, say 0.\n"
    "B. If the assertion is not supported by the context, say 0.\n"
    "C. If the assertion is partially supported by the context, say 1.\n"
    "D. If the assertion is fully supported by the context, say 2.\n"
    "You must provide a rating of 0, 1, or 2, nothing else.\n"
    'Return your response as JSON in this format: {"rating": X} where X is 0, 1, or 2.'
)
_RG_EN_2 = (
    "As a specialist in assessing the strength of connections between statements and their given contexts, I will "
    "evaluate the level of support an assertion receives from the provided context. Follow these guidelines:\n\n"
    "* If the assertion is not supported or context is empty or assertion is empty, assign a score of 0.\n"
    "* If the assertion is partially supported, assign a score of 1.\n"
    "* If the assertion is fully supported, assign a score of 2.\n\n"
    "I will provide a rating of 0, 1, or 2, without any additional information.\n"
    'Return your response as JSON in this format: {"rating": X} where X is 0, 1, or 2.'
)

_AA_EXAMPLES_1 = [
    Example(
        AnswerAccuracyInput(
            query="When was Albert Einstein born?",
            user_answer="Albert Einstein was born in 1879.",
            reference_answer="Albert Einstein was born on March 14, 1879.",
        ),
        AnswerAccuracy1Output(rating=2),
    ),
    Example(
        AnswerAccuracyInput(
            query="What is the capital of France?",
            user_answer="Paris is the capital of France.",
            reference_answer="Paris is the capital of France.",
        ),
        AnswerAccuracy1Output(rating=4),
    ),
    Example(
        AnswerAccuracyInput(
            query="What is the highest mountain?",
            user_answer="The Eiffel Tower is a famous landmark.",
            reference_answer="Mount Everest is the highest mountain.",
        ),
        AnswerAccuracy1Output(rating=0),
    ),
]
_AA_EXAMPLES_2 = [
    Example(
        AnswerAccuracy2Input(
            query="When was Albert Einstein born?",
            reference_answer="Albert Einstein was born on March 14, 1879 in Ulm, Germany.",
            user_answer="Einstein was born in 1879 in Germany.",
        ),
        AnswerAccuracy2Output(rating=2),
    ),
    Example(
        AnswerAccuracy2Input(
            query="What is the capital of France?",
            reference_answer="Paris is the capital of France.",
            user_answer="The capital of France is Paris.",
        ),
        AnswerAccuracy2Output(rating=4),
    ),
    Example(
        AnswerAccuracy2Input(
            query="What is the speed of light?",
            reference_answer="The speed of light is approximately 299,792,458 meters per second.",
            user_answer="The sun is a star.",
        ),
        AnswerAccuracy2Output(rating=0),
    ),
]
_CR_EXAMPLES_1 = [
    Example(
        ContextRelevanceInput(
            user_input="When was Albert Einstein born?",
            context="Albert Einstein was born March 14, 1879.",
        ),
        ContextRelevance1Output(rating=2),
    ),
    Example(
        ContextRelevanceInput(
            user_input="What is photosynthesis?",
            context="Photosynthesis is the process by which plants convert sunlight into energy.",
        ),
        ContextRelevance1Output(rating=2),
    ),
    Example(
        ContextRelevanceInput(
            user_input="How do computers work?",
            context="Albert Einstein was a theoretical physicist.",
        ),
        ContextRelevance1Output(rating=0),
    ),
]
_CR_EXAMPLES_2 = [
    Example(
        ContextRelevanceInput(
            user_input="When was Albert Einstein born?",
            context="Albert Einstein was born March 14, 1879.",
        ),
        ContextRelevance2Output(rating=2),
    ),
    Example(
        ContextRelevanceInput(
            user_input="What is photosynthesis?",
            context="Photosynthesis is the process by which plants convert sunlight into energy.",
        ),
        ContextRelevance2Output(rating=2),
    ),
    Example(
        ContextRelevanceInput(
            user_input="How do computers work?",
            context="The weather today is sunny.",
        ),
        ContextRelevance2Output(rating=0),
    ),
]
_RG_EXAMPLES_1 = [
    Example(
        ResponseGroundednessInput(
            response="Albert Einstein was born in Germany.",
            context="Albert Einstein was born March 14, 1879 at Ulm, in Württemberg, Germany.",
        ),
        ResponseGroundedness1Output(rating=2),
    ),
    Example(
        ResponseGroundednessInput(
            response="Einstein was a chemist who invented gunpowder.",
            context="Albert Einstein was a theoretical physicist known for his theory of relativity.",
        ),
        ResponseGroundedness1Output(rating=0),
    ),
    Example(
        ResponseGroundednessInput(
            response="Einstein received the Nobel Prize.",
            context="Albert Einstein received the 1921 Nobel Prize in Physics for his services to theoretical physics.",
        ),
        ResponseGroundedness1Output(rating=2),
    ),
]
_RG_EXAMPLES_2 = [
    Example(
        ResponseGroundednessInput(
            response="Albert Einstein was a scientist.",
            context=(
                "Albert Einstein was a German-born theoretical physicist widely held to be one of the greatest "
                "and most influential scientists of all time."
            ),
        ),
        ResponseGroundedness2Output(rating=2),
    ),
    Example(
        ResponseGroundednessInput(
            response="Einstein invented television.",
            context="Albert Einstein developed the theory of relativity.",
        ),
        ResponseGroundedness2Output(rating=0),
    ),
    Example(
        ResponseGroundednessInput(
            response="Einstein won a Nobel Prize.",
            context="Albert Einstein received the 1921 Nobel Prize in Physics.",
        ),
        ResponseGroundedness2Output(rating=2),
    ),
]

ANSWER_ACCURACY_1: Prompt[AnswerAccuracyInput, AnswerAccuracy1Output] = Prompt(
    name="answer_accuracy_1",
    version="3",
    input_model=AnswerAccuracyInput,
    output_model=AnswerAccuracy1Output,
    instructions={"en": _AA_EN_1},
    examples={"en": _AA_EXAMPLES_1},
)
ANSWER_ACCURACY_2: Prompt[AnswerAccuracy2Input, AnswerAccuracy2Output] = Prompt(
    name="answer_accuracy_2",
    version="3",
    input_model=AnswerAccuracy2Input,
    output_model=AnswerAccuracy2Output,
    instructions={"en": _AA_EN_2},
    examples={"en": _AA_EXAMPLES_2},
)
CONTEXT_RELEVANCE_1: Prompt[ContextRelevanceInput, ContextRelevance1Output] = Prompt(
    name="context_relevance_1",
    version="3",
    input_model=ContextRelevanceInput,
    output_model=ContextRelevance1Output,
    instructions={"en": _CR_EN_1},
    examples={"en": _CR_EXAMPLES_1},
)
CONTEXT_RELEVANCE_2: Prompt[ContextRelevanceInput, ContextRelevance2Output] = Prompt(
    name="context_relevance_2",
    version="3",
    input_model=ContextRelevanceInput,
    output_model=ContextRelevance2Output,
    instructions={"en": _CR_EN_2},
    examples={"en": _CR_EXAMPLES_2},
)
RESPONSE_GROUNDEDNESS_1: Prompt[ResponseGroundednessInput, ResponseGroundedness1Output] = Prompt(
    name="response_groundedness_1",
    version="3",
    input_model=ResponseGroundednessInput,
    output_model=ResponseGroundedness1Output,
    instructions={"en": _RG_EN_1},
    examples={"en": _RG_EXAMPLES_1},
)
RESPONSE_GROUNDEDNESS_2: Prompt[ResponseGroundednessInput, ResponseGroundedness2Output] = Prompt(
    name="response_groundedness_2",
    version="3",
    input_model=ResponseGroundednessInput,
    output_model=ResponseGroundedness2Output,
    instructions={"en": _RG_EN_2},
    examples={"en": _RG_EXAMPLES_2},
)

NVIDIA_PROMPTS = (
    ANSWER_ACCURACY_1,
    ANSWER_ACCURACY_2,
    CONTEXT_RELEVANCE_1,
    CONTEXT_RELEVANCE_2,
    RESPONSE_GROUNDEDNESS_1,
    RESPONSE_GROUNDEDNESS_2,
)
"""The six templates, in metric order (template 1, template 2 of each)."""
