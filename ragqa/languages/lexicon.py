"""The shape of the local judge's word lists of a language (a pack's ``local_judge`` field), checked.

A :class:`~ragqa.languages.LanguagePack` may carry the offline local judge's word lists for its
language; this module checks them when the pack is read, so a bad list stops a run at the
settings (the ``language`` setting), before any judge call. How the local judge reads with them
is :mod:`ragqa.judges.local.lexicon` (which also holds the English lists).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragqa.errors import ConfigError

__all__ = ["PACK_KEYS", "PATTERNS", "WORD_LISTS", "Lexicon", "fold_words"]

PACK_KEYS = frozenset(
    {
        "letters",
        "stemmer",
        "splitter",
        "stop_words",
        "number_words",
        "ambiguous_number_words",
        "negations",
        "first_person",
        "discourse_openers",
        "openers",
        "intent_words",
        "word_lists",
        "patterns",
        "question_forms",
        "answer_types",
    }
)
"""The keys of a pack's ``local_judge`` field (each optional but ``letters``; see :class:`Lexicon`)."""

WORD_LISTS: Mapping[str, str] = {
    "courtesy": "words of a conversation turn that asks for nothing (``thanks``, ``ok``, ``bye``)",
    "thanks": "words that thank (``thanks``, ``cheers``)",
}
"""The named word lists of a pack's ``local_judge.word_lists`` and what each holds."""

PATTERNS: Mapping[str, str] = {
    "yes_no": "a bare yes or no, the whole answer (``yes|no``)",
    "lead_ins": "interjections, agreement and hedges that open a sentence without a claim (``well``, ``I think``)",
    "non_claims": "whole sentences that close an answer without asserting anything (``thanks``, ``hope this helps``)",
    "refusals": "phrases of an agent declining a request (``I can only help with``)",
    "noncommittal": "phrases of an evasive answer (``I don't know``, ``it depends``)",
    "harmful": "words of harmful content (``weapon``, ``malware``)",
    "rude": "rude words (``stupid``, ``shut up``)",
    "negative_frames": "words that frame a criterion negatively (``free of``, ``avoid``)",
    "criterion_harm": "stems naming a harmfulness criterion (``harm``, ``danger``)",
    "criterion_politeness": "stems naming a politeness criterion (``polite``, ``rude``)",
    "criterion_conciseness": "stems naming a conciseness criterion (``concise``, ``brief``)",
    "criterion_coherence": "stems naming a coherence criterion (``coheren``, ``logical``)",
    "criterion_correctness": "stems naming a correctness criterion (``correct``, ``accura``)",
    "clause_breaks": "where a sentence splits into clauses (``; ``, ``, but ``)",
}
"""The named patterns of a pack's ``local_judge.patterns`` and what each matches.

Each is a regular expression of alternatives (matched case-insensitively); the local judge joins
a pattern's alternatives of every language read with ``|``, English first.
"""

_SNOWBALL = frozenset(
    {
        "arabic",
        "armenian",
        "basque",
        "catalan",
        "danish",
        "dutch",
        "english",
        "finnish",
        "french",
        "german",
        "greek",
        "hindi",
        "hungarian",
        "indonesian",
        "irish",
        "italian",
        "lithuanian",
        "nepali",
        "norwegian",
        "porter",
        "portuguese",
        "romanian",
        "russian",
        "serbian",
        "spanish",
        "swedish",
        "tamil",
        "turkish",
        "yiddish",
    }
)
"""Stemmer names of ``snowballstemmer`` (https://snowballstem.org/algorithms/)."""


def fold_words(words: Iterable[str]) -> frozenset[str]:
    """Lower-case with ``ё`` folded into ``е``: the form :func:`ragqa.judges.local.text.tokens` gives."""
    return frozenset(w.lower().replace("ё", "е") for w in words)


