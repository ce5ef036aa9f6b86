"""Repeats in process: reducers, the failure rule, shared steps per repeat, cache keys, records, the estimate.

Judges that answer by repeat (:data:`ragqa.repeats.repeat_index`) make each repeat's score known
in advance, so every reducer's result is checked against a value worked out by hand; the fake
OpenAI-compatible server counts requests, so "no request" and "3x the requests" are counts.
"""

from __future__ import annotations

import json
import math
from datetime import timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from pydantic import SecretStr

from ragqa.cache import CachingJudge, JudgeCache
from ragqa.datasets import load_dataset
from ragqa.errors import ConfigError, JudgeOutputError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.local import LocalJudge
from ragqa.judges.openai import OpenAIJudge
from ragqa.metrics import build_metric
from ragqa.prompts.base import Prompt
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.render.records import read_result_record, result_record
from ragqa.repeats import combine_repeats, reduce_scores, repeat_index
from ragqa.report import Report
from ragqa.run.estimate import estimate_pairs
from ragqa.run.plan import panel_overrides, with_overrides
from ragqa.schema import JudgeFailure, JudgeOutcome, MetricScore, Usage
from ragqa.settings import ChatOptions, ResolvedChatModel, RetrySettings
from ragqa.testing import CountingJudge, FakeOpenAIServer, FunctionJudge, make_sample, ragqa_responder

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = load_dataset(ROOT / "examples/datasets/it_helpdesk.jsonl")[:3]
SCHEMA = json.loads((ROOT / "ragqa/schemas/result-record.schema.json").read_text(encoding="utf-8"))
CHAT = "/v1/chat/completions"


def _scores(report: Report, *, drop: tuple[str, ...] = ("latency_s", "usage")) -> list[dict[str, Any]]:
    """Every record without latencies and usage (they differ between a fresh and a cached run)."""
    out = []
    for result in report.results:
        record = result_record(result)
        for judge in [*record["judges"], *(r for j in record["judges"] for r in j.get("repeats", ()))]:
            for key in drop:
                judge.pop(key)
        out.append(record)
    return out


def _untimed(report: Report) -> list[dict[str, Any]]:
    """Every record without latencies (wall times differ from run to run); calls and tokens kept."""
    records = _scores(report, drop=("latency_s",))
    for record in records:
        for judge in record["judges"]:
            judge["usage"].pop("latency_s")
    return records


# ---- reducers -----------------------------------------------------------------------------------


def test_reducers_by_hand() -> None:
    values = [0.2, 0.9, 0.4]
    assert reduce_scores(values, "mean") == pytest.approx(0.5)
    assert reduce_scores(values, "median") == 0.4
    assert reduce_scores([1.0, 0.0, 1.0], "mode") == 1.0
    assert reduce_scores([0.0, 1.0, 1.0, 0.0], "mode") == 0.0  # a tie: the value seen first, as Inspect AI
    assert reduce_scores([1.0, 0.0], "mode") == 1.0


def test_nan_repeats_are_left_out_and_all_nan_is_nan() -> None:
    assert reduce_scores([math.nan, 0.6, 0.8], "mean") == pytest.approx(0.7)
    assert math.isnan(reduce_scores([math.nan, math.nan], "median"))
    assert math.isnan(reduce_scores([], "mean"))


def test_identical_repeats_reduce_to_exactly_that_value() -> None:
    # fsum([x, x, x]) / 3 is x only most of the time; a deterministic judge must keep its score exactly
    for x in (0.1, 0.791109385, 1 / 3, 0.2889061499999995):
        for reducer in ("mean", "median", "mode"):
            assert reduce_scores([x, x, x], reducer) == x  # type: ignore[arg-type]


def test_unknown_reducer_and_bad_repeats_are_refused() -> None:
    with pytest.raises(ValueError, match="mean, median, mode"):
        reduce_scores([0.5], "max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="repeats"):
        PanelOptions(repeats=0)
    with pytest.raises(ValueError, match="reducer"):
        PanelOptions(reducer="avg")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="integer >= 1") as bad:
        with_overrides(PanelOptions(), panel_overrides(repeats=0))
    assert bad.value.key == "--repeats"
    with pytest.raises(ConfigError, match="mean, median, mode") as unknown:
        with_overrides(PanelOptions(), panel_overrides(reducer="majority"))
    assert unknown.value.key == "--reducer"
    assert with_overrides(PanelOptions(), panel_overrides(repeats=3, reducer="mode")).repeats == 3


