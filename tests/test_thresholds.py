"""Threshold gates that know they are unsure: pass, fail or undecided, at every entry point but the CLI run.

The CLI run (``ragqa evaluate``) is in ``tests/cli/test_thresholds_cli.py``.
"""

from __future__ import annotations

import io
import math
import warnings
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from factories import result_of

import ragqa.assertions as assertions
from ragqa.assertions import MetricAssertionError, assert_metric, score_metric, verdict_for
from ragqa.container import create_container
from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics import Faithfulness
from ragqa.promptfoo.loading import load_suite
from ragqa.promptfoo.output import junit_suite, print_results, tally
from ragqa.promptfoo.running import arun_suite, exit_code, run_promptfoo_files
from ragqa.prompts.base import Prompt
from ragqa.pytest_plugin import parse_properties, summary_table
from ragqa.report import JudgeSummary, MetricSummary, Report
from ragqa.run.exit_codes import ExitCode
from ragqa.run.outcome import FlakySamples, ThresholdVerdict, exit_code_for, threshold_verdicts
from ragqa.schema import Interval
from ragqa.testing import FunctionJudge, make_sample
from ragqa.testing.noisy import NoiseModel, NoisyJudge
from ragqa.thresholds import (
    UndecidedWarning,
    counts_as_passed,
    gate,
    is_flaky,
    parse_on_undecided,
    passes,
    sample_gate,
    sample_scores,
    straddles,
    undecided_message,
)

STATEMENTS = ["The first Super Bowl was held on January 15, 1967.", "It was held in Florida."]
SAMPLE = make_sample(response="The first Super Bowl was held on January 15, 1967, in Florida.")


def interval(low: float, high: float, estimate: float | None = None) -> Interval:
    mid = (low + high) / 2 if estimate is None else estimate
    return Interval(estimate=mid, low=low, high=high, confidence=0.95, method="clustered-se", n=10)


def judge(judge_id: str, *verdicts: int) -> FunctionJudge:
    """A faithfulness judge: two statements, ``verdicts`` on them (score = their mean)."""

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": STATEMENTS}
        return {
            "verdicts": [
                {"statement": s, "reason": "r", "verdict": v} for s, v in zip(STATEMENTS, verdicts, strict=True)
            ]
        }

    return FunctionJudge(judge_id, answer)


def panel(*verdicts: tuple[int, int]) -> PanelEvaluator:
    judges = [judge(f"j{i}", *v) for i, v in enumerate(verdicts)]
    return PanelEvaluator(judges, [Faithfulness()], options=PanelOptions())


# judges scoring 1.0, 0.5 and 0.0: mean 0.5, t interval across the three judges [0, 1]
SPLIT = panel((1, 1), (1, 0), (0, 0))
# judges scoring 0.0, 0.5 and 0.5: every one below 0.8, so never flaky against it
LOW = panel((0, 0), (1, 0), (1, 0))


# --- the gate ------------------------------------------------------------------------------------


def test_public_import_paths_of_the_moved_helpers_still_work() -> None:
    import ragqa.thresholds as thresholds

    for name in ("passes", "format_score", "parse_policy", "ParsedPolicy", "Policy"):
        assert getattr(assertions, name) is getattr(thresholds, name)
        assert name in assertions.__all__


@pytest.mark.parametrize("direction", ["higher", "lower"])
@pytest.mark.parametrize("value", [0.0, 0.3, 0.5999, 0.6, 0.6001, 1.0, math.nan])
def test_without_an_interval_the_gate_is_todays_pass_or_fail(value: float, direction: Any) -> None:
    expected = "pass" if passes(value, 0.6, direction) else "fail"
    assert gate(value, None, 0.6, direction) == expected
    assert gate(value, interval(math.nan, math.nan), 0.6, direction) == expected  # no bounds: no interval


