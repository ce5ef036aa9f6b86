"""Text metrics: formulas, variants against the libraries RAGAS calls, options and keys, and the panel path."""

from __future__ import annotations

import math

import pytest
from rapidfuzz.distance import Hamming, Jaro, JaroWinkler, Levenshtein

from ragqa import build_metric
from ragqa.errors import ConfigError, SampleError
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import METRICS
from ragqa.metrics.base import MetricContext
from ragqa.metrics.text import TEXT_METRICS
from ragqa.metrics.text.bleu import java_bleu, promptfoo_bleu, ragas_bleu
from ragqa.metrics.text.chrf import java_chrf, ragas_chrf
from ragqa.metrics.text.levenshtein_distance import levenshtein_distance
from ragqa.metrics.text.rouge import java_rouge, lcs_length, ragas_rouge
from ragqa.metrics.text.string_match import string_matches
from ragqa.metrics.text.string_similarity import (
    java_hamming,
    java_jaro,
    java_jaro_winkler,
    java_similarity,
    ragas_similarity,
)
from ragqa.metrics.text.tokenize import java_tokens
from ragqa.run.estimate import estimate_pairs
from ragqa.run.spec import spec_of
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge

FOX = "The quick brown fox jumps over the lazy dog"
SHORT_FOX = "The quick brown fox jumps over the dog"
NAMES = [
    "bleu_score",
    "rouge_score",
    "chrf_score",
    "non_llm_string_similarity",
    "exact_match",
    "string_present",
    "string_match",
    "levenshtein_distance",
]


def test_every_text_metric_is_registered_without_a_judge() -> None:
    assert [cls.name for cls in TEXT_METRICS] == NAMES
    for name in NAMES:
        cls = METRICS[name]
        assert cls.needs_judge is False
        assert cls.required_fields == ("response", "reference")
        assert cls.calls_per_sample == "0"


def test_java_tokeniser_keeps_latin_and_cyrillic_letters_and_digits_only() -> None:
    assert java_tokens("Hello, WORLD! Ёлка 42x") == ["hello", "world", "ёлка", "42x"]
    assert java_tokens("café naïve") == ["caf", "na", "ve"]  # accented letters are deleted, as in Java
    assert java_tokens("?!") == []


# -- BLEU ---------------------------------------------------------------------------------------


def test_java_bleu_quirks() -> None:
    # identical 3-word texts: the 4-gram order has no n-gram, smoothed to 1/(3+1)
    assert java_bleu("a b c", "a b c") == pytest.approx(0.25**0.25)
    # unsmoothed zero precisions are skipped (count as 1): higher than smoothed
    assert java_bleu("Hello world", "Goodbye world", smoothing=False) == pytest.approx(0.8408964152537145)
    assert java_bleu("Hello world", "Goodbye world") == pytest.approx(0.4386913376508308)
    assert java_bleu("?!", "a b") == 0.0  # no word survives the tokeniser


# The reference libraries (sacrebleu, rouge_score: nltk and absl, 2 CPU seconds) are imported in the
# tests that compare with them, not at collection, which every xdist worker does for every module.


def test_ragas_variant_is_sacrebleu_corpus_bleu_over_sentences() -> None:
    from sacrebleu import corpus_bleu

    response, reference = "The cat sat. It was fun", "The cat sat on the mat. It was fun"
    expected = corpus_bleu(["The cat sat", "It was fun"], [["The cat sat on the mat"], ["It was fun"]]).score / 100
    assert ragas_bleu(response, reference) == pytest.approx(expected)
    assert ragas_bleu(SHORT_FOX, FOX) == pytest.approx(0.7672796459606589)


def test_promptfoo_bleu() -> None:
    # every order present: clipped precisions 8/8, 6/7, 5/6, 4/5 ('the dog' breaks one n-gram per order); c=8 < r=9
    expected = math.exp(1 - 9 / 8) * math.exp(sum(map(math.log, [1, 6 / 7, 5 / 6, 4 / 5])) / 4)
    assert promptfoo_bleu(SHORT_FOX, FOX) == pytest.approx(expected)
    # a 2-word exact answer: orders 3 and 4 are skipped and the weights renormalised
    assert promptfoo_bleu("Paris France", "paris france") == pytest.approx(1.0)
    # a zero precision becomes 1e-7
    assert promptfoo_bleu("a b", "c d") == pytest.approx(1e-7)


# -- ROUGE --------------------------------------------------------------------------------------


def test_lcs_length() -> None:
    assert lcs_length(["the", "quick", "fox", "jumps"], ["the", "quick", "brown", "fox", "jumps"]) == 4
    assert lcs_length([], ["a"]) == 0


def test_java_rouge_modes_and_empty_ngram_rules() -> None:
    response, reference = "The quick fox jumps high and far", FOX
    f, p, r = java_rouge(response, reference, rouge_type="rouge1")
    assert (p, r, f) == (pytest.approx(4 / 7), pytest.approx(4 / 9), pytest.approx(0.5))
    assert java_rouge(response, reference, rouge_type="rougeL", mode="recall")[0] == pytest.approx(4 / 9)
    assert java_rouge("cat", "dog", rouge_type="rouge2")[0] == 1.0  # neither has a bigram
    assert java_rouge("cat", "a dog", rouge_type="rouge2")[0] == 0.0  # only one has none


