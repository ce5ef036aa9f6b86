"""The offline local judge (``provider: local``): answers ragqa's typed prompts without a model.

It is an *approximation* of an LLM judge built from sentence splitting, lexical support (see
:mod:`ragqa.judges.local.support`), number/name/negation checks and, optionally, embeddings. Its
agreement with human labels is measured in ``docs/local-judge.md``; it is meant for running the
pipeline with no key and no network, and for smoke tests, not for final quality numbers.

Each prompt is answered by a handler registered by prompt name in :data:`HANDLERS`; a prompt
without a handler raises :class:`~ragqa.errors.JudgeUnsupported`. Graded prompts (NLI, attribution,
context usefulness, statement relevance) are answered with the graded subclasses of
:mod:`ragqa.judges.local.graded`: a ``support`` in [0, 1] that metrics read through ``value``, and
the binary verdict derived from it with the judge's ``support_threshold``. Every reason starts
with ``local approximation``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

from pydantic import BaseModel

from ragqa.errors import JudgeError, JudgeOutputError, JudgeUnsupported
from ragqa.judges.local.answers_agent import AGENT_HANDLERS
from ragqa.judges.local.answers_batched import BATCHED_HANDLERS
from ragqa.judges.local.answers_judged import JUDGED_HANDLERS
from ragqa.judges.local.answers_response import RESPONSE_HANDLERS
from ragqa.judges.local.embedder import LocalEmbedder
from ragqa.judges.local.graded import (
    GradedAttribution,
    GradedAttributionOutput,
    GradedContextUsefulnessOutput,
    GradedNLIOutput,
    GradedRelevanceOutput,
    GradedRelevanceVerdict,
    GradedStatementVerdict,
)
from ragqa.judges.local.support import SupportConfig, SupportResult, support
from ragqa.judges.local.text import (
    STOP_WORDS,
    claims,
    detect_script,
    features,
    split_sentences,
    stem,
    strip_citations,
    tokens,
)
from ragqa.metrics._math import cosine
from ragqa.prompts.attribution import AttributionInput, AttributionOutput
from ragqa.prompts.base import Prompt
from ragqa.prompts.context_usefulness import ContextUsefulnessInput, ContextUsefulnessOutput
from ragqa.prompts.entities import EntitiesInput, EntitiesOutput
from ragqa.prompts.nli import NLIInput, NLIOutput
from ragqa.prompts.question_generation import QuestionGenerationInput, QuestionGenerationOutput
from ragqa.prompts.statement_relevance import StatementRelevanceInput, StatementRelevanceOutput
from ragqa.prompts.statements import StatementsInput, StatementsOutput
from ragqa.schema import Language, Usage
from ragqa.settings import LocalJudgeSettings
from ragqa.usage import record_usage

__all__ = ["ALGORITHM_VERSION", "HANDLERS", "Handler", "LocalJudge", "extract_entities", "statements_of"]

ALGORITHM_VERSION = "3"
"""Version of the local judge's answers; part of :attr:`LocalJudge.fingerprint`.