@pytest.mark.parametrize(
    ("low", "high", "direction", "expected"),
    [
        (0.57, 0.66, "higher", "undecided"),  # the threshold inside
        (0.50, 0.60, "higher", "undecided"),  # the high end passes (>=), the low end fails
        (0.60, 0.70, "higher", "pass"),  # even the low end passes
        (0.61, 0.70, "higher", "pass"),
        (0.40, 0.59, "higher", "fail"),
        (0.57, 0.66, "lower", "undecided"),
        (0.60, 0.70, "lower", "undecided"),  # the low end passes (<=), the high end fails
        (0.50, 0.60, "lower", "pass"),
        (0.61, 0.70, "lower", "fail"),
        (0.60, 0.60, "higher", "pass"),  # a zero-width interval is a certain value
    ],
)
def test_the_gate_is_undecided_exactly_when_the_interval_ends_disagree(
    low: float, high: float, direction: Any, expected: str
) -> None:
    value = (low + high) / 2
    assert gate(value, interval(low, high), 0.6, direction) == expected


def test_an_unscored_value_fails_whatever_its_interval() -> None:
    assert gate(math.nan, interval(0.5, 0.7), 0.6, "higher") == "fail"


def test_on_undecided_policies() -> None:
    assert [counts_as_passed("undecided", p) for p in ("fail", "pass", "warn")] == [False, True, True]
    assert counts_as_passed("pass", "fail") and not counts_as_passed("fail", "pass")
    assert parse_on_undecided(" WARN ") == "warn"
    with pytest.raises(ConfigError, match=r"ragqa\.on-undecided 'maybe': use fail, pass or warn") as info:
        parse_on_undecided("maybe", key="ragqa.on-undecided")
    assert info.value.key == "ragqa.on-undecided"


def test_the_message_names_the_value_the_interval_the_threshold_and_the_fix() -> None:
    shown = undecided_message(0.612, interval(0.5701, 0.6549), 0.6)
    assert shown == "undecided: 0.612 [0.570, 0.655] against 0.6, add samples or repeats"


# --- flaky samples ------------------------------------------------------------------------------


def test_flaky_means_judges_or_repeats_on_both_sides() -> None:
    assert not straddles([0.7, 0.9, math.nan], 0.6, "higher")
    assert straddles([0.5, 0.9], 0.6, "higher") and straddles([0.5, 0.9], 0.6, "lower")
    assert not is_flaky(result_of([0.9]), 0.6)  # one judge, one repeat: one side
    assert is_flaky(result_of([0.9], [0.5]), 0.6)  # two judges disagree
    one_judge = result_of([0.9, 0.55, 0.8])  # one judge whose repeats disagree, mean 0.75 passes
    assert is_flaky(one_judge, 0.6) and not is_flaky(one_judge, 0.5)
    scores = sample_scores(result_of([0.9, 0.5], [0.7]))  # (judges, repeats), padded with NaN
    assert scores[0] == [0.9, 0.5] and scores[1][0] == 0.7 and math.isnan(scores[1][1])


def test_a_sample_is_undecided_only_when_flaky_and_its_interval_contains_the_threshold() -> None:
    wide = interval(0.0, 1.0)
    all_fail = result_of([0.0], [0.5], [0.5])
    assert sample_gate(all_fail, wide, 0.8) == "fail"  # every judge fails: decided, however wide the interval
    split = result_of([1.0], [0.5], [0.0])
    assert sample_gate(split, wide, 0.6) == "undecided"
    assert sample_gate(split, None, 0.6) == "fail"  # no interval: today's rule on the aggregate 0.5


def test_flaky_samples_are_collected_per_metric_in_dataset_order() -> None:
    flaky = FlakySamples({"faithfulness": 0.6})
    flaky.add(2, result_of([0.9], [0.5]))
    flaky.add(0, result_of([0.9], [0.4]))
    flaky.add(1, result_of([0.9], [0.8]))
    summary = _summary(0.7, None)
    [marked] = flaky.mark([summary], ["a", "b", "c"])
    assert marked.flaky_samples == ["a", "c"]
    flaky.add(2, result_of([0.9], [0.9]))  # a later result for the same sample replaces the verdict
    assert flaky.mark([summary], ["a", "b", "c"])[0].flaky_samples == ["a"]
    assert FlakySamples({}).mark([summary], ["a", "b", "c"])[0].flaky_samples == []


# --- the run's verdicts and exit code -----------------------------------------------------------


