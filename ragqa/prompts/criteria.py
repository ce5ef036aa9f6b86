"""The general-purpose judge prompts: a binary aspect verdict, a criterion score and a rubric level.

RAGAS ``AspectCritic`` (``metrics/_aspect_critic.py``), ``SimpleCriteriaScore``
(``metrics/_simple_criteria.py``) and ``RubricsScore`` (``metrics/_domain_specific_rubrics.py``).
Each sends the sample's fields that are present (``user_input``, ``response``,
``retrieved_contexts``, ``reference``, ``reference_contexts``; absent ones are left out, as
RAGAS's ``exclude_none`` does) and asks for ``{reason, verdict}``, ``{reason, score}`` or
``{feedback, score}``.

Difference from RAGAS: RAGAS writes the criterion (or the rubric) into the instruction, so each
user-defined aspect is a different prompt. Here the instruction is fixed and the criterion travels
in the input (``definition``, ``rubrics``): one prompt per metric, which the local judge and the
fake server can answer, and whose cache and shared-call keys differ whenever the criterion does.
The ``attempt`` number makes the ``strictness`` self-consistency calls distinct, as
``question_generation`` does.

Versions start at 2: version 1 named the one-user-message rendering of ragqa's first prompts,
whose cached answers must never be served to these.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = [
    "ASPECT_CRITIC",
    "RUBRICS_SCORE",
    "SIMPLE_CRITERIA",
    "SIMPLE_CRITERIA_MAX",
    "AspectCriticInput",
    "AspectCriticOutput",
    "RubricsScoreInput",
    "RubricsScoreOutput",
    "SimpleCriteriaInput",
    "SimpleCriteriaOutput",
    "SubmissionFields",
]

SIMPLE_CRITERIA_MAX = 5
"""The top of simple criteria's integer scale 0..5 (spring-ai-ragas's default ``maxScore``)."""


class SubmissionFields(BaseModel):
    """The sample's fields a general-purpose judge sees; ``None`` fields are left out of the prompt."""

    user_input: str | None = Field(default=None, description="The input to the LLM system")
    response: str | None = Field(default=None, description="The response from the LLM system")
    retrieved_contexts: list[str] | None = Field(default=None, description="The retrieved contexts")
    reference_contexts: list[str] | None = Field(default=None, description="The reference contexts")
    reference: str | None = Field(default=None, description="The reference answer")


class AspectCriticInput(SubmissionFields):
    """The aspect to judge and the submission."""

    aspect: str = Field(description="The aspect's name")
    definition: str = Field(description="The criterion the submission is judged against (a yes/no question)")
    attempt: int = Field(default=1, ge=1, description="Self-consistency attempt, 1..strictness; judge each afresh")


class AspectCriticOutput(BaseModel):
    """The binary verdict on the aspect."""

    reason: str = Field(description="Reason for the verdict")
    verdict: int = Field(ge=0, le=1, description="1 (Yes) if the submission meets the criterion, else 0 (No)")


class SimpleCriteriaInput(SubmissionFields):
    """The criterion to score by and the submission."""

    name: str = Field(description="The criterion's name")
    definition: str = Field(description="The criterion the submission is scored by")
    attempt: int = Field(default=1, ge=1, description="Self-consistency attempt, 1..strictness; score each afresh")


class SimpleCriteriaOutput(BaseModel):
    """The integer score on the criterion."""

    reason: str = Field(description="Reason for the scoring")
    score: int = Field(ge=0, le=SIMPLE_CRITERIA_MAX, description="The score for the submission, an integer 0..5")


class RubricsScoreInput(SubmissionFields):
    """The scoring rubric and the submission."""

    rubrics: dict[str, str] = Field(description="The rubric: scoreN_description -> what level N means")


class RubricsScoreOutput(BaseModel):
    """The rubric level the submission reaches."""

    feedback: str = Field(description="The feedback for the response")
    score: int = Field(description="The score given to the response: one of the rubric's levels")


_SUBMISSION_EN = (
    "The submission is the input's user_input, response, retrieved_contexts, reference and reference_contexts "
    "(only those present)."
)

ASPECT_CRITIC: Prompt[AspectCriticInput, AspectCriticOutput] = Prompt(
    name="aspect_critic",
    version="2",
    input_model=AspectCriticInput,
    output_model=AspectCriticOutput,
    instructions={
        "en": (
            "Evaluate the Input based on the criteria defined. Use only 'Yes' (1) and 'No' (0) as verdict. "
            "The criteria definition is the input's definition field (the aspect's name is in aspect). "
            f"{_SUBMISSION_EN} Answer verdict 1 if the submission meets the definition, 0 if it does not, "
            "with a short reason."
        ),
    },
    examples={
        "en": [
            Example(
                AspectCriticInput(
                    aspect="correctness",
                    definition="Is the submission factually accurate and free from errors?",
                    user_input="What is the boiling point of water at sea level?",
                    response="Water boils at 100 degrees Celsius at sea level.",
                ),
                AspectCriticOutput(reason="100 °C at sea level is the correct boiling point.", verdict=1),
            ),
        ],
    },
)

SIMPLE_CRITERIA: Prompt[SimpleCriteriaInput, SimpleCriteriaOutput] = Prompt(
    name="simple_criteria",
    version="3",
    input_model=SimpleCriteriaInput,
    output_model=SimpleCriteriaOutput,
    instructions={
        "en": (
            "Evaluate the input based on the criteria defined. The criteria definition is the input's definition "
            f"field (its name is in name). {_SUBMISSION_EN} When a reference is present, compare the response "
            f"with it. Give an integer score from 0 (the criterion is not met at all) to {SIMPLE_CRITERIA_MAX} "
            "(fully met), with a short reason."
        ),
    },
    examples={
        "en": [
            Example(
                SimpleCriteriaInput(
                    name="completeness",
                    definition="How completely does the response answer every part of the question?",
                    user_input="Name the capital and the currency of Japan.",
                    response="The capital of Japan is Tokyo.",
                ),
                SimpleCriteriaOutput(reason="It names the capital but not the currency (the yen).", score=2),
            ),
        ],
    },
)

RUBRICS_SCORE: Prompt[RubricsScoreInput, RubricsScoreOutput] = Prompt(
    name="rubrics_score",
    version="3",
    input_model=RubricsScoreInput,
    output_model=RubricsScoreOutput,
    instructions={
        "en": (
            "Your task is to assign an appropriate score and provide feedback to the inputs based solely on the "
            "scoring criteria. The scoring rubrics are the input's rubrics field: each scoreN_description says "
            f"what score N means. {_SUBMISSION_EN} Give as score the number N of the rubric level the submission "
            "reaches, with feedback."
        ),
    },
    examples={
        "en": [
            Example(
                RubricsScoreInput(
                    user_input="What is the capital of Australia?",
                    response="The capital of Australia is Sydney.",
                    reference="Canberra is the capital of Australia.",
                    rubrics={
                        "score1_description": "The response is incorrect or does not answer.",
                        "score2_description": "The response is mostly incorrect.",
                        "score3_description": "The response is partly correct.",
                        "score4_description": "The response is correct with minor issues.",
                        "score5_description": "The response is fully correct and complete.",
                    },
                ),
                RubricsScoreOutput(feedback="Sydney is not the capital; the reference says Canberra.", score=1),
            ),
        ],
    },
)
