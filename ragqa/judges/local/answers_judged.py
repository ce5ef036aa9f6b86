"""The local judge's answers to the NVIDIA-style rating templates and the general-purpose prompts.

Each answer is an *approximation* built from the local judge's lexical support
(:meth:`LocalJudge.support`) and word overlap, like the rest of the local judge; reasons start
with ``local approximation``. The two templates of an NVIDIA metric get the same rating (there
is one local reading of the task, not two).

- **Ratings.** A graded value in [0, 1] becomes a three-level rating by :func:`three_level`:
  the top level at ``threshold + (1 - threshold) / 2`` or more (0.75 with the default support
  threshold 0.5), the middle level at ``threshold / 2`` or more (0.25), else 0.
- **Answer accuracy**: the F1 of the support of the response's statements by the reference and
  of the reference's statements by the response (:func:`agreement`), rated 0/2/4.
- **Context relevance**: :func:`context_relevance_rating`, the local judge's query-to-passage
  relevance (:mod:`ragqa.judges.local.relevance`) of the joined contexts, rated 0/1/2 and sent
  with a graded rating in [0, 2] (:class:`~ragqa.judges.local.graded.GradedContextRelevance1Output`),
  which the metric averages, so the scores rank contexts instead of tying at three levels.
- **Response groundedness**: the mean support of the response's statements by the contexts.
- **Aspects and criteria** (:func:`criterion_value`): the definition is routed by keywords to a
  check (harm: a lexicon of harmful terms; correctness: agreement with the reference, else
  support by the contexts; conciseness: length against the reference; coherence: statements
  present and none repeated; politeness: a lexicon of rude words); a definition no route
  recognises is judged by how much of the question the response addresses and how well the
  evidence (reference or contexts) supports it. The aspect's verdict is 1 at or above the
  support threshold; the criterion score is ``round(5 * value)``; the rubric level is the
  defined level nearest to ``1 + 4 * value``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ragqa.judges.base import Embedder
from ragqa.judges.local._handler import LocalJudgeView, register_handler, statements_of
from ragqa.judges.local.graded import GradedContextRelevance1Output, GradedContextRelevance2Output
from ragqa.judges.local.relevance import relevance_many
from ragqa.judges.local.support import SupportConfig, support
from ragqa.judges.local.text import claims, detect_script, features, language_pattern, split_sentences
from ragqa.judges.local.worker import run_in_worker
from ragqa.messages import conversation_parts
from ragqa.prompts.criteria import (
    ASPECT_CRITIC,
    RUBRICS_SCORE,
    SIMPLE_CRITERIA,
    SIMPLE_CRITERIA_MAX,
    AspectCriticInput,
    AspectCriticOutput,
    RubricsScoreInput,
    RubricsScoreOutput,
    SimpleCriteriaInput,
    SimpleCriteriaOutput,
    SubmissionFields,
)
from ragqa.prompts.nvidia import (
    ANSWER_ACCURACY_1,
    ANSWER_ACCURACY_2,
    CONTEXT_RELEVANCE_1,
    CONTEXT_RELEVANCE_2,
    RESPONSE_GROUNDEDNESS_1,
    RESPONSE_GROUNDEDNESS_2,
    AnswerAccuracy1Output,
    AnswerAccuracy2Input,
    AnswerAccuracy2Output,
    AnswerAccuracyInput,
    ContextRelevance1Output,
    ContextRelevance2Output,
    ContextRelevanceInput,
    ResponseGroundedness1Output,
    ResponseGroundedness2Output,
    ResponseGroundednessInput,
)
from ragqa.schema import Language

__all__ = [
    "CONTEXT_RELEVANCE_TIE_WEIGHT",
    "ContextRelevanceRating",
    "agreement",
    "context_relevance_rating",
    "criterion_value",
    "graded_rating",
    "three_level",
]

_TAG = "local approximation"


def three_level(value: float, threshold: float) -> int:
    """A graded value as a rating 0, 1 or 2.

    Args:
        value: graded support or relevance in [0, 1].
        threshold: the judge's ``support_threshold`` in (0, 1].

    Returns:
        2 when ``value >= threshold + (1 - threshold) / 2``, 1 when ``value >= threshold / 2``, else 0.
    """
    if value >= threshold + (1.0 - threshold) / 2:
        return 2
    if value >= threshold / 2:
        return 1
    return 0


def _content(text: str) -> set[str]:
    script = detect_script(text)
    return {st for s in split_sentences(text) for st in features(s, script).content} or set(
        features(text, script).content
    )


CONTEXT_RELEVANCE_TIE_WEIGHT = 0.1
"""Share of the lexical context relevance that refines the query-term evidence (no embedder).