def _summary(mean: float, spread: Interval | None, metric: str = "faithfulness") -> MetricSummary:
    return MetricSummary(
        metric=metric,
        direction="higher",
        strategy="mean",
        quorum=1,
        judges=[JudgeSummary(judge_id="j", mean=mean, n_scored=10, n_nan=0, n_failed=0)],
        aggregate_mean=mean,
        mean_spread=0.0,
        n_samples=10,
        n_scored=10,
        n_nan=0,
        n_below_quorum=0,
        n_all_failed=0,
        interval=spread,
    )


def _code(summaries: list[MetricSummary], thresholds: dict[str, float], on_undecided: Any = "fail") -> ExitCode:
    report = Report(results=[], summaries=summaries)
    verdicts = threshold_verdicts(report, thresholds, on_undecided=on_undecided)
    return exit_code_for(report, verdicts, allow_incomplete=False)


def test_run_gates_without_intervals_are_todays_verdicts() -> None:
    report = Report(results=[], summaries=[_summary(0.61, None)])
    for limit, passed in ((0.6, True), (0.61, True), (0.62, False)):
        [verdict] = threshold_verdicts(report, {"faithfulness": limit})
        assert verdict.passed is passed and verdict.gate == ("pass" if passed else "fail")
        assert str(verdict) == f"{'PASS' if passed else 'FAIL'} faithfulness: aggregate mean 0.610, needs >= {limit:g}"
    assert ThresholdVerdict("m", 0.5, 0.6, "higher", False).gate == "fail"  # built as before gates had three ways


def test_a_run_gate_inside_the_interval_is_undecided_and_exits_4() -> None:
    report = Report(results=[], summaries=[_summary(0.612, interval(0.5701, 0.6549, 0.612))])
    [verdict] = threshold_verdicts(report, {"faithfulness": 0.6})
    assert verdict.undecided and not verdict.passed
    assert str(verdict) == (
        "UNDECIDED faithfulness: 0.612 [0.570, 0.655] against 0.6, add samples or repeats "
        "(needs >= 0.6; --on-undecided fail: exit 4)"
    )
    assert exit_code_for(report, [verdict], allow_incomplete=False) == ExitCode.UNDECIDED == 4
    # outside the interval: pass or fail as today, the interval shown
    [high] = threshold_verdicts(report, {"faithfulness": 0.5})
    assert high.gate == "pass" and str(high) == "PASS faithfulness: aggregate mean 0.612 [0.570, 0.655], needs >= 0.5"
    assert _code(report.summaries, {"faithfulness": 0.7}) == ExitCode.THRESHOLD


def test_on_undecided_pass_and_warn_let_the_run_exit_0() -> None:
    undecided = [_summary(0.612, interval(0.57, 0.655, 0.612))]
    assert _code(undecided, {"faithfulness": 0.6}, "pass") == ExitCode.OK
    assert _code(undecided, {"faithfulness": 0.6}, "warn") == ExitCode.OK


def test_a_missed_threshold_and_an_incomplete_run_outrank_an_undecided_gate() -> None:
    both = [_summary(0.612, interval(0.57, 0.655, 0.612), "a"), _summary(0.3, interval(0.2, 0.4, 0.3), "b")]
    assert _code(both, {"a": 0.6, "b": 0.6}) == ExitCode.THRESHOLD
    nothing = [_summary(0.612, interval(0.57, 0.655, 0.612)).model_copy(update={"n_scored": 0})]
    assert _code(nothing, {"faithfulness": 0.6}) == ExitCode.INCOMPLETE


# --- assertions (the pytest helpers' engine) ------------------------------------------------------


async def test_assert_metric_inside_the_interval_is_undecided_with_the_message() -> None:
    with pytest.raises(MetricAssertionError) as info:
        await assert_metric(SPLIT, "faithfulness", SAMPLE, threshold=0.6)
    verdict = info.value.verdict
    assert verdict.undecided and not verdict.passed and verdict.decided and verdict.flaky
    assert verdict.interval is not None and (verdict.interval.low, verdict.interval.high) == (0.0, 1.0)
    message = str(info.value)
    assert message.startswith("faithfulness UNDECIDED on sample")
    assert "undecided: 0.500 [0.000, 1.000] against 0.6, add samples or repeats" in message
    assert verdict.headline() == (
        "faithfulness undecided: 0.500 [0.000, 1.000] against 0.6, add samples or repeats "
        f"(mean of 3 judges), sample {SAMPLE.label!r}"
    )


