import json
import math

import pytest
from _reports import quorum_run, readme_run
from factories import nli_answer

from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.render import report_to_json, report_to_text, result_record
from ragqa.report import CacheStats, Report, summarize
from ragqa.schema import Usage
from ragqa.testing import FunctionJudge, ScriptedJudge, make_sample
from ragqa.usage import record_usage


async def _report(n_samples: int = 2, strategy: str = "mean") -> Report:
    def optimist(prompt, data):  # every statement supported, with usage
        record_usage(Usage(calls=1, prompt_tokens=100, completion_tokens=20, cost=0.001))
        if prompt.name == "statements":
            return {"statements": ["a", "b"]}
        return nli_answer(1, 1)

    pessimist = ScriptedJudge(
        "judge-pessimist",
        {"statements": [{"statements": ["a", "b"]}] * n_samples, "nli": [nli_answer(1, 0)] * n_samples},
    )
    broken = ScriptedJudge("judge-broken", {})
    evaluator = PanelEvaluator(
        [FunctionJudge("judge-optimist", optimist), pessimist, broken],
        [Faithfulness(), Hallucination()],
        options=PanelOptions(strategy=strategy),  # type: ignore[arg-type]
    )
    return await evaluator.evaluate([make_sample(id=f"s{i}") for i in range(1, n_samples + 1)])


async def test_tables_show_every_judge_the_aggregate_direction_and_spread() -> None:
    text = report_to_text(await _report(), width=160)
    assert "2 sample(s) x 2 metric(s) x 3 judge(s)" in text
    assert "faithfulness  ↑ higher is better" in text
    assert "hallucination  ↓ lower is better" in text
    lines = text.splitlines()
    optimist = [line for line in lines if line.startswith("judge-optimist")]
    pessimist = [line for line in lines if line.startswith("judge-pessimist")]
    aggregate = [line for line in lines if line.startswith("aggregate (mean)")]
    assert len(optimist) == len(pessimist) == len(aggregate) == 2  # one row per metric table
    # faithfulness: optimist 1.0, pessimist 0.5 -> aggregate 0.75, spread 0.5; hallucination mirrors it
    assert optimist[0].split()[1] == "1.000" and pessimist[0].split()[1] == "0.500"
    # both samples score alike, so the interval has zero width: 0.750 ± 0.000
    assert aggregate[0].split()[2:7] == ["0.750", "±", "0.000", "2/2", "0"]
    assert "0.500" in aggregate[0].split()[7:]  # mean spread
    assert optimist[1].split()[1] == "0.000" and aggregate[1].split()[2] == "0.250"
    broken = next(line for line in lines if line.startswith("judge-broken")).split()
    assert broken[1:5] == ["n/a", "0", "0", "2"]  # no mean, nothing scored, 2 failed
    # tokens and cost of the judge that reported usage (2 calls per sample, shared across metrics)
    assert "480" in optimist[0] and "0.0040" in optimist[0]


async def test_failures_are_listed_with_judge_sample_step_and_cause_then_counted() -> None:
    text = report_to_text(await _report(n_samples=4), width=200)
    assert "judge failures (8 in 4 calls), excluded from the aggregate" in text
    failure_rows = [line for line in text.splitlines() if line.startswith("judge-broken ") and "statements" in line]
    # one statements call per sample failed; it cost both metrics, so it is one row naming both
    assert len(failure_rows) == 4
    assert "JudgeOutputError: no scripted answer left for prompt 'statements'" in failure_rows[0]
    assert "s1" in failure_rows[0] and "faithfulness, hallucination" in failure_rows[0]
    assert "more (every failure" not in text


async def test_strategy_band_and_usage_line() -> None:
    text = report_to_text(await _report(strategy="min"), width=160)
    assert "aggregate (min)" in text
    # shared steps are made once per judge and sample: 2 calls x 2 samples, billed once
    assert "calls 4 · tokens 480 (prompt 400, completion 80) · cost 0.0040 · wall time" in text
    # faithfulness aggregate 0.5 (min) falls in the "moderate" band of the standard scale when it exists
    try:
        from ragqa.interpretation import interpret
    except ImportError:
        return
    band = interpret("faithfulness", 0.5, "en")
    if band:
        assert f"aggregate: {band}" in text


async def test_report_to_json_is_strict_json_with_nulls_for_nan() -> None:
    judge = ScriptedJudge("j", {"statements": [{"statements": []}]})
    report = await PanelEvaluator([judge], [Faithfulness()]).evaluate([make_sample(id="s1")])
    text = report_to_json(report)
    data = json.loads(text)
    assert "NaN" not in text
    assert data["results"][0]["aggregate"]["value"] is None
    assert data["summaries"][0]["metric"] == "faithfulness"
    assert data["usage"]["calls"] == 0
    assert set(data) >= {"results", "summaries", "skipped", "wall_time_s", "usage"}


