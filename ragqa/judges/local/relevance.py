"""Query-to-passage relevance: the local judge's answer to "is this text about what was asked?".

Relevance is not support. Support (:mod:`ragqa.judges.local.support`) asks whether a context
states what a claim says; relevance asks whether a passage addresses a query. Retrieval negatives
share the query's words by construction, so the coverage of query words anywhere in a passage
cannot separate them; what separates them is whether one sentence is *about* the query. The score
of a query ``q`` and a passage split into sentences ``s_1..s_n``:

1. **Query terms.** The query's content stems without its *intent words*, the words that say
   what kind of answer is wanted (``define``, ``definition``, ``meaning``, ``used``, ``includes``,
   ``example``...; :data:`INTENT_WORDS`). They are not the topic and a good passage need not
   contain them.
2. **Lexical evidence**, in [0, 1]: ``0.5 x`` the largest share of query terms found in one
   sentence (or two adjacent ones) ``+ 0.5 x`` the share found anywhere in the passage.
3. **Semantic evidence** (with an embedder), in [0, 1]. With a token-level embedder (MiniLM,
   :class:`~ragqa.judges.local.embedder.TokenEmbedder`): late interaction, ColBERT's MaxSim
   (Khattab & Zaharia 2020) over the query's *content words*: for each word-initial wordpiece of
   the query that is not a stop word or punctuation, the largest cosine of its contextual vector
   with any wordpiece vector of the passage, averaged over those pieces (all pieces when none is
   left). Each query word counts once, and it must be matched by some passage token in context,
   not by the passage's average meaning. With another embedder (one vector per text): the
   embedding cosines of the query with each sentence and with the whole passage,
   ``0.25 x max + 0.25 x mean`` over sentences ``+ 0.5 x`` the passage cosine, clipped.
4. **Blend and calibration.** ``raw = 0.8 x semantic + 0.2 x lexical`` (lexical alone without
   an embedder), mapped through a logistic curve rescaled so that 0 stays 0 and 1 stays 1. Its
   midpoint is halfway between the mean raw evidence of relevant passages and of unrelated ones
   (another query's passage), and its slope takes those means to about 0.9 and 0.1, both
   measured on the development half of the MS MARCO hard-negative set (one curve per kind of
   evidence); the weights and the choice of MaxSim were made on that half too, and the held-out
   half and a cross-validation are reported in ``docs/local-judge.md``. The curve is strictly
   increasing, so the graded score is monotone in the evidence.

The constants are in :class:`RelevanceConfig`; :func:`relevance` is the public entry point.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ragqa._math import cosine
from ragqa.judges.base import Embedder
from ragqa.judges.local.embedder import TokenEmbedder, TokenEmbedding
from ragqa.judges.local.lexicon import reading
from ragqa.judges.local.text import (
    STOP_WORDS,
    Script,
    clear_on_new_language,
    detect_script,
    features,
    split_sentences,
    stem,
    strip_citations,
)
from ragqa.judges.local.worker import run_in_worker

__all__ = [
    "INTENT_WORDS",
    "Relevance",
    "RelevanceConfig",
    "content_maxsim",
    "lexical_relevance",
    "query_terms",
    "relevance",
    "relevance_detail",
    "relevance_many",
]


class _IntentWords(Mapping[str, frozenset[str]]):
    """Stems of each language's intent words (:attr:`ragqa.judges.local.lexicon.Lexicon.intent_words`), cached."""

    def __getitem__(self, code: str) -> frozenset[str]:
        return _intent_stems(code)

    def __iter__(self) -> Iterator[str]:
        return iter(reading().lexicons)

    def __len__(self) -> int:
        return len(reading().lexicons)


@lru_cache(maxsize=64)
def _intent_stems(code: str) -> frozenset[str]:
    return frozenset(stem(w, code) for w in reading().lexicons[code].intent_words)


clear_on_new_language(_intent_stems.cache_clear)

INTENT_WORDS: Mapping[str, frozenset[str]] = _IntentWords()
"""Stems of the words that say what kind of answer a query wants, not what it is about."""


@dataclass(frozen=True)
class RelevanceConfig:
    """The constants of :func:`relevance` (chosen on the development half of MS MARCO, see the module docstring).

    Attributes:
        window_weight: weight of the best one-or-two-sentence window's term share in the lexical
            evidence (the whole passage's share gets the rest).
        sentence_max_weight: weight of the largest query-sentence cosine in the semantic evidence.
        sentence_mean_weight: weight of the mean query-sentence cosine.
        passage_weight: weight of the query-passage cosine.
        semantic_weight: weight of the semantic evidence in the blend when an embedder is given.
        lexical_midpoint: raw lexical evidence that maps to 0.5 (no embedder).
        lexical_slope: logistic slope of that map (per unit of raw evidence).
        blend_midpoint: raw blend that maps to 0.5 (with a one-vector-per-text embedder).
        blend_slope: logistic slope of that map.
        token_blend_midpoint: raw blend that maps to 0.5 (with a token-level embedder: MaxSim).
        token_blend_slope: logistic slope of that map.
    """

    window_weight: float = 0.5
    sentence_max_weight: float = 0.25
    sentence_mean_weight: float = 0.25
    passage_weight: float = 0.5
    semantic_weight: float = 0.8
    lexical_midpoint: float = 0.39
    lexical_slope: float = 5.9
    blend_midpoint: float = 0.36
    blend_slope: float = 6.8
    token_blend_midpoint: float = 0.46
    token_blend_slope: float = 6.7


