import math

import pytest

from ragqa._math import cosine
from ragqa.errors import JudgeUnsupported
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.base import Embedder, Judge
from ragqa.judges.local import (
    GradedAttributionOutput,
    GradedContextUsefulnessOutput,
    GradedNLIOutput,
    GradedRelevanceOutput,
    LocalEmbedder,
    LocalJudge,
    claims,
    hashing_vector,
    minilm_available,
    split_sentences,
)
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.prompts.attribution import ATTRIBUTION, AttributionInput
from ragqa.prompts.base import Prompt
from ragqa.prompts.context_usefulness import CONTEXT_USEFULNESS, ContextUsefulnessInput
from ragqa.prompts.entities import ENTITIES, EntitiesInput
from ragqa.prompts.nli import NLI, NLIInput
from ragqa.prompts.question_generation import QUESTION_GENERATION, QuestionGenerationInput
from ragqa.prompts.statement_relevance import STATEMENT_RELEVANCE, StatementRelevanceInput
from ragqa.prompts.statements import STATEMENTS, StatementsInput, StatementsOutput
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import make_sample
from ragqa.usage import usage_scope

CONTEXT = (
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. "
    "It was designed by the engineering company of Gustave Eiffel. "
    "The tower is 330 metres tall and was the tallest man-made structure until 1930."
)


async def _supports(judge: LocalJudge, context: str, *statements: str) -> list[float]:
    out = await judge.ask(NLI, NLIInput(context=context, statements=list(statements)))
    return [v.value for v in out.verdicts]


# ---- statements -------------------------------------------------------------------------------


async def test_statements_split_english_with_abbreviations_and_drop_non_claims() -> None:
    judge = LocalJudge("local")
    answer = (
        "Yes! Dr. Smith joined Acme Inc. in Jan. 2020 [1]. She leads the U.S. team. "
        "Do you want to know more? Hope this helps!"
    )
    out = await judge.ask(STATEMENTS, StatementsInput(question="Who leads the team?", answer=answer))
    assert out.statements == ["Dr. Smith joined Acme Inc. in Jan. 2020.", "She leads the U.S. team."]


async def test_statements_split_russian_with_razdel() -> None:
    judge = LocalJudge("local")
    answer = (
        "Да, конечно. Проф. И.И. Петров работает в г. Казани с 2010 года. Он читает лекции по физике. Вам интересно?"
    )
    out = await judge.ask(STATEMENTS, StatementsInput(question="Где работает Петров?", answer=answer), language="ru")
    assert out.statements == [
        "Проф. И.И. Петров работает в г. Казани с 2010 года.",
        "Он читает лекции по физике.",
    ]


def test_split_sentences_routes_by_script_and_unglues_scraped_text() -> None:
    assert split_sentences("It was published in the 19th century.First for Women is a magazine.") == (
        "It was published in the 19th century.",
        "First for Women is a magazine.",
    )
    assert len(split_sentences("Проф. И.И. Иванов (т.ч. им. М.В. Ломоносова) приехал. Он устал.")) == 2


def test_claims_strip_hedges_but_keep_claims_about_the_speaker() -> None:
    assert claims("I think that the tower is 330 metres tall.") == ["the tower is 330 metres tall."]
    assert claims("I love this tower.") == ["I love this tower."]
    assert claims("Is it tall?") == []


async def test_bare_yes_no_becomes_a_statement_built_from_the_question() -> None:
    judge = LocalJudge("local")
    no = await judge.ask(STATEMENTS, StatementsInput(question="Is the tower in Paris?", answer="No."))
    assert no.statements == ["Is the tower in Paris — no"]
    short = await judge.ask(STATEMENTS, StatementsInput(question="Which city?", answer="Paris"))
    assert short.statements == ["Paris"]


# ---- nli ----------------------------------------------------------------------------------