def test_ragas_rouge_is_rouge_score_with_the_stemmer() -> None:
    from rouge_score.rouge_scorer import RougeScorer

    response, reference = "The cats are running fast", "A cat runs fast"
    expected = RougeScorer(["rougeL"], use_stemmer=True).score(reference, response)["rougeL"]
    assert ragas_rouge(response, reference) == (
        pytest.approx(expected.fmeasure),
        pytest.approx(expected.precision),
        pytest.approx(expected.recall),
    )


# -- chrF ---------------------------------------------------------------------------------------


def test_java_chrf_counts_spaces_and_averages_f_per_order() -> None:
    assert java_chrf("hello", "hallo", char_order=1)[0] == pytest.approx(0.8)
    # orders 4 and 5 share nothing; order 6: neither side has a 6-gram -> 1
    assert java_chrf("hello", "hallo")[0] == pytest.approx((0.8 + 0.5 + 1 / 3 + 0 + 0 + 1) / 6)
    score, char_f, word_f = java_chrf("fox brown quick the", "the quick brown fox", word_order=2)
    assert word_f == pytest.approx(0.5)  # unigrams all match, no bigram does
    assert score == pytest.approx((char_f + 0.5) / 2)


def test_ragas_chrf_is_sacrebleu_chrf() -> None:
    from sacrebleu.metrics.chrf import CHRF

    expected = CHRF(word_order=2).corpus_score([SHORT_FOX], [[FOX]]).score / 100
    assert ragas_chrf(SHORT_FOX, FOX, word_order=2) == pytest.approx(expected)


# -- string similarity --------------------------------------------------------------------------


def test_java_string_measures() -> None:
    assert java_hamming("hello", "hello world") == pytest.approx(1 - 5 / 11)  # the pad space matches
    assert java_jaro("martha", "marhta") == pytest.approx(0.9444444444444445)
    assert java_jaro("crate", "trace") == pytest.approx((3 / 5 + 3 / 5 + 1) / 3)
    assert java_jaro_winkler("prefix_abc", "prefix_xyz") == pytest.approx(0.88)
    assert java_similarity("HELLO", "hello") == 1.0
    assert java_similarity("HELLO", "hello", distance_measure="levenshtein", case_sensitive=True) == 0.0


def test_java_jaro_divides_transpositions_as_integers() -> None:
    # 'abc' vs 'bca' (window 0): a-b, b-c, c-a never match within the window -> 0
    assert java_jaro("abc", "bca") == 0.0
    # 'abcxyz' vs 'bcaxyz' (window 2): all 6 match, a/b/c out of order: t = 3, t // 2 = 1
    assert java_jaro("abcxyz", "bcaxyz") == pytest.approx((1 + 1 + (6 - 1) / 6) / 3)
    assert 1 - Jaro.normalized_distance("abcxyz", "bcaxyz") == pytest.approx(java_jaro("abcxyz", "bcaxyz"))
    # commons-text's Jaro-Winkler halves t as a real number: 1.5, and no common prefix
    assert java_jaro_winkler("abcxyz", "bcaxyz") == pytest.approx((1 + 1 + (6 - 1.5) / 6) / 3)


@pytest.mark.parametrize(
    ("measure", "distance"),
    [("levenshtein", Levenshtein), ("hamming", Hamming), ("jaro", Jaro), ("jaro_winkler", JaroWinkler)],
)
def test_ragas_similarity_is_rapidfuzz(measure: str, distance: object) -> None:
    expected = 1 - distance.normalized_distance(FOX, SHORT_FOX)  # type: ignore[attr-defined]
    assert ragas_similarity(SHORT_FOX, FOX, distance_measure=measure) == pytest.approx(expected)  # type: ignore[arg-type]


# -- string checks and edit distance -------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "response", "reference", "expected"),
    [
        ("equals", "Paris", "Paris", True),
        ("equals", "Paris.", "Paris", False),
        ("contains", "It is Paris.", "Paris", True),
        ("contains", "It is paris.", "Paris", False),
        ("icontains", "It is paris.", "PARIS", True),
        ("starts_with", "Paris is the capital", "Paris", True),
        ("starts_with", "The capital is Paris", "Paris", False),
        ("regex", "Order #12345 shipped", r"#\d{5}\b", True),
        ("regex", "Order #12 shipped", r"^#\d{5}", False),
    ],
)
def test_string_matches(mode: str, response: str, reference: str, expected: bool) -> None:
    assert string_matches(response, reference, mode) is expected  # type: ignore[arg-type]


def test_levenshtein_distance() -> None:
    assert levenshtein_distance("kitten", "sitting") == 3.0
    assert levenshtein_distance("same", "same") == 0.0


