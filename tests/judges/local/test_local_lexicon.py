"""The local judge's word lists per language: English in code, every other language in its pack."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import ragqa
from ragqa import languages
from ragqa.errors import ConfigError
from ragqa.judges.local import lexicon, text
from ragqa.judges.local.answers_agent import is_courtesy, is_refusal
from ragqa.judges.local.lexicon import ENGLISH
from ragqa.judges.local.questions import generated_question
from ragqa.languages import LanguagePack, language_pack, register_language

ROOT = Path(__file__).resolve().parents[3]

GREEK = {
    "letters": "α-ωά-ώΑ-ΩΆ-Ώ",
    "stemmer": "greek",
    "stop_words": ["και", "το", "η", "ο"],
    "negations": ["δεν"],
    "number_words": {"τρία": "3"},
}
"""A made-up pack's lists: enough to tell that they are read."""


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Leave the languages read, the packs and the caches of readings as they were."""
    monkeypatch.setattr(languages, "_PACKS", dict(languages._PACKS))
    monkeypatch.setattr(lexicon, "_reading", lexicon.reading())
    monkeypatch.setattr(lexicon, "_asked", set(lexicon._asked))
    yield
    monkeypatch.undo()
    for cache_clear in text._CLEARED_ON_NEW_LANGUAGE:
        cache_clear()


def test_english_is_read_with_the_lists_in_code_and_russian_with_those_of_its_pack() -> None:
    reading = lexicon.reading()
    assert reading.lexicons["en"] is ENGLISH
    pack = language_pack("ru")
    assert pack is not None and reading.lexicons["ru"] == lexicon.lexicon_of(pack)
    assert reading.lexicons["ru"].stemmer == "russian" and "который" in reading.lexicons["ru"].stop_words
    assert text.detect_script("Сервер перезапускается ночью") == "ru"
    assert text.detect_script("The server restarts at night") == "en"
    assert text.features("Я не знаю").negated and text.features("Я не знаю").first_person


def test_a_pack_with_lists_is_read_once_the_local_judge_is_asked_in_its_language(fresh: None) -> None:
    register_language(LanguagePack(code="el", name="Ελληνικά", local_judge=GREEK))
    sentence = "Ο διακομιστής δεν έχει τρία αντίγραφα"
    assert text.detect_script(sentence) == "en"  # not read before the language is asked for
    assert not text.features(sentence).negated
    sample = {"id": "el-1", "user_input": "Πόσα αντίγραφα;", "response": sentence, "retrieved_contexts": [sentence]}
    ragqa.evaluate([sample], metrics=["faithfulness"], config=ROOT / "application.yaml", profile="local", language="el")
    assert "el" in lexicon.reading().lexicons
    assert text.detect_script(sentence) == "el"
    features = text.features(sentence)
    assert features.negated and features.numbers == {"3"}
    assert text.detect_script("Сервер перезапускается ночью") == "ru"  # the built-in packs are still read


def test_a_packs_patterns_and_word_lists_join_those_of_the_languages_read(fresh: None) -> None:
    lists = {**GREEK, "patterns": {"refusals": r"δεν\s+μπορώ\s+να\s+βοηθήσω"}, "word_lists": {"thanks": ["ευχαριστώ"]}}
    register_language(LanguagePack(code="el", local_judge=lists))
    refusal, thanks = "Λυπάμαι, δεν μπορώ να βοηθήσω με αυτό.", "ευχαριστώ πολύ"
    assert not is_refusal(refusal) and not is_courtesy(thanks)
    before = lexicon.reading().patterns["refusals"]  # English's alternatives, then Russian's
    text.read_language("el")
    patterns = lexicon.reading().patterns["refusals"]
    assert patterns.startswith(ENGLISH.patterns["refusals"] + "|")
    assert patterns == before + r"|δεν\s+μπορώ\s+να\s+βοηθήσω"
    assert is_refusal(refusal) and is_courtesy(thanks)
    assert is_refusal("I can only help with billing.") and is_refusal("Я не могу помочь с этим.")


def test_a_packs_question_forms_and_answer_types_word_the_generated_question(fresh: None) -> None:
    answer = "Η επιστροφή χρημάτων γίνεται σε 5 ευρώ το κομμάτι."
    lists = {
        **GREEK,
        "question_forms": ["Τι ξέρουμε για {};"],
        "answer_types": [{"pattern": r"\d+\s*ευρώ", "question": "Πόσο"}],
    }
    register_language(LanguagePack(code="el", local_judge=lists))
    assert generated_question(answer, 1, "en").startswith("What about")  # Greek is not read yet
    text.read_language("el")
    assert generated_question(answer, 1, "en").startswith("Πόσο ") and "ευρώ" not in generated_question(answer, 1, "en")
    assert generated_question("Η επιστροφή χρημάτων γίνεται αμέσως.", 1, "en").startswith("Τι ξέρουμε για ")
    assert generated_question("Refunds take 5 days.", 1, "en").startswith("How long")


def test_a_pack_without_lists_leaves_the_reading_as_it_was(fresh: None) -> None:
    register_language(LanguagePack(code="de", name="Deutsch"))
    before = lexicon.reading()
    text.read_language("de")
    assert lexicon.reading() is before


@pytest.mark.parametrize(
    ("lists", "message"),
    [
        ({**GREEK, "stopwords": []}, r"unknown key\(s\) stopwords"),
        ({"stemmer": "greek"}, r"'letters' is missing"),
        ({**GREEK, "letters": "ω-α"}, r"'letters' .* is not a character class"),
        ({**GREEK, "stemmer": "klingon"}, r"unknown stemmer 'klingon'"),
        ({**GREEK, "splitter": "nltk"}, r"unknown splitter 'nltk'"),
        ({**GREEK, "stop_words": "και το"}, r"'stop_words' is not a list of words"),
        ({**GREEK, "number_words": ["τρία"]}, r"'number_words' is not a mapping of words to digits"),
        ({**GREEK, "patterns": {"refusal": "δεν"}}, r"unknown patterns refusal; the names are .*refusals"),
        ({**GREEK, "patterns": {"refusals": "δεν ("}}, r"pattern 'refusals' does not compile"),
        ({**GREEK, "patterns": ["δεν"]}, r"'patterns' is not a mapping of names to patterns"),
        ({**GREEK, "word_lists": {"thanks": "ευχαριστώ"}}, r"word list 'thanks' is not a list of words"),
        ({**GREEK, "word_lists": {"merci": ["ευχαριστώ"]}}, r"unknown word_lists merci; the names are courtesy"),
        ({**GREEK, "question_forms": ["Τι ξέρουμε για;"]}, r"question form .* needs one \{\} where the words go"),
        (
            {**GREEK, "answer_types": [{"pattern": "(", "question": "Πόσο"}]},
            r"answer type 'Πόσο': the pattern does not",
        ),
        ({**GREEK, "answer_types": [{"pattern": "ευρώ"}]}, r"answer type .* needs a 'pattern' and a 'question'"),
    ],
)
def test_a_bad_list_is_an_error_naming_the_pack_and_the_fix(
    fresh: None, lists: dict[str, object], message: str
) -> None:
    register_language(LanguagePack(code="el", local_judge=lists))
    with pytest.raises(ConfigError, match=r"language pack 'el', field local_judge: " + message):
        text.read_language("el")


def test_a_bad_list_of_a_pack_read_from_data_stops_before_any_judge_is_asked() -> None:
    """Installed and built-in packs are read from mappings: the lists are checked there, at the settings."""
    with pytest.raises(ConfigError, match=r"language pack 'el', field local_judge: unknown stemmer 'klingon'"):
        LanguagePack.from_mapping({"code": "el", "local_judge": {**GREEK, "stemmer": "klingon"}}, where="acme:EL")