async def test_nli_number_mismatch_scores_below_the_matching_number() -> None:
    judge = LocalJudge("local")
    right, wrong = await _supports(
        judge, CONTEXT, "The Eiffel Tower was completed in 1889.", "The Eiffel Tower was completed in 1899."
    )
    assert right == pytest.approx(1.0)
    assert wrong == 0.0  # capped by the share of numbers found
    out = await judge.ask(NLI, NLIInput(context=CONTEXT, statements=["The Eiffel Tower was completed in 1899."]))
    assert "1899" in out.verdicts[0].reason and out.verdicts[0].reason.startswith("local approximation")


async def test_number_words_match_digits() -> None:
    judge = LocalJudge("local")
    (value,) = await _supports(
        judge, "The duo has earned two platinum albums.", "The duo has earned 2 platinum albums."
    )
    assert value == pytest.approx(1.0)


async def test_nli_entity_mismatch_scores_below_the_right_name() -> None:
    judge = LocalJudge("local")
    right, wrong = await _supports(
        judge,
        CONTEXT,
        "The tower was designed by the company of Gustave Eiffel.",
        "The tower was designed by the company of Gustave Flaubert.",
    )
    assert right > 0.85
    assert wrong <= 0.5  # one of two names missing caps the support at 0.5


async def test_nli_paraphrase_beats_unrelated_and_negated_statements() -> None:
    judge = LocalJudge("local")
    paraphrase, unrelated, negated = await _supports(
        judge,
        CONTEXT,
        "Gustave Eiffel's engineering company designed the tower.",
        "The tower is painted blue every spring by volunteers.",
        "The Eiffel Tower was not completed in 1889.",
    )
    assert paraphrase > 0.8
    assert unrelated < 0.4
    assert negated <= 0.5


async def test_nli_claim_about_the_speaker_is_capped() -> None:
    judge = LocalJudge("local")
    plain, personal = await _supports(judge, CONTEXT, "The tower is 330 metres tall.", "My tower is 330 metres tall.")
    assert plain == pytest.approx(1.0)
    assert personal <= 0.5


async def test_nli_russian_support() -> None:
    judge = LocalJudge("local")
    context = "Иван работает инженером на заводе в Казани и по выходным играет в шахматы."
    works, doctor = await _supports(judge, context, "Иван работает в Казани.", "Иван работает врачом в Москве.")
    assert works > 0.85  # every word found; the bigram share is below 1 (an inserted word)
    assert doctor < 0.5


async def test_verdict_respects_the_support_threshold() -> None:
    context = "Maria is a nurse at the city hospital."
    statement = "Maria is a nurse at the hospital in the north."
    strict = LocalJudge("strict", LocalJudgeSettings(support_threshold=0.9))
    lenient = LocalJudge("lenient", LocalJudgeSettings(support_threshold=0.3))
    (s,) = (await strict.ask(NLI, NLIInput(context=context, statements=[statement]))).verdicts
    (lv,) = (await lenient.ask(NLI, NLIInput(context=context, statements=[statement]))).verdicts
    assert s.support == lv.support and 0.3 <= s.value < 0.9
    assert (s.verdict, lv.verdict) == (0, 1)


async def test_number_check_can_be_switched_off() -> None:
    statement = "The Eiffel Tower was completed in 1899."
    with_check = LocalJudge("a", LocalJudgeSettings(number_check=True))
    without = LocalJudge("b", LocalJudgeSettings(number_check=False))
    (a,) = await _supports(with_check, CONTEXT, statement)
    (b,) = await _supports(without, CONTEXT, statement)
    assert a == 0.0 < b


# ---- errors, usage --------------------------------------------------------------------------


async def test_unknown_prompt_raises_judge_unsupported_with_id_and_step() -> None:
    judge = LocalJudge("local")
    prompt: Prompt[StatementsInput, StatementsOutput] = Prompt(
        name="rubric_grading",
        version="1",
        input_model=StatementsInput,
        output_model=StatementsOutput,
        instructions={"en": "grade"},
    )
    with pytest.raises(JudgeUnsupported) as info:
        await judge.ask(prompt, StatementsInput(question="q", answer="a"))
    assert info.value.judge_id == "local"
    assert info.value.step == "rubric_grading"
    assert "nli" in str(info.value)