# -- metric objects: options, keys, validation ---------------------------------------------------


def test_keys_name_only_the_options_that_differ_and_parse_back() -> None:
    assert build_metric("bleu_score").key == "bleu_score"
    metric = build_metric("rouge_score", {"rouge_type": "rouge1", "mode": "recall"})
    assert metric.key == "rouge_score(rouge_type=rouge1, mode=recall)"
    assert spec_of(metric).build().key == metric.key
    chrf = build_metric("chrf_score", {"word_order": 2, "beta": 1})
    assert chrf.key == "chrf_score(word_order=2, beta=1.0)"
    assert spec_of(chrf).build().key == chrf.key
    similarity = build_metric("non_llm_string_similarity", {"variant": "ragas", "case_sensitive": False})
    assert similarity.key == "non_llm_string_similarity(variant=ragas, case_sensitive=false)"
    assert spec_of(similarity).build().key == similarity.key
    assert (
        build_metric("string_match", {"mode": "regex", "negate": True}).key == "string_match(mode=regex, negate=true)"
    )
    assert build_metric("string_match").key == "string_match(mode=contains)"  # the mode is always named


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("bleu_score", {"variant": "nltk"}, "variant must be one of java, ragas, promptfoo"),
        ("bleu_score", {"max_ngram": 0}, "max_ngram must be an integer >= 1"),
        ("bleu_score", {"variant": "ragas", "max_ngram": 2}, "java variant only"),
        ("rouge_score", {"rouge_type": "rougeLsum"}, "rouge_type must be one of rouge1, rouge2, rougeL"),
        ("chrf_score", {"beta": 0}, "beta must be a number > 0"),
        ("chrf_score", {"variant": "ragas", "beta": 1.5}, "whole-number beta"),
        ("non_llm_string_similarity", {"distance_measure": "cosine"}, "distance_measure must be one of"),
        ("string_match", {"mode": "ends_with"}, "mode must be one of"),
        ("string_present", {"case_sensitive": "no"}, "case_sensitive must be true or false"),
        ("exact_match", {"mode": "x"}, "unknown option"),
    ],
)
def test_bad_options_are_config_errors(name: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_metric(name, options)


def test_string_similarity_variant_defaults() -> None:
    assert build_metric("non_llm_string_similarity").resolved() == ("jaro_winkler", False)  # type: ignore[attr-defined]
    ragas = build_metric("non_llm_string_similarity", {"variant": "ragas"})
    assert ragas.resolved() == ("levenshtein", True)  # type: ignore[attr-defined]


def test_invalid_regex_is_a_sample_error_naming_the_reference() -> None:
    metric = build_metric("string_match", {"mode": "regex"})
    with pytest.raises(SampleError, match="not a valid regular expression") as caught:
        metric.validate(Sample(id="s1", response="abc", reference="(unclosed"))
    assert caught.value.field == "reference"


@pytest.mark.parametrize("name", NAMES)
def test_blank_fields_are_refused_before_scoring(name: str) -> None:
    metric = build_metric(name)
    with pytest.raises(SampleError, match="is empty"):
        metric.validate(Sample(id="s1", response="  ", reference="x"))


async def test_string_match_negation_and_reason() -> None:
    sample = Sample(id="s1", response="Paris is the capital", reference="London")
    plain = await build_metric("string_match").score(sample, ScriptedJudge("j", {}), MetricContext())
    negated = await build_metric("string_match", {"negate": True}).score(
        sample, ScriptedJudge("j", {}), MetricContext()
    )
    assert (plain.value, negated.value) == (0.0, 1.0)
    assert plain.reason == "the response does not contain the reference: 0"
    assert negated.details["matched"] is False


# -- in the panel ---------------------------------------------------------------------------------


async def test_panel_gives_every_judge_the_same_score_and_asks_none() -> None:
    judges = [ScriptedJudge("j1", {}), ScriptedJudge("j2", {}), ScriptedJudge("j3", {})]
    metrics = [build_metric(name) for name in NAMES]
    samples = [
        Sample(id="a", response=SHORT_FOX, reference=FOX),
        Sample(id="b", response="kitten", reference="sitting"),
    ]
    report = await PanelEvaluator(judges, metrics).evaluate(samples)
    assert all(judge.calls == [] for judge in judges)
    for result in report.results:
        values = {o.score.value for o in result.judges if o.score is not None}
        assert len(values) == 1 and len(result.judges) == 3
        [value] = values
        assert result.aggregate.value == pytest.approx(value, rel=1e-12)  # the mean of equal floats
        assert result.aggregate.spread == 0.0
    assert report.summary("bleu_score").aggregate_mean == pytest.approx(
        (java_bleu(SHORT_FOX, FOX) + java_bleu("kitten", "sitting")) / 2
    )
    assert report.summary("levenshtein_distance").direction == "lower"
    assert report.summary("levenshtein_distance").aggregate_mean == pytest.approx((5 + 3) / 2)
    assert estimate_pairs([(s, m) for s in samples for m in metrics], judges=3).calls == 0
