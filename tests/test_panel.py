"""Panel semantics: failing judges are excluded with step and cause, quorum, NaN, shared calls."""

import asyncio
import math
from typing import Any

import pytest
from _concurrency import PeakCounter
from factories import nli_answer

from ragqa.errors import JudgeTimeout, SampleError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.testing import FunctionJudge, ScriptedJudge, make_sample


def _judge(judge_id: str, verdicts: tuple[int, ...], *, delay_s: float = 0.0) -> ScriptedJudge:
    return ScriptedJudge(
        judge_id,
        {"statements": [{"statements": [f"claim {i}" for i in range(len(verdicts))]}], "nli": [nli_answer(*verdicts)]},
        delay_s=delay_s,
    )


async def test_each_judge_scored_and_aggregated() -> None:
    ev = PanelEvaluator([_judge("a", (1, 1)), _judge("b", (1, 0)), _judge("c", (0, 0))], [Faithfulness()])
    r = await ev.score(make_sample(), Faithfulness())
    assert r.by_judge() == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert r.aggregate.value == pytest.approx(0.5)
    assert r.aggregate.spread == 1.0
    assert r.aggregate.n_ok == 3 and r.aggregate.n_failed == 0


async def test_failing_judge_is_excluded_with_step_and_cause() -> None:
    broken = ScriptedJudge(
        "broken",
        {"statements": [{"statements": ["x"]}], "nli": [JudgeTimeout("no answer in 30 s", step="nli")]},
    )
    ev = PanelEvaluator([_judge("a", (1, 1)), broken, _judge("c", (1, 0))], [Faithfulness()])
    r = await ev.score(make_sample(), Faithfulness())
    assert r.aggregate.value == pytest.approx(0.75)
    assert r.aggregate.n_failed == 1
    [failure] = r.failures
    assert (failure.judge_id, failure.step, failure.error_type) == ("broken", "nli", "JudgeTimeout")
    assert "30 s" in failure.message


async def test_wrong_verdict_count_is_a_typed_failure() -> None:
    liar = ScriptedJudge("liar", {"statements": [{"statements": ["x", "y"]}], "nli": [nli_answer(1)]})
    r = await PanelEvaluator([liar, _judge("ok", (1,))], [Faithfulness()]).score(make_sample(), Faithfulness())
    assert r.failures[0].error_type == "JudgeOutputError"
    assert "1 verdicts for 2 statements" in r.failures[0].message
    assert r.aggregate.value == 1.0


async def test_all_judges_failing_gives_typed_failures_and_run_goes_on() -> None:
    def boom(prompt, data):
        raise JudgeTimeout("timed out", step=prompt.name)

    ev = PanelEvaluator([FunctionJudge("x", boom), FunctionJudge("y", boom)], [Faithfulness()])
    report = await ev.evaluate([make_sample(id="1"), make_sample(id="2")])
    assert len(report.results) == 2
    for r in report.results:
        assert math.isnan(r.aggregate.value) and r.aggregate.n_failed == 2
    summary = report.summary("faithfulness")
    assert [j.n_failed for j in summary.judges] == [2, 2]
    assert math.isnan(summary.aggregate_mean)


async def test_quorum_not_met_gives_nan() -> None:
    broken = ScriptedJudge("broken", {})
    ev = PanelEvaluator([_judge("a", (1,)), broken], [Faithfulness()], options=PanelOptions(quorum=2))
    r = await ev.score(make_sample(), Faithfulness())
    assert math.isnan(r.aggregate.value) and not r.aggregate.quorum_met
    assert r.by_judge() == {"a": 1.0}


async def test_nan_judge_is_not_counted_as_zero() -> None:
    silent = ScriptedJudge("silent", {"statements": [{"statements": []}]})
    r = await PanelEvaluator([_judge("a", (1, 0)), silent], [Faithfulness()]).score(make_sample(), Faithfulness())
    assert r.aggregate.value == 0.5 and r.aggregate.n_nan == 1 and r.aggregate.n_failed == 0


async def test_invalid_samples_rejected_before_any_judge_call() -> None:
    judge = _judge("a", (1,))
    ev = PanelEvaluator([judge], [Faithfulness()])
    bad = [make_sample(id="ok"), make_sample(id="q7", retrieved_contexts=[]), make_sample(id="q9", response=None)]
    with pytest.raises(SampleError) as info:
        await ev.evaluate(bad)
    text = str(info.value)
    assert "2 invalid sample(s)" in text
    assert "sample q7, field 'retrieved_contexts', metric 'faithfulness'" in text
    assert "sample q9, field 'response'" in text
    assert judge.calls == []


async def test_invalid_samples_skipped_when_asked() -> None:
    ev = PanelEvaluator([_judge("a", (1,))], [Faithfulness()], options=PanelOptions(on_invalid="skip"))
    report = await ev.evaluate([make_sample(id="ok"), make_sample(id="bad", user_input="  ")])
    assert [r.sample_id for r in report.results] == ["ok"]
    assert report.skipped[0].sample_id == "bad" and report.skipped[0].field == "user_input"


async def test_judges_run_concurrently_and_shared_steps_once() -> None:
    scripted = [_judge(j, (1, 0)) for j in "abc"]
    counter = PeakCounter()

    def counted(inner: ScriptedJudge) -> FunctionJudge:
        async def answer(prompt: Any, data: Any) -> Any:
            await counter.hold()
            return await inner.ask(prompt, data)

        return FunctionJudge(inner.id, answer)

    judges = [counted(j) for j in scripted]
    ev = PanelEvaluator(judges, [Faithfulness(), Hallucination()])
    [faith, hallu] = await ev.score_sample(make_sample())
    assert counter.peak == 3  # the three judges at once; their shared statements call is made once each
    assert faith.aggregate.value == 0.5 and hallu.aggregate.value == 0.5
    assert all(len(j.calls) == 2 for j in judges) and all(len(j.calls) == 2 for j in scripted)


async def test_duplicate_judge_ids_rejected() -> None:
    with pytest.raises(ValueError, match="unique"):
        PanelEvaluator([_judge("a", (1,)), _judge("a", (1,))])


async def test_samples_bounded_concurrency() -> None:
    in_flight = 0
    peak = 0

    async def slow(prompt, data):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        for _ in range(20):  # loop turns, not seconds: the overlap does not depend on the machine's load
            await asyncio.sleep(0)
        in_flight -= 1
        return {"statements": []}

    ev = PanelEvaluator([FunctionJudge("a", slow)], [Faithfulness()], options=PanelOptions(max_concurrent_samples=3))
    await ev.evaluate([make_sample(id=str(i)) for i in range(10)])
    assert peak == 3


def test_a_quorum_larger_than_the_panel_is_a_config_error():
    from ragqa.errors import ConfigError
    from ragqa.evaluation import PanelEvaluator, PanelOptions
    from ragqa.testing import ScriptedJudge

    with pytest.raises(ConfigError, match="quorum 3 is more than the 2 judge") as err:
        PanelEvaluator([ScriptedJudge("a", {}), ScriptedJudge("b", {})], options=PanelOptions(quorum=3))
    assert err.value.key == "ragqa.aggregation.quorum"