@dataclass(frozen=True)
class Lexicon:
    """The word lists of one language, as the local judge reads them (all lower-case, ``ё`` folded).

    Attributes:
        code: the language code (``en``, ``ru``...).
        letters: a regular-expression character class body naming the language's letters
            (``а-яёА-ЯЁ``); a text mostly in these letters is read with this lexicon.
        stemmer: the Snowball stemmer (``english``, ``russian``...; https://snowballstem.org/).
        splitter: how lines are split into sentences: ``pysbd`` (English rules) or ``razdel``.
        stop_words: function words, not content.
        number_words: number words and their digits (``three`` -> ``3``), so a spelt-out number
            matches a written one.
        ambiguous_number_words: number words that are not asserted numbers (``one``, ``first``).
        negations: words that negate a statement.
        first_person: words by which a text speaks of its speaker.
        discourse_openers: words that open a sentence only to link it to the text around it.
        openers: other capitalised words that open sentences without being names (imperatives,
            words naming the source).
        intent_words: words that say what kind of answer a query wants (``define``, ``example``).
        word_lists: named word lists, by the names of :data:`WORD_LISTS`.
        patterns: named regular expressions of alternatives, by the names of :data:`PATTERNS`.
        question_forms: the forms of a question generated from an answer's words, each with one
            ``{}`` for them (``What about {}?``); a text in the language is asked with them in turn.
        answer_types: ``(pattern, question words)`` in order: when an answer's first claim holds
            a phrase the pattern finds (case-insensitively; a duration, an amount of money), the
            generated question asks for it with those words (``How long``).
    """

    code: str
    letters: str
    stemmer: str
    splitter: str = "pysbd"
    stop_words: frozenset[str] = frozenset()
    number_words: Mapping[str, str] = field(default_factory=dict)
    ambiguous_number_words: frozenset[str] = frozenset()
    negations: frozenset[str] = frozenset()
    first_person: frozenset[str] = frozenset()
    discourse_openers: frozenset[str] = frozenset()
    openers: frozenset[str] = frozenset()
    intent_words: frozenset[str] = frozenset()
    word_lists: Mapping[str, frozenset[str]] = field(default_factory=dict)
    patterns: Mapping[str, str] = field(default_factory=dict)
    question_forms: tuple[str, ...] = ()
    answer_types: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_mapping(cls, code: str, data: Mapping[str, Any]) -> Lexicon:
        """The lexicon of language ``code`` from a pack's ``local_judge`` field (keys of :data:`PACK_KEYS`).

        Raises:
            ConfigError: naming the pack when a key is unknown, ``letters`` is missing or not a
                character class, the stemmer or splitter is unknown, or a list is not a list of
                words (``number_words``: not a mapping of words to digits), or ``word_lists`` or
                ``patterns`` names a list or pattern that does not exist, or a pattern does not compile,
                or a question form or an answer type is malformed.
        """
        where = f"language pack {code!r}, field local_judge"
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a mapping of word lists, got {type(data).__name__}")
        unknown = sorted(set(data) - PACK_KEYS)
        if unknown:
            raise ConfigError(
                f"{where}: unknown key(s) {', '.join(unknown)}; the keys are {', '.join(sorted(PACK_KEYS))}"
            )
        letters = data.get("letters")
        if not isinstance(letters, str) or not letters:
            raise ConfigError(f"{where}: 'letters' is missing; give the language's letters, e.g. 'а-яёА-ЯЁ'")
        try:
            re.compile(f"[{letters}]")
        except re.error as exc:
            raise ConfigError(f"{where}: 'letters' {letters!r} is not a character class ({exc})") from None
        stemmer = str(data.get("stemmer", "porter"))
        if stemmer not in _SNOWBALL:
            raise ConfigError(f"{where}: unknown stemmer {stemmer!r}; use one of {', '.join(sorted(_SNOWBALL))}")
        splitter = str(data.get("splitter", "pysbd"))
        if splitter not in {"pysbd", "razdel"}:
            raise ConfigError(f"{where}: unknown splitter {splitter!r}; use pysbd or razdel")
        number_words = data.get("number_words", {})
        if not isinstance(number_words, Mapping) or not all(
            isinstance(w, str) and isinstance(d, str | int) for w, d in number_words.items()
        ):
            raise ConfigError(f"{where}: 'number_words' is not a mapping of words to digits, e.g. {{'три': '3'}}")

        def words(key: str) -> frozenset[str]:
            value = data.get(key, ())
            if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
                raise ConfigError(f'{where}: {key!r} is not a list of words; write e.g. ["и", "в"]')
            if not all(isinstance(w, str) for w in value):
                raise ConfigError(f"{where}: {key!r} holds something other than words")
            return fold_words(value)

        return cls(
            code=code,
            letters=letters,
            stemmer=stemmer,
            splitter=splitter,
            stop_words=words("stop_words"),
            number_words={w.lower().replace("ё", "е"): str(d) for w, d in number_words.items()},
            ambiguous_number_words=words("ambiguous_number_words"),
            negations=words("negations"),
            first_person=words("first_person"),
            discourse_openers=words("discourse_openers"),
            openers=words("openers"),
            intent_words=words("intent_words"),
            word_lists={name: fold_words(ws) for name, ws in _named(where, data, "word_lists", WORD_LISTS).items()},
            patterns=_named(where, data, "patterns", PATTERNS),
            question_forms=_question_forms(where, data.get("question_forms", [])),
            answer_types=_answer_types(where, data.get("answer_types", [])),
        )


