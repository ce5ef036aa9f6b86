"""A panel of no judge (``spring.ai.chat-models.list: []``): judge-free metrics are scored once, judged ones refused.

Before, an empty list silently became Spring's default judge (``gpt-4o-mini`` at the OpenAI URL),
and an evaluator built with no judge returned NaN for every metric, judge-free ones included.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.errors import ConfigError
from ragqa.evaluation import NO_JUDGE, PanelEvaluator
from ragqa.metrics import build_metric
from ragqa.run.outcome import exit_code_for
from ragqa.run.plan import make_plan
from ragqa.settings import load_settings
from ragqa.testing import FunctionJudge, make_sample

EMPTY_PANEL = """
spring:
  ai:
    chat-models:
      list: []
"""

ROWS = [
    {"id": "a", "user_input": "q1", "response": "the office opens at nine", "reference": "the office opens at nine"},
    {"id": "b", "user_input": "q2", "response": "it opens at ten", "reference": "the office opens at nine"},
]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "application.yaml").write_text(EMPTY_PANEL, encoding="utf-8")
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return tmp_path


def _evaluate(work: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        ["evaluate", str(work / "data.jsonl"), "-c", str(work / "application.yaml"), "--no-progress", *args],
        env={"CI": "true", "COLUMNS": "200", "NO_COLOR": "1"},
    )
    return result.exit_code, result.output


def test_an_explicit_empty_list_is_a_panel_of_no_judge_and_an_absent_one_spring_s_default(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text(EMPTY_PANEL, encoding="utf-8")
    assert load_settings(tmp_path, environ={}).judges() == []
    (tmp_path / "application.yaml").write_text("spring: {ai: {chat-models: {}}}\n", encoding="utf-8")
    [default] = load_settings(tmp_path, environ={"OPENAI_API_KEY": "sk-test"}).judges()
    assert default.id == "gpt-4o-mini"


def test_judge_free_metrics_are_scored_once_with_no_judge_and_equal_the_plain_path(work: Path) -> None:
    out = work / "r.jsonl"
    code, output = _evaluate(work, "-m", "bleu_score,exact_match", "--out", str(out))
    assert code == 0, output
    assert "aggregate (mean)" in output and "n/a" not in output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert len(rows) == 4
    for row in rows:
        [outcome] = row["judges"]  # scored once, under the stand-in id
        assert outcome["judge_id"] == NO_JUDGE and outcome["usage"]["calls"] == 0
        assert row["aggregate"]["value"] == outcome["score"]
    exact = {r["sample_id"]: r["aggregate"]["value"] for r in rows if r["metric"] == "exact_match"}
    assert exact == {"a": 1.0, "b": 0.0}


async def test_the_evaluator_scores_judge_free_metrics_as_a_one_judge_panel_does() -> None:
    samples = [make_sample(id="a"), make_sample(id="b", response="The first Super Bowl was in 1970.")]
    metric = build_metric("bleu_score")
    one_judge = PanelEvaluator([FunctionJudge("j", lambda prompt, data: None)], [metric])
    no_judge = PanelEvaluator([], [metric])
    with_judge = await one_judge.evaluate(samples)
    without = await no_judge.evaluate(samples)
    assert [r.aggregate.value for r in without.results] == [r.aggregate.value for r in with_judge.results]
    assert all(not math.isnan(r.aggregate.value) for r in without.results)
    assert [o.judge_id for r in without.results for o in r.judges] == [NO_JUDGE, NO_JUDGE]
    assert exit_code_for(without, [], allow_incomplete=False) == 0


async def test_the_evaluator_refuses_a_judged_metric_with_no_judge_before_any_work() -> None:
    evaluator = PanelEvaluator([], [build_metric("bleu_score")])  # built fine: its default metrics need no judge
    with pytest.raises(ConfigError, match="faithfulness needs a judge, but the panel has none") as err:
        await evaluator.evaluate([make_sample()], metrics=[build_metric("faithfulness")])
    assert err.value.key == "spring.ai.chat-models.list"


def test_judged_metrics_with_no_judge_are_a_configuration_error_naming_the_setting(work: Path) -> None:
    out = work / "r.jsonl"
    code, output = _evaluate(work, "-m", "faithfulness,bleu_score,answer_correctness", "--out", str(out))
    assert code == 2, output
    assert "faithfulness, answer_correctness need a judge" in output
    assert "spring.ai.chat-models.list: []" in output and "--profile local" in output and "bleu_score" in output
    assert not out.exists()  # refused before any work
    with pytest.raises(ConfigError) as err:
        make_plan(load_settings(work, environ={}), metrics=["context_recall"])
    assert err.value.key == "spring.ai.chat-models.list"


def test_a_run_that_scores_nothing_exits_3_even_with_only_judge_free_metrics(work: Path) -> None:
    (work / "data.jsonl").write_text(json.dumps({"id": "a", "user_input": "q", "response": "r"}) + "\n")
    code, output = _evaluate(work, "-m", "bleu_score", "--on-invalid", "skip")
    assert code == 3, output
    assert "nothing was scored" in output


PROMPTFOO = """
tests:
  - vars:
      query: "Where is order 12345?"
      context: "Order 12345 shipped on 3 May."
      response: "Order 12345 shipped on 3 May."
    assert:
      - type: {kind}
        value: "Order 12345 shipped on 3 May."
        threshold: {threshold}
"""


def test_ragqa_test_runs_judge_free_assertions_and_refuses_judged_ones_without_a_traceback(work: Path) -> None:
    def run(kind: str, threshold: float) -> tuple[int, str]:
        path = work / f"{kind}.yaml"
        path.write_text(PROMPTFOO.format(kind=kind, threshold=threshold), encoding="utf-8")
        result = CliRunner().invoke(app, ["test", str(path), "-c", str(work / "application.yaml")])
        return result.exit_code, result.output

    code, output = run("levenshtein", 0)
    assert code == 0, output
    code, output = run("context-faithfulness", 0.8)
    assert code == 2, output
    assert "metric 'faithfulness': needs a judge, but the panel has none" in output
    assert "Traceback" not in output


async def test_the_runner_refuses_a_judged_metric_for_a_container_without_judges() -> None:
    from dependency_injector import providers

    from ragqa.container import close_container, create_container
    from ragqa.run.runner import Runner

    container = create_container(None, [], environ={})
    container.judges.override(providers.Object([]))
    container.embedders.override(providers.Object([]))
    try:
        plan = make_plan(container.settings(), metrics=["faithfulness"])
        with pytest.raises(ConfigError, match="faithfulness needs a judge") as err:
            await Runner(plan, container).arun([make_sample()])
        assert err.value.key == "spring.ai.chat-models.list"
        free = make_plan(container.settings(), metrics=["exact_match"])
        result = await Runner(free, container).arun([make_sample()])
        assert result.exit_code == 0 and result.report.results[0].aggregate.value == 1.0
    finally:
        await close_container(container)
