"""Agent goal accuracy's two steps: infer the goal and end state, then compare outcomes.

RAGAS ``AgentGoalAccuracyWithReference`` / ``WithoutReference`` (``metrics/_goal_accuracy.py``):
``InferGoalOutcomePrompt`` reads the conversation (``workflow``, written as
:func:`ragqa.messages.render_conversation`) and returns ``{user_goal, end_state}``;
``CompareOutcomePrompt`` compares a desired outcome (the sample's ``reference``, or the inferred
``user_goal``) with the ``end_state`` and returns ``{reason, verdict}``, 1 when they are the same.
RAGAS's verdict is the string ``"0"``/``"1"``; here it is the integer 0/1, like every ragqa verdict.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = [
    "GOAL_OUTCOME",
    "OUTCOME_COMPARISON",
    "GoalOutcomeInput",
    "GoalOutcomeOutput",
    "OutcomeComparisonInput",
    "OutcomeComparisonOutput",
]


class GoalOutcomeInput(BaseModel):
    """The conversation, as a transcript of Human, AI, Tools and ToolOutput lines."""

    workflow: str = Field(description="The agentic workflow comprised of Human, AI and Tools")


class GoalOutcomeOutput(BaseModel):
    """What the user wanted and how the conversation ended."""

    user_goal: str = Field(description="The task or objective the user wants to achieve")
    end_state: str = Field(description="The final outcome or result of the workflow")


class OutcomeComparisonInput(BaseModel):
    """The outcome the user wanted and the one the agent arrived at."""

    desired_outcome: str = Field(description="The desired outcome or result of the workflow")
    arrived_outcome: str = Field(description="The actual outcome or result of the workflow")


class OutcomeComparisonOutput(BaseModel):
    """Whether the arrived outcome achieves the desired one."""

    reason: str = Field(description="Why the outcomes are the same or different")
    verdict: int = Field(ge=0, le=1, description="1 if the arrived outcome achieves the desired outcome, else 0")


_WORKFLOW_EN = """Human: Hey, book a table at the nearest best Chinese restaurant for 8:00pm
AI: Sure, let me find the best options for you.
Tools:
  restaurant_search: {'cuisine': 'Chinese', 'time': '8:00pm'}
ToolOutput: Found a few options: 1. Golden Dragon, 2. Jade Palace
AI: I found some great options: Golden Dragon and Jade Palace. Which one would you prefer?
Human: Let's go with Golden Dragon.
AI: Great choice! I'll book a table for 8:00pm at Golden Dragon.
Tools:
  restaurant_book: {'name': 'Golden Dragon', 'time': '8:00pm'}
ToolOutput: Table booked at Golden Dragon for 8:00pm.
AI: Your table at Golden Dragon is booked for 8:00pm. Enjoy your meal!
Human: thanks"""


GOAL_OUTCOME: Prompt[GoalOutcomeInput, GoalOutcomeOutput] = Prompt(
    name="goal_outcome",
    version="2",
    input_model=GoalOutcomeInput,
    output_model=GoalOutcomeOutput,
    instructions={
        "en": (
            "Given an agentic workflow comprised of Human, AI and Tools, identify the user_goal (the task or "
            "objective the user wants to achieve) and the end_state (the final outcome or result of the workflow)."
        ),
    },
    examples={
        "en": [
            Example(
                GoalOutcomeInput(workflow=_WORKFLOW_EN),
                GoalOutcomeOutput(
                    user_goal="Book a table at the nearest best Chinese restaurant for 8:00pm.",
                    end_state="A table is successfully booked at Golden Dragon (Chinese restaurant) for 8:00pm.",
                ),
            )
        ],
    },
)

OUTCOME_COMPARISON: Prompt[OutcomeComparisonInput, OutcomeComparisonOutput] = Prompt(
    name="outcome_comparison",
    version="2",
    input_model=OutcomeComparisonInput,
    output_model=OutcomeComparisonOutput,
    instructions={
        "en": (
            "Given user goal, desired outcome and achieved outcome compare them and identify if they are the "
            "same (1) or different (0)."
        ),
    },
    examples={
        "en": [
            Example(
                OutcomeComparisonInput(
                    desired_outcome="A table is successfully booked at any Chinese restaurant for 8:00pm.",
                    arrived_outcome="A table is successfully booked at Jade Palace (Chinese restaurant) for 8:00pm.",
                ),
                OutcomeComparisonOutput(
                    reason="The arrived outcome is same as the desired outcome and aligns with the user goal.",
                    verdict=1,
                ),
            )
        ],
    },
)