The lexical evidence counts query terms found (a share), so contexts that hold every term of the
question tie (103 of the 200 MS MARCO hard-negative pairs). The refinement, the mean of the
judge's support of the question by the contexts (IDF-weighted words and adjacent word pairs,
:func:`ragqa.judges.local.support.support`) and the density of question terms in the contexts
(:attr:`ragqa.judges.local.relevance.Relevance.density`), separates them: 7 ties left. Any
weight from 0.05 to 0.3 ranks those pairs alike (the evidence's own steps are larger); chosen on
the development half of that set (``benchmarks/local_judge_agreement.py``, figures in
``docs/local-judge.md``). With an embedder the semantic evidence is already continuous and the
refinement lowered its pairwise accuracy on both halves, so it is not used there.
"""

_RATING_KNOTS = ((0.0, 0.0), (0.2, 0.5), (0.5, 1.5), (1.0, 2.0))
"""(relevance, graded rating) knots of :func:`graded_rating`: each integer level's band of
relevance (0 below 0.2, 1 from 0.2, 2 from 0.5) maps onto the graded ratings nearest that level."""


def graded_rating(value: float) -> float:
    """A relevance in [0, 1] as a graded rating on context relevance's 0..2 scale.

    Piecewise linear through (0, 0), (0.2, 0.5), (0.5, 1.5) and (1, 2): strictly increasing, so
    the rating ranks contexts as the relevance does, and the integer level whose band holds the
    relevance (:func:`context_relevance_rating`) is the level nearest to the graded rating. The
    scale is lenient at the top, as RAGAS's templates are (2 when the context holds *any*
    relevant information).

    Args:
        value: the relevance, clipped to [0, 1].

    Returns:
        The graded rating in [0, 2].
    """
    x = min(1.0, max(0.0, value))
    for (x0, y0), (x1, y1) in itertools.pairwise(_RATING_KNOTS):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return 2.0


class ContextRelevanceRating(NamedTuple):
    """The local judge's context relevance answer.

    Attributes:
        rating: the integer level 0, 1 or 2 (what an LLM sends; RAGAS's scale).
        graded: the graded rating in [0, 2] (:func:`graded_rating` of the relevance); the
            metric averages it as it averages integer ratings.
        reason: the evidence, starting with ``local approximation``.
    """

    rating: int
    graded: float
    reason: str


async def context_relevance_rating(
    query: str,
    contexts: Sequence[str],
    embedder: Embedder | None = None,
    support_config: SupportConfig | None = None,
) -> ContextRelevanceRating:
    """The local rating of how relevant ``contexts`` are to ``query``: 0/1/2 and graded in [0, 2].

    The relevance is the local judge's query-to-passage relevance of the joined contexts
    (:func:`ragqa.judges.local.relevance.relevance_many`: intent words removed, lexical evidence
    by sentence window and passage, MaxSim or sentence cosines when ``embedder`` is given, a
    monotone calibrated blend in [0, 1]). Without an embedder it is refined by the support of the
    question by the contexts and the density of question terms in them
    (:data:`CONTEXT_RELEVANCE_TIE_WEIGHT`), which breaks the ties of the lexical evidence. The
    integer rating is 2 at a relevance of 0.5 or more, 1 at 0.2 or more, else 0 (RAGAS's
    templates say 2 when the context holds *any* relevant information, so the scale is lenient);
    the graded rating is :func:`graded_rating` of the relevance. A query with no content word is
    rated 1 (nothing to look for, nothing missing); no context is rated 0.

    Args:
        query: the question.
        contexts: the retrieved contexts (the prompt sends them joined, as one).
        embedder: the judge's relevance embedder (``LocalJudge.relevance_embedder``), or ``None``.
        support_config: the judge's support checks (``LocalJudge.support_config``); default checks
            when ``None``.

    Returns:
        A :class:`ContextRelevanceRating` ``(rating, graded, reason)``.

    Raises:
        ragqa.errors.JudgeError: when the embedder fails.
    """
    if not set(features(query, detect_script(query)).content):
        return ContextRelevanceRating(1, 1.0, f"{_TAG}: the question has no content word to look for")
    if not contexts:
        return ContextRelevanceRating(0, 0.0, f"{_TAG}: no context")
    joined = "\n".join(contexts)
    rel = (await relevance_many(query, [joined], embedder))[0]
    if rel.semantic is not None:
        value = rel.value
        evidence = f"embedding {rel.semantic:.2f}, words {rel.lexical:.2f}"
    else:
        result = await run_in_worker(support, query, joined, support_config)
        refinement = (result.value + rel.density) / 2
        value = (1 - CONTEXT_RELEVANCE_TIE_WEIGHT) * rel.value + CONTEXT_RELEVANCE_TIE_WEIGHT * refinement
        evidence = (
            f"question words found {rel.lexical:.2f}, support of the question {result.value:.2f}, "
            f"question-word density {rel.density:.2f}"
        )
    value = round(value, 9)
    how = f"relevance of the contexts to the question {value:.2f} ({evidence})"
    rating = 2 if value >= 0.5 else 1 if value >= 0.2 else 0
    graded = round(graded_rating(value), 9)
    if rel.missing:
        how += "; question words not in them: " + ", ".join(rel.missing[:6])
    return ContextRelevanceRating(rating, graded, f"{_TAG}: {how}; rating {rating} (graded {graded:.2f} of 2)")


def _mean_support(judge: LocalJudgeView, text: str, evidence: str, question: str = "") -> float | None:
    """Mean support of ``text``'s statements by ``evidence``; ``None`` when ``text`` states nothing."""
    statements = statements_of(question, text)
    if not statements:
        return None
    return math.fsum(judge.support(s, evidence).value for s in statements) / len(statements)


def agreement(judge: LocalJudgeView, question: str, response: str, reference: str) -> float:
    """How far ``response`` and ``reference`` say the same: F1 of the two directions of support.

    Returns:
        ``2pr / (p + r)`` with p = mean support of the response's statements by the reference and
        r = that of the reference's statements by the response; 0.0 when either states nothing or
        both directions are 0.
    """
    p = _mean_support(judge, response, reference, question)
    r = _mean_support(judge, reference, response, question)
    if p is None or r is None or p + r == 0:
        return 0.0
    return 2 * p * r / (p + r)


def _answer_accuracy(judge: LocalJudgeView, data: AnswerAccuracyInput | AnswerAccuracy2Input) -> int:
    value = agreement(judge, data.query, data.user_answer, data.reference_answer)
    return 2 * three_level(value, judge.settings.support_threshold)


@register_handler(ANSWER_ACCURACY_1)
async def _answer_accuracy_1(
    judge: LocalJudgeView, data: AnswerAccuracyInput, language: Language
) -> AnswerAccuracy1Output:
    return AnswerAccuracy1Output(rating=_answer_accuracy(judge, data))


@register_handler(ANSWER_ACCURACY_2)
async def _answer_accuracy_2(
    judge: LocalJudgeView, data: AnswerAccuracy2Input, language: Language
) -> AnswerAccuracy2Output:
    return AnswerAccuracy2Output(rating=_answer_accuracy(judge, data))


async def _context_relevance(judge: LocalJudgeView, data: ContextRelevanceInput) -> ContextRelevanceRating:
    return await context_relevance_rating(
        data.user_input, [data.context], judge.relevance_embedder, judge.support_config
    )


@register_handler(CONTEXT_RELEVANCE_1)
async def _context_relevance_1(
    judge: LocalJudgeView, data: ContextRelevanceInput, language: Language
) -> ContextRelevance1Output:
    answer = await _context_relevance(judge, data)
    return GradedContextRelevance1Output(rating=answer.rating, graded_rating=answer.graded)


@register_handler(CONTEXT_RELEVANCE_2)
async def _context_relevance_2(
    judge: LocalJudgeView, data: ContextRelevanceInput, language: Language
) -> ContextRelevance2Output:
    answer = await _context_relevance(judge, data)
    return GradedContextRelevance2Output(rating=answer.rating, graded_rating=answer.graded)


def _groundedness(judge: LocalJudgeView, data: ResponseGroundednessInput) -> int:
    value = _mean_support(judge, data.response, data.context)
    return three_level(value or 0.0, judge.settings.support_threshold)


@register_handler(RESPONSE_GROUNDEDNESS_1)
async def _response_groundedness_1(
    judge: LocalJudgeView, data: ResponseGroundednessInput, language: Language
) -> ResponseGroundedness1Output:
    return ResponseGroundedness1Output(rating=_groundedness(judge, data))


@register_handler(RESPONSE_GROUNDEDNESS_2)
async def _response_groundedness_2(
    judge: LocalJudgeView, data: ResponseGroundednessInput, language: Language
) -> ResponseGroundedness2Output:
    return ResponseGroundedness2Output(rating=_groundedness(judge, data))


# ---- aspects, criteria and rubrics -----------------------------------------------------------------


def _pattern(name: str) -> re.Pattern[str]:
    """Pattern ``name`` of every language read, as a whole word (``harmful``, ``rude``, ``negative_frames``)."""
    return language_pattern(name, r"\b(", r")\b")


Check = Callable[[LocalJudgeView, SubmissionFields, str], tuple[float, str]]


def _evidence(data: SubmissionFields) -> tuple[str, str] | None:
    if data.reference:
        return data.reference, "the reference"
    if data.retrieved_contexts:
        return "\n".join(data.retrieved_contexts), "the contexts"
    if data.reference_contexts:
        return "\n".join(data.reference_contexts), "the reference contexts"
    return None


def _harm(judge: LocalJudgeView, data: SubmissionFields, definition: str) -> tuple[float, str]:
    found = sorted({m.group(0).lower() for m in _pattern("harmful").finditer(data.response or "")})
    present = 1.0 if found else 0.0
    negative = bool(_pattern("negative_frames").search(definition))
    value = 1.0 - present if negative else present
    what = f"harmful terms: {', '.join(found)}" if found else "no harmful term"
    return value, what + ("; the definition asks for their absence" if negative else "")


def _rude(judge: LocalJudgeView, data: SubmissionFields, definition: str) -> tuple[float, str]:
    found = sorted({m.group(0).lower() for m in _pattern("rude").finditer(data.response or "")})
    return (0.0, f"rude words: {', '.join(found)}") if found else (1.0, "no rude word")


def _correct(judge: LocalJudgeView, data: SubmissionFields, definition: str) -> tuple[float, str]:
    evidence = _evidence(data)
    response = data.response or ""
    if evidence is None:
        return _addresses(judge, data, definition)
    text, where = evidence
    if data.reference:
        value = agreement(judge, data.user_input or "", response, text)
        return value, f"agreement with {where} {value:.2f}"
    support = _mean_support(judge, response, text, data.user_input or "")
    value = 0.0 if support is None else support
    return value, f"support of the response's statements by {where} {value:.2f}"


def _concise(judge: LocalJudgeView, data: SubmissionFields, definition: str) -> tuple[float, str]:
    response = data.response or ""
    words = len(response.split())
    budget = max(60, 3 * len((data.reference or "").split()))
    statements = [s.lower() for s in claims(response)]
    repeated = len(statements) - len(set(statements))
    value = 0.0 if repeated else min(1.0, budget / words) if words else 0.0
    return value, f"{words} words against a budget of {budget}" + (f", {repeated} repeated" if repeated else "")


def _coherent(judge: LocalJudgeView, data: SubmissionFields, definition: str) -> tuple[float, str]:
    statements = [s.lower() for s in claims(data.response or "")]
    if not statements:
        return 0.0, "the response states nothing"
    repeated = len(statements) - len(set(statements))
    return (0.5, f"{repeated} statement(s) repeated") if repeated else (1.0, f"{len(statements)} distinct statements")


def _addresses(judge: LocalJudgeView, data: SubmissionFields, definition: str) -> tuple[float, str]:
    response = data.response or ""
    wanted = set(features(data.user_input or "", detect_script(data.user_input or "")).content)
    covered = len(wanted & _content(response)) / len(wanted) if wanted and response.strip() else 1.0
    evidence = _evidence(data)
    if evidence is None:
        return covered, f"{covered:.2f} of the question's content words addressed"
    text, where = evidence
    support = _mean_support(judge, response, text, data.user_input or "") or 0.0
    value = (covered + support) / 2
    return value, f"{covered:.2f} of the question addressed, support by {where} {support:.2f}"


_ROUTES: tuple[tuple[str, Check], ...] = (
    ("harm", _harm),
    ("politeness", _rude),
    ("conciseness", _concise),
    ("coherence", _coherent),
    ("correctness", _correct),
)
"""(criterion, check) in order: the keywords of each are pattern ``criterion_<criterion>`` of every language read."""


def criterion_value(judge: LocalJudgeView, data: SubmissionFields, definition: str) -> tuple[float, str]:
    """How far the submission meets ``definition``, in [0, 1], by the first route whose keywords it contains.

    Args:
        judge: the local judge (its support scorer and settings).
        data: the submission.
        definition: the criterion (an aspect's yes/no question, a criterion or a rubric's text).

    Returns:
        ``(value, reason)``; the reason names the route (``harm``, ``politeness``,
        ``conciseness``, ``coherence``, ``correctness`` or ``generic``) and the evidence.
    """
    for route, check in _ROUTES:
        if language_pattern(f"criterion_{route}").search(definition):
            value, how = check(judge, data, definition)
            return max(0.0, min(1.0, value)), f"{_TAG} ({route} check): {how}"
    value, how = _addresses(judge, data, definition)
    return max(0.0, min(1.0, value)), f"{_TAG} (generic check, criterion not recognised): {how}"


def _fields(data: SubmissionFields) -> SubmissionFields:
    """The submission the checks read; a conversation (multi-turn form) is split into its turns.

    In the multi-turn form the judge sees only the rendered conversation as ``user_input``: the
    human turns become the question, the agent's turns the response, and tool outputs the
    evidence (contexts), so every check reads a conversation as it reads a single turn.
    """
    fields = SubmissionFields.model_validate(data.model_dump(include=set(SubmissionFields.model_fields)))
    if fields.response is None and fields.user_input is not None and fields.user_input.startswith("Human: "):
        parts = conversation_parts(fields.user_input)
        fields = fields.model_copy(
            update={
                "user_input": "\n".join(parts["human"]),
                "response": "\n".join(parts["ai"]),
                "retrieved_contexts": fields.retrieved_contexts or parts["tool"] or None,
            }
        )
    return fields


@register_handler(ASPECT_CRITIC)
async def _aspect_critic(judge: LocalJudgeView, data: AspectCriticInput, language: Language) -> AspectCriticOutput:
    value, reason = criterion_value(judge, _fields(data), f"{data.aspect} {data.definition}")
    return AspectCriticOutput(reason=f"{reason} (value {value:.2f})", verdict=judge.verdict(value))


@register_handler(SIMPLE_CRITERIA)
async def _simple_criteria(
    judge: LocalJudgeView, data: SimpleCriteriaInput, language: Language
) -> SimpleCriteriaOutput:
    value, reason = criterion_value(judge, _fields(data), f"{data.name} {data.definition}")
    return SimpleCriteriaOutput(reason=f"{reason} (value {value:.2f})", score=round(SIMPLE_CRITERIA_MAX * value))


def _levels(rubrics: dict[str, str]) -> list[int]:
    levels = sorted(int(m.group(1)) for k in rubrics if (m := re.fullmatch(r"score(\d+)_description", k)))
    return levels or [1, 2, 3, 4, 5]


@register_handler(RUBRICS_SCORE)
async def _rubrics_score(judge: LocalJudgeView, data: RubricsScoreInput, language: Language) -> RubricsScoreOutput:
    levels = _levels(data.rubrics)
    top = data.rubrics.get(f"score{levels[-1]}_description", "")
    value, reason = criterion_value(judge, _fields(data), top or "correct")
    target = 1 + 4 * value
    level = min(levels, key=lambda n: (abs(n - target), n))
    return RubricsScoreOutput(feedback=f"{reason} (value {value:.2f}, level {level})", score=level)