async def test_on_undecided_pass_passes_and_warn_passes_with_a_warning() -> None:
    result = await assert_metric(SPLIT, "faithfulness", SAMPLE, threshold=0.6, on_undecided="pass")
    assert result.aggregate.value == 0.5
    with pytest.warns(UndecidedWarning, match="undecided: 0.500 \\[0.000, 1.000\\] against 0.6"):
        await assert_metric(SPLIT, "faithfulness", SAMPLE, threshold=0.6, on_undecided="warn")
    with pytest.raises(ConfigError, match="on_undecided 'later'"):
        await assert_metric(SPLIT, "faithfulness", SAMPLE, threshold=0.6, on_undecided="later")  # type: ignore[arg-type]


async def test_assertions_outside_the_interval_or_without_one_are_todays_verdicts() -> None:
    low = await score_metric(LOW, "faithfulness", SAMPLE, threshold=0.8)  # every judge below: fail, not undecided
    assert low.gate == "fail" and not low.passed and low.interval is not None
    assert low.why == "policy 'aggregate' needs the mean aggregate >= 0.8; it is 0.333"
    easy = await score_metric(SPLIT, "faithfulness", SAMPLE, threshold=0.0)
    assert easy.gate == "pass" and easy.passed
    # one judge, one repeat: no interval, so the verdict is exactly the one without gates
    one = panel((1, 0))
    for limit in (0.4, 0.5, 0.6):
        verdict = await score_metric(one, "faithfulness", SAMPLE, threshold=limit)
        assert verdict.interval is None and verdict.passed is passes(0.5, limit, "higher")
        assert verdict == verdict_for(verdict.result, threshold=limit)


async def test_all_and_at_least_policies_count_judges_as_before() -> None:
    verdict = await score_metric(SPLIT, "faithfulness", SAMPLE, threshold=0.6, policy="at_least:1")
    assert verdict.passed and verdict.gate == "pass"
    verdict = await score_metric(SPLIT, "faithfulness", SAMPLE, threshold=0.6, policy="all")
    assert not verdict.passed and verdict.gate == "fail"


# --- promptfoo files (``ragqa test``) ---------------------------------------------------------------

PROMPTFOO = """
tests:
  - description: split panel
    vars: {query: "When was the first Super Bowl?", context: "The first Super Bowl was held on January 15, 1967."}
    output: "The first Super Bowl was held on January 15, 1967, in Florida."
    assert:
      - {type: context-faithfulness, threshold: 0.6}
      - {type: context-faithfulness, threshold: 0.0}
"""


def _promptfoo(tmp_path: Path) -> Path:
    path = tmp_path / "split.yaml"
    path.write_text(PROMPTFOO, encoding="utf-8")
    return path


async def test_promptfoo_threshold_inside_the_interval_is_undecided(tmp_path: Path) -> None:
    suite = load_suite(_promptfoo(tmp_path))
    inside, outside = await arun_suite(SPLIT, suite)
    assert inside.verdict.undecided and not inside.verdict.passed
    assert outside.verdict.gate == "pass" and outside.verdict.passed
    assert exit_code([inside, outside]) == ExitCode.UNDECIDED
    assert tally([inside, outside]) == (
        "1 passed, 0 failed, 1 undecided (interval contains the threshold) of 2 assertion(s)"
    )
    out = io.StringIO()
    print_results([inside, outside], suite, out, 0.0)
    first = out.getvalue().splitlines()[0]
    assert first.startswith("UNDECIDED  [1] split panel :: context-faithfulness  [faithfulness] ")
    assert (
        "undecided: 0.500 [0.000, 1.000] against 0.6, add samples or repeats  |  j0 1.000, j1 0.500, j2 0.000" in first
    )
    [case, _] = junit_suite("split", [inside, outside]).cases
    assert ("ragqa:faithfulness:gate", "undecided") in case.properties and case.failure is not None
    assert case.failure[0].endswith("; undecided: 0.500 [0.000, 1.000] against 0.6, add samples or repeats")
    inside, _ = await arun_suite(SPLIT, suite, on_undecided="warn")
    assert inside.verdict.passed and exit_code([inside]) == ExitCode.OK