# The console view, character for character (trailing spaces aside), of the README's shape (two
# judges, no failures, one judge without usage) and of a quorum-2 run with failures. The tables
# are drawn from the summaries alone; these pin that the output did not change when they stopped
# recomputing from the raw results. Each mean shows its interval's ± and each metric a variance
# line: in the README's shape every sample scores alike (zero width, nothing to halve); in the
# quorum run two samples have an aggregate (t with 1 degree of freedom: wide, clamped to [0, 1]).
README_SHAPE = """\
3 sample(s) x 2 metric(s) x 2 judge(s)

faithfulness  ↑ higher is better  aggregate: good (0.7-0.9)
judge                       mean   scored   NaN   failed   spread   tokens     cost
───────────────────────────────────────────────────────────────────────────────────
local-strict       0.667 ± 0.000        3     0        0             7,500   0.0750
local-lenient      1.000 ± 0.000        3     0        0                 -        -
aggregate (mean)   0.833 ± 0.000      3/3     0        0    0.333    7,500   0.0750
agreement: alpha -0.67 · spearman n/a · |diff| 0.33 · most contested s1 (0.33)
variance: 0 · nothing to halve

hallucination  ↓ lower is better
judge                       mean   scored   NaN   failed   spread   tokens   cost
─────────────────────────────────────────────────────────────────────────────────
local-strict       0.333 ± 0.000        3     0        0                 -      -
local-lenient      0.000 ± 0.000        3     0        0                 -      -
aggregate (mean)   0.167 ± 0.000      3/3     0        0    0.333        -      -
agreement: alpha -0.67 · spearman n/a · |diff| 0.33 · most contested s1 (0.33)
variance: 0 · nothing to halve

calls 6 · tokens 7,500 (prompt 6,000, completion 1,500) · cost 0.0750 · wall time 3.5 s · call plan batched
"""

QUORUM_SHAPE = """\
4 sample(s) x 2 metric(s) x 3 judge(s)

faithfulness  ↑ higher is better  aggregate: good (0.7-0.9)
judge                       mean   scored   NaN   failed   spread   tokens     cost
───────────────────────────────────────────────────────────────────────────────────
judge-a            0.833 ± 0.717        3     0        1               960   0.0080
judge-b            0.750 ± 0.750        2     1        1                 -        -
flaky                      0.000        1     0        3                 -        -
aggregate (mean)   0.750 ± 0.750      2/4     2        1    0.333      960   0.0080
no judge scored 1 sample(s) (every judge failed): no aggregate
quorum 2: 1 sample(s) below quorum have no aggregate
agreement: alpha 0.25 · spearman n/a · |diff| 0.58 (means of 3 pairs) · most contested s1 (1.00)
variance: samples 0% · judges+repeats 100% · to halve ±0.750: 8 samples (+4 calls) · 8 judges (+4 calls) · repeats: ?

hallucination  ↓ lower is better
judge                       mean   scored   NaN   failed   spread   tokens   cost
─────────────────────────────────────────────────────────────────────────────────
judge-a            0.167 ± 0.717        3     0        1                 -      -
judge-b            0.250 ± 0.750        2     1        1                 -      -
flaky                      1.000        1     0        3                 -      -
aggregate (mean)   0.250 ± 0.750      2/4     2        1    0.333        -      -
no judge scored 1 sample(s) (every judge failed): no aggregate
quorum 2: 1 sample(s) below quorum have no aggregate
agreement: alpha 0.25 · spearman n/a · |diff| 0.58 (means of 3 pairs) · most contested s1 (1.00)
variance: samples 0% · judges+repeats 100% · to halve ±0.750: 8 samples (+4 calls) · 8 judges (+4 calls) · repeats: ?

judge failures (10 in 5 calls), excluded from the aggregate
judge     metric                        sample   step         cause
─────────────────────────────────────────────────────────────────────────────────────────────
flaky     faithfulness, hallucination   s2       nli          JudgeTimeout: no answer in 30 s
judge-a   faithfulness, hallucination   s3       nli          JudgeTimeout: no answer in 30 s
judge-b   faithfulness, hallucination   s3       statements   JudgeOutputError: not JSON
flaky     faithfulness, hallucination   s3       statements   JudgeTimeout: no answer in 30 s
flaky     faithfulness, hallucination   s4       nli          JudgeTimeout: no answer in 30 s

calls 8 · tokens 960 (prompt 800, completion 160) · cost 0.0080 · wall time 1.2 s · call plan batched
"""


