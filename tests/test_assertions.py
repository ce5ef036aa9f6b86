import math
from typing import Any, ClassVar

import pytest
from factories import faithfulness_answers

from ragqa.assertions import (
    MetricAssertionError,
    ParsedPolicy,
    assert_metric,
    check_metric,
    failed_statements,
    parse_policy,
    passes,
    resolve_metric,
    score_metric,
)
from ragqa.errors import ConfigError, JudgeOutputError, SampleError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.base import Judge
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.prompts.base import Prompt
from ragqa.run.spec import resolve_threshold
from ragqa.schema import MetricScore, Sample
from ragqa.testing import FunctionJudge, make_sample


def judge(judge_id: str, *verdicts: int, statements: list[str] | None = None) -> FunctionJudge:
    """A judge that decomposes into ``statements`` and gives ``verdicts`` (garbage when none)."""
    return FunctionJudge(judge_id, faithfulness_answers(*verdicts, statements=statements))


SAMPLE = make_sample(response="The first Super Bowl was held on January 15, 1967, in Florida.")


def panel(*judges: FunctionJudge, quorum: int = 1) -> PanelEvaluator:
    return PanelEvaluator(list(judges), [Faithfulness()], options=PanelOptions(quorum=quorum))


# --- pure pieces -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "threshold", "direction", "expected"),
    [
        (0.8, 0.8, "higher", True),
        (0.79, 0.8, "higher", False),
        (0.2, 0.2, "lower", True),
        (0.21, 0.2, "lower", False),
        (math.nan, 0.0, "higher", False),
        (math.nan, 1.0, "lower", False),
    ],
)
def test_passes_respects_direction_and_nan(
    value: float, threshold: float, direction: Direction, expected: bool
) -> None:
    assert passes(value, threshold, direction) is expected


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("aggregate", ParsedPolicy("aggregate")),
        ("ALL", ParsedPolicy("all")),
        (2, ParsedPolicy("at_least", 2)),
        ("at_least:3", ParsedPolicy("at_least", 3)),
        ("at-least:1", ParsedPolicy("at_least", 1)),
    ],
)
def test_parse_policy(policy: Any, expected: ParsedPolicy) -> None:
    assert parse_policy(policy) == expected


@pytest.mark.parametrize("policy", ["most", 0, -1, "at_least:0", "at_least:", True])
def test_parse_policy_rejects_with_a_config_error_naming_the_place(policy: Any) -> None:
    with pytest.raises(ConfigError, match="policy") as err:
        parse_policy(policy, key="tests[0].assert[0].config.policy")
    assert err.value.key == "tests[0].assert[0].config.policy"


def test_failed_statements_reads_explicit_lists_and_verdict_pairs() -> None:
    assert failed_statements(MetricScore(value=0.5, details={"statements": ["a", "b"], "verdicts": [1, 0.2]})) == ["b"]
    assert failed_statements(MetricScore(value=0.5, details={"incorrect_statements": [{"statement": "x"}, "y"]})) == [
        "x",
        "y",
    ]
    assert failed_statements(MetricScore(value=0.5, details={"statements": ["a"], "verdicts": [0, 1]})) == []
    counted = {"statements": ["a", "b", "c"], "counted": [0.0, 1.0, 0.7], "verdicts": [0, 0, 0]}
    assert failed_statements(MetricScore(value=0.5, details=counted)) == ["b", "c"]


class NoDefault(Metric):
    name: ClassVar[str] = "no_default"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("response",)
    description: ClassVar[str] = "test metric"
    calls_per_sample: ClassVar[str] = "0"

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        return MetricScore(value=1.0)


def test_threshold_resolution_order() -> None:
    assert resolve_threshold(Faithfulness(), explicit=0.3, configured={"faithfulness": 0.9}) == 0.3
    assert resolve_threshold(Faithfulness(), configured={"faithfulness": 0.9}) == 0.9
    assert resolve_threshold(Faithfulness(), configured={"hallucination": 0.1}, default=0.4) == 0.4
    assert resolve_threshold(Faithfulness(), configured={}) == Faithfulness.default_threshold
    with pytest.raises(ConfigError) as err:
        resolve_threshold(NoDefault())
    assert err.value.key == "ragqa.thresholds.no_default"


