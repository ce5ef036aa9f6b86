"""The worked examples of the NVIDIA-style and general metric pages are what the metrics compute."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragqa.evaluation import PanelEvaluator
from ragqa.judges.base import SharedCallJudge
from ragqa.metrics import (
    AnswerAccuracy,
    AspectCritic,
    ContextRelevance,
    ResponseGroundedness,
    RubricsScore,
    SimpleCriteriaScore,
)
from ragqa.metrics.base import MetricContext
from ragqa.testing import CountingJudge, ScriptedJudge, make_sample

DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics"


def page(name: str) -> str:
    return " ".join((DOCS / f"{name}.md").read_text(encoding="utf-8").split())


def _r(*ratings: Any) -> list[Any]:
    return [{"rating": r} if isinstance(r, int) else r for r in ratings]


async def test_answer_accuracy_page() -> None:
    text = page("answer_accuracy")
    judge = ScriptedJudge("j", {"answer_accuracy_1": _r(4), "answer_accuracy_2": _r(2)})
    assert (await AnswerAccuracy().score(make_sample(), judge, MetricContext())).value == 0.75
    assert "(4/4 + 2/4) / 2 = **0.75**" in text
    counting = CountingJudge(ScriptedJudge("j", {"answer_accuracy_1": _r(7, 4), "answer_accuracy_2": _r(*[1] * 5)}))
    result = await AnswerAccuracy().score(make_sample(), SharedCallJudge(counting), MetricContext())
    assert result.value == 1.0 and counting.calls == 7
    assert "7 calls, score **1.0** (template 1 alone)" in text


async def test_context_relevance_page() -> None:
    text = page("context_relevance")
    judge = ScriptedJudge("j", {"context_relevance_1": _r(2), "context_relevance_2": _r(1)})
    assert (await ContextRelevance().score(make_sample(), judge, MetricContext())).value == 0.75
    assert "(2/2 + 1/2) / 2 = **0.75**" in text
    a = ScriptedJudge("a", {"context_relevance_1": _r(2), "context_relevance_2": _r(2)})
    b = ScriptedJudge("b", {"context_relevance_1": _r(1), "context_relevance_2": _r(0)})
    result = await PanelEvaluator([a, b]).score(make_sample(), ContextRelevance())
    assert result.by_judge() == {"a": 1.0, "b": 0.25} and result.aggregate.value == pytest.approx(0.625)
    assert "the judges score 1.0 and 0.25 and the panel mean is **0.625**" in text


async def test_response_groundedness_page() -> None:
    text = page("response_groundedness")
    judge = ScriptedJudge("j", {"response_groundedness_1": _r(5, 5), "response_groundedness_2": _r(1)})
    sample = make_sample(response="It was held in 1967 in Los Angeles.")
    result = await ResponseGroundedness(max_retries=2).score(sample, judge, MetricContext())
    assert result.value == 0.5 and len(judge.calls) == 3
    assert "1/2 = **0.5** (3 calls)" in text
    quoted = make_sample(response="the capital", retrieved_contexts=["Paris is the capital.", "Rome is another."])
    assert (await ResponseGroundedness().score(quoted, ScriptedJudge("j", {}), MetricContext())).value == 1.0
    assert "contained in the contexts, **1.0** without a call" in text


async def test_aspect_critic_page() -> None:
    text = page("aspect_critic")
    judge = ScriptedJudge("j", {"aspect_critic": [{"reason": "r", "verdict": v} for v in (1, 0, 0)]})
    result = await AspectCritic(name="coherence", strictness=2).score(make_sample(), judge, MetricContext())
    assert result.value == 0.0 and result.reason == "coherence: no by 2 of 3 votes"
    assert 'so the score is **0** ("no by 2 of 3 votes")' in text
    judges = [
        ScriptedJudge(j, {"aspect_critic": [{"reason": "r", "verdict": v}]})
        for j, v in zip("abc", (1, 1, 0), strict=True)
    ]
    panel = await PanelEvaluator(judges).score(make_sample(), AspectCritic(name="correctness"))
    assert round(panel.aggregate.value or 0, 3) == 0.667
    assert "answering 1, 1 and 0 for `correctness` scores **0.667**" in text


async def test_simple_criteria_page() -> None:
    text = page("simple_criteria_score")
    judge = ScriptedJudge("j", {"simple_criteria": [{"reason": "r", "score": s} for s in (3, 5, 3)]})
    assert (await SimpleCriteriaScore(strictness=3).score(make_sample(), judge, MetricContext())).value == 3.0
    assert "three calls score 3, 5 and 3, so the score is **3**" in text


async def test_rubrics_page() -> None:
    text = page("rubrics_score")
    judge = ScriptedJudge("j", {"rubrics_score": [{"feedback": "f", "score": 4}, {"feedback": "f", "score": 3}]})
    with_ref = await RubricsScore().score(make_sample(), judge, MetricContext())
    without = await RubricsScore().score(make_sample(reference=None), judge, MetricContext())
    assert (with_ref.value, with_ref.details["rubric_source"]) == (4.0, "default with reference")
    assert (without.value, without.details["rubric_source"]) == (3.0, "default reference-free")
    assert "answers level 4, score **4**" in text and "level 3, score **3**" in text