DEFAULT_CONFIG = RelevanceConfig()


@dataclass(frozen=True)
class Relevance:
    """A graded relevance of a passage to a query, and why.

    Attributes:
        value: calibrated relevance in [0, 1], higher = more relevant (about 0.5 halfway between
            the evidence of a typical relevant and a typical unrelated passage).
        lexical: lexical evidence in [0, 1] (query terms found together).
        semantic: semantic evidence in [0, 1] from the embedder, ``None`` without one.
        best_sentence: the passage sentence that matches the query best ("" for an empty passage).
        terms: the query terms looked for (stems, intent words removed).
        missing: query terms the passage lacks.
        density: the share of the passage's content words that are query terms, in [0, 1] (how
            much of the passage is about the query; 0.0 for an empty passage or a query with no
            term). Not part of ``value``: the local context relevance rating uses it to break
            ties of the lexical evidence (:mod:`ragqa.judges.local.answers_judged`).
    """

    value: float
    lexical: float
    semantic: float | None
    best_sentence: str
    terms: tuple[str, ...]
    missing: tuple[str, ...]
    density: float = 0.0


def query_terms(query: str, script: Script | None = None) -> tuple[str, ...]:
    """The content stems of ``query`` without intent words, unique, in order.

    When every content word is an intent word (``"define"``), they are kept: they are then all
    there is to look for.
    """
    lang = script or detect_script(query)
    stems = tuple(dict.fromkeys(features(strip_citations(query), lang).content))
    topical = tuple(t for t in stems if t not in INTENT_WORDS[lang])
    return topical or stems


_Lexical = tuple[float, str, tuple[str, ...], tuple[str, ...], float]
"""(evidence, best window, query terms, missing terms, term density) of one passage."""


@lru_cache(maxsize=8192)
def _lexical(query: str, passage: str, window_weight: float) -> _Lexical:
    script = detect_script(query + " " + passage[:2000])
    terms = query_terms(query, script)
    sentences = split_sentences(strip_citations(passage))
    if not terms:
        return 1.0, sentences[0] if sentences else "", (), (), 0.0
    if not sentences:
        return 0.0, "", terms, terms, 0.0
    stems = [features(s, script).content for s in sentences]
    wanted = frozenset(terms)
    best, best_text = -1.0, ""
    for size in (1, 2):
        for i in range(max(0, len(sentences) - size + 1)):
            found = wanted.intersection(itertools.chain.from_iterable(stems[i : i + size]))
            share = len(found) / len(wanted)
            if share > best:
                best, best_text = share, " ".join(sentences[i : i + size])
    everywhere = frozenset(itertools.chain.from_iterable(stems))
    global_share = len(wanted & everywhere) / len(wanted)
    value = window_weight * best + (1 - window_weight) * global_share
    missing = tuple(t for t in terms if t not in everywhere)
    words = list(itertools.chain.from_iterable(stems))
    density = sum(1 for w in words if w in wanted) / len(words) if words else 0.0
    return min(1.0, max(0.0, value)), best_text, terms, missing, density


def lexical_relevance(query: str, passage: str, config: RelevanceConfig = DEFAULT_CONFIG) -> float:
    """The lexical evidence of relevance in [0, 1] (step 2 of the module docstring), uncalibrated."""
    return _lexical(query, passage, config.window_weight)[0]


def _evidence(
    query: str, passages: tuple[str, ...], window_weight: float
) -> tuple[list[_Lexical], list[tuple[str, ...]]]:
    """The lexical evidence of each passage and its sentences (CPU work, run in the worker thread)."""
    lexical = [_lexical(query, p, window_weight) for p in passages]
    sentences = [split_sentences(strip_citations(p)) or (p,) for p in passages]
    return lexical, sentences


def content_maxsim(query: TokenEmbedding, passage: TokenEmbedding) -> float:
    """Late-interaction relevance of a passage to a query over the query's content words, in [0, 1].

    ColBERT's MaxSim (Khattab & Zaharia 2020, "ColBERT: Efficient and Effective Passage Search via
    Contextualized Late Interaction over BERT", eq. 3), averaged instead of summed so that it is a
    cosine: for every word-initial query wordpiece that is alphanumeric and not a stop word
    (:data:`ragqa.judges.local.text.STOP_WORDS` of every language read), the largest cosine of its
    vector with any passage piece; the mean over those pieces, clipped to [0, 1]. Pieces that
    continue a word (``##...``) are left out so that each query word counts once. When no piece
    qualifies, every query piece is used.

    Args:
        query: the query's token embedding (:meth:`~ragqa.judges.local.embedder.LocalEmbedder.embed_tokens`).
        passage: the passage's.

    Returns:
        The MaxSim in [0, 1]; 0.0 when either text has no piece.
    """
    if not query.pieces or not passage.pieces:
        return 0.0
    stop = frozenset().union(*STOP_WORDS.values())
    keep = [i for i, piece in enumerate(query.pieces) if piece.isalnum() and piece not in stop]
    rows = query.vectors[keep] if keep else query.vectors
    best = (rows @ passage.vectors.T).max(axis=1)
    return min(1.0, max(0.0, float(best.mean())))


