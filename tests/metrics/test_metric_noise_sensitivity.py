"""Noise sensitivity: RAGAS matrix maths, promptfoo chunks/counting, and the seed worked examples."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from _concurrency import PeakCounter

from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.metrics.base import MetricContext
from ragqa.metrics.noise_sensitivity import (
    NoiseSensitivity,
    claims_counted,
    context_relevance,
    noise_sensitivity_score,
)
from ragqa.prompts.base import Prompt
from ragqa.schema import ContextChunk
from ragqa.testing import FunctionJudge, make_sample


def _t(m: Sequence[Sequence[int]]) -> list[list[float]]:
    """Per-context verdict lists (float[N][X]) -> RAGAS orientation float[X][N]."""
    return [[float(m[j][x]) for j in range(len(m))] for x in range(len(m[0]))]


# --- pure maths: RAGAS golden cases (research ragas.md 1.14) ------------------------------------

GT_PER_CTX = [[0, 1, 0], [1, 0, 0], [1, 0, 1], [0, 0, 0]]
ANS_PER_CTX = [[0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 0, 1]]
ANS_PER_CTX_2 = [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 0, 1]]
IN_REF = [1.0, 1.0, 0.0]


@pytest.mark.parametrize(
    ("answer_per_ctx", "mode", "expected"),
    [
        (ANS_PER_CTX, "relevant", 1 / 3),
        (ANS_PER_CTX, "irrelevant", 0.0),
        (ANS_PER_CTX_2, "relevant", 0.0),
        (ANS_PER_CTX_2, "irrelevant", 1 / 3),
    ],
)
def test_ragas_golden_matrices(answer_per_ctx: list[list[int]], mode: Any, expected: float) -> None:
    relevant = context_relevance(_t(GT_PER_CTX))
    assert relevant == [1.0, 1.0, 1.0, 0.0]
    assert noise_sensitivity_score(_t(answer_per_ctx), relevant, IN_REF, mode=mode) == pytest.approx(expected)


def test_pure_hallucination_counts_in_neither_mode_but_in_promptfoo_relevant() -> None:
    # one claim, wrong, entailed by no context
    args = ([[0.0, 0.0]], [1.0, 0.0], [0.0])
    assert noise_sensitivity_score(*args, mode="relevant") == 0.0
    assert noise_sensitivity_score(*args, mode="irrelevant") == 0.0
    assert noise_sensitivity_score(*args, mode="relevant", counting="promptfoo") == 1.0


def test_irrelevant_mode_is_exclusive_of_relevant_support() -> None:
    # a wrong claim entailed by both a relevant and an irrelevant context counts only as relevant noise
    args = ([[1.0, 1.0]], [1.0, 0.0], [0.0])
    assert noise_sensitivity_score(*args, mode="relevant") == 1.0
    assert noise_sensitivity_score(*args, mode="irrelevant") == 0.0


@pytest.mark.parametrize(
    ("relevant", "mode", "expected"),
    [
        ([1.0, 1.0], "relevant", 0.5),  # all contexts relevant
        ([1.0, 1.0], "irrelevant", 0.0),
        ([0.0, 0.0], "relevant", 0.0),  # all contexts irrelevant
        ([0.0, 0.0], "irrelevant", 0.5),
    ],
)
def test_all_relevant_and_all_irrelevant_contexts(relevant: list[float], mode: Any, expected: float) -> None:
    # claim 0 correct, claim 1 wrong; both entailed by context 0
    answer_in_context = [[1.0, 0.0], [1.0, 0.0]]
    assert noise_sensitivity_score(answer_in_context, relevant, [1.0, 0.0], mode=mode) == expected


def test_edge_cases_no_statements_no_contexts_ragged() -> None:
    assert math.isnan(noise_sensitivity_score([], [1.0, 0.0], []))
    assert noise_sensitivity_score([[], []], [], [0.0, 0.0]) == 0.0  # no context entails anything
    with pytest.raises(ValueError, match="no statement"):
        context_relevance([])
    with pytest.raises(ValueError, match="ragged"):
        context_relevance([[1.0, 0.0], [1.0]])
    with pytest.raises(ValueError, match="ragged"):
        noise_sensitivity_score([[1.0, 0.0], [1.0]], [1.0, 0.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="verdicts for"):
        noise_sensitivity_score([[1.0, 0.0]], [1.0, 0.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="mode"):
        claims_counted([[1.0]], [1.0], [0.0], mode="both")  # type: ignore[arg-type]


def test_graded_verdicts_use_fuzzy_operators_and_reduce_to_boolean() -> None:
    # support 0.8 from a context judged 0.6 relevant, claim 0.3 supported by the reference
    value = noise_sensitivity_score([[0.8]], [0.6], [0.3])
    assert value == pytest.approx(min(min(0.6, 0.8), 0.7))
    assert noise_sensitivity_score([[0.8]], [0.6], [0.3], mode="irrelevant") == pytest.approx(min(0.4, 1 - 0.6, 0.7))


def test_metric_options_and_key() -> None:
    assert NoiseSensitivity().key == "noise_sensitivity(mode=relevant)"
    assert NoiseSensitivity("irrelevant").key == "noise_sensitivity(mode=irrelevant)"
    assert NoiseSensitivity(counting="promptfoo").key == "noise_sensitivity(mode=relevant, counting=promptfoo)"
    assert NoiseSensitivity.direction == "lower"
    assert NoiseSensitivity.default_threshold == 0.2
    with pytest.raises(ValueError):
        NoiseSensitivity("noisy")  # type: ignore[arg-type]


# --- a judge that answers from the worked examples ---------------------------------------------



def example_judge(
    statements: Mapping[str, list[str]],
    entailed: set[tuple[str, str]],
    *,
    judge_id: str = "j1",
    delay_s: float = 0.0,
) -> FunctionJudge:
    """Statements by decomposed text; NLI verdict 1 iff ``(context, statement)`` is in ``entailed``."""

    async def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        if delay_s:
            await asyncio.sleep(delay_s)
        if prompt.name == "statements":
            return {"statements": statements[data.answer]}
        assert prompt.name == "nli"
        return {
            "verdicts": [
                {"statement": s, "reason": "scripted", "verdict": int((data.context, s) in entailed)}
                for s in data.statements
            ]
        }

    return FunctionJudge(judge_id, answer)


async def _score(metric: NoiseSensitivity, sample: Any, judge: FunctionJudge, language: Any = "en") -> Any:
    return await metric.score(sample, judge, MetricContext(language=language))


MONA_Q = "Who painted the Mona Lisa and in what century was it painted?"
MONA_REF = "Leonardo da Vinci painted the Mona Lisa in the 16th century."
MONA_CTX = (
    "The Mona Lisa is a famous portrait painted by Leonardo da Vinci. It is believed to have been started in the "
    "early 1500s. Some art historians date its completion to around 1519, placing it firmly in the 15th century "
    "according to certain periodizations."
)
MONA_RESP = "Leonardo da Vinci painted the Mona Lisa, and it was painted in the 15th century."
GT1, GT2 = "Leonardo da Vinci painted the Mona Lisa.", "The Mona Lisa was painted in the 16th century."
R1, R2 = "Leonardo da Vinci painted the Mona Lisa.", "The Mona Lisa was painted in the 15th century."


async def test_mona_lisa_relevant_noise_sensitivity_is_half() -> None:
    judge = example_judge(
        {MONA_REF: [GT1, GT2], MONA_RESP: [R1, R2]},
        {(MONA_CTX, GT1), (MONA_CTX, R1), (MONA_CTX, R2), (MONA_REF, R1)},
    )
    sample = make_sample(user_input=MONA_Q, reference=MONA_REF, retrieved_contexts=[MONA_CTX], response=MONA_RESP)
    result = await _score(NoiseSensitivity(), sample, judge)
    assert result.value == 0.5
    assert result.details["context_relevant"] == [1.0]
    assert result.details["counted"] == [0.0, 1.0]
    assert result.details["band"] == "sometimes uses noisy information (0.3-0.5)"
    assert "15th century" in (result.reason or "")
    assert len(judge.calls) == 2 * 1 + 3  # RAGAS: 2N + 3


PP_Q = "Who wrote the novel 'Pride and Prejudice'?"
PP_REF = "Jane Austen wrote 'Pride and Prejudice.'"
PP_C1 = "Jane Austen published 'Pride and Prejudice' in 1813, a classic romance novel."
PP_C2 = "Charlotte Brontë, a renowned author, is best known for her novel 'Jane Eyre,' published in 1847."
PP_RESP = "Charlotte Brontë wrote 'Pride and Prejudice,' and she is famous for 'Jane Eyre.'"
PP_GT1 = "Jane Austen wrote 'Pride and Prejudice'."
PP_M1, PP_M2 = "Charlotte Brontë wrote 'Pride and Prejudice'.", "Charlotte Brontë is famous for 'Jane Eyre'."


@pytest.mark.parametrize(("mode", "expected"), [("irrelevant", 0.5), ("relevant", 0.0)])
async def test_pride_and_prejudice_irrelevant_noise_sensitivity(mode: Any, expected: float) -> None:
    judge = example_judge({PP_REF: [PP_GT1], PP_RESP: [PP_M1, PP_M2]}, {(PP_C1, PP_GT1), (PP_C2, PP_M2)})
    sample = make_sample(user_input=PP_Q, reference=PP_REF, retrieved_contexts=[PP_C1, PP_C2], response=PP_RESP)
    result = await _score(NoiseSensitivity(mode), sample, judge)
    assert result.value == expected
    assert result.details["context_relevant"] == [1.0, 0.0]
    assert result.details["answer_in_reference"] == [0.0, 0.0]


# Seed 002 (Russian): the Eiffel Tower example
EIF_Q = "Когда была построена Эйфелева башня?"
EIF_REF = "Эйфелева башня была построена в 1889 году."
EIF_C = ["Эйфелева башня была завершена в 1889 году.", "Погода в Париже весной мягкая.", "В башне 1665 ступеней."]
EIF_S1, EIF_S2 = "Эйфелева башня была построена в 1889 году.", "В Париже весной мягкая погода."
EIF_ENTAILED = {(EIF_C[0], EIF_S1), (EIF_C[1], EIF_S2), (EIF_REF, EIF_S1)}


@pytest.mark.parametrize(
    ("response", "statements", "expected", "band"),
    [
        (f"{EIF_S1} {EIF_S2}", [EIF_S1, EIF_S2], 0.5, "иногда использует шумовую информацию (0.3-0.5)"),
        (EIF_S1, [EIF_S1], 0.0, "успешно игнорирует шум (0-0.1)"),
    ],
)
async def test_eiffel_tower_irrelevant_mode(response: str, statements: list[str], expected: float, band: str) -> None:
    judge = example_judge({EIF_REF: [EIF_S1], response: statements}, EIF_ENTAILED)
    sample = make_sample(user_input=EIF_Q, reference=EIF_REF, retrieved_contexts=EIF_C, response=response)
    result = await _score(NoiseSensitivity("irrelevant"), sample, judge, language="ru")
    assert result.value == expected
    assert result.details["context_relevant"] == [1.0, 0.0, 0.0]
    assert result.details["band"] == band
    assert {c.language for c in judge.calls} == {"ru"}


async def test_noise_context_is_an_extra_irrelevant_chunk_needing_no_relevance_call() -> None:
    response = f"{EIF_S1} {EIF_S2}"
    judge = example_judge({EIF_REF: [EIF_S1], response: [EIF_S1, EIF_S2]}, EIF_ENTAILED)
    sample = make_sample(
        user_input=EIF_Q,
        reference=EIF_REF,
        retrieved_contexts=[EIF_C[0], EIF_C[2]],
        noise_context=EIF_C[1],
        response=response,
    )
    result = await _score(NoiseSensitivity("irrelevant"), sample, judge)
    assert result.value == 0.5
    assert result.details["relevance_source"] == ["judged", "judged", "label"]
    reference_checks = [
        c for c in judge.calls_to("nli") if c.data["statements"] == [EIF_S1] and c.data["context"] != EIF_REF
    ]
    assert {c.data["context"] for c in reference_checks} == {EIF_C[0], EIF_C[2]}  # not the noise chunk
    assert len(judge.calls) == 2 + 3 + 2 + 1  # statements x2, answer vs 3 chunks, reference vs 2 unlabelled, vs ref


# promptfoo's labelled Python/JavaScript example (seed 000)
PY_Q = "What are the main features of Python?"
PY_REF = (
    "Python is a high-level programming language known for its simplicity and readability.\n"
    "It supports multiple programming paradigms including procedural and object-oriented programming."
)
PY_CHUNKS = [
    ContextChunk(
        text="Python is a high-level programming language known for its simplicity and readability.", relevant=True
    ),
    ContextChunk(text="JavaScript is used for web development. Java requires compilation.", relevant=False),
    ContextChunk(
        text="Python supports multiple programming paradigms including procedural and object-oriented.", relevant=True
    ),
    ContextChunk(text="Ruby was created by Yukihiro Matsumoto in 1995.", relevant=False),
]
PY_RESP = "Python is a high-level language. JavaScript is also popular."
PY_P1, PY_P2 = "Python is a high-level language.", "JavaScript is also popular."


@pytest.mark.parametrize(
    ("mode", "counting", "expected", "calls"),
    [
        ("relevant", "ragas", 0.0, 6),
        ("irrelevant", "ragas", 0.5, 6),
        ("relevant", "promptfoo", 0.5, 2),
        ("irrelevant", "promptfoo", 0.5, 6),
    ],
)
async def test_promptfoo_python_javascript_chunks(mode: Any, counting: Any, expected: float, calls: int) -> None:
    judge = example_judge(
        {PY_RESP: [PY_P1, PY_P2]},
        {(PY_CHUNKS[0].text, PY_P1), (PY_CHUNKS[1].text, PY_P2), (PY_REF, PY_P1)},
    )
    sample = make_sample(
        user_input=PY_Q, reference=PY_REF, retrieved_contexts=None, context_chunks=PY_CHUNKS, response=PY_RESP
    )
    result = await _score(NoiseSensitivity(mode, counting), sample, judge)
    assert result.value == expected
    assert len(judge.calls) == calls  # labels replace the reference decomposition and its per-chunk checks
    assert not [c for c in judge.calls_to("statements") if c.data["answer"] == PY_REF]


# --- edge cases through the judge -------------------------------------------------------------


async def test_no_response_statements_is_nan_without_further_calls() -> None:
    judge = example_judge({MONA_REF: [GT1], MONA_RESP: []}, set())
    sample = make_sample(reference=MONA_REF, retrieved_contexts=[MONA_CTX], response=MONA_RESP)
    result = await _score(NoiseSensitivity(), sample, judge)
    assert math.isnan(result.value)
    assert result.reason == "the response makes no statement"
    assert [c.prompt for c in judge.calls] == ["statements", "statements"]


async def test_no_reference_statements_is_nan_with_reason() -> None:
    judge = example_judge({MONA_REF: [], MONA_RESP: [R1]}, set())
    sample = make_sample(reference=MONA_REF, retrieved_contexts=[MONA_CTX], response=MONA_RESP)
    result = await _score(NoiseSensitivity(), sample, judge)
    assert math.isnan(result.value)
    assert "reference makes no statement" in (result.reason or "")


async def test_ragged_verdicts_fail_the_judge_with_output_error() -> None:
    def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        if prompt.name == "statements":
            return {"statements": ["a", "b"]}
        return {"verdicts": [{"statement": "a", "reason": "r", "verdict": 1}]}  # one verdict for two statements

    ev = PanelEvaluator([FunctionJudge("j1", answer)], [NoiseSensitivity()])
    result = await ev.score(make_sample(), NoiseSensitivity())
    assert result.failures[0].error_type == "JudgeOutputError"
    assert result.failures[0].step == "nli"
    assert math.isnan(result.aggregate.value)


async def test_per_context_calls_run_concurrently() -> None:
    contexts = [f"context {i}" for i in range(4)]
    inner = example_judge({"ref": ["g"], "resp": ["a"]}, {(contexts[0], "g")})
    counters = {"statements": PeakCounter(), "nli": PeakCounter()}

    async def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        await counters[prompt.name].hold()
        return await inner.ask(prompt, data)

    judge = FunctionJudge("j1", answer)
    sample = make_sample(reference="ref", response="resp", retrieved_contexts=contexts)
    await _score(NoiseSensitivity(), sample, judge)
    assert len(judge.calls) == 2 * 4 + 3
    # two rounds (serial would be 1 call at a time): the statements calls, then every verdict call
    assert counters["statements"].peak == 2  # reference and response statements together
    assert counters["nli"].peak == 2 * 4 + 1


async def test_response_statements_call_shared_with_faithfulness_and_hallucination() -> None:
    judges = [
        example_judge({MONA_REF: [GT1, GT2], MONA_RESP: [R1, R2]}, {(MONA_CTX, GT1), (MONA_CTX, R1)}, judge_id=j)
        for j in ("j1", "j2")
    ]
    sample = make_sample(
        id="mona", user_input=MONA_Q, reference=MONA_REF, retrieved_contexts=[MONA_CTX], response=MONA_RESP
    )
    ev = PanelEvaluator(judges, [Faithfulness(), Hallucination(), NoiseSensitivity()])
    rows = await ev.score_sample(sample)
    assert [r.metric for r in rows] == ["faithfulness", "hallucination", "noise_sensitivity(mode=relevant)"]
    for judge in judges:
        response_decompositions = [c for c in judge.calls_to("statements") if c.data["answer"] == MONA_RESP]
        assert len(response_decompositions) == 1
        # one context: faithfulness's joined-context NLI is noise sensitivity's per-context NLI
        assert (
            len(
                [c for c in judge.calls_to("nli") if c.data["context"] == MONA_CTX and c.data["statements"] == [R1, R2]]
            )
            == 1
        )
    assert rows[0].aggregate.value == 0.5