def test_ragqa_test_exits_4_for_an_undecided_assertion_and_on_undecided_opens_it(tmp_path: Path) -> None:
    path = _promptfoo(tmp_path)
    codes = {}
    outputs = {}
    for choice in (None, "pass", "warn"):
        container = create_container(None, ["local"])
        container.evaluator.override(providers.Object(SPLIT))
        out, err = io.StringIO(), io.StringIO()
        codes[choice] = run_promptfoo_files([path], container=container, out=out, err=err, on_undecided=choice)
        outputs[choice] = out.getvalue() + err.getvalue()
    assert codes == {None: ExitCode.UNDECIDED, "pass": ExitCode.OK, "warn": ExitCode.OK}
    assert "undecided: some assertions' intervals contain their thresholds" in outputs[None]
    assert "(exit 4)" in outputs[None]
    assert "UNDECIDED (pass)  [1] split panel" in outputs["pass"]
    assert "warning: some assertions are undecided and were counted as passed" in outputs["warn"]


def test_ragqa_test_rejects_a_bad_on_undecided_before_any_call(tmp_path: Path) -> None:
    container = create_container(None, ["local"])
    judge_calls = FunctionJudge("never", lambda prompt, data: pytest.fail("called"))
    container.evaluator.override(providers.Object(PanelEvaluator([judge_calls], [Faithfulness()])))
    err = io.StringIO()
    code = run_promptfoo_files([_promptfoo(tmp_path)], container=container, out=err, on_undecided="soon")
    assert code == ExitCode.USAGE and "--on-undecided 'soon': use fail, pass or warn" in err.getvalue()


def test_no_warning_is_raised_by_a_decided_verdict() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = verdict_for(result_of([0.9], [0.8]), threshold=0.6, interval=interval(0.7, 1.0), on_undecided="warn")
        assert assertions.raise_on_fail(result) is result.result


def test_the_pytest_summary_table_counts_undecided_assertions() -> None:
    rows = parse_properties(
        [
            ("ragqa:faithfulness:sample", "s1"),
            ("ragqa:faithfulness:aggregate", "0.5"),
            ("ragqa:faithfulness:passed", "false"),
            ("ragqa:faithfulness:gate", "undecided"),
            ("ragqa:faithfulness:judge:a", "1.0"),
            ("ragqa:faithfulness:judge:b", "0.0"),
            ("ragqa:faithfulness:sample", "s2"),
            ("ragqa:faithfulness:aggregate", "1.0"),
            ("ragqa:faithfulness:passed", "true"),
            ("ragqa:faithfulness:gate", "pass"),
            ("ragqa:faithfulness:judge:a", "1.0"),
            ("ragqa:faithfulness:judge:b", "1.0"),
        ]
    )
    assert [r.gate for r in rows] == ["undecided", "pass"]
    assert summary_table(rows)[1].split()[:5] == ["faithfulness", "2", "1/2", "(1", "undecided)"]


async def test_a_judge_whose_repeats_straddle_the_threshold_is_undecided_end_to_end() -> None:
    # one judge, five repeats around a true 0.6 (repeat noise sd 0.08): the interval across the repeats
    model = NoiseModel(truth=[0.6], biases=[0.0], interaction_sd=0.0, repeat_sd=0.08, bounds=(0.0, 1.0), seed=3)
    response = "The first Super Bowl was held on January 15, 1967, in Florida."
    evaluator = PanelEvaluator(NoisyJudge.panel(model, [response]), [Faithfulness()], options=PanelOptions(repeats=5))
    sample = make_sample(response=response)
    verdict = await score_metric(evaluator, "faithfulness", sample, threshold=0.6)
    [judge] = verdict.result.judges
    values = judge.repeat_values()
    assert len(values) == 5 and min(values) < 0.6 <= max(values)  # the repeats fall on both sides
    assert verdict.flaky and verdict.undecided and not verdict.passed
    assert verdict.interval is not None and verdict.interval.n == 5  # one judge: the interval is across its repeats
    clear = await score_metric(evaluator, "faithfulness", sample, threshold=0.2)
    assert clear.gate == "pass" and not clear.flaky