def _named(where: str, data: Mapping[str, Any], key: str, names: Mapping[str, str]) -> dict[str, Any]:
    """The ``key`` mapping of a pack's lists (``word_lists`` or ``patterns``), checked.

    Raises:
        ConfigError: when it is not a mapping, names an entry not in ``names``, or holds a word list
            that is not a list of words or a pattern that does not compile.
    """
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {key!r} is not a mapping of names to {key.replace('_', ' ')}")
    unknown = sorted(set(value) - set(names))
    if unknown:
        raise ConfigError(f"{where}: unknown {key} {', '.join(unknown)}; the names are {', '.join(sorted(names))}")
    for name, entry in value.items():
        if key == "patterns":
            if not isinstance(entry, str) or not entry:
                raise ConfigError(f"{where}: pattern {name!r} is not a regular expression")
            try:
                re.compile(entry)
            except re.error as exc:
                raise ConfigError(f"{where}: pattern {name!r} does not compile ({exc})") from None
        elif (
            isinstance(entry, str)
            or not isinstance(entry, list | tuple | set | frozenset)
            or not all(isinstance(w, str) for w in entry)
        ):
            raise ConfigError(f'{where}: word list {name!r} is not a list of words; write e.g. ["спасибо"]')
    return dict(value)


def _question_forms(where: str, value: Any) -> tuple[str, ...]:
    """A pack's ``question_forms``, checked: a list of texts with one ``{}`` each.

    Raises:
        ConfigError: naming the form that is not a text with one ``{}``.
    """
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ConfigError(f"{where}: 'question_forms' is not a list of texts; write e.g. [\"Что известно о: {{}}?\"]")
    for form in value:
        if not isinstance(form, str) or form.count("{}") != 1 or form.count("{") != 1 or form.count("}") != 1:
            raise ConfigError(f"{where}: question form {form!r} needs one {{}} where the words go, and no other brace")
    return tuple(value)


def _answer_types(where: str, value: Any) -> tuple[tuple[str, str], ...]:
    """A pack's ``answer_types``, checked: a list of ``{"pattern": ..., "question": ...}``.

    Raises:
        ConfigError: naming the entry whose pattern does not compile or that lacks a field.
    """
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ConfigError(f"{where}: 'answer_types' is not a list of {{pattern, question}} mappings")
    found = []
    for entry in value:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("pattern"), str) or not entry.get("question"):
            raise ConfigError(f"{where}: answer type {entry!r} needs a 'pattern' and a 'question'")
        try:
            re.compile(entry["pattern"])
        except re.error as exc:
            raise ConfigError(
                f"{where}: answer type {entry['question']!r}: the pattern does not compile ({exc})"
            ) from None
        found.append((entry["pattern"], str(entry["question"])))
    return tuple(found)