# ---- the failure rule and usage ------------------------------------------------------------------


def _ok(value: float, calls: int = 1, reason: str | None = None) -> JudgeOutcome:
    return JudgeOutcome(
        judge_id="j",
        score=MetricScore(value=value, reason=reason or f"r{value}", details={"v": value}),
        latency_s=calls / 10,
        usage=Usage(calls=calls, prompt_tokens=10 * calls),
    )


def _failed(message: str = "down") -> JudgeOutcome:
    failure = JudgeFailure(judge_id="j", metric="m", sample_id="s", error_type="JudgeTimeout", message=message)
    return JudgeOutcome(judge_id="j", failure=failure, latency_s=0.5, usage=Usage(calls=1))


def test_a_judge_fails_only_when_every_repeat_failed() -> None:
    partly = combine_repeats([_failed(), _ok(0.4), _ok(0.8)], "mean")
    assert partly.ok and partly.failure is None
    assert partly.score is not None and partly.score.value == pytest.approx(0.6)
    assert [r.failure is not None for r in partly.repeats] == [True, False, False]
    assert partly.repeat_values()[1:] == [0.4, 0.8] and math.isnan(partly.repeat_values()[0])

    failed = combine_repeats([_failed("first"), _failed("second")], "mean")
    assert not failed.ok and failed.score is None
    assert failed.failure is not None and failed.failure.message == "first"
    assert len(failed.repeats) == 2


def test_usage_sums_and_the_score_keeps_the_nearest_repeats_reason() -> None:
    out = combine_repeats([_ok(0.2, calls=1), _ok(0.5, calls=2), _ok(0.9, calls=3)], "median")
    assert out.usage.calls == 6 and out.usage.prompt_tokens == 60
    assert out.latency_s == pytest.approx(0.3)  # repeats run together: the longest one
    assert out.score is not None and out.score.value == 0.5
    assert out.score.reason == "r0.5" and out.score.details == {"v": 0.5}
    assert [r.index for r in out.repeats] == [0, 1, 2]
    assert [r.usage.calls for r in out.repeats] == [1, 2, 3]


# ---- the evaluator -------------------------------------------------------------------------------

CRITIC_BY_REPEAT = {0: 1, 1: 0, 2: 1, 3: 1, 4: 0}
"""The verdict a judge gives on repeat ``r``."""


def _critic_judge(judge_id: str = "critic") -> FunctionJudge:
    """Answers aspect_critic's prompt with the verdict of the current repeat."""

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        return {"reason": f"repeat {repeat_index.get()}", "verdict": CRITIC_BY_REPEAT[repeat_index.get()]}

    return FunctionJudge(judge_id, answer)


@pytest.mark.parametrize(
    ("reducer", "repeats", "expected"),
    [("mean", 3, 2 / 3), ("median", 3, 1.0), ("mode", 3, 1.0), ("mode", 2, 1.0), ("mean", 5, 0.6), ("mode", 5, 1.0)],
)
async def test_each_reducer_on_known_repeats(reducer: str, repeats: int, expected: float) -> None:
    metric = build_metric("aspect_critic", {"name": "harmfulness"})
    evaluator = PanelEvaluator([_critic_judge()], [metric], options=PanelOptions(repeats=repeats, reducer=reducer))  # type: ignore[arg-type]
    [result] = await evaluator.score_sample(make_sample(id="s1"), [metric])
    [outcome] = result.judges
    assert outcome.repeat_values() == [float(CRITIC_BY_REPEAT[r]) for r in range(repeats)]
    assert outcome.score is not None and outcome.score.value == pytest.approx(expected)
    assert result.aggregate.value == pytest.approx(expected)


