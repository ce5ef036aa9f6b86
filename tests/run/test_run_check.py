"""The run layer's single-sample path (ragqa/run/check.py): one validator, one threshold resolution,
one verdict and one exit-code decision, shared by the assertions, the pytest plugin and ``ragqa test``."""

from __future__ import annotations

from typing import Any

import pytest
from factories import faithfulness_answers

from ragqa.assertions import MetricAssertionError, check_metric, score_metric
from ragqa.errors import ConfigError, InvalidSamples, SampleError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics import Faithfulness
from ragqa.metrics.validation import Limits
from ragqa.prompts.base import Prompt
from ragqa.pytest_plugin.summary import session_exit_code
from ragqa.run.check import SampleRunner, check_plan, exit_code_of
from ragqa.run.exit_codes import ExitCode, decide_exit_code
from ragqa.run.validate import validate_run
from ragqa.testing import FunctionJudge, make_sample
from ragqa.verdicts import verdict_for

LONG = make_sample(retrieved_contexts=["x" * 300_000])


def counting_judge(judge_id: str, *verdicts: int, calls: list[str] | None = None) -> FunctionJudge:
    """A judge of two statements giving ``verdicts`` (garbage when none), noting each call in ``calls``."""
    answer = faithfulness_answers(*verdicts)

    def counted(prompt: Prompt[Any, Any], data: Any) -> Any:
        if calls is not None:
            calls.append(judge_id)
        return answer(prompt, data)

    return FunctionJudge(judge_id, counted)


def test_the_evaluator_and_a_run_refuse_the_same_over_long_context() -> None:
    # the probe of the architecture review: it used to pass the evaluator and fail the run
    from_run = validate_run([LONG], [Faithfulness()]).problems
    from_evaluator = PanelEvaluator([counting_judge("j", 1, 1)], [Faithfulness()]).validate([LONG])
    assert [str(p) for p in from_evaluator] == [str(p) for p in from_run]
    assert "more than ragqa.limits.max-text-chars (200,000)" in str(from_run[0])


def test_the_panel_limits_come_from_its_options() -> None:
    roomy = PanelOptions(limits=Limits(max_text_chars=400_000))
    assert PanelEvaluator([counting_judge("j", 1, 1)], [Faithfulness()], options=roomy).validate([LONG]) == []


def test_an_assertion_refuses_an_over_long_context_before_any_call() -> None:
    calls: list[str] = []
    evaluator = PanelEvaluator([counting_judge("j", 1, 1, calls=calls)], [Faithfulness()])
    with pytest.raises(SampleError, match=r"field 'retrieved_contexts'.*max-text-chars \(200,000\)"):
        check_metric(evaluator, "faithfulness", LONG, threshold=0.5)
    assert calls == []


def test_several_problems_are_listed_together() -> None:
    evaluator = PanelEvaluator([counting_judge("j", 1, 1)], [Faithfulness()])
    bad = make_sample(retrieved_contexts=["x" * 300_000], response="y" * 300_000)
    with pytest.raises(InvalidSamples) as err:
        check_metric(evaluator, "faithfulness", bad, threshold=0.5)
    assert {p.field for p in err.value.problems} == {"retrieved_contexts", "response"}


def test_a_sample_without_an_id_is_named_as_a_run_names_it() -> None:
    evaluator = PanelEvaluator([counting_judge("j", 1, 1)], [Faithfulness()])
    no_id = make_sample(id=None, retrieved_contexts=None)
    plan = check_plan(evaluator, Faithfulness(), threshold=0.5)
    [problem] = SampleRunner(plan, evaluator).problems(no_id)
    assert (
        problem.sample_id
        == "1"
        == validate_run([no_id.model_copy(update={"id": "1"})], plan.metrics).problems[0].sample_id
    )


def test_the_plan_resolves_the_threshold_once() -> None:
    evaluator = PanelEvaluator([counting_judge("j", 1, 1)], [Faithfulness()])
    assert check_plan(evaluator, Faithfulness(), configured={"faithfulness": 0.7}).thresholds == {"faithfulness": 0.7}
    assert check_plan(evaluator, Faithfulness(), threshold=0.2, configured={"faithfulness": 0.7}).thresholds == {
        "faithfulness": 0.2
    }
    assert check_plan(evaluator, Faithfulness(), default=0.4).thresholds == {"faithfulness": 0.4}
    with pytest.raises(ConfigError, match="outside the metric's range"):
        check_plan(evaluator, Faithfulness(), threshold=2.0)


async def test_the_runner_verdict_is_the_assertion_verdict() -> None:
    evaluator = PanelEvaluator([counting_judge("a", 1, 1), counting_judge("b", 1, 0)], [Faithfulness()])
    sample = make_sample()
    plan = check_plan(evaluator, Faithfulness(), threshold=0.6)
    runner = SampleRunner(plan, evaluator)
    verdict = await runner.verdict(sample)
    again = await score_metric(evaluator, "faithfulness", sample, threshold=0.6)
    shown = ("passed", "gate", "threshold", "interval", "passing_judges", "failing_judges", "why")
    assert [getattr(verdict, name) for name in shown] == [getattr(again, name) for name in shown]
    [result] = await runner.score(sample)
    assert verdict_for(result, threshold=0.6, interval=verdict.interval).gate == verdict.gate


def test_decide_exit_code_precedence() -> None:
    assert decide_exit_code(incomplete=True, failed=True, undecided=True) == ExitCode.INCOMPLETE
    assert decide_exit_code(incomplete=False, failed=True, undecided=True) == ExitCode.THRESHOLD
    assert decide_exit_code(incomplete=False, failed=False, undecided=True) == ExitCode.UNDECIDED
    assert decide_exit_code(incomplete=False, failed=False, undecided=False) == ExitCode.OK


async def test_exit_code_of_verdicts() -> None:
    evaluator = PanelEvaluator(
        [counting_judge("a", 1, 1), counting_judge("b", 0, 0), counting_judge("c")], [Faithfulness()]
    )
    sample = make_sample()
    passed = await score_metric(evaluator, "faithfulness", sample, threshold=0.0, policy="all")
    failed = await score_metric(evaluator, "faithfulness", sample, threshold=0.6, policy="all")
    half = PanelEvaluator([counting_judge("a", 1, 1), counting_judge("c")], [Faithfulness()])
    incomplete = await score_metric(half, "faithfulness", sample, threshold=0.6, policy=2)
    assert (passed.passed, failed.decided, incomplete.decided) == (True, True, False)
    assert exit_code_of([passed]) == ExitCode.OK
    assert exit_code_of([passed, failed]) == ExitCode.THRESHOLD
    assert exit_code_of([failed, incomplete]) == ExitCode.INCOMPLETE
    assert exit_code_of([]) == ExitCode.INCOMPLETE  # nothing decided


def test_a_session_keeps_pytest_code_when_a_failure_is_not_ragqa() -> None:
    assert session_exit_code([1, None]) is None
    assert session_exit_code([]) == ExitCode.OK
    assert session_exit_code([1, 4]) == ExitCode.THRESHOLD
    assert session_exit_code([1, 3, 4]) == ExitCode.INCOMPLETE
    assert session_exit_code([1, 2, 3]) == ExitCode.USAGE


def test_a_failed_assertion_carries_its_verdict() -> None:
    evaluator = PanelEvaluator([counting_judge("a", 0, 0)], [Faithfulness()])
    with pytest.raises(MetricAssertionError) as err:
        check_metric(evaluator, "faithfulness", make_sample(), threshold=0.6)
    assert exit_code_of([err.value.verdict]) == ExitCode.THRESHOLD
