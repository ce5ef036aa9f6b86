"""The batched call plan's judge steps: one call for what the ``ragas`` plan asks item by item.

Each step asks a batched prompt (:mod:`ragqa.prompts.nli_matrix`,
:mod:`ragqa.prompts.context_usefulness_batch`, :mod:`ragqa.prompts.question_generation_batch`,
:mod:`ragqa.prompts.entities_batch`), checks the answer's shape item by item (every item
answered once, by its number, with the right number of verdicts) and asks the per-item prompt of
the ``ragas`` plan again **only for the items the answer left out or got wrong**. An answer that
does not validate at all (:class:`~ragqa.errors.JudgeOutputError` from the judge) leaves out
every item. Each item's answer has the per-item prompt's fields and meaning, so the metrics' maths
is the same on both plans; the items asked again are listed in :attr:`Batched.fallback`.

A batch of one item is asked with the per-item prompt itself (one call either way, and the same
call as the ``ragas`` plan makes).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Judge
from ragqa.metrics._steps import judge_statements
from ragqa.prompts.context_usefulness import CONTEXT_USEFULNESS, ContextUsefulnessInput
from ragqa.prompts.context_usefulness_batch import CONTEXT_USEFULNESS_BATCH, ContextUsefulnessBatchInput
from ragqa.prompts.entities import ENTITIES, EntitiesInput
from ragqa.prompts.entities_batch import ENTITIES_BATCH, EntitiesBatchInput
from ragqa.prompts.nli import StatementVerdict
from ragqa.prompts.nli_matrix import NLI_MATRIX, NLIMatrixInput
from ragqa.prompts.numbered import numbered
from ragqa.prompts.question_generation import (
    QUESTION_GENERATION,
    QuestionGenerationInput,
    QuestionGenerationOutput,
)
from ragqa.prompts.question_generation_batch import QUESTION_GENERATION_BATCH, QuestionGenerationBatchInput
from ragqa.schema import Language

__all__ = [
    "Batched",
    "Judged",
    "accept_items",
    "extract_entity_lists",
    "generate_questions",
    "judge_matrix",
    "judge_usefulness",
]

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


class Judged(Protocol):
    """A usefulness verdict of either plan: ``value`` in [0, 1] (0/1 from an LLM) and its ``reason``."""

    @property
    def reason(self) -> str:
        """Why the context is or is not useful."""
        ...

    @property
    def value(self) -> float:
        """The verdict, 0.0 or 1.0 (a graded judge's grade in [0, 1])."""
        ...


@dataclass(frozen=True)
class Batched(Generic[T]):
    """A batched step's result: one answer per item, and which items were asked again.

    Attributes:
        items: one answer per item, in the items' order (always complete).
        fallback: one line per problem of the batched answer (``context 3: missing``,
            ``context 2: 2 verdicts for 3 statements``...); every item it names was asked again
            with the per-item prompt. Empty when the batched answer was complete.
    """

    items: list[T]
    fallback: list[str] = field(default_factory=list)


def accept_items(
    answers: Sequence[R],
    n: int,
    *,
    number: Callable[[R], int],
    check: Callable[[R], str | None],
    what: str,
) -> tuple[dict[int, R], list[str]]:
    """Check a batched answer item by item: which of the items 1..n it answered well.

    Args:
        answers: the batched answer's rows, in the order given.
        n: the number of items asked (numbered 1..n).
        number: the item number a row names.
        check: ``None`` when a row is well formed, else why not (``2 verdicts for 3 statements``).
        what: the item's noun in problem lines (``context``, ``text``, ``question``).

    Returns:
        ``(accepted, problems)``: the well-formed rows by 0-based item index, and one line per
        problem (a number outside 1..n, an item answered twice, a malformed row, a missing
        item). Every item not in ``accepted`` is named in ``problems``.
    """
    accepted: dict[int, R] = {}
    rejected: set[int] = set()
    problems: list[str] = []
    for row in answers:
        k = number(row)
        if not 1 <= k <= n:
            problems.append(f"{what} {k}: no such {what} (1..{n})")
            continue
        if k - 1 in accepted:
            del accepted[k - 1]
            rejected.add(k)
            problems.append(f"{what} {k}: answered more than once")
            continue
        if k in rejected:
            continue  # already named in problems, and asked again
        why = check(row)
        if why is not None:
            problems.append(f"{what} {k}: {why}")
            rejected.add(k)
            continue
        accepted[k - 1] = row
    problems += [f"{what} {k}: missing" for k in range(1, n + 1) if k - 1 not in accepted and k not in rejected]
    return accepted, problems


async def _complete(
    judge: Judge,
    step: str,
    n: int,
    batched: Callable[[], Awaitable[tuple[dict[int, T], list[str]]]],
    single: Callable[[int], Awaitable[T]],
) -> Batched[T]:
    """Ask the batched call, then the per-item call for every item it left out."""
    try:
        accepted, problems = await batched()
    except JudgeOutputError as exc:
        accepted, problems = {}, [f"every item: the answer does not validate ({exc})"]
    missing = [i for i in range(n) if i not in accepted]
    if missing:
        log.warning(
            "judge %s, step %s: asking %d of %d item(s) again one by one: %s",
            judge.id,
            step,
            len(missing),
            n,
            "; ".join(problems),
        )
        try:
            fetched = await asyncio.gather(*(single(i) for i in missing))
        except JudgeOutputError as exc:
            raise JudgeOutputError(
                f"{step}: the batched answer left out item(s) ({'; '.join(problems)}) and asking one again "
                f"failed: {exc}",
                judge_id=exc.judge_id or judge.id,
                step=exc.step,
                raw=exc.raw,
            ) from exc
        accepted.update(zip(missing, fetched, strict=True))
    return Batched(items=[accepted[i] for i in range(n)], fallback=problems if missing else [])


async def judge_matrix(
    judge: Judge, statements: Sequence[str], contexts: Sequence[str], language: Language
) -> Batched[list[StatementVerdict]]:
    """Judge every statement against each context: one :data:`~ragqa.prompts.nli_matrix.NLI_MATRIX` call.

    Row ``j`` of the result is what ``judge_statements(judge, contexts[j], statements)`` returns in
    the ``ragas`` plan (one verdict per statement, same fields and meaning). No call when there is
    no statement or no context; the per-context NLI call when there is one context.

    Args:
        judge: the judge.
        statements: ``S`` statements.
        contexts: ``N`` contexts, each judged on its own (not joined).
        language: the prompt language.

    Returns:
        ``items``: ``N`` rows of ``S`` verdicts (``verdict[j][s]``: statement s against context j);
        ``fallback``: the rows asked again per context.

    Raises:
        JudgeOutputError: (step ``nli``, the message naming ``nli_matrix`` and the rows left out)
            when a row had to be asked again and that answer too has the wrong number of verdicts.
        ragqa.errors.JudgeError: when a call fails.
    """
    if not statements or not contexts:
        return Batched(items=[[] for _ in contexts])
    if len(contexts) == 1:
        return Batched(items=[await judge_statements(judge, contexts[0], statements, language)])

    async def batched() -> tuple[dict[int, list[StatementVerdict]], list[str]]:
        out = await judge.ask(
            NLI_MATRIX, NLIMatrixInput(statements=list(statements), contexts=numbered(contexts)), language=language
        )
        rows, problems = accept_items(
            out.rows,
            len(contexts),
            number=lambda r: r.context,
            check=lambda r: (
                None
                if len(r.verdicts) == len(statements)
                else f"{len(r.verdicts)} verdicts for {len(statements)} statements"
            ),
            what="context",
        )
        return {j: list(r.verdicts) for j, r in rows.items()}, problems

    async def single(j: int) -> list[StatementVerdict]:
        return await judge_statements(judge, contexts[j], statements, language)

    return await _complete(judge, NLI_MATRIX.name, len(contexts), batched, single)


async def judge_usefulness(
    judge: Judge, question: str, answer: str, contexts: Sequence[str], language: Language
) -> Batched[Judged]:
    """Judge each context's usefulness for ``answer``: one context usefulness batch call.

    Item ``j`` has the fields and meaning of the per-context
    :data:`~ragqa.prompts.context_usefulness.CONTEXT_USEFULNESS` answer (``reason``, ``value``).

    Returns:
        ``items``: one verdict per context, in retrieval order; ``fallback``: the contexts asked again.

    Raises:
        JudgeOutputError: (step ``context_usefulness``) when a context asked again fails validation.
        ragqa.errors.JudgeError: when a call fails.
    """

    async def single(j: int) -> Judged:
        return await judge.ask(
            CONTEXT_USEFULNESS,
            ContextUsefulnessInput(question=question, context=contexts[j], answer=answer),
            language=language,
        )

    if len(contexts) <= 1:
        return Batched(items=[await single(j) for j in range(len(contexts))])

    async def batched() -> tuple[dict[int, Judged], list[str]]:
        out = await judge.ask(
            CONTEXT_USEFULNESS_BATCH,
            ContextUsefulnessBatchInput(question=question, answer=answer, contexts=numbered(contexts)),
            language=language,
        )
        verdicts, problems = accept_items(
            out.verdicts, len(contexts), number=lambda v: v.context, check=lambda v: None, what="context"
        )
        return dict(verdicts), problems

    return await _complete(judge, CONTEXT_USEFULNESS_BATCH.name, len(contexts), batched, single)


async def generate_questions(
    judge: Judge, response: str, count: int, language: Language
) -> Batched[QuestionGenerationOutput]:
    """Generate ``count`` questions from ``response``: one question generation batch call.

    Generation ``i`` (1-based) has the fields and meaning of the per-item
    :data:`~ragqa.prompts.question_generation.QUESTION_GENERATION` answer with ``attempt=i``.

    Returns:
        ``items``: ``count`` generations in attempt order; ``fallback``: the attempts asked again.

    Raises:
        JudgeOutputError: (step ``question_generation``) when an attempt asked again fails validation.
        ragqa.errors.JudgeError: when a call fails.
    """

    async def single(i: int) -> QuestionGenerationOutput:
        return await judge.ask(
            QUESTION_GENERATION, QuestionGenerationInput(response=response, attempt=i + 1), language=language
        )

    if count <= 1:
        return Batched(items=[await single(i) for i in range(count)])

    async def batched() -> tuple[dict[int, QuestionGenerationOutput], list[str]]:
        out = await judge.ask(
            QUESTION_GENERATION_BATCH, QuestionGenerationBatchInput(response=response, count=count), language=language
        )
        kept, problems = accept_items(
            out.questions, count, number=lambda q: q.attempt, check=lambda q: None, what="question"
        )
        return {
            i: QuestionGenerationOutput(question=q.question, noncommittal=q.noncommittal) for i, q in kept.items()
        }, problems

    return await _complete(judge, QUESTION_GENERATION_BATCH.name, count, batched, single)


async def extract_entity_lists(judge: Judge, texts: Sequence[str], language: Language) -> Batched[list[str]]:
    """Extract the entities of each text: one entities batch call.

    Item ``j`` is what the per-text :data:`~ragqa.prompts.entities.ENTITIES` call returns for
    ``texts[j]`` (its ``entities``, as returned).

    Returns:
        ``items``: one entity list per text, in order; ``fallback``: the texts asked again.

    Raises:
        JudgeOutputError: (step ``entities``) when a text asked again fails validation.
        ragqa.errors.JudgeError: when a call fails.
    """

    async def single(j: int) -> list[str]:
        out = await judge.ask(ENTITIES, EntitiesInput(text=texts[j]), language=language)
        return list(out.entities)

    if len(texts) <= 1:
        return Batched(items=[await single(j) for j in range(len(texts))])

    async def batched() -> tuple[dict[int, list[str]], list[str]]:
        out = await judge.ask(ENTITIES_BATCH, EntitiesBatchInput(texts=numbered(texts)), language=language)
        kept, problems = accept_items(
            out.results, len(texts), number=lambda r: r.text, check=lambda r: None, what="text"
        )
        return {j: list(r.entities) for j, r in kept.items()}, problems

    return await _complete(judge, ENTITIES_BATCH.name, len(texts), batched, single)
