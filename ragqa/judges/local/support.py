"""Graded lexical support of a statement by a context: the local judge's stand-in for NLI.

The score answers "how much of what the statement says can be found in the context?" in [0, 1]:

1. The context is split into sentences; candidate *windows* are each sentence and each pair of
   adjacent sentences (a statement often joins two neighbouring facts).
2. Each content word (stop words removed, Snowball-stemmed) of the statement gets an IDF weight
   computed from the context's own sentences, ``log(1 + n / (1 + df))``; a word absent from the
   whole context gets the largest weight, so novel content costs more than a missing common word.
   Words match exactly by stem, or fuzzily (``rapidfuzz`` ratio >= ``fuzzy_ratio``) for spelling
   and inflection variants of long words.
3. *Coverage* of a window = matched weight / total weight. The support blends the best window's
   coverage with the whole context's coverage and with the share of the statement's content
   bigrams that the best window contains (word order and relations, not just a bag of words).
4. Caps: the share of the statement's numbers found in the context (``number_check``) and the
   share of its capitalised names found (``entity_check``) bound the support from above.

The design notes' yardstick (content-word share in the best single sentence, capped by the number
share) is re-implemented in ``benchmarks/local_judge_agreement.py`` for comparison.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz, process

from ragqa.judges.local.text import Script, TextFeatures, detect_script, features, split_sentences, strip_citations

__all__ = ["SupportConfig", "SupportResult", "support"]


@dataclass(frozen=True)
class SupportConfig:
    """Knobs of :func:`support` (defaults are the measured best; see docs/local-judge.md).

    Attributes:
        number_check: cap support by the share of the statement's numbers found in the context.
        entity_check: cap support by the share of the statement's capitalised names found.
        window: how many adjacent context sentences a window may span (1 = single sentences).
        global_weight: weight of whole-context coverage in the blend (0..1).
        bigram_weight: weight of bigram coverage in the blend (0..1).
        fuzzy_ratio: rapidfuzz ratio (0..100) at or above which two words of 5+ letters match;
            ``None`` disables fuzzy matching.
        idf: weight content words by their rarity in the context (else all weigh 1).
        novel_weight: multiplies the weight of a content word absent from the whole context.
        negation_factor: multiplies the support of a negated statement whose best window has no
            negation (a flipped claim); 1.0 disables the check.
        speaker_cap: the most support a statement about its speaker (``I``, ``my``, ``we``) can
            get from a context that never speaks in the first person; 1.0 disables the check.
    """

    number_check: bool = True
    entity_check: bool = True
    window: int = 2
    global_weight: float = 0.3
    bigram_weight: float = 0.2
    fuzzy_ratio: float | None = 88.0
    idf: bool = True
    novel_weight: float = 1.0
    negation_factor: float = 0.5
    speaker_cap: float = 0.5


@dataclass(frozen=True)
class SupportResult:
    """A graded support and why.

    Attributes:
        value: support in [0, 1] (1 = every content word, number and name found together).
        best_sentence: the best-matching context window ("" when the context is empty).
        missing_words: statement content stems the context lacks.
        missing_numbers: statement numbers the context lacks.
        missing_entities: statement names the context lacks.
    """

    value: float
    best_sentence: str = ""
    missing_words: tuple[str, ...] = ()
    missing_numbers: tuple[str, ...] = ()
    missing_entities: tuple[str, ...] = ()
    parts: dict[str, float] = field(default_factory=dict)


@dataclass
class _Context:
    sentences: tuple[str, ...]
    windows: list[tuple[str, frozenset[str], tuple[str, ...], bool]]  # text, stems, stems in order, negated
    vocabulary: frozenset[str]
    numbers: frozenset[str]
    first_person: bool
    df: dict[str, int]
    n: int


_CONTEXTS: dict[tuple[str, int, str], _Context] = {}


def _bigrams(stems: Sequence[str]) -> frozenset[tuple[str, str]]:
    return frozenset(itertools.pairwise(stems))


def _context(text: str, window: int, script: Script) -> _Context:
    key = (text, window, script)
    cached = _CONTEXTS.get(key)
    if cached is not None:
        return cached
    sentences = split_sentences(strip_citations(text))
    feats = [features(s, script) for s in sentences]
    vocabularies = [frozenset(f.content) for f in feats]
    windows = [(s, v, f.content, f.negated) for s, v, f in zip(sentences, vocabularies, feats, strict=True)]
    for size in range(2, max(1, window) + 1):
        for i in range(0, max(0, len(sentences) - size + 1)):
            chunk = feats[i : i + size]
            windows.append(
                (
                    " ".join(sentences[i : i + size]),
                    frozenset().union(*vocabularies[i : i + size]),
                    tuple(itertools.chain.from_iterable(f.content for f in chunk)),
                    any(f.negated for f in chunk),
                )
            )
    df: dict[str, int] = {}
    for f in feats:
        for st in set(f.content):
            df[st] = df.get(st, 0) + 1
    ctx = _Context(
        sentences=sentences,
        windows=windows,
        vocabulary=frozenset(df),
        numbers=frozenset(n for f in feats for n in f.number_mentions),
        first_person=any(f.first_person for f in feats),
        df=df,
        n=len(sentences),
    )
    if len(_CONTEXTS) > 512:
        _CONTEXTS.clear()
    _CONTEXTS[key] = ctx
    return ctx


def _fuzzy_map(words: frozenset[str], vocabulary: frozenset[str], ratio: float | None) -> dict[str, str]:
    """Map each statement stem absent from the context to its closest context stem, if close enough."""
    if ratio is None:
        return {}
    choices = [v for v in vocabulary if len(v) >= 4 and not v[:1].isdigit()]
    out: dict[str, str] = {}
    for w in words:
        if w in vocabulary or len(w) < 5 or w[:1].isdigit():
            continue
        hit = process.extractOne(w, choices, scorer=fuzz.ratio, score_cutoff=ratio)
        if hit is not None:
            out[w] = hit[0]
    return out


@dataclass(frozen=True)
class _Scan:
    """The part of a support that the checks do not change (shared by judges that differ only in checks)."""

    value: float
    best_text: str
    best_negated: bool
    missing: tuple[str, ...]
    parts: tuple[tuple[str, float], ...]
    numbers: frozenset[str]
    context_numbers: frozenset[str]
    entities: tuple[tuple[str, bool], ...]  # (entity stem, found in the context)
    negated: bool
    first_person: bool
    context_first_person: bool


@lru_cache(maxsize=8192)
def _scan(
    statement: str,
    context: str,
    window: int,
    global_weight: float,
    bigram_weight: float,
    fuzzy_ratio: float | None,
    idf: bool,
    novel_weight: float,
) -> _Scan | None:
    """Window coverage, whole-context coverage and bigram share of ``statement`` in ``context``.

    ``None`` when the context has no sentence. Cached: the strict and lenient judges of a panel
    score the same statements against the same contexts.
    """
    script = detect_script(statement + " " + context[:2000])
    feats: TextFeatures = features(strip_citations(statement), script)
    words = frozenset(feats.content)
    ctx = _context(context, window, script)
    if not ctx.sentences:
        return None
    alias = _fuzzy_map(words, ctx.vocabulary, fuzzy_ratio)

    def canon(w: str) -> str:
        return alias.get(w, w)

    max_idf = math.log(1 + ctx.n) * novel_weight
    weights = {
        w: (math.log(1 + ctx.n / (1 + ctx.df[canon(w)])) if canon(w) in ctx.df else max_idf) if idf else 1.0
        for w in words
    }
    # fsum: correctly rounded whatever the (hash-seed dependent) order of the words, so a support
    # is bit-identical across processes and equal windows tie exactly
    total = math.fsum(weights.values()) or 1.0
    canon_words = {w: canon(w) for w in words}
    stmt_bigrams = _bigrams([canon(w) for w in feats.content])

    best_cov, best_text, best_bigram, best_negated = -1.0, "", 0.0, False
    weighted = [(weights[w], c) for w, c in canon_words.items()]
    wanted = frozenset(canon_words.values())
    for text, vocab, ordered, negated in ctx.windows:
        # a window without any of the words covers exactly 0.0 (the fsum of nothing), as computed
        cov = 0.0 if wanted.isdisjoint(vocab) else math.fsum([wt for wt, c in weighted if c in vocab]) / total
        if cov > best_cov:
            best_cov, best_text, best_negated = cov, text, negated
            best_bigram = len(stmt_bigrams & _bigrams(ordered)) / len(stmt_bigrams) if stmt_bigrams else cov
    missing = tuple(sorted(w for w, c in canon_words.items() if c not in ctx.vocabulary))
    global_cov = math.fsum(weights[w] for w, c in canon_words.items() if c in ctx.vocabulary) / total
    if not words:
        best_cov = global_cov = best_bigram = 1.0
    value = (1 - global_weight - bigram_weight) * best_cov + global_weight * global_cov + bigram_weight * best_bigram
    return _Scan(
        value=value,
        best_text=best_text,
        best_negated=best_negated,
        missing=missing,
        parts=(("window", best_cov), ("global", global_cov), ("bigram", best_bigram)),
        numbers=feats.numbers,
        context_numbers=ctx.numbers,
        entities=tuple(sorted((e, canon(e) in ctx.vocabulary) for e in feats.entities)),
        negated=feats.negated,
        first_person=feats.first_person,
        context_first_person=ctx.first_person,
    )


def support(statement: str, context: str, config: SupportConfig | None = None) -> SupportResult:
    """Graded support of ``statement`` by ``context`` (see the module docstring for the method).

    Args:
        statement: one claim (a sentence).
        context: the text it is checked against (any length; split into sentences).
        config: the scorer's knobs (default :class:`SupportConfig`).

    Returns:
        The support in [0, 1] with the best-matching window and what is missing. A statement
        with no content word and no number gets 1.0 (nothing to contradict); an empty context
        gives 0.0 for any statement with content.
    """
    cfg = config or SupportConfig()
    script = detect_script(statement + " " + context[:2000])
    feats: TextFeatures = features(strip_citations(statement), script)
    words = frozenset(feats.content)
    if not words and not feats.numbers:
        return SupportResult(1.0, parts={"empty": 1.0})
    scan = _scan(
        statement,
        context,
        cfg.window,
        cfg.global_weight,
        cfg.bigram_weight,
        cfg.fuzzy_ratio,
        cfg.idf,
        cfg.novel_weight,
    )
    if scan is None:
        return SupportResult(0.0, missing_words=tuple(sorted(words)), missing_numbers=tuple(sorted(feats.numbers)))
    value = scan.value
    missing_numbers = tuple(sorted(scan.numbers - scan.context_numbers))
    parts = dict(scan.parts)
    if cfg.number_check and scan.numbers:
        share = 1 - len(missing_numbers) / len(scan.numbers)
        parts["numbers"] = share
        value = min(value, share)
    if scan.negated and not scan.best_negated and cfg.negation_factor < 1:
        parts["negation"] = cfg.negation_factor
        value *= cfg.negation_factor
    if scan.first_person and not scan.context_first_person and cfg.speaker_cap < 1:
        parts["speaker"] = cfg.speaker_cap
        value = min(value, cfg.speaker_cap)
    missing_entities = tuple(e for e, found in scan.entities if not found)
    if cfg.entity_check and scan.entities:
        share = 1 - len(missing_entities) / len(scan.entities)
        parts["entities"] = share
        value = min(value, share)
    return SupportResult(
        # rounded to 9 decimals so sums such as 0.7999999999999999 meet the thresholds they print as
        value=round(max(0.0, min(1.0, value)), 9),
        best_sentence=scan.best_text,
        missing_words=scan.missing,
        missing_numbers=missing_numbers,
        missing_entities=missing_entities,
        parts=parts,
    )