def _calibrate(x: float, midpoint: float, slope: float) -> float:
    """A logistic curve rescaled to map 0 to 0 and 1 to 1: strictly increasing on [0, 1]."""

    def sigmoid(v: float) -> float:
        return 1.0 / (1.0 + math.exp(-slope * (v - midpoint)))

    low, high = sigmoid(0.0), sigmoid(1.0)
    return min(1.0, max(0.0, (sigmoid(x) - low) / (high - low)))


async def relevance_many(
    query: str, passages: Sequence[str], embedder: Embedder | None = None, config: RelevanceConfig = DEFAULT_CONFIG
) -> list[Relevance]:
    """Relevance of each of ``passages`` to ``query``, with one embedding call for all of them.

    Args:
        query: the question (any length; English or Russian).
        passages: the texts to score (retrieved contexts, statements...).
        embedder: any :class:`~ragqa.judges.base.Embedder`; a token-level
            :class:`~ragqa.judges.local.embedder.TokenEmbedder` (MiniLM, on which the constants
            were chosen) gives MaxSim evidence, any other embedder sentence cosines (the hashing
            embedder works but adds little to the lexical evidence); ``None`` for the lexical
            evidence alone.
        config: the constants (default: the measured ones).

    Returns:
        One :class:`Relevance` per passage, in order; a passage without text scores the
        calibrated value of zero evidence.

    Raises:
        ragqa.errors.JudgeError: when the embedder fails.
    """
    lexical, sentences = await run_in_worker(_evidence, query, tuple(passages), config.window_weight)
    semantic: list[float | None] = [None] * len(passages)
    token_level = isinstance(embedder, TokenEmbedder) and embedder.token_level
    if isinstance(embedder, TokenEmbedder) and token_level and passages:
        q, *rest = await embedder.embed_tokens([query, *passages])
        semantic = [content_maxsim(q, p) for p in rest]
    elif embedder is not None and passages:
        texts = [query, *passages, *itertools.chain.from_iterable(sentences)]
        vectors = await embedder.embed(texts)
        qv = vectors[0]
        offset = 1 + len(passages)
        for i, group in enumerate(sentences):
            cosines = [_cos(qv, v) for v in vectors[offset : offset + len(group)]]
            offset += len(group)
            value = (
                config.sentence_max_weight * max(cosines)
                + config.sentence_mean_weight * math.fsum(cosines) / len(cosines)
                + config.passage_weight * _cos(qv, vectors[1 + i])
            )
            semantic[i] = min(1.0, max(0.0, value))
    midpoint, slope = (
        (config.token_blend_midpoint, config.token_blend_slope)
        if token_level
        else (config.blend_midpoint, config.blend_slope)
    )
    out = []
    for (lex, best, terms, missing, density), sem in zip(lexical, semantic, strict=True):
        if sem is None:
            value = _calibrate(lex, config.lexical_midpoint, config.lexical_slope)
        else:
            raw = config.semantic_weight * sem + (1 - config.semantic_weight) * lex
            value = _calibrate(raw, midpoint, slope)
        out.append(Relevance(round(value, 9), lex, sem, best, terms, missing, density))
    return out


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    value = cosine(a, b)
    return 0.0 if math.isnan(value) else value


async def relevance_detail(
    query: str, passage: str, embedder: Embedder | None = None, config: RelevanceConfig = DEFAULT_CONFIG
) -> Relevance:
    """:func:`relevance` with its evidence (see :class:`Relevance`)."""
    return (await relevance_many(query, [passage], embedder, config))[0]


async def relevance(query: str, passage: str, embedder: Embedder | None = None) -> float:
    """How relevant ``passage`` is to ``query``: a calibrated score in [0, 1], higher = more relevant.

    The method is the module docstring's: query terms without intent words, lexical evidence from
    the best sentence window, semantic evidence when ``embedder`` is given (MaxSim of the query's
    content words over the passage's token vectors with MiniLM; sentence-level cosines with an
    embedder of one vector per text), blended and mapped through a logistic curve.
    Deterministic for a deterministic embedder.

    Args:
        query: the question or request.
        passage: the text judged (a retrieved context, a statement, an answer).
        embedder: an embedder for the semantic evidence, or ``None`` for lexical evidence alone.

    Returns:
        The relevance in [0, 1]. A query with no content word (``"When?"``) gives lexical
        evidence 1.0: there is nothing a passage could lack.

    Raises:
        ragqa.errors.JudgeError: when the embedder fails.
    """
    return (await relevance_detail(query, passage, embedder)).value
