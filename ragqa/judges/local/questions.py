"""Question generation of the local judge: the question an answer replies to, and whether it evades.

RAGAS's response relevancy asks an LLM to write the question a response answers and to flag a
noncommittal response; the metric then compares the generated questions with the user's question
by embedding cosine. The local judge cannot write a question, so it writes the *topic* of the
whole answer as a question-like text:

1. Every claim of the answer is read (:func:`ragqa.judges.local.text.claims`), not only the
   first, so detail, completeness and off-topic filler all move the generated text.
2. Content words are ranked by how many claims mention them (the answer's topic recurs), then by
   first mention; numbers and names are kept as written. Attempt ``n`` takes a different slice of
   that ranking (all top words, the words of the leading claims, the words of the other claims),
   so the ``strictness`` generations differ the way an LLM's paraphrases do.
3. When the answer's first claim gives a duration (``30 days``, ``5 minutes``) or an amount of
   money (``$20``, ``500 рублей``), that phrase is the answer and the question asks for it, as a
   question writer would: the wh-word of its type leads (``How long``, ``How much``; ``Как
   долго``, ``Сколько стоит``) and the phrase's own words are left out. This is the answer-phrase
   to wh-word step of rule-based question generation (Heilman & Smith 2010, "Good Question!
   Statistical Ranking for Question Generation", NAACL, section 2).
4. ``noncommittal`` is 1 when the answer asserts nothing or evades (:func:`is_noncommittal`).
"""

from __future__ import annotations

import re
from functools import cache

from ragqa.judges.local import lexicon
from ragqa.judges.local.text import (
    STOP_WORDS,
    claims,
    clear_on_new_language,
    detect_script,
    language_pattern,
    split_sentences,
    stem,
    strip_citations,
    tokens,
)
from ragqa.languages import SOURCE_LANGUAGE
from ragqa.schema import Language

__all__ = ["evasive_pattern", "generated_question", "is_noncommittal", "topic_words"]


def evasive_pattern() -> re.Pattern[str]:
    """Phrases of an evasive, noncommittal answer (RAGAS's ``noncommittal`` flag), in every language read.

    Pattern ``noncommittal`` of the lexicons (:data:`ragqa.languages.lexicon.PATTERNS`); it covers "I
    don't know", "I couldn't find any information about ...", "... is not mentioned", "... was not
    provided", "the context does not specify", "it depends", "не знаю", "не указано", "нет сведений",
    "к сожалению".
    """
    return language_pattern("noncommittal", r"\b(?:", ")")


def is_noncommittal(response: str) -> bool:
    """Whether ``response`` evades the question (RAGAS's ``noncommittal``).

    A response is noncommittal when it asserts nothing (no claim), when its first sentence is
    evasive, or when more than half of its sentences are. A detailed answer with one caveat
    ("the exact date is not mentioned") is not.

    Args:
        response: the answer text (English or Russian).

    Returns:
        True for a noncommittal response.
    """
    text = strip_citations(response)
    sentences = split_sentences(text)
    if not sentences or not claims(text):
        return True
    evasive = [bool(evasive_pattern().search(s)) for s in sentences]
    return evasive[0] or 2 * sum(evasive) > len(evasive)


def _topic(response: str) -> tuple[list[str], list[str]]:
    """The answer's content words ranked by claims mentioning them, and in order of first mention."""
    found = claims(response)
    script = detect_script(response)
    stop = STOP_WORDS[script]
    claims_of: dict[str, set[int]] = {}
    first: dict[str, str] = {}  # stem -> word as written; insertion order = first mention
    for n, claim in enumerate(found):
        for raw in _WORD.findall(claim):
            word = raw.rstrip(".")
            low = next(iter(tokens(word)), "")
            if not low or low in stop or len(low) < 2:
                continue
            key = stem(low, script)
            claims_of.setdefault(key, set()).add(n)
            first.setdefault(key, word if word[:1].isupper() or word[:1].isdigit() else low)
    order = list(first)
    ranked = sorted(order, key=lambda k: -len(claims_of[k]))  # stable: ties keep first mention
    return [first[k] for k in ranked], [first[k] for k in order]


_WORD = re.compile(r"[^\W_][\w'’.,-]*[^\W_]|[^\W_]")


def topic_words(response: str, limit: int = 12) -> list[str]:
    """The answer's content words ranked by how many of its claims mention them, then by first mention.

    Args:
        response: the answer text.
        limit: the most words returned.

    Returns:
        Words as written in the answer (lower-cased except names and numbers), unique by stem.
    """
    return _topic(response)[0][:limit]


def _forms(script: str, language: Language) -> tuple[str, ...]:
    """The question forms of a text read in ``script`` for a metric in ``language``.

    Those of the text's language when it is not English, else those of ``language``'s lexicon; the
    English forms when that lexicon has none (or is not read).
    """
    lexicons = lexicon.reading().lexicons
    chosen = lexicons.get(script if script != SOURCE_LANGUAGE else language)
    return chosen.question_forms if chosen is not None and chosen.question_forms else lexicon.ENGLISH.question_forms


@cache
def _answer_types(script: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """(answer phrase, wh-words) of the lexicon of ``script``, compiled case-insensitively, in order."""
    return tuple((re.compile(p, re.IGNORECASE), wh) for p, wh in lexicon.reading().lexicons[script].answer_types)


clear_on_new_language(_answer_types.cache_clear)


def _answer_type(response: str, script: str) -> tuple[str, set[str]] | None:
    """The wh-words asking for the first claim's duration or amount, and the stems of that phrase."""
    first = next(iter(claims(response)), "")
    for pattern, wh in _answer_types(script):
        found = pattern.search(first)
        if found:
            return wh, {stem(t, script) for t in tokens(found.group(0))} | set(tokens(found.group(0)))
    return None


def generated_question(response: str, attempt: int, language: Language) -> str:
    """The question-like text the local judge generates from the whole ``response``.

    Attempt 1 takes the answer's top topic words; attempt 2 the words of its first claims in
    order; attempt 3 the top words again with the other claims' words after them; further
    attempts cycle. Each is worded with a different question form; when the first claim gives a
    duration or an amount of money, every attempt asks for it instead (``"How long refunds
    accepted purchase?"``), without the phrase's own words (module docstring, step 3).

    Args:
        response: the answer (citation markers are removed).
        attempt: the generation number, 1-based.
        language: the metric's language (Cyrillic-dominant answers use the Russian forms).

    Returns:
        A question such as ``"What about Kilimanjaro Tanzania 5,895 metres?"``; the response
        itself in a question form when it has no content word.
    """
    text = strip_citations(response)
    script = detect_script(text)
    forms = _forms(script, language)
    form = forms[(attempt - 1) % len(forms)]
    ranked, order = _topic(text)
    if not ranked:
        return form.format(" ".join(text.split()) or "?")
    asked = _answer_type(text, script)
    if asked is not None:
        wh, phrase = asked
        ranked = [w for w in ranked if w.lower() not in phrase and stem(w.lower(), script) not in phrase]
        order = [w for w in order if w.lower() not in phrase and stem(w.lower(), script) not in phrase]
        form = wh + " {}?"
    variant = (attempt - 1) % 3
    if variant == 0:
        words = ranked[:12]
    elif variant == 1:
        words = order[:12]
    else:
        words = list(dict.fromkeys([*ranked[:6], *order[-6:]]))
    return form.format(" ".join(words)).replace(" ?", "?")
