"""The run layer in-process: validation once, size guards, estimates, streaming files and exit codes."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from dependency_injector import providers

from ragqa.container import close_container, create_container
from ragqa.errors import ConfigError, InvalidSamples
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import ContextPrecision, Faithfulness, Hallucination, NoiseSensitivity, ResponseRelevancy
from ragqa.render.records import result_record
from ragqa.report import Report, summarize
from ragqa.run.estimate import estimate_pairs
from ragqa.run.exit_codes import ExitCode
from ragqa.run.outcome import exit_code_for, threshold_verdicts
from ragqa.run.plan import build_metrics, make_plan, plan_output
from ragqa.run.runner import Runner, TooManyCalls
from ragqa.run.stream import ResultsHeader, ResultStream, partial_path, read_results
from ragqa.run.validate import Limits, validate_run
from ragqa.schema import Aggregate, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Sample
from ragqa.testing import FunctionJudge, make_sample


def _sample(i: int, **fields: object) -> Sample:
    base: dict[str, object] = {
        "id": f"s{i}",
        "user_input": "Where is the tower?",
        "response": "The tower is in Paris.",
        "retrieved_contexts": ["The tower is in Paris."],
        "reference": "Paris.",
    }
    base.update(fields)
    return Sample.model_validate(base)


def test_validation_lists_every_problem_with_sample_field_metric_and_setting() -> None:
    samples = [
        _sample(1, response=None),
        _sample(2, retrieved_contexts=[f"c{i}" for i in range(5)]),
        _sample(3, user_input="x" * 31),
        _sample(4),
    ]
    validation = validate_run(
        samples, [Faithfulness(), Hallucination()], Limits(max_contexts_per_sample=4, max_text_chars=30)
    )
    text = [str(p) for p in validation.problems]
    assert "sample s1, field 'response', metric 'faithfulness': missing" in text[0]
    assert "sample s1, field 'response', metric 'hallucination': missing" in text[1]
    assert any(
        "sample s2, field 'retrieved_contexts': 5 contexts" in t and "max-contexts-per-sample (4)" in t for t in text
    )
    assert any("sample s3, field 'user_input': 31 characters" in t and "max-text-chars" in t for t in text)
    assert validation.invalid == {(s, m) for s in ("s1", "s2", "s3") for m in ("faithfulness", "hallucination")}
    with pytest.raises(InvalidSamples) as raised:
        validation.raise_if_any()
    assert len(raised.value.problems) == len(validation.problems)
    assert "nothing was scored" in str(raised.value)


def test_estimate_follows_each_metrics_call_formula() -> None:
    ten = _sample(1, retrieved_contexts=[f"context {i}" for i in range(10)])
    assert Faithfulness().estimate_calls(ten) == 2
    assert ContextPrecision().estimate_calls(ten) == 10
    assert NoiseSensitivity().estimate_calls(ten) == 2 * 10 + 3
    assert NoiseSensitivity(counting="promptfoo").estimate_calls(ten) == 2
    labelled = _sample(
        2, retrieved_contexts=None, context_chunks=[{"text": "a", "relevant": True}, {"text": "b", "relevant": False}]
    )
    assert NoiseSensitivity().estimate_calls(labelled) == 2 + 2  # N + 2 with every chunk labelled
    assert ResponseRelevancy(strictness=5).estimate_calls(ten) == 5
    estimate = estimate_pairs([(ten, Faithfulness()), (ten, NoiseSensitivity())], judges=3)
    # the response's statements are one call shared by both metrics
    assert estimate.pairs == 2 and estimate.calls == 3 * (2 + 23 - 1) and estimate.tokens > 0
    assert "at most 72 judge call(s)" in str(estimate)
    both = estimate_pairs([(ten, Faithfulness()), (ten, Hallucination())], judges=1)
    assert both.calls == 2  # hallucination makes exactly faithfulness's two calls


def _result(sample_id: str, metric: str, value: float, *, failed: bool = False) -> PanelResult:
    if failed:
        failure = JudgeFailure(judge_id="j", metric=metric, sample_id=sample_id, error_type="JudgeTimeout", message="t")
        outcome = JudgeOutcome(judge_id="j", failure=failure)
    else:
        outcome = JudgeOutcome(judge_id="j", score=MetricScore(value=value))
    aggregate = Aggregate(
        value=math.nan if failed else value,
        strategy="mean",
        spread=0.0,
        n_ok=0 if failed or math.isnan(value) else 1,
        n_nan=1 if not failed and math.isnan(value) else 0,
        n_failed=1 if failed else 0,
        quorum=1,
        quorum_met=not failed,
    )
    return PanelResult(sample_id=sample_id, metric=metric, direction="higher", judges=[outcome], aggregate=aggregate)


def _report(*results: PanelResult) -> Report:
    return Report(results=list(results), summaries=summarize(list(results), ["j"]))


def test_exit_codes() -> None:
    ok = _report(_result("a", "faithfulness", 0.9), _result("b", "faithfulness", math.nan))
    assert exit_code_for(ok, threshold_verdicts(ok, {"faithfulness": 0.8}), allow_incomplete=False) == ExitCode.OK
    assert exit_code_for(ok, threshold_verdicts(ok, {"faithfulness": 0.95}), allow_incomplete=False) == 1
    partly = _report(_result("a", "faithfulness", 0.9), _result("b", "faithfulness", 0, failed=True))
    assert exit_code_for(partly, [], allow_incomplete=False) == ExitCode.INCOMPLETE
    assert exit_code_for(partly, [], allow_incomplete=True) == ExitCode.OK
    nothing = _report(_result("a", "faithfulness", 0, failed=True))
    assert exit_code_for(nothing, [], allow_incomplete=True) == ExitCode.INCOMPLETE
    assert exit_code_for(_report(), [], allow_incomplete=True) == ExitCode.INCOMPLETE


def _header() -> ResultsHeader:
    return ResultsHeader(
        run_id="r",
        ragqa_version="0",
        config_fingerprint="sha256:c",
        dataset="d.jsonl",
        dataset_fingerprint="sha256:d",
        samples=2,
        metrics=("faithfulness",),
        judges=("j",),
        started_at="2026-01-01T00:00:00+00:00",
    )


def test_stream_flushes_each_record_then_writes_dataset_order_atomically(tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    target.write_text("old results\n", encoding="utf-8")
    stream = ResultStream(target, _header())
    stream.open()
    assert not target.exists()  # an old file never looks current
    stream.write(_result("b", "faithfulness", 0.5))
    lines = partial_path(target).read_text(encoding="utf-8").splitlines()  # flushed, file still open
    assert json.loads(lines[0])["ragqa_results"] == 1 and json.loads(lines[1])["sample_id"] == "b"
    stream.write(_result("a", "faithfulness", 1.0))
    assert stream.finish([("a", "faithfulness"), ("b", "faithfulness")]) == 2
    header, records = read_results(target)
    assert header == _header() and list(records) == [("a", "faithfulness"), ("b", "faithfulness")]
    assert not partial_path(target).exists()


def test_read_results_ignores_a_last_line_cut_short_and_refuses_foreign_files(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl.partial"
    record = json.dumps(result_record(_result("a", "faithfulness", 1.0)))
    path.write_text(json.dumps(_header().to_json()) + "\n" + record + "\n" + record[:40], encoding="utf-8")
    _, records = read_results(path)
    assert list(records) == [("a", "faithfulness")]
    path.write_text(record + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no ragqa results header"):
        read_results(path)


def test_plan_checks_outputs_thresholds_and_metrics_before_any_call(tmp_path: Path) -> None:
    settings = create_container().settings()
    with pytest.raises(ConfigError, match="is a directory"):
        plan_output(tmp_path)
    with pytest.raises(ConfigError, match=r"no output format writes '\.txt'"):
        plan_output(tmp_path / "x.txt")
    assert plan_output(tmp_path / "r.xml").renderer.name == "junit"
    with pytest.raises(ConfigError, match="Did you mean faithfulness"):
        make_plan(settings, thresholds={"faithfullness": 0.9})
    with pytest.raises(ConfigError, match="needs an output to resume from"):
        make_plan(settings, resume=True)
    with pytest.raises(ConfigError, match="given twice"):
        build_metrics(["faithfulness", "faithfulness"], {})
    plan = make_plan(
        settings, metrics=["faithfulness", "noise_sensitivity(mode=irrelevant)"], thresholds={"noise_sensitivity": 0.3}
    )
    assert [m.key for m in plan.metrics] == ["faithfulness", "noise_sensitivity(mode=irrelevant)"]
    assert [str(s) for s in plan.specs] == ["faithfulness", "noise_sensitivity(mode=irrelevant)"]
    assert plan.thresholds == {"noise_sensitivity(mode=irrelevant)": 0.3}


def test_evaluator_refuses_metric_names_with_a_clear_type_error() -> None:
    import asyncio

    evaluator = PanelEvaluator([FunctionJudge("j", lambda prompt, data: {})])
    with pytest.raises(TypeError, match=r"build them with ragqa.build_metric\(name\)"):
        asyncio.run(evaluator.evaluate([make_sample()], metrics=["faithfulness"]))  # type: ignore[list-item]


async def test_runner_refuses_a_run_over_max_calls_before_any_call(tmp_path: Path) -> None:
    calls: list[str] = []

    def answer(prompt: object, data: object) -> dict[str, object]:
        calls.append(str(prompt))
        return {}

    container = create_container(None, [], environ={})
    container.judges.override(providers.Object([FunctionJudge("j", answer)]))
    container.embedders.override(providers.Object([]))
    sample = _sample(1, retrieved_contexts=[f"c{i}" for i in range(100)])
    plan = make_plan(container.settings(), metrics=["noise_sensitivity"], max_calls=200, panel={"call_plan": "ragas"})
    with pytest.raises(TooManyCalls) as raised:
        await Runner(plan, container).arun([sample])
    assert raised.value.estimate.calls == 2 * 100 + 3 and "cap of 200" in str(raised.value)
    assert calls == []
    await close_container(container)
