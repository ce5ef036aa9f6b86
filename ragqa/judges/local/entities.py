"""Named entities by surface form, for the ``entities`` prompt (context entity recall).

Dates, capitalised name spans with connectors (``Bank of America``) and quantities with units,
English and Russian; no model. Sentence openers that are common words (``However``, ``Based``,
``Click``) and capitalised stop words (``US``, ``IT`` read as ``us``, ``it``) are not names.
"""

from __future__ import annotations

import re

from ragqa.judges.local.text import STOP_WORDS, detect_script, is_common_opener, split_sentences, strip_citations

__all__ = ["extract_entities"]

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
        opens_sentence = not sentence[: m.start()].strip(" \"'«“‘([")
        if opens_sentence and words and is_common_opener(words[0]):
            words.pop(0)  # "However", "Based", "Click": a capital because the sentence starts there
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

    A capitalised span may contain connectors (``Bank of America``); a capitalised word opening a
    sentence counts only when it is neither a stop word nor a common opener (``However``,
    ``Based``, ``Click``; see :func:`ragqa.judges.local.text.is_common_opener`). Spans are trimmed of trailing
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
