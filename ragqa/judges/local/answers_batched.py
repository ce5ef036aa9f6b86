"""The local judge's answers to the batched call plan's prompts, composed of its per-item answers.

Each handler answers a batched prompt by calling the per-item handler of
:data:`ragqa.judges.local._handler.HANDLERS` once per item, looked up **at call time**
(``judge.handler_for``) (``nli`` per
context, ``context_usefulness`` per context, ``question_generation`` per attempt, ``entities``
per text) and putting the answers in the batched shape. The local judge therefore answers both
call plans identically by construction, whatever the per-item handlers compute: a batched row is
exactly the per-item answer (graded support included), so scores are equal across plans.

Graded outputs: the batched output models of an LLM carry binary verdicts only; the subclasses
here add the per-item ``support`` (see :mod:`ragqa.judges.local.graded`), so metrics read the
same graded ``value`` on both plans and the disk cache restores it.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ragqa.judges.local._handler import LocalJudgeView, register_handler
from ragqa.judges.local.graded import GradedStatementVerdict
from ragqa.prompts.context_usefulness import ContextUsefulnessInput
from ragqa.prompts.context_usefulness_batch import (
    CONTEXT_USEFULNESS_BATCH,
    ContextUsefulnessBatchInput,
    ContextUsefulnessBatchOutput,
    ContextUsefulnessVerdict,
)
from ragqa.prompts.entities import EntitiesInput
from ragqa.prompts.entities_batch import ENTITIES_BATCH, EntitiesBatchInput, EntitiesBatchOutput, TextEntities
from ragqa.prompts.nli import NLIInput, StatementVerdict
from ragqa.prompts.nli_matrix import NLI_MATRIX, ContextVerdicts, NLIMatrixInput, NLIMatrixOutput
from ragqa.prompts.question_generation import QuestionGenerationInput
from ragqa.prompts.question_generation_batch import (
    QUESTION_GENERATION_BATCH,
    GeneratedQuestion,
    QuestionGenerationBatchInput,
    QuestionGenerationBatchOutput,
)
from ragqa.schema import Language

__all__ = [
    "GradedContextUsefulnessBatchOutput",
    "GradedContextUsefulnessVerdict",
    "GradedContextVerdicts",
    "GradedNLIMatrixOutput",
]


class GradedContextVerdicts(ContextVerdicts):
    """A matrix row with graded verdicts (the local judge's): the per-context NLI answer."""

    verdicts: list[GradedStatementVerdict]  # type: ignore[assignment]


class GradedNLIMatrixOutput(NLIMatrixOutput):
    """One graded row per context."""

    rows: list[GradedContextVerdicts]  # type: ignore[assignment]


class GradedContextUsefulnessVerdict(ContextUsefulnessVerdict):
    """A context's usefulness with a graded value (the local judge's).

    Attributes:
        support: how useful the context is for the answer, in [0, 1] (the per-context answer's
            ``value``); ``verdict`` is the per-context answer's verdict.
    """

    support: float = Field(
        ge=0.0, le=1.0, allow_inf_nan=False, description="Graded usefulness of the context for the answer, in [0, 1]"
    )

    @property
    def value(self) -> float:
        """The graded usefulness in [0, 1] (higher = more useful)."""
        return self.support


class GradedContextUsefulnessBatchOutput(ContextUsefulnessBatchOutput):
    """One graded usefulness verdict per context."""

    verdicts: list[GradedContextUsefulnessVerdict]  # type: ignore[assignment]


def _graded(verdict: StatementVerdict) -> GradedStatementVerdict:
    """``verdict`` as a graded verdict with the same ``value`` (a graded one is kept as it is)."""
    if isinstance(verdict, GradedStatementVerdict):
        return verdict
    return GradedStatementVerdict(
        statement=verdict.statement, reason=verdict.reason, verdict=verdict.verdict, support=verdict.value
    )


@register_handler(NLI_MATRIX)
async def _nli_matrix(judge: LocalJudgeView, data: NLIMatrixInput, language: Language) -> NLIMatrixOutput:
    nli = judge.handler_for("nli")
    rows = []
    for context in data.contexts:
        out: Any = await nli(judge, NLIInput(context=context.text, statements=data.statements), language)
        rows.append(GradedContextVerdicts(context=context.number, verdicts=[_graded(v) for v in out.verdicts]))
    return GradedNLIMatrixOutput(rows=rows)


@register_handler(CONTEXT_USEFULNESS_BATCH)
async def _context_usefulness_batch(
    judge: LocalJudgeView, data: ContextUsefulnessBatchInput, language: Language
) -> ContextUsefulnessBatchOutput:
    usefulness = judge.handler_for("context_usefulness")
    verdicts = []
    for context in data.contexts:
        item = ContextUsefulnessInput(question=data.question, context=context.text, answer=data.answer)
        out: Any = await usefulness(judge, item, language)
        verdicts.append(
            GradedContextUsefulnessVerdict(
                context=context.number, reason=out.reason, verdict=out.verdict, support=out.value
            )
        )
    return GradedContextUsefulnessBatchOutput(verdicts=verdicts)


@register_handler(QUESTION_GENERATION_BATCH)
async def _question_generation_batch(
    judge: LocalJudgeView, data: QuestionGenerationBatchInput, language: Language
) -> QuestionGenerationBatchOutput:
    generate = judge.handler_for("question_generation")
    questions = []
    for attempt in range(1, data.count + 1):
        out: Any = await generate(judge, QuestionGenerationInput(response=data.response, attempt=attempt), language)
        questions.append(GeneratedQuestion(attempt=attempt, question=out.question, noncommittal=out.noncommittal))
    return QuestionGenerationBatchOutput(questions=questions)


@register_handler(ENTITIES_BATCH)
async def _entities_batch(judge: LocalJudgeView, data: EntitiesBatchInput, language: Language) -> EntitiesBatchOutput:
    extract = judge.handler_for("entities")
    results = []
    for text in data.texts:
        out: Any = await extract(judge, EntitiesInput(text=text.text), language)
        results.append(TextEntities(text=text.number, entities=list(out.entities)))
    return EntitiesBatchOutput(results=results)
