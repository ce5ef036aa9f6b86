import json

from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.render import report_to_json, report_to_text
from ragqa.report import Report
from ragqa.schema import Usage
from ragqa.testing import FunctionJudge, ScriptedJudge, make_sample
from ragqa.usage import record_usage


def _nli(*verdicts: int) -> dict:
    return {"verdicts": [{"statement": f"s{i}", "reason": "r", "verdict": v} for i, v in enumerate(verdicts)]}


async def _report(n_samples: int = 2, strategy: str = "mean") -> Report:
    def optimist(prompt, data):  # every statement supported, with usage
        record_usage(Usage(calls=1, prompt_tokens=100, completion_tokens=20, cost=0.001))
        if prompt.name == "statements":
            return {"statements": ["a", "b"]}
        return _nli(1, 1)

    pessimist = ScriptedJudge(
        "judge-pessimist", {"statements": [{"statements": ["a", "b"]}] * n_samples, "nli": [_nli(1, 0)] * n_samples}
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
    assert aggregate[0].split()[2:5] == ["0.750", "2/2", "0"]
    assert "0.500" in aggregate[0].split()[5:]  # mean spread
    assert optimist[1].split()[1] == "0.000" and aggregate[1].split()[2] == "0.250"
    broken = next(line for line in lines if line.startswith("judge-broken")).split()
    assert broken[1:5] == ["n/a", "0", "0", "2"]  # no mean, nothing scored, 2 failed
    # tokens and cost of the judge that reported usage (2 calls per sample, shared across metrics)
    assert "480" in optimist[0] and "0.0040" in optimist[0]


async def test_failures_are_listed_with_judge_sample_step_and_cause_then_counted() -> None:
    text = report_to_text(await _report(n_samples=4), width=200)
    assert "judge failures (8), excluded from the aggregate" in text
    failure_rows = [line for line in text.splitlines() if line.startswith("judge-broken ") and "statements" in line]
    assert len(failure_rows) == 5  # first five listed
    assert "JudgeOutputError: no scripted answer left for prompt 'statements'" in failure_rows[0]
    assert "s1" in failure_rows[0]
    assert "... and 3 more" in text


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