def test_configured_thresholds_match_by_spec_and_the_more_specific_wins() -> None:
    from ragqa.metrics import NoiseSensitivity

    irrelevant = NoiseSensitivity(mode="irrelevant")
    configured = {"noise_sensitivity": 0.3, "noise_sensitivity(mode=irrelevant)": 0.1}
    assert resolve_threshold(irrelevant, configured=configured) == 0.1
    assert resolve_threshold(NoiseSensitivity(mode="relevant"), configured=configured) == 0.3


@pytest.mark.parametrize(
    ("explicit", "configured", "match"),
    [
        (1.5, None, "outside the metric's range"),
        (math.nan, None, "finite number"),
        (None, {"faithfulnes": 0.9}, "Did you mean faithfulness"),
        (None, {"faithfulness": 2.0}, "outside the metric's range"),
    ],
)
def test_bad_thresholds_are_config_errors(
    explicit: float | None, configured: dict[str, float] | None, match: str
) -> None:
    with pytest.raises(ConfigError, match=match):
        resolve_threshold(Faithfulness(), explicit=explicit, configured=configured)


def test_resolve_metric_prefers_configured_then_registry() -> None:
    configured = Hallucination()
    ev = PanelEvaluator([judge("a", 1, 1)], [configured])
    assert resolve_metric(ev, "hallucination") is configured
    assert isinstance(resolve_metric(ev, "faithfulness"), Faithfulness)
    with pytest.raises(ConfigError, match="unknown metric"):
        resolve_metric(ev, "faithfulnes")
    with pytest.raises(ConfigError, match="bad options"):
        resolve_metric(ev, "faithfulness(mode=strict)")
    with pytest.raises(ConfigError, match="write name or name"):
        resolve_metric(ev, "faithfulness(")


def test_resolve_metric_matches_configured_specs_whatever_the_option_order() -> None:
    from ragqa.metrics import NoiseSensitivity

    configured = NoiseSensitivity(mode="irrelevant", counting="promptfoo")
    ev = PanelEvaluator([judge("a", 1, 1)], [configured])
    assert resolve_metric(ev, "noise_sensitivity(counting=promptfoo, mode=irrelevant)") is configured
    assert resolve_metric(ev, "noise_sensitivity") is configured
    built = resolve_metric(ev, "noise_sensitivity(mode=relevant)")
    assert built is not configured and built.key == "noise_sensitivity(mode=relevant)"


# --- panel policies -------------------------------------------------------------------------


async def test_aggregate_policy_passes_and_returns_result() -> None:
    # 1.0 and 0.5 straddle 0.75 and their interval contains it: undecided, which on_undecided="pass" accepts
    ev = panel(judge("a", 1, 1), judge("b", 1, 0))
    result = await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.75, on_undecided="pass")
    assert result.aggregate.value == 0.75
    assert result.by_judge() == {"a": 1.0, "b": 0.5}


async def test_aggregate_failure_message_lists_every_judge_reason_and_failed_statement() -> None:
    with pytest.raises(MetricAssertionError) as err:
        await assert_metric(panel(judge("judge-a", 1, 0), judge("judge-b", 0, 0)), Faithfulness(), SAMPLE)
    msg = str(err.value)
    assert "faithfulness FAILED on sample 's1'" in msg
    assert "mean aggregate >= 0.8; it is 0.250" in msg
    assert "threshold 0.8, higher is better" in msg
    assert "judge-a" in msg and "0.500" in msg and "1 of 2 statements supported" in msg
    assert "judge-b" in msg and "0.000" in msg and "0 of 2 statements supported" in msg
    assert "unsupported: It was held in Florida." in msg
    assert err.value.result.aggregate.value == 0.25
    assert isinstance(err.value, AssertionError)


async def test_headline_is_one_short_line_with_the_score_and_the_requirement() -> None:
    with pytest.raises(MetricAssertionError) as err:
        await assert_metric(panel(judge("judge-a", 1, 0), judge("judge-b", 0, 0)), Faithfulness(), SAMPLE)
    assert err.value.verdict.headline() == "faithfulness 0.250 < 0.8 (mean of 2 judges), sample 's1'"
    with pytest.raises(MetricAssertionError) as err:
        judges = panel(judge("judge-a", 1, 1), judge("judge-b", 0, 0), judge("judge-c"))
        await assert_metric(judges, Faithfulness(), SAMPLE, policy="all")
    assert err.value.verdict.headline() == (
        "faithfulness: 1 of 3 judges >= 0.8 (policy all), sample 's1'; 1 judges failed"
    )


