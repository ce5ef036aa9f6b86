"""The offline local judge (``provider: local``): answers ragqa's typed prompts without a model.

It is an *approximation* of an LLM judge built from sentence splitting, lexical support (see
:mod:`ragqa.judges.local.support`), number/name/negation checks and, optionally, embeddings. Its
agreement with human labels is measured in ``docs/local-judge.md``; it is meant for running the
pipeline with no key and no network, and for smoke tests, not for final quality numbers.

Each prompt is answered by the handler registered for it (:func:`register_handler` on the
handler, next to its code: here, in the ``answers_*`` modules, or beside a prompt outside ragqa),
found by the prompt's name in :data:`HANDLERS`; a prompt without a handler raises
:class:`~ragqa.errors.JudgeUnsupported`. Graded prompts (NLI, attribution,
context usefulness, statement relevance) are answered with the graded subclasses of
:mod:`ragqa.judges.local.graded`: a ``support`` in [0, 1] that metrics read through ``value``, and
the binary verdict derived from it with the judge's ``support_threshold``. Every reason starts
with ``local approximation``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel

from ragqa._version import ragqa_version
from ragqa.errors import JudgeError, JudgeOutputError, JudgeUnsupported
from ragqa.judges.base import Embedder
from ragqa.judges.local import (  # noqa: F401 - imported for their handlers, which register themselves
    answers_agent,
    answers_batched,
    answers_judged,
    answers_response,
)
from ragqa.judges.local._handler import HANDLERS, AnyHandler, register_handler, statements_of
from ragqa.judges.local.embedder import LocalEmbedder
from ragqa.judges.local.entities import extract_entities
from ragqa.judges.local.graded import (
    GradedAttribution,
    GradedAttributionOutput,
    GradedContextUsefulnessOutput,
    GradedNLIOutput,
    GradedRelevanceOutput,
    GradedRelevanceVerdict,
    GradedStatementVerdict,
)
from ragqa.judges.local.questions import generated_question, is_noncommittal
from ragqa.judges.local.relevance import relevance_detail, relevance_many
from ragqa.judges.local.support import SupportConfig, SupportResult, support
from ragqa.judges.local.text import read_language
from ragqa.judges.local.worker import run_in_worker
from ragqa.prompts.attribution import ATTRIBUTION, AttributionInput, AttributionOutput
from ragqa.prompts.base import Prompt
from ragqa.prompts.context_usefulness import CONTEXT_USEFULNESS, ContextUsefulnessInput, ContextUsefulnessOutput
from ragqa.prompts.entities import ENTITIES, EntitiesInput, EntitiesOutput
from ragqa.prompts.nli import NLI, NLIInput, NLIOutput
from ragqa.prompts.question_generation import QUESTION_GENERATION, QuestionGenerationInput, QuestionGenerationOutput
from ragqa.prompts.statement_relevance import STATEMENT_RELEVANCE, StatementRelevanceInput, StatementRelevanceOutput
from ragqa.prompts.statements import STATEMENTS, StatementsInput, StatementsOutput
from ragqa.schema import Language, Usage
from ragqa.settings import LocalJudgeSettings
from ragqa.usage import record_usage

__all__ = [
    "ALGORITHM_VERSION",
    "HANDLERS",
    "Handler",
    "LocalJudge",
    "extract_entities",
    "register_handler",
    "statements_of",
]

ALGORITHM_VERSION = "6"
"""Version of the local judge's answers; part of :attr:`LocalJudge.fingerprint`.