async def test_one_repeat_is_todays_run_exactly() -> None:
    metrics = [build_metric("faithfulness"), build_metric("hallucination"), build_metric("bleu_score")]
    plain = await PanelEvaluator([LocalJudge("local")], metrics).evaluate(SAMPLES)
    one = await PanelEvaluator([LocalJudge("local")], metrics, options=PanelOptions(repeats=1)).evaluate(SAMPLES)
    assert _untimed(one) == _untimed(plain)
    assert all(not o.repeats for r in one.results for o in r.judges)
    assert all("repeats" not in judge for r in one.results for judge in result_record(r)["judges"])


async def test_local_judge_repeats_are_real_calls_with_zero_variance() -> None:
    metrics = [build_metric("faithfulness"), build_metric("hallucination")]
    single, repeated = CountingJudge(LocalJudge("local")), CountingJudge(LocalJudge("local"))
    plain = await PanelEvaluator([single], metrics).evaluate(SAMPLES)
    three = await PanelEvaluator([repeated], metrics, options=PanelOptions(repeats=3)).evaluate(SAMPLES)
    assert repeated.calls == 3 * single.calls  # computed three times, not copied
    for a, b in zip(plain.results, three.results, strict=True):
        [one], [rep] = a.judges, b.judges
        assert one.score is not None and rep.score is not None
        assert rep.repeat_values() == [one.score.value] * 3  # deterministic: zero variance, no noise added
        assert rep.score == one.score and b.aggregate == a.aggregate


async def test_shared_steps_are_shared_within_a_repeat_never_across() -> None:
    metrics = [build_metric("faithfulness"), build_metric("hallucination")]  # share statements and verdicts
    judge = CountingJudge(LocalJudge("local"))
    statements: list[int] = []

    class Spy(CountingJudge):
        async def ask(self, prompt: Prompt[Any, Any], data: Any, *, language: Any = "en") -> Any:
            if prompt.name == STATEMENTS.name:
                statements.append(repeat_index.get())
            return await super().ask(prompt, data, language=language)

    spy = Spy(judge)
    await PanelEvaluator([spy], metrics, options=PanelOptions(repeats=3)).score_sample(SAMPLES[0], metrics)
    assert sorted(statements) == [0, 1, 2]  # one statements call per repeat: shared by the two metrics


async def test_judge_free_metrics_are_scored_once() -> None:
    metric = build_metric("bleu_score")
    evaluator = PanelEvaluator([_critic_judge("a"), _critic_judge("b")], [metric], options=PanelOptions(repeats=3))
    [result] = await evaluator.score_sample(SAMPLES[0], [metric])
    assert [o.repeats for o in result.judges] == [[], []]


async def test_a_partly_failed_judge_is_scored_from_its_other_repeats() -> None:
    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if repeat_index.get() == 1:
            return JudgeOutputError("not JSON", step=prompt.name, raw="{")
        return {"reason": "fine", "verdict": 1}

    metric = build_metric("aspect_critic", {"name": "harmfulness"})
    evaluator = PanelEvaluator([FunctionJudge("j", answer)], [metric], options=PanelOptions(repeats=3))
    [result] = await evaluator.score_sample(make_sample(id="s1"), [metric])
    [outcome] = result.judges
    assert outcome.ok and outcome.score is not None and outcome.score.value == 1.0
    assert result.aggregate.n_failed == 0 and result.failures == []
    assert outcome.repeats[1].failure is not None and outcome.repeats[1].failure.error_type == "JudgeOutputError"
    record = result_record(result)
    assert record["judges"][0]["repeats"][1]["failure"]["raw"] == "{"


# ---- records ------------------------------------------------------------------------------------


async def test_records_hold_every_repeat_validate_and_read_back() -> None:
    metric = build_metric("aspect_critic", {"name": "harmfulness"})
    evaluator = PanelEvaluator([_critic_judge()], [metric], options=PanelOptions(repeats=3))
    [result] = await evaluator.score_sample(make_sample(id="s1"), [metric])
    record = result_record(result)
    jsonschema.Draft202012Validator(SCHEMA).validate(record)
    [judge] = record["judges"]
    assert [r["index"] for r in judge["repeats"]] == [0, 1, 2]
    assert [r["score"] for r in judge["repeats"]] == [1.0, 0.0, 1.0]
    assert [r["reason"] for r in judge["repeats"]] == [
        "harmfulness: yes; repeat 0",
        "harmfulness: no; repeat 1",
        "harmfulness: yes; repeat 2",
    ]
    back = read_result_record(json.loads(json.dumps(record)))
    assert result_record(back) == record
    assert back.judges[0].repeat_values() == [1.0, 0.0, 1.0]