def _plain(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


async def test_console_output_of_the_readme_shape_is_unchanged() -> None:
    assert _plain(report_to_text(await readme_run(), width=120)) == README_SHAPE


async def test_console_output_with_quorum_and_failures_is_unchanged() -> None:
    assert _plain(report_to_text(await quorum_run(), width=120)) == QUORUM_SHAPE


async def test_summary_carries_strategy_quorum_and_why_samples_have_no_aggregate() -> None:
    report = await quorum_run()
    s = report.summary("faithfulness")
    assert (s.strategy, s.quorum, s.direction) == ("mean", 2, "higher")
    # s1: 3 judges scored; s2: one scored, one NaN, one failed (below quorum); s3: all failed; s4: 2 scored
    assert (s.n_samples, s.n_scored, s.n_nan, s.n_below_quorum, s.n_all_failed) == (4, 2, 2, 2, 1)
    assert s.n_aggregated == s.n_scored
    assert s.aggregate_mean == pytest.approx((0.5 + 1.0) / 2)
    assert s.mean_spread == pytest.approx((1.0 + 0.0 + 0.0) / 3)  # s3 has no spread (NaN, ignored)
    judges = {j.judge_id: (j.n_scored, j.n_nan, j.n_failed) for j in s.judges}
    assert judges == {"judge-a": (3, 0, 1), "judge-b": (2, 1, 1), "flaky": (1, 0, 3)}
    assert [j.judge_id for j in s.judges] == ["judge-a", "judge-b", "flaky"]
    # judge-a records 100 + 20 tokens per call: statements and nli on 4 samples, billed to faithfulness
    assert s.usage.calls == 8 and s.usage.total_tokens == 960 and s.usage.cost == pytest.approx(0.008)
    h = report.summary("hallucination")
    assert (h.direction, h.n_scored, h.n_below_quorum, h.n_all_failed) == ("lower", 2, 2, 1)
    assert h.usage.calls == 0  # shared calls are billed to the metric that made them first
    assert h.aggregate_mean == pytest.approx((0.5 + 0.0) / 2)


async def test_summary_of_every_judge_nan_is_not_counted_as_all_failed() -> None:
    judge = ScriptedJudge("j", {"statements": [{"statements": []}]})
    report = await PanelEvaluator([judge], [Faithfulness()]).evaluate([make_sample(id="s1")])
    s = report.summary("faithfulness")
    assert (s.n_scored, s.n_nan, s.n_below_quorum, s.n_all_failed) == (0, 1, 1, 0)
    assert math.isnan(s.aggregate_mean)


async def test_summarize_refuses_results_aggregated_in_different_ways() -> None:
    report = await quorum_run()
    first = report.results[0]
    other = first.model_copy(update={"aggregate": first.aggregate.model_copy(update={"strategy": "median"})})
    with pytest.raises(ValueError, match="aggregated in different ways"):
        summarize([first, other], report.judge_ids)


async def test_usage_line_shows_cache_hits_and_misses_when_known() -> None:
    report = await readme_run()
    assert "cache:" not in report_to_text(report)
    cached = report.model_copy(update={"cache": CacheStats(hits=12, misses=3)})
    text = report_to_text(cached, width=160)
    assert "cost 0.0750 · cache: 12 hit(s), 3 miss(es) · wall time 3.5 s" in text
    assert json.loads(report_to_json(cached))["cache"] == {
        "hits": 12,
        "misses": 3,
        "embedding_hits": 0,
        "embedding_misses": 0,
    }
    assert "embeddings:" not in text  # the run embedded nothing
    embedded = report.model_copy(update={"cache": CacheStats(hits=12, misses=3, embedding_hits=40, embedding_misses=2)})
    assert "cache: 12 hit(s), 3 miss(es) · embeddings: 40 hit(s), 2 miss(es) · wall time" in report_to_text(
        embedded, width=200
    )
    assert json.loads(report_to_json(report))["cache"] is None


async def test_report_json_holds_results_as_records_and_complete_summaries() -> None:
    report = await quorum_run()
    data = json.loads(report_to_json(report))
    assert data["results"] == [result_record(r) for r in report.results]
    summary = data["summaries"][0]
    assert summary["strategy"] == "mean" and summary["quorum"] == 2
    assert (summary["n_below_quorum"], summary["n_all_failed"], summary["n_scored"]) == (2, 1, 2)
    assert data["usage"]["calls"] == 8 and data["wall_time_s"] == 1.25


def test_failures_table_shows_a_shared_step_failure_once_with_every_metric_it_cost() -> None:
    from rich.console import Console

    from ragqa.render.console import failures_table
    from ragqa.schema import JudgeFailure

    def failure(metric: str, sample: str) -> JudgeFailure:
        return JudgeFailure(
            judge_id="a", metric=metric, sample_id=sample, step="statements", error_type="JudgeHTTPError", message="503"
        )

    failures = [failure("faithfulness", "s1"), failure("hallucination", "s1"), failure("faithfulness", "s2")]
    console = Console(width=200, record=True)
    console.print(failures_table(failures))
    text = console.export_text()
    assert "judge failures (3 in 2 calls)" in text
    assert text.count("JudgeHTTPError: 503") == 2
    assert "faithfulness, hallucination" in text