Bump it whenever a handler, the text processing or the support scorer changes what the judge
answers for the same input and settings, so that cached answers of the old algorithm are not
served (the ragqa version in the fingerprint covers released changes; this covers the rest).
Version 2: supports summed with ``math.fsum`` (bit-identical across processes).
Version 4: relevance answers from :mod:`ragqa.judges.local.relevance` (query terms without intent
words, sentence-level embedding cosines, calibrated), question generation from the whole answer,
a wider noncommittal detector, entity checks that skip sentence openers and capitalised stop
words, source lead-ins (``Based on the context,``) stripped from claims.
Version 5: relevance with MiniLM uses MaxSim of the query's content words over token vectors.
Version 6: context relevance answers carry a graded rating in [0, 2] (lexical ties broken by the
support of the question and the density of its terms); question generation asks ``How long`` /
``How much`` for an answer that gives a duration or an amount.
"""

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)
P = ParamSpec("P")
T = TypeVar("T")

Handler = Callable[["LocalJudge", Any, Language], Awaitable[BaseModel]]
"""``async handler(judge, data, language) -> output model`` for one prompt name."""

_TAG = "local approximation"


def _verdict_reason(result: SupportResult, threshold: float, language: Language) -> str:
    """A short reason naming the best-matching sentence and what is missing."""
    parts = [f"{_TAG}: support {result.value:.2f} (threshold {threshold:.2f})"]
    if result.missing_numbers:
        parts.append("numbers not in the context: " + ", ".join(result.missing_numbers))
    if result.missing_entities:
        parts.append("names not in the context: " + ", ".join(result.missing_entities))
    if "negation" in result.parts:
        parts.append("the statement is negated, the matching context is not")
    if "speaker" in result.parts:
        parts.append("the statement is about the speaker, which the context does not cover")
    if result.missing_words and not result.missing_entities:
        parts.append("words not in the context: " + ", ".join(result.missing_words[:6]))
    if result.best_sentence:
        best = result.best_sentence if len(result.best_sentence) <= 160 else result.best_sentence[:157] + "..."
        parts.append(f"best match: {best!r}")
    return "; ".join(parts)


class LocalJudge:
    """An offline judge answering ragqa's prompts lexically (an approximation of an LLM judge).

    Args:
        judge_id: the id shown in reports (``chat-models.list[].id``).
        settings: thresholds and checks (``chat-models.list[].local``).
        embedder: used by relevance handlers when ``settings.use_embeddings`` is true (the
            support of statements stays lexical: embeddings measure topic, not support).

    Supported prompts: the keys of :data:`HANDLERS` (:attr:`supported_prompts`). Calls are CPU
    bound (see ``docs/performance.md`` for measured costs) and computed in the local judge's
    worker thread, off the event loop; each is recorded as one call with no tokens and no cost.
    """

    def __init__(
        self, judge_id: str, settings: LocalJudgeSettings | None = None, *, embedder: LocalEmbedder | None = None
    ) -> None:
        """Create the judge (no I/O; the embedder loads lazily on first use)."""
        self._id = judge_id
        self.settings = settings or LocalJudgeSettings()
        self.embedder = embedder
        self.support_config = SupportConfig(
            number_check=self.settings.number_check, entity_check=self.settings.entity_check
        )

    @property
    def id(self) -> str:
        """The judge id."""
        return self._id

    @property
    def fingerprint(self) -> str:
        """The judge's identity for caches: everything that changes its answers, as a JSON string.

        Covers the judge's settings (``support_threshold``, checks, ``use_embeddings``), the
        support scorer's configuration, the embedder's identity when embeddings are used,
        :data:`ALGORITHM_VERSION` and the installed ragqa version. The judge id is left out (it
        changes no answer), like the model id of an HTTP judge's fingerprint.
        """
        embedder = None  # an embedder the judge does not use changes no answer
        if self.embedder is not None and self.settings.use_embeddings:
            embedder = json.loads(self.embedder.fingerprint)
        return json.dumps(
            {
                "provider": "local",
                "algorithm": ALGORITHM_VERSION,
                "ragqa": ragqa_version(),
                "settings": self.settings.model_dump(mode="json"),
                "support": dataclasses.asdict(self.support_config),
                "embedder": embedder,
            },
            sort_keys=True,
        )

    @property
    def supported_prompts(self) -> frozenset[str]:
        """Names of the prompts this judge can answer."""
        return frozenset(HANDLERS)

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer ``prompt`` for ``data`` with the handler registered for ``prompt.name``.

        Returns:
            An instance of ``prompt.output_model``: for graded prompts the graded subclass of
            :mod:`ragqa.judges.local.graded` (``support`` in [0, 1], read through ``value``).

        Raises:
            JudgeUnsupported: when no handler exists for the prompt (``step`` = the prompt name).
            JudgeOutputError: when a handler's output does not fit the prompt's output model
                (a prompt changed shape under the same name).
            JudgeError: when the embedder fails.
        """
        handler = HANDLERS.get(prompt.name)
        if handler is None:
            raise JudgeUnsupported(
                f"the local judge cannot answer prompt {prompt.name!r}; supported: {', '.join(sorted(HANDLERS))}",
                judge_id=self._id,
                step=prompt.name,
            )
        read_language(language)  # the word lists of the language's pack, when it has some
        started = time.perf_counter()
        try:
            result = await handler(self, data, language)
        except JudgeError as exc:
            exc.judge_id = exc.judge_id or self._id
            exc.step = exc.step or prompt.name
            raise
        except (TypeError, AttributeError, ValueError) as exc:
            raise JudgeOutputError(
                f"local handler for {prompt.name!r} failed on {type(data).__name__}: {exc}",
                judge_id=self._id,
                step=prompt.name,
            ) from exc
        finally:
            record_usage(Usage(calls=1, latency_s=time.perf_counter() - started, cost=0.0))
        if not isinstance(result, prompt.output_model):
            raise JudgeOutputError(
                f"local handler for {prompt.name!r} returned {type(result).__name__}, "
                f"expected {prompt.output_model.__name__}",
                judge_id=self._id,
                step=prompt.name,
            )
        return result

    def support(self, statement: str, context: str) -> SupportResult:
        """Graded support of ``statement`` by ``context`` with this judge's checks."""
        return support(statement, context, self.support_config)

    def verdict(self, value: float) -> int:
        """The binary verdict of a graded value: 1 at or above ``support_threshold``."""
        return 1 if value >= self.settings.support_threshold else 0

    def handler_for(self, name: str) -> AnyHandler:
        """The handler of the prompt named ``name`` (for handlers that answer item by item through another).

        Raises:
            KeyError: when no handler has that name.
        """
        return HANDLERS[name]

    @property
    def relevance_embedder(self) -> Embedder | None:
        """The embedder relevance answers use: the judge's embedder when ``use_embeddings`` is on, else ``None``."""
        return self.embedder if self.settings.use_embeddings else None

    async def offload(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run the synchronous ``fn(*args, **kwargs)`` in the local judge's worker thread.

        For handlers in other modules: compute the answer off the event loop
        (:func:`ragqa.judges.local.worker.run_in_worker`).
        """
        return await run_in_worker(fn, *args, **kwargs)


# ---- handlers ---------------------------------------------------------------------------------
# Each handler computes its answer in the worker thread (run_in_worker), so the event loop only
# awaits it; embedding calls stay on the loop (MiniLM encodes in its own thread).


@register_handler(STATEMENTS)
async def _statements(judge: LocalJudge, data: StatementsInput, language: Language) -> StatementsOutput:
    found = await run_in_worker(statements_of, data.question, data.answer)
    return StatementsOutput(statements=found)


def _nli_answer(judge: LocalJudge, data: NLIInput, language: Language) -> GradedNLIOutput:
    verdicts = []
    for statement in data.statements:
        result = judge.support(statement, data.context)
        verdicts.append(
            GradedStatementVerdict(
                statement=statement,
                reason=_verdict_reason(result, judge.settings.support_threshold, language),
                verdict=judge.verdict(result.value),
                support=result.value,
            )
        )
    return GradedNLIOutput(verdicts=verdicts)


@register_handler(NLI)
async def _nli(judge: LocalJudge, data: NLIInput, language: Language) -> NLIOutput:
    return await run_in_worker(_nli_answer, judge, data, language)


def _attribution_answer(judge: LocalJudge, data: AttributionInput, language: Language) -> GradedAttributionOutput:
    out = []
    for statement in statements_of(data.question, data.answer):
        result = judge.support(statement, data.context)
        out.append(
            GradedAttribution(
                statement=statement,
                reason=_verdict_reason(result, judge.settings.support_threshold, language),
                attributed=judge.verdict(result.value),
                support=result.value,
            )
        )
    return GradedAttributionOutput(classifications=out)


@register_handler(ATTRIBUTION)
async def _attribution(judge: LocalJudge, data: AttributionInput, language: Language) -> AttributionOutput:
    return await run_in_worker(_attribution_answer, judge, data, language)


def _answer_support(judge: LocalJudge, question: str, answer: str, context: str) -> list[float]:
    return [judge.support(s, context).value for s in statements_of(question, answer)]


@register_handler(CONTEXT_USEFULNESS)
async def _context_usefulness(
    judge: LocalJudge, data: ContextUsefulnessInput, language: Language
) -> ContextUsefulnessOutput:
    supports = await run_in_worker(_answer_support, judge, data.question, data.answer, data.context)
    rel = await relevance_detail(data.question, data.context, judge.relevance_embedder)
    how = f"relevance to the question {rel.value:.2f}"
    if rel.semantic is not None:
        how += f" (embedding {rel.semantic:.2f}, words {rel.lexical:.2f})"
    if supports:
        answer_support = math.fsum(supports) / len(supports)
        share = USEFULNESS_SUPPORT_WEIGHT if rel.terms or rel.semantic is not None else 1.0
        value = share * answer_support + (1 - share) * rel.value
        how = f"the answer's {len(supports)} statement(s) are supported {answer_support:.2f} on average; " + how
    else:
        value = rel.value
        how = "the answer makes no statement; " + how
    value = round(value, 9)
    verdict = judge.verdict(value)
    return GradedContextUsefulnessOutput(reason=f"{_TAG}: {how}", verdict=verdict, support=value)


USEFULNESS_SUPPORT_WEIGHT = 0.5
"""Share of a context's usefulness that is the support of the answer's statements (the rest is
the context's relevance to the question, :func:`ragqa.judges.local.relevance.relevance`). A
question with no content word (``"When?"``) and no embedder says nothing: support alone counts."""


@register_handler(STATEMENT_RELEVANCE)
async def _statement_relevance(
    judge: LocalJudge, data: StatementRelevanceInput, language: Language
) -> StatementRelevanceOutput:
    scored = await relevance_many(data.question, data.statements, judge.relevance_embedder)
    out = []
    for statement, rel in zip(data.statements, scored, strict=True):
        reason = f"{_TAG}: relevance to the question {rel.value:.2f}"
        if rel.semantic is not None:
            reason += f" (embedding {rel.semantic:.2f}, words {rel.lexical:.2f})"
        if rel.missing:
            reason += "; question words not in it: " + ", ".join(rel.missing[:6])
        out.append(
            GradedRelevanceVerdict(
                statement=statement, reason=reason, verdict=judge.verdict(rel.value), support=rel.value
            )
        )
    return GradedRelevanceOutput(verdicts=out)


@register_handler(ENTITIES)
async def _entities(judge: LocalJudge, data: EntitiesInput, language: Language) -> EntitiesOutput:
    return EntitiesOutput(entities=await run_in_worker(extract_entities, data.text))


def _question_answer(response: str, attempt: int, language: Language) -> QuestionGenerationOutput:
    return QuestionGenerationOutput(
        question=generated_question(response, attempt, language), noncommittal=int(is_noncommittal(response))
    )


@register_handler(QUESTION_GENERATION)
async def _question_generation(
    judge: LocalJudge, data: QuestionGenerationInput, language: Language
) -> QuestionGenerationOutput:
    return await run_in_worker(_question_answer, data.response, data.attempt, language)
