"""Judge steps shared by several metrics, with the checks RAGAS lacks.

Each step is one prompt; identical steps across metrics on the same sample and judge are made
once (the evaluator wraps judges in :class:`~ragqa.judges.base.SharedCallJudge`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Judge
from ragqa.prompts.nli import NLI, NLIInput, StatementVerdict
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.schema import Language

__all__ = ["REFERENCE_STATEMENTS", "RESPONSE_NLI", "RESPONSE_STATEMENTS", "extract_statements", "judge_statements"]

RESPONSE_STATEMENTS = "statements:response"
"""The shared step that decomposes the response into statements (see :meth:`Metric.shared_steps`)."""
REFERENCE_STATEMENTS = "statements:reference"
"""The step that decomposes the reference into statements (with the user input as the question)."""
RESPONSE_NLI = "nli:response/contexts"
"""The shared step that judges the response's statements against all contexts joined."""


async def extract_statements(judge: Judge, question: str, text: str, language: Language) -> list[str]:
    """Decompose ``text`` into atomic statements (one judge call).

    Returns:
        The non-blank statements, stripped, in order (possibly empty).

    Raises:
        ragqa.errors.JudgeError: when the call fails.
    """
    out = await judge.ask(STATEMENTS, StatementsInput(question=question, answer=text), language=language)
    return [s.strip() for s in out.statements if s.strip()]


async def judge_statements(
    judge: Judge, context: str, statements: Sequence[str], language: Language
) -> list[StatementVerdict]:
    """Judge each statement against ``context`` (one call; none when there are no statements).

    Returns:
        One verdict per statement, in order.

    Raises:
        JudgeOutputError: when the judge returns a different number of verdicts than statements
            (RAGAS silently divides by the returned count or crashes on ragged arrays).
        ragqa.errors.JudgeError: when the call fails.
    """
    if not statements:
        return []
    out = await judge.ask(NLI, NLIInput(context=context, statements=list(statements)), language=language)
    if len(out.verdicts) != len(statements):
        raise JudgeOutputError(
            f"judge returned {len(out.verdicts)} verdicts for {len(statements)} statements",
            judge_id=judge.id,
            step=NLI.name,
            raw=out.model_dump_json(),
        )
    return list(out.verdicts)