Bump it whenever a handler, the text processing or the support scorer changes what the judge
answers for the same input and settings, so that cached answers of the old algorithm are not
served (the ragqa version in the fingerprint covers released changes; this covers the rest).
Version 2: supports summed with ``math.fsum`` (bit-identical across processes).
"""

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

Handler = Callable[["LocalJudge", Any, Language], Awaitable[BaseModel]]
"""``async handler(judge, data, language) -> output model`` for one prompt name."""

_TAG = "local approximation"
_YES_NO = re.compile(r"^\s*(yes|yeah|yep|no|nope|да|нет)\b[\s,.!]*$", re.IGNORECASE)
_NEGATIVE = {"no", "nope", "нет"}
_EVASIVE = re.compile(
    r"\b(i\s+(?:do\s*n[o']t|don't|dont|cannot|can't|can\s*n[o']t)\s+(?:know|say|tell|answer|help|find|have)"
    r"|i\s*(?:'m|am)\s+(?:not\s+sure|unsure|unable)|no\s+(?:information|idea|data|answer)|not\s+(?:enough|sure)"
    r"|(?:cannot|can't|unable\s+to)\s+(?:answer|determine|find|provide)|there\s+is\s+no\s+way\s+to\s+know"
    r"|не\s+знаю|не\s+могу\s+(?:сказать|ответить)|нет\s+(?:информации|данных)|затрудняюсь|не\s+уверен)",
    re.IGNORECASE,
)
"""Phrases of an evasive, noncommittal answer (RAGAS's ``noncommittal`` flag)."""


def statements_of(question: str, answer: str) -> list[str]:
    """The statements the local judge decomposes ``answer`` into.

    Claim sentences of the answer (see :func:`ragqa.judges.local.text.claims`). Like an LLM asked
    for self-contained statements, a bare ``yes``/``no`` becomes the question with the answer
    (``"<question> — no"``; the ``no`` makes it a negated statement). A short fragment
    (``"Delhi"``) stays as it is: joining it to the question was measured to hurt (HaluEval
    pairwise 0.74 instead of 0.96), because questions paraphrase their sources.

    Args:
        question: the user input the answer replies to (may be empty).
        answer: the text to decompose.

    Returns:
        The statements in order (empty when the answer asserts nothing).
    """
    found = claims(answer)
    q = " ".join(question.split()).rstrip(" ?？").strip()
    if not q:
        return found
    yes_no = _YES_NO.match(answer)
    if yes_no and not found:
        return [f"{q} — {yes_no.group(1).lower()}"]
    return found


def _ragqa_version() -> str:
    """The installed ragqa version, or ``unknown`` when ragqa runs from a source tree without metadata."""
    try:
        return version("ragqa")
    except PackageNotFoundError:
        return "unknown"


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
    bound and fast (about a millisecond per statement); each is recorded as one call with no
    tokens and no cost.
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
                "ragqa": _ragqa_version(),
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

    async def similarity(self, a: str, b: Sequence[str]) -> list[float] | None:
        """Cosine of ``a`` with each of ``b`` from the embedder, clipped to [0, 1]; ``None`` without one."""
        if self.embedder is None or not self.settings.use_embeddings:
            return None
        vectors = await self.embedder.embed([a, *b])
        return [max(0.0, min(1.0, cosine(vectors[0], v))) for v in vectors[1:]]


# ---- handlers ---------------------------------------------------------------------------------


async def _statements(judge: LocalJudge, data: StatementsInput, language: Language) -> StatementsOutput:
    return StatementsOutput(statements=statements_of(data.question, data.answer))


async def _nli(judge: LocalJudge, data: NLIInput, language: Language) -> NLIOutput:
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


async def _attribution(judge: LocalJudge, data: AttributionInput, language: Language) -> AttributionOutput:
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


def _overlap(query: str, text: str) -> float:
    """Share of ``query``'s content stems found in ``text`` (1.0 when the query has none)."""
    script = detect_script(query + " " + text)
    wanted = set(features(query, script).content)
    if not wanted:
        return 1.0
    have = {st for s in split_sentences(text) for st in features(s, script).content} or set(
        features(text, script).content
    )
    return len(wanted & have) / len(wanted)


async def _context_usefulness(
    judge: LocalJudge, data: ContextUsefulnessInput, language: Language
) -> ContextUsefulnessOutput:
    statements = statements_of(data.question, data.answer)
    if statements:
        values = [judge.support(s, data.context).value for s in statements]
        value = sum(values) / len(values)
        how = f"the answer's {len(values)} statement(s) are supported {value:.2f} on average by this context"
    else:
        value = _overlap(data.question, data.context)
        how = f"the answer makes no statement; {value:.2f} of the question's words are in this context"
    sims = await judge.similarity(data.answer, [data.context])
    if sims is not None:
        value = 0.7 * value + 0.3 * sims[0]
        how += f"; embedding similarity {sims[0]:.2f}"
    verdict = judge.verdict(value)
    return GradedContextUsefulnessOutput(reason=f"{_TAG}: {how}", verdict=verdict, support=value)


async def _statement_relevance(
    judge: LocalJudge, data: StatementRelevanceInput, language: Language
) -> StatementRelevanceOutput:
    sims = await judge.similarity(data.question, data.statements)
    out = []
    for i, statement in enumerate(data.statements):
        lexical = max(_overlap(data.question, statement), _overlap(statement, data.question))
        value = lexical if sims is None else 0.5 * lexical + 0.5 * sims[i]
        reason = f"{_TAG}: {lexical:.2f} word overlap with the question"
        if sims is not None:
            reason += f", embedding similarity {sims[i]:.2f}"
        out.append(
            GradedRelevanceVerdict(statement=statement, reason=reason, verdict=judge.verdict(value), support=value)
        )
    return GradedRelevanceOutput(verdicts=out)


_NAME_WORD = r"[A-ZА-ЯЁ][\w'’.-]*"
_CONNECTOR = r"(?:of|the|de|da|del|von|van|der|la|le|and|&|for|on|у|и|де)"
_NAME_SPAN = re.compile(rf"{_NAME_WORD}(?:\s+(?:{_CONNECTOR}\s+)*{_NAME_WORD})*")
_MONTHS = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|"
    r"Jul|Aug|Sep|Sept|Oct|Nov|Dec|января|февраля|марта|апреля|мая|июня|июля|августа|сентября|октября|ноября|декабря)"
)
_DATE = re.compile(rf"\b(?:\d{{1,2}}\s+{_MONTHS}\s+\d{{4}}|{_MONTHS}\s+\d{{1,2}},?\s+\d{{4}}|{_MONTHS}\s+\d{{4}})\b")
_QUANTITY = re.compile(
    r"(?<![\w.,])\d+(?:[.,]\d+)*(?:\s*(?:%|percent\b|процент\w*|million\b|billion\b|млн\b|млрд\b|km\b|kg\b))?"
)


