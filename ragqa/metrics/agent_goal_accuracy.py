"""Agent goal accuracy: did the agent achieve what the user wanted?

RAGAS ``AgentGoalAccuracyWithReference`` and ``AgentGoalAccuracyWithoutReference``
(``metrics/_goal_accuracy.py``; both named ``agent_goal_accuracy``), one metric here with a
``mode``. Two sequential calls per sample:

1. ``goal_outcome``: from the conversation (RAGAS's transcript,
   :func:`ragqa.messages.render_conversation`) the judge infers ``user_goal`` and ``end_state``;
2. ``outcome_comparison``: the desired outcome (mode ``with_reference``: the sample's
   ``reference``; mode ``without_reference``: the inferred ``user_goal``) against the
   ``end_state``; verdict 1 when the outcome was achieved.

The score is the verdict, 0.0 or 1.0. spring-ai-ragas differs: one call with the reference (two
without), and it falls back to the reference-free mode on a blank reference; here mode ``auto``
(the default) makes that choice explicit and records it in the details.
"""

from __future__ import annotations

from typing import ClassVar, Literal, get_args

from ragqa.errors import SampleError
from ragqa.judges.base import Judge
from ragqa.messages import render_conversation
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.prompts.goal import GOAL_OUTCOME, OUTCOME_COMPARISON, GoalOutcomeInput, OutcomeComparisonInput
from ragqa.schema import MetricScore, Sample

__all__ = ["AgentGoalAccuracy", "GoalMode", "resolve_goal_mode"]

GoalMode = Literal["auto", "with_reference", "without_reference"]
"""``with_reference`` (RAGAS ``AgentGoalAccuracyWithReference``), ``without_reference``, or ``auto``."""


def resolve_goal_mode(mode: GoalMode, sample: Sample) -> Literal["with_reference", "without_reference"]:
    """The effective mode: ``auto`` is ``with_reference`` when the sample has a non-blank ``reference``."""
    if mode != "auto":
        return mode
    return "with_reference" if sample.reference and sample.reference.strip() else "without_reference"


class AgentGoalAccuracy(Metric):
    """Whether the conversation ended with the user's goal achieved (binary per judge).

    - Fields: ``messages``; ``reference`` (the desired outcome) in mode ``with_reference``.
    - Range 0..1 (each judge says 0 or 1; the panel's aggregate is their mean), higher is better.
    - Judge calls per sample: 2, sequential (goal and end state, then the comparison).
    - Never NaN; raises :class:`~ragqa.errors.JudgeError` when a call fails.

    Args:
        mode: ``auto`` (default: ``with_reference`` when the sample has a reference, else
            ``without_reference``), ``with_reference`` or ``without_reference``. The result key
            is ``agent_goal_accuracy`` for ``auto`` and ``agent_goal_accuracy(mode=<mode>)``
            otherwise.
    """

    name: ClassVar[str] = "agent_goal_accuracy"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("messages",)
    description: ClassVar[str] = (
        "Whether the agent achieved the user's goal (against the reference, or the inferred goal)"
    )
    calls_per_sample: ClassVar[str] = "2"
    default_threshold: ClassVar[float | None] = 0.5

    def __init__(self, mode: GoalMode = "auto") -> None:
        """Create the metric.

        Raises:
            ValueError: for an unknown mode.
        """
        if mode not in get_args(GoalMode):
            raise ValueError(f"mode must be 'auto', 'with_reference' or 'without_reference', not {mode!r}")
        self.mode: GoalMode = mode

    @property
    def key(self) -> str:
        """``agent_goal_accuracy``, or ``agent_goal_accuracy(mode=<mode>)`` for an explicit mode."""
        return self.name if self.mode == "auto" else f"{self.name}(mode={self.mode})"

    def validate(self, sample: Sample) -> None:
        """Check ``messages``, and ``reference`` in mode ``with_reference``.

        Raises:
            SampleError: naming the sample, the field and the fix.
        """
        super().validate(sample)
        if self.mode == "with_reference" and not (sample.reference and sample.reference.strip()):
            raise SampleError(
                "missing or blank; mode with_reference compares the end state with the reference: add the "
                "desired outcome, or use mode without_reference (or auto)",
                sample_id=sample.label,
                field="reference",
                metric=self.key,
            )

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        used = resolve_goal_mode(self.mode, sample)
        workflow = render_conversation(sample.messages or [])
        inferred = await judge.ask(GOAL_OUTCOME, GoalOutcomeInput(workflow=workflow), language=context.language)
        desired = (sample.reference or "") if used == "with_reference" else inferred.user_goal
        compared = await judge.ask(
            OUTCOME_COMPARISON,
            OutcomeComparisonInput(desired_outcome=desired, arrived_outcome=inferred.end_state),
            language=context.language,
        )
        value = float(compared.verdict)
        what = "the reference outcome" if used == "with_reference" else "the inferred goal"
        reason = f"{what} was {'achieved' if value == 1.0 else 'not achieved'}: {compared.reason}"
        return MetricScore(
            value=value,
            reason=reason,
            details={
                "mode": used,
                "user_goal": inferred.user_goal,
                "end_state": inferred.end_state,
                "desired_outcome": desired,
                "verdict": compared.verdict,
                "comparison_reason": compared.reason,
            },
        )