async def test_each_call_is_recorded_as_one_free_call() -> None:
    judge = LocalJudge("local")
    with usage_scope() as meter:
        await judge.ask(STATEMENTS, StatementsInput(question="q", answer="The tower is tall."))
        await judge.ask(NLI, NLIInput(context=CONTEXT, statements=["The tower is tall."]))
    assert meter.total.calls == 2
    assert meter.total.cost == 0.0
    assert meter.total.prompt_tokens == 0


def test_local_judge_and_embedder_satisfy_the_protocols() -> None:
    assert isinstance(LocalJudge("local"), Judge)
    assert isinstance(LocalEmbedder("e", "hashing"), Embedder)


async def test_graded_prompts_answer_with_graded_subclasses_whose_value_is_the_support() -> None:
    judge = LocalJudge("local")
    answers = [
        await judge.ask(NLI, NLIInput(context=CONTEXT, statements=["It was completed in 1889, painted gold."])),
        await judge.ask(ATTRIBUTION, AttributionInput(question="q", context=CONTEXT, answer="It opened in 1889.")),
        await judge.ask(CONTEXT_USEFULNESS, ContextUsefulnessInput(question="q", context=CONTEXT, answer="1889.")),
        await judge.ask(STATEMENT_RELEVANCE, StatementRelevanceInput(question="How tall?", statements=["Tall."])),
    ]
    graded = [GradedNLIOutput, GradedAttributionOutput, GradedContextUsefulnessOutput, GradedRelevanceOutput]
    for out, cls in zip(answers, graded, strict=True):
        assert type(out) is cls
        items = getattr(out, "verdicts", None) or getattr(out, "classifications", None) or [out]
        for item in items:
            assert item.value == item.support and 0.0 <= item.support <= 1.0
            assert f'"support":{item.support!r}' in item.model_dump_json()
    (verdict,) = answers[0].verdicts
    assert 0.0 < verdict.value < 1.0  # graded: "painted gold" is missing, the rest is found


# ---- other prompts --------------------------------------------------------------------------


async def test_attribution_grades_each_reference_sentence() -> None:
    judge = LocalJudge("local")
    out = await judge.ask(
        ATTRIBUTION,
        AttributionInput(
            question="Tell me about the Eiffel Tower.",
            context=CONTEXT,
            answer="The Eiffel Tower was completed in 1889. It attracts seven million visitors a year.",
        ),
    )
    values = [c.value for c in out.classifications]
    assert [c.attributed for c in out.classifications] == [1, 0]
    assert values[0] > values[1]


async def test_context_usefulness_prefers_the_context_that_supports_the_answer() -> None:
    judge = LocalJudge("local")
    answer = "The Eiffel Tower was completed in 1889."
    useful = await judge.ask(
        CONTEXT_USEFULNESS, ContextUsefulnessInput(question="When?", context=CONTEXT, answer=answer)
    )
    useless = await judge.ask(
        CONTEXT_USEFULNESS,
        ContextUsefulnessInput(question="When?", context="Bananas are rich in potassium.", answer=answer),
    )
    assert (useful.verdict, useless.verdict) == (1, 0)
    assert useful.reason.startswith("local approximation")


async def test_statement_relevance_uses_overlap_with_the_question() -> None:
    judge = LocalJudge("local")
    out = await judge.ask(
        STATEMENT_RELEVANCE,
        StatementRelevanceInput(
            question="How tall is the Eiffel Tower?",
            statements=["The Eiffel Tower is 330 metres tall.", "Bananas are rich in potassium."],
        ),
    )
    assert [v.verdict for v in out.verdicts] == [1, 0]


async def test_entities_extracts_names_dates_and_quantities() -> None:
    judge = LocalJudge("local")
    out = await judge.ask(ENTITIES, EntitiesInput(text=CONTEXT))
    for expected in ("Eiffel Tower", "1889", "World's Fair", "Paris", "Gustave Eiffel", "330", "1930"):
        assert expected in out.entities
    assert len(out.entities) == len({e.lower() for e in out.entities})