def _sentence_entities(sentence: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []
    for m in _DATE.finditer(sentence):
        found.append((m.start(), m.group(0)))
        taken.append(m.span())
    stop = STOP_WORDS[detect_script(sentence)]
    for m in _NAME_SPAN.finditer(sentence):
        if any(a <= m.start() < b for a, b in taken):
            continue
        words = m.group(0).split()
        while words and (words[0].lower() in stop or re.fullmatch(_CONNECTOR, words[0].lower())):
            words.pop(0)
        while words and re.fullmatch(_CONNECTOR, words[-1].lower()):
            words.pop()
        if words and words[-1].endswith(".") and len(words[-1]) > 3 and words[-1][-2].islower():
            words[-1] = words[-1][:-1]  # a sentence-final period, not an initial (St., F.E.A.R.)
        if not words or re.fullmatch(_MONTHS, " ".join(words)):
            continue
        found.append((m.start(), " ".join(words)))
    for m in _QUANTITY.finditer(sentence):
        if not any(a <= m.start() < b for a, b in taken):
            found.append((m.start(), m.group(0).strip()))
    return found


def extract_entities(text: str) -> list[str]:
    """Named entities of ``text`` by surface form: dates, capitalised name spans, quantities.

    A capitalised span may contain connectors (``Bank of America``); a single capitalised word
    opening a sentence counts only when it is not a stop word. Spans are trimmed of trailing
    connectors and punctuation; the result is unique (case-insensitive) in order of first mention.

    Returns:
        The entities as they appear in ``text``.
    """
    found: list[tuple[int, int, str]] = []
    for n, sentence in enumerate(split_sentences(strip_citations(text))):
        found.extend((n, start, entity) for start, entity in _sentence_entities(sentence))
    seen: set[str] = set()
    out: list[str] = []
    for _, _, entity in sorted(found):
        key = entity.lower()
        if key not in seen:
            seen.add(key)
            out.append(entity)
    return out


async def _entities(judge: LocalJudge, data: EntitiesInput, language: Language) -> EntitiesOutput:
    return EntitiesOutput(entities=extract_entities(data.text))


_QUESTION_FORMS: dict[Language, tuple[str, ...]] = {
    "en": ("What about {}?", "What is known about {}?", "Which facts concern {}?", "Tell me about {}?"),
    "ru": ("Что известно о: {}?", "Что можно сказать о: {}?", "Какие факты о: {}?", "Расскажи о: {}?"),
}


async def _question_generation(
    judge: LocalJudge, data: QuestionGenerationInput, language: Language
) -> QuestionGenerationOutput:
    response = strip_citations(data.response)
    noncommittal = 1 if _EVASIVE.search(response) or not claims(response) else 0
    first = (claims(response) or list(split_sentences(response)) or [response])[0]
    script = detect_script(first)
    stop = STOP_WORDS[script]
    words = [t for t in tokens(first) if t not in stop and len(t) > 1][:10]
    seen: set[str] = set()
    unique = [w for w in words if not (stem(w, script) in seen or seen.add(stem(w, script)))]  # type: ignore[func-returns-value]
    forms = _QUESTION_FORMS["ru" if script == "ru" else language]
    form = forms[(data.attempt - 1) % len(forms)]
    return QuestionGenerationOutput(question=form.format(" ".join(unique) or first), noncommittal=noncommittal)


HANDLERS: dict[str, Handler] = {
    "statements": _statements,
    "nli": _nli,
    "attribution": _attribution,
    "context_usefulness": _context_usefulness,
    "statement_relevance": _statement_relevance,
    "entities": _entities,
    "question_generation": _question_generation,
    **JUDGED_HANDLERS,
    **RESPONSE_HANDLERS,
    **AGENT_HANDLERS,
}
"""Prompt name -> handler. Add an entry to teach the local judge a new prompt."""
HANDLERS.update(BATCHED_HANDLERS)  # the batched call plan's prompts, composed of the handlers above
