"""Correctness classification: sort answer and ground-truth statements into TP, FP and FN.

Used by answer correctness. Mirrors RAGAS's ``CorrectnessClassifier``
(``metrics/_answer_correctness.py``): given the question, the answer's statements and the ground
truth's statements, one call returns three lists, each item a statement with a reason:

- ``TP``: answer statements directly supported by one or more ground-truth statements;
- ``FP``: answer statements not supported by any ground-truth statement;
- ``FN``: ground-truth statements not present in the answer.

The metric counts the lists (:meth:`CorrectnessOutput.counts`); the local judge's graded
subclass counts graded supports instead.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["CORRECTNESS", "ClassifiedStatement", "CorrectnessInput", "CorrectnessOutput"]


class CorrectnessInput(BaseModel):
    """The question, the answer's statements and the ground truth's statements."""

    question: str = Field(description="The question both texts answer")
    answer: list[str] = Field(description="Statements of the answer under evaluation")
    ground_truth: list[str] = Field(description="Statements of the ground truth (the reference)")


class ClassifiedStatement(BaseModel):
    """One statement in one category, with the reason."""

    statement: str = Field(description="The statement, copied")
    reason: str = Field(description="Why it belongs to this category")


class CorrectnessOutput(BaseModel):
    """The three categories; each statement belongs to exactly one of them."""

    TP: list[ClassifiedStatement] = Field(description="Answer statements supported by the ground truth")
    FP: list[ClassifiedStatement] = Field(description="Answer statements not supported by the ground truth")
    FN: list[ClassifiedStatement] = Field(description="Ground-truth statements not present in the answer")

    def counts(self) -> tuple[float, float, float]:
        """``(TP, FP, FN)`` as numbers: the list lengths (graded subclasses return graded sums).

        Returns:
            Three non-negative numbers; RAGAS's ``len(TP), len(FP), len(FN)``.
        """
        return float(len(self.TP)), float(len(self.FP)), float(len(self.FN))


def _c(statement: str, reason: str) -> ClassifiedStatement:
    return ClassifiedStatement(statement=statement, reason=reason)


_SUN_EN = CorrectnessInput(
    question="What powers the sun and what is its primary function?",
    answer=[
        "The sun is powered by nuclear fission, similar to nuclear reactors on Earth.",
        "The primary function of the sun is to provide light to the solar system.",
    ],
    ground_truth=[
        "The sun is powered by nuclear fusion, where hydrogen atoms fuse to form helium.",
        "This fusion process in the sun's core releases a tremendous amount of energy.",
        "The energy from the sun provides heat and light, which are essential for life on Earth.",
        "The sun's light plays a critical role in Earth's climate system.",
        "Sunlight helps to drive the weather and ocean currents.",
    ],
)
_WATER_EN = CorrectnessInput(
    question="What is the boiling point of water?",
    answer=["The boiling point of water is 100 degrees Celsius at sea level"],
    ground_truth=[
        "The boiling point of water is 100 degrees Celsius (212 degrees Fahrenheit) at sea level.",
        "The boiling point of water can change with altitude.",
    ],
)

CORRECTNESS: Prompt[CorrectnessInput, CorrectnessOutput] = Prompt(
    name="correctness_classifier",
    version="2",
    input_model=CorrectnessInput,
    output_model=CorrectnessOutput,
    instructions={
        "en": (
            "Given a ground truth and an answer statements, analyze each statement and classify them in one of "
            "the following categories: TP (true positive): statements that are present in answer that are also "
            "directly supported by the one or more statements in ground truth, FP (false positive): statements "
            "present in the answer but not directly supported by any statement in ground truth, FN (false "
            "negative): statements found in the ground truth but not present in answer. Each statement can only "
            "belong to one of the categories. Provide a reason for each classification."
        ),
    },
    examples={
        "en": [
            Example(
                _SUN_EN,
                CorrectnessOutput(
                    TP=[
                        _c(
                            _SUN_EN.answer[1],
                            "This statement is somewhat supported by the ground truth mentioning the sun providing "
                            "light and its roles, though it focuses more broadly on the sun's energy.",
                        )
                    ],
                    FP=[
                        _c(
                            _SUN_EN.answer[0],
                            "This statement is incorrect and contradicts the ground truth which states that the sun "
                            "is powered by nuclear fusion.",
                        )
                    ],
                    FN=[
                        _c(
                            _SUN_EN.ground_truth[0],
                            "This accurate description of the sun's power source is not included in the answer.",
                        ),
                        _c(
                            _SUN_EN.ground_truth[1],
                            "This process and its significance are not mentioned in the answer.",
                        ),
                        _c(
                            _SUN_EN.ground_truth[2],
                            "The answer only mentions light, omitting the essential aspects of heat and its "
                            "necessity for life, which the ground truth covers.",
                        ),
                        _c(
                            _SUN_EN.ground_truth[3],
                            "This broader impact of the sun's light on Earth's climate system is not addressed in "
                            "the answer.",
                        ),
                        _c(
                            _SUN_EN.ground_truth[4],
                            "The effect of sunlight on weather patterns and ocean currents is omitted in the answer.",
                        ),
                    ],
                ),
            ),
            Example(
                _WATER_EN,
                CorrectnessOutput(
                    TP=[
                        _c(
                            _WATER_EN.answer[0],
                            "This statement is directly supported by the ground truth which specifies the boiling "
                            "point of water as 100 degrees Celsius at sea level.",
                        )
                    ],
                    FP=[],
                    FN=[
                        _c(
                            _WATER_EN.ground_truth[1],
                            "This additional information about how the boiling point of water can vary with "
                            "altitude is not mentioned in the answer.",
                        )
                    ],
                ),
            ),
        ],
    },
)