async def test_question_generation_flags_evasive_answers_and_varies_by_attempt() -> None:
    judge = LocalJudge("local")
    evasive = await judge.ask(QUESTION_GENERATION, QuestionGenerationInput(response="I don't know, sorry."))
    assert evasive.noncommittal == 1
    q1 = await judge.ask(QUESTION_GENERATION, QuestionGenerationInput(response="The tower is 330 metres tall."))
    q2 = await judge.ask(
        QUESTION_GENERATION, QuestionGenerationInput(response="The tower is 330 metres tall.", attempt=2)
    )
    assert q1.noncommittal == 0
    assert "tower" in q1.question and q1.question.endswith("?")
    assert q1.question != q2.question


# ---- embedders ------------------------------------------------------------------------------


async def test_hashing_embedder_is_deterministic_normalised_and_topical() -> None:
    embedder = LocalEmbedder("hash", "hashing")
    a, b, c, empty = await embedder.embed(
        ["The Eiffel Tower is in Paris.", "The Eiffel Tower stands in Paris.", "Bananas contain potassium.", "the"]
    )
    assert a == hashing_vector("The Eiffel Tower is in Paris.")
    assert math.isclose(math.fsum(x * x for x in a), 1.0, rel_tol=1e-9)
    assert len(a) == embedder.dimensions == 1024
    assert cosine(a, b) > 0.5 > cosine(a, c)
    assert not any(empty)


@pytest.mark.skipif(not minilm_available(), reason="the embeddings extra is not installed")
async def test_minilm_embedder_reproduces_the_sbert_example() -> None:
    embedder = LocalEmbedder("mini", "minilm")
    a, b, c = await embedder.embed(
        ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby."]
    )
    assert len(a) == 384
    assert cosine(a, b) == pytest.approx(0.7553, abs=1e-3)
    assert cosine(a, c) == pytest.approx(-0.1050, abs=1e-3)


async def test_auto_embedder_picks_what_is_installed() -> None:
    embedder = LocalEmbedder("auto", "auto")
    assert embedder.method == ("minilm" if minilm_available() else "hashing")


# ---- the panel ------------------------------------------------------------------------------


async def test_faithfulness_through_the_panel_with_two_local_judges() -> None:
    strict = LocalJudge("local-strict", LocalJudgeSettings(support_threshold=0.6))
    lenient = LocalJudge("local-lenient", LocalJudgeSettings(support_threshold=0.4, number_check=False))
    samples = [
        make_sample(id="right", response="The first Super Bowl was played on January 15, 1967."),
        make_sample(id="wrong-year", response="The first Super Bowl was played on January 15, 1968."),
        make_sample(id="off-topic", response="The game was played on the Moon by robots."),
    ]
    report = await PanelEvaluator([strict, lenient], [Faithfulness(), Hallucination()]).evaluate(samples)
    per_judge = {
        (r.sample_id, o.judge_id): o.score.value
        for r in report.results
        if r.metric == "faithfulness"
        for o in r.judges
        if o.score is not None
    }
    assert len(per_judge) == 6
    assert per_judge["right", "local-strict"] > 0.9
    assert per_judge["right", "local-lenient"] == per_judge["right", "local-strict"]
    # the number check separates the judges on the wrong year
    assert per_judge["wrong-year", "local-strict"] <= 0.5 < per_judge["wrong-year", "local-lenient"]
    assert per_judge["off-topic", "local-strict"] < per_judge["right", "local-strict"]
    summary = report.summary("faithfulness")
    assert [j.judge_id for j in summary.judges] == ["local-strict", "local-lenient"]
    assert all(j.n_failed == 0 for j in summary.judges)
    hallucination = {r.sample_id: r.aggregate.value for r in report.results if r.metric == "hallucination"}
    assert hallucination["right"] < 0.1