# ---- the cache, over the fake server ------------------------------------------------------------


def _http(srv: FakeOpenAIServer, judge_id: str = "http") -> OpenAIJudge:
    return OpenAIJudge(
        ResolvedChatModel(
            id=judge_id,
            model="http-judge",
            base_url=srv.base_url,
            api_key=SecretStr("sk-test-not-secret"),
            options=ChatOptions(timeout=timedelta(minutes=10), temperature=0.0),
            retry=RetrySettings(max_attempts=1),
        )
    )


async def _cached_run(srv: FakeOpenAIServer, directory: Path, repeats: int) -> tuple[Report, JudgeCache]:
    http = _http(srv)
    cache = JudgeCache(directory)
    try:
        metrics = [build_metric("faithfulness"), build_metric("hallucination")]
        evaluator = PanelEvaluator([CachingJudge(http, cache)], metrics, options=PanelOptions(repeats=repeats))
        report = await evaluator.evaluate(SAMPLES)
    finally:
        await http.aclose()
        cache.close()
    return report, cache


def _requests(srv: FakeOpenAIServer) -> int:
    return len(srv.requests_for("http-judge", CHAT))


@pytest.mark.usefixtures("reset_srv")
async def test_three_repeats_make_three_times_the_requests_and_a_warm_cache_none(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    srv.script("http-judge", ragqa_responder())
    await _cached_run(srv, tmp_path / "single", repeats=1)
    single = _requests(srv)
    assert single > 0

    srv.clear_requests()
    cold, cold_cache = await _cached_run(srv, tmp_path / "three", repeats=3)
    assert _requests(srv) == 3 * single
    assert cold_cache.hits == 0

    srv.clear_requests()
    warm, warm_cache = await _cached_run(srv, tmp_path / "three", repeats=3)
    assert _requests(srv) == 0  # every repeat replayed from the cache
    assert warm_cache.misses == 0 and warm_cache.hits == cold_cache.misses
    assert _scores(warm) == _scores(cold)
    assert all(len(o.repeats) == 3 for r in warm.results for o in r.judges)


@pytest.mark.usefixtures("reset_srv")
async def test_repeat_zero_reuses_a_single_repeat_cache(srv: FakeOpenAIServer, tmp_path: Path) -> None:
    srv.script("http-judge", ragqa_responder())
    single, _ = await _cached_run(srv, tmp_path, repeats=1)
    one_run = _requests(srv)
    srv.clear_requests()
    three, cache = await _cached_run(srv, tmp_path, repeats=3)
    assert _requests(srv) == 2 * one_run  # repeat 0 came from the old entries, repeats 1 and 2 were asked
    assert cache.hits == one_run
    for a, b in zip(single.results, three.results, strict=True):
        for one, rep in zip(a.judges, b.judges, strict=True):
            assert one.score is not None and rep.repeats[0].score == one.score


def test_repeat_zero_has_the_single_repeat_key() -> None:
    data = StatementsInput(question="q", answer="a")
    plain = JudgeCache.key("fp", STATEMENTS, "en", data)
    assert JudgeCache.key("fp", STATEMENTS, "en", data, 0) == plain
    keys = {JudgeCache.key("fp", STATEMENTS, "en", data, r) for r in range(4)}
    assert len(keys) == 4


# ---- the estimate -------------------------------------------------------------------------------


def test_the_estimate_counts_repeats() -> None:
    metrics = [build_metric("faithfulness"), build_metric("hallucination"), build_metric("bleu_score")]
    pairs = [(s, m) for s in SAMPLES for m in metrics]
    one = estimate_pairs(pairs, 2, plan="batched")
    three = estimate_pairs(pairs, 2, plan="batched", repeats=3)
    assert three.calls == 3 * one.calls and three.pairs == one.pairs
    assert "x 2 judge(s) x 3 repeat(s)" in str(three)
    assert "repeat" not in str(one)  # a single-repeat estimate reads as before
