"""promptfoo's llm-rubric, model-graded-closedqa and context-relevance run as ragqa's judged metrics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import AspectCritic, ContextRelevance
from ragqa.promptfoo import arun_suite, load_suite
from ragqa.prompts.base import Prompt
from ragqa.testing import FunctionJudge

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
tests:
  - description: refund answer
    vars:
      query: "How long do I have to return an item?"
      context: "Refunds are accepted within 30 days of purchase."
    output: "You can return it within 30 days."
    assert:
      - type: llm-rubric
        value: "Is not apologetic and gives a concrete time limit"
      - type: model-graded-closedqa
        value: "mentions {{days}} days"
        threshold: 1
      - type: context-relevance
        threshold: 0.5
"""


def _suite(tmp_path: Path, text: str = SUITE) -> Path:
    path = tmp_path / "judged.yaml"
    path.write_text(text.replace("{{days}}", "30"), encoding="utf-8")
    return path


def test_the_value_becomes_the_aspect_definition(tmp_path: Path) -> None:
    rubric, closedqa, relevance = load_suite(_suite(tmp_path)).cases
    assert isinstance(rubric.metric, AspectCritic) and isinstance(closedqa.metric, AspectCritic)
    assert rubric.metric.key == "aspect_critic(name=llm_rubric)"
    assert rubric.metric.definition == "Is not apologetic and gives a concrete time limit"
    assert closedqa.metric.key == "aspect_critic(name=closedqa)" and closedqa.metric.definition == "mentions 30 days"
    assert rubric.default_threshold == 0.5 and closedqa.threshold == 1
    assert rubric.sample.reference is None  # the value is the criterion, not a ground truth
    assert isinstance(relevance.metric, ContextRelevance) and relevance.metric.key == "context_relevance"


def test_the_seed_example_runs_the_real_context_relevance() -> None:
    cases = load_suite(ROOT / "examples" / "promptfoo" / "rag_checks.yaml").cases
    assert [c.metric.key for c in cases if c.type == "context-relevance"] == ["context_relevance"]


@pytest.mark.parametrize("value", ["", "null", "'  '"])
def test_a_rubric_assertion_needs_a_value(tmp_path: Path, value: str) -> None:
    text = f"tests: [{{vars: {{query: q}}, output: o, assert: [{{type: llm-rubric, value: {value}}}]}}]"
    with pytest.raises(ConfigError, match=r"tests\[0\]\.assert\[0\]\.value is required"):
        load_suite(_suite(tmp_path, text))


async def test_the_judges_verdicts_decide_the_assertions(tmp_path: Path) -> None:
    def answer(yes: bool) -> Any:
        def respond(prompt: Prompt[Any, Any], data: Any) -> Any:
            if prompt.name == "aspect_critic":
                return {"reason": data.definition, "verdict": int(yes)}
            return {"rating": 2}

        return respond

    panel = PanelEvaluator([FunctionJudge("yes", answer(True)), FunctionJudge("no", answer(False))], [])
    rubric, closedqa, relevance = await arun_suite(panel, load_suite(_suite(tmp_path)))
    assert rubric.verdict.result.by_judge() == {"yes": 1.0, "no": 0.0}
    # 0.5 against 0.5: half the panel says yes, half no; the interval [0, 1] contains the threshold
    assert rubric.verdict.undecided and not rubric.verdict.passed
    assert not closedqa.verdict.passed  # threshold 1: every judge must say yes
    assert relevance.verdict.result.aggregate.value == 1.0 and relevance.verdict.passed