async def test_lower_is_better_metric_uses_le() -> None:
    ev = PanelEvaluator([judge("a", 1, 1), judge("b", 1, 1)], [])
    result = await assert_metric(ev, "hallucination", SAMPLE)  # default threshold 0.2
    assert result.aggregate.value == 0.0
    ev = PanelEvaluator([judge("a", 1, 0)], [])
    with pytest.raises(MetricAssertionError, match=r"mean aggregate <= 0.2; it is 0.500[\s\S]*lower is better"):
        await assert_metric(ev, "hallucination", SAMPLE)


async def test_all_policy_fails_on_one_judge_even_when_aggregate_passes() -> None:
    ev = panel(judge("a", 1, 1), judge("b", 1, 1), judge("c", 1, 0))
    await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.8, on_undecided="pass")  # mean 0.833, undecided
    with pytest.raises(MetricAssertionError, match=r"policy 'all' .* 2 of 3 passed; failing: c"):
        await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.8, policy="all")


async def test_excluded_judge_is_listed_with_step_and_cause_and_skipped_by_all() -> None:
    ev = panel(judge("a", 1, 1), judge("b", 1, 1), judge("garbage"))
    verdict = await score_metric(ev, "faithfulness", SAMPLE, policy="all")
    assert verdict.passed
    assert verdict.excluded_judges == ["garbage"]
    msg = verdict.message()
    assert "garbage" in msg and "excluded" in msg and "JudgeOutputError at step 'nli'" in msg
    assert "excluded judges: garbage" in msg


async def test_all_policy_respects_quorum() -> None:
    ev = panel(judge("a", 1, 1), judge("bad1"), judge("bad2"), quorum=2)
    with pytest.raises(MetricAssertionError, match="below the quorum of 2"):
        await assert_metric(ev, "faithfulness", SAMPLE, policy="all")


async def test_at_least_policy_counts_passing_judges() -> None:
    ev = panel(judge("a", 1, 1), judge("b", 1, 0), judge("c", 1, 1))
    await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.9, policy=2)
    with pytest.raises(MetricAssertionError, match=r"at least 3 judge\(s\) >= 0.9; 2 of 3 passed"):
        await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.9, policy="at_least:3")
    with pytest.raises(MetricAssertionError, match="the panel has only 3"):
        await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.0, policy=4)


async def test_nan_never_passes_and_says_unscored() -> None:
    ev = panel(judge("a", statements=[]), judge("b", statements=[]))
    with pytest.raises(MetricAssertionError) as err:
        await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.0)
    msg = str(err.value)
    assert "it is unscored" in msg
    assert "unscored  FAIL  the response makes no statement" in msg
    with pytest.raises(MetricAssertionError):
        await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.0, policy="all")


async def test_all_judges_failing_fails_every_policy() -> None:
    ev = panel(judge("x"), judge("y"))
    expected = {"aggregate": "quorum 1 not met", "all": "no judge produced a score", 1: "0 of 2 passed"}
    for policy, why in expected.items():
        with pytest.raises(MetricAssertionError) as err:
            await assert_metric(ev, "faithfulness", SAMPLE, threshold=0.0, policy=policy)
        assert why in str(err.value)
        assert "excluded judges: x, y" in str(err.value)


async def test_invalid_sample_raises_before_any_judge_call() -> None:
    a = judge("a", 1, 1)
    with pytest.raises(SampleError, match="retrieved_contexts"):
        await assert_metric(panel(a), "faithfulness", make_sample(retrieved_contexts=None))
    assert a.calls == []


async def test_bad_policy_raises_before_any_judge_call() -> None:
    a = judge("a", 1, 1)
    with pytest.raises(ConfigError, match="unknown policy"):
        await assert_metric(panel(a), "faithfulness", SAMPLE, policy="most")
    assert a.calls == []


async def test_error_raising_judge_is_excluded_not_scored() -> None:
    def boom(prompt: Prompt[Any, Any], data: Any) -> Any:
        raise JudgeOutputError("refused", step=prompt.name)

    ev = PanelEvaluator([judge("a", 1, 1), FunctionJudge("boom", boom)], [])
    verdict = await score_metric(ev, "faithfulness", SAMPLE, threshold=0.9, policy=2)
    assert not verdict.passed
    assert verdict.excluded_judges == ["boom"]
    assert "JudgeOutputError at step 'statements': refused" in verdict.message()


# --- sync twin ----------------------------------------------------------------------------------


def test_check_metric_runs_in_sync_tests() -> None:
    result = check_metric(panel(judge("a", 1, 1)), "faithfulness", SAMPLE)
    assert result.aggregate.value == 1.0
    with pytest.raises(MetricAssertionError, match=r"0\.500"):
        check_metric(panel(judge("a", 1, 0)), "faithfulness", SAMPLE)


async def test_check_metric_works_inside_a_running_loop_on_ragqas_loop_thread() -> None:
    import asyncio
    import threading

    caller = threading.current_thread()
    seen: list[tuple[threading.Thread, asyncio.AbstractEventLoop]] = []

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        seen.append((threading.current_thread(), asyncio.get_running_loop()))
        return faithfulness_answers(1, 1)(prompt, data)

    ev = panel(FunctionJudge("a", answer))
    result = check_metric(ev, "faithfulness", SAMPLE)
    assert result.aggregate.value == 1.0
    assert seen and all(thread is not caller for thread, _ in seen)
    assert all(loop is not asyncio.get_running_loop() for _, loop in seen)
    with pytest.raises(MetricAssertionError, match=r"0\.500"):
        check_metric(panel(judge("a", 1, 0)), "faithfulness", SAMPLE)


def test_check_metric_keeps_one_loop_between_calls() -> None:
    import asyncio

    loops: list[asyncio.AbstractEventLoop] = []

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        loops.append(asyncio.get_running_loop())
        return faithfulness_answers(1, 1)(prompt, data)

    check_metric(panel(FunctionJudge("a", answer)), "faithfulness", SAMPLE)
    check_metric(panel(FunctionJudge("a", answer)), "faithfulness", SAMPLE)
    assert len(set(map(id, loops))) == 1


async def test_a_verdict_is_incomplete_only_when_failed_judges_stand_in_its_way() -> None:
    all_failed = await score_metric(panel(judge("x"), judge("y")), "faithfulness", SAMPLE, threshold=0.0)
    assert not all_failed.passed and not all_failed.decided
    assert "incomplete: 2 judge(s) failed" in all_failed.why
    # one judge scored and failed the threshold: the failed judge could not have changed that
    scored = await score_metric(panel(judge("a", 0, 0), judge("x")), "faithfulness", SAMPLE, threshold=0.5)
    assert not scored.passed and scored.decided
    # at least 2 of 3: one passes, one failed -> could have passed
    maybe = await score_metric(panel(judge("a", 1, 1), judge("b", 0, 0), judge("x")), "faithfulness", SAMPLE, policy=2)
    assert not maybe.passed and not maybe.decided
    # all: one judge fails the threshold, so no excluded judge could make it pass
    no = await score_metric(panel(judge("a", 0, 0), judge("x")), "faithfulness", SAMPLE, policy="all")
    assert not no.passed and no.decided
    # unscored (NaN) without any judge failure is a decided fail
    nan = await score_metric(panel(judge("a", statements=[])), "faithfulness", SAMPLE, threshold=0.0)
    assert not nan.passed and nan.decided


async def test_failed_statements_block_shown_when_reason_does_not_name_them() -> None:
    class Terse(Faithfulness):
        async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
            full = await super().score(sample, judge, context)
            return full.model_copy(update={"reason": "some statements unsupported"})

    with pytest.raises(MetricAssertionError) as err:
        await assert_metric(panel(judge("a", 1, 0)), Terse(), SAMPLE)
    lines = str(err.value).splitlines()
    block = lines.index(next(line for line in lines if "failed statements:" in line))
    assert lines[block + 1].strip() == "- It was held in Florida."
    assert not any("January 15" in line for line in lines[block + 1 :])


def test_format_score_shows_full_precision_when_rounding_would_hide_the_verdict() -> None:
    from ragqa.assertions import format_score

    assert format_score(0.8999999999999999, against=0.9) == "0.8999999999999999"
    assert format_score(0.9, against=0.9) == "0.900"
    assert format_score(0.75, against=0.9) == "0.750"
    assert format_score(math.nan, against=0.9) == "unscored"
    assert format_score(None) == "-"
