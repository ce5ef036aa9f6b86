"""Scores stay in range: an LLM cannot grade its own verdicts, and the evaluator range-checks every score.

An LLM's JSON with ``support: 7.5`` once became a verdict of 7.5 (faithfulness 2.47, hallucination
-1.47). The prompts' output models now hold only what an LLM may say, and
:meth:`ragqa.metrics.base.Metric.check_score` turns any score outside the metric's range into a
:class:`~ragqa.errors.ScoreOutOfRange` failure of that judge.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from factories import http_judge
from pydantic import BaseModel, ValidationError

from ragqa.datasets import load_dataset
from ragqa.errors import ScoreOutOfRange
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.base import Judge
from ragqa.judges.local import (
    GradedAttribution,
    GradedContextUsefulnessOutput,
    GradedNLIOutput,
    GradedRelevanceVerdict,
    GradedStatementVerdict,
    LocalEmbedder,
)
from ragqa.judges.openai import OpenAIJudge
from ragqa.metrics import METRICS, Faithfulness, Hallucination, build_metric
from ragqa.metrics.base import Metric, MetricContext
from ragqa.prompts.attribution import AttributionOutput
from ragqa.prompts.context_usefulness import ContextUsefulnessOutput
from ragqa.prompts.nli import NLI, NLIOutput
from ragqa.prompts.statement_relevance import StatementRelevanceOutput
from ragqa.schema import MetricScore, Sample
from ragqa.testing import ChatRequest, FakeOpenAIServer, FunctionJudge, local_judge_responder, ragqa_responder

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "examples/datasets/it_helpdesk.jsonl"

pytestmark = pytest.mark.usefixtures("reset_srv")


# ---- parsing: an LLM cannot grade -------------------------------------------------------------

ATTACKS: list[tuple[type[BaseModel], str, Callable[[Any], list[float]]]] = [
    (
        NLIOutput,
        '{"verdicts":[{"statement":"s","reason":"r","verdict":0,"support":7.5}]}',
        lambda o: [v.value for v in o.verdicts],
    ),
    (
        AttributionOutput,
        '{"classifications":[{"statement":"s","reason":"r","attributed":0,"support":7.5}]}',
        lambda o: [c.value for c in o.classifications],
    ),
    (ContextUsefulnessOutput, '{"reason":"r","verdict":0,"support":7.5}', lambda o: [o.value]),
    (
        StatementRelevanceOutput,
        '{"verdicts":[{"statement":"s","reason":"r","verdict":0,"support":7.5}]}',
        lambda o: [v.value for v in o.verdicts],
    ),
]


@pytest.mark.parametrize(("model", "text", "values"), ATTACKS, ids=lambda x: getattr(x, "__name__", ""))
def test_a_support_key_in_an_llm_answer_has_no_effect(
    model: type[BaseModel], text: str, values: Callable[[Any], list[float]]
) -> None:
    out = model.model_validate_json(text)
    assert values(out) == [0.0]
    assert '"support"' not in out.model_dump_json() and '"support"' not in json.dumps(model.model_json_schema())


@pytest.mark.parametrize(
    "graded",
    [
        lambda s: GradedStatementVerdict(statement="s", reason="r", verdict=1, support=s),
        lambda s: GradedAttribution(statement="s", reason="r", attributed=1, support=s),
        lambda s: GradedContextUsefulnessOutput(reason="r", verdict=1, support=s),
        lambda s: GradedRelevanceVerdict(statement="s", reason="r", verdict=1, support=s),
    ],
)
def test_graded_support_is_a_validated_serialised_field(graded: Callable[[float], Any]) -> None:
    out = graded(0.37)
    assert out.value == 0.37 and '"support":0.37' in out.model_dump_json()
    for bad in (7.5, -0.1, math.inf, math.nan):
        with pytest.raises(ValidationError):
            graded(bad)


# ---- end to end over HTTP: the 7.5 attack -----------------------------------------------------


def _judge(srv: FakeOpenAIServer, name: str) -> OpenAIJudge:
    return http_judge(srv.base_url, name, api_key="sk-test-not-secret", timeout_s=10, temperature=0.0)


def _inject_support(answer: Any) -> Any:
    """Add ``support: 7.5`` to every verdict-like object of a JSON answer."""
    if isinstance(answer, dict):
        out = {k: _inject_support(v) for k, v in answer.items()}
        if {"verdict", "attributed"} & out.keys():
            out["support"] = 7.5
        return out
    if isinstance(answer, list):
        return [_inject_support(v) for v in answer]
    return answer


def _strip_support(answer: Any) -> Any:
    """Remove every ``support`` key: what a binary-only LLM would answer."""
    if isinstance(answer, dict):
        return {k: _strip_support(v) for k, v in answer.items() if k != "support"}
    if isinstance(answer, list):
        return [_strip_support(v) for v in answer]
    return answer


class Through:
    """A responder that transforms another's answers and counts the answers that carry a support."""

    def __init__(self, transform: Callable[[Any], Any], inner: Callable[[ChatRequest], Any]) -> None:
        self.transform, self.inner = transform, inner
        self.with_support = 0

    def __call__(self, request: ChatRequest) -> Any:
        answer = self.transform(self.inner(request))
        self.with_support += '"support"' in json.dumps(answer)
        return answer


async def _panel(judges: list[OpenAIJudge], metrics: list[Metric], samples: list[Sample]) -> Any:
    try:
        evaluator = PanelEvaluator(judges, metrics, embedders=[LocalEmbedder("hash", "hashing")])
        return await evaluator.evaluate(samples)
    finally:
        for judge in judges:
            await judge.aclose()


async def test_support_7_5_from_an_http_judge_scores_like_binary_verdicts(srv: FakeOpenAIServer) -> None:
    attacked = Through(_inject_support, ragqa_responder())
    srv.script("attacked", attacked)
    srv.script("binary", ragqa_responder())
    samples = load_dataset(DATASET)[:6]
    report = await _panel([_judge(srv, "attacked"), _judge(srv, "binary")], [Faithfulness(), Hallucination()], samples)
    assert attacked.with_support >= len(samples)  # every NLI answer claimed support 7.5
    seen = set()
    for row in report.results:
        scores = row.by_judge()
        assert not row.failures and set(scores) == {"attacked", "binary"}
        a, b = scores["attacked"], scores["binary"]
        assert a == b or (math.isnan(a) and math.isnan(b)), (row.metric, row.sample_id)
        assert math.isnan(a) or 0.0 <= a <= 1.0
        assert math.isnan(row.aggregate.value) or 0.0 <= row.aggregate.value <= 1.0
        seen.add(row.metric)
        if row.metric == "faithfulness" and not math.isnan(a):
            hallucination = next(
                r for r in report.results if r.metric == "hallucination" and r.sample_id == row.sample_id
            )
            assert hallucination.by_judge()["attacked"] == pytest.approx(1 - a)
    assert seen == {"faithfulness", "hallucination"}


@pytest.mark.slow
async def test_support_7_5_on_every_graded_prompt_changes_no_metric(srv: FakeOpenAIServer) -> None:
    # the local judge's answers over HTTP: verdicts, classifications and usefulness all carry support
    local = local_judge_responder()
    attacked, binary = Through(_inject_support, local), Through(_strip_support, local)
    srv.script("attacked", attacked)
    srv.script("binary", binary)
    metrics = [build_metric(name) for name, cls in METRICS.items() if "messages" not in cls.required_fields]
    by_key = {m.key: m for m in metrics}
    samples = load_dataset(DATASET)[:3]
    report = await _panel([_judge(srv, "attacked"), _judge(srv, "binary")], metrics, samples)
    assert attacked.with_support > 0 and binary.with_support == 0
    for row in report.results:
        assert not row.failures, row.failures
        a, b = row.by_judge()["attacked"], row.by_judge()["binary"]
        assert a == b or (math.isnan(a) and math.isnan(b)), (row.metric, row.sample_id, a, b)
        low, high = by_key[row.metric].value_range
        assert math.isnan(a) or low <= a <= high
    assert {row.metric for row in report.results} == set(by_key)


# ---- the range check --------------------------------------------------------------------------


class Echo(Metric):
    """Scores whatever the judge's entry in ``VALUES`` says (a stand-in for a buggy metric)."""

    name: ClassVar[str] = "echo"
    direction: ClassVar[Any] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = "echo"
    calls_per_sample: ClassVar[str] = "0"
    VALUES: ClassVar[dict[str, float]] = {}

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        return MetricScore(value=self.VALUES[judge.id], reason="echoed", details={"value": self.VALUES[judge.id]})


class SignedEcho(Echo):
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)


def _noop(prompt: Any, data: Any) -> Any:
    raise AssertionError("no judge call expected")


# 1.0000000000000002 is float rounding of 1.0 and is clamped (tests/metrics/test_score_boundary.py); 1.000001 is not
@pytest.mark.parametrize("bad", [1.5, -0.1, math.inf, -math.inf, 1.000001])
async def test_a_score_out_of_range_is_a_typed_failure_excluded_from_the_aggregate(bad: float) -> None:
    Echo.VALUES = {"bad": bad, "good": 0.25, "nan": math.nan}
    judges = [FunctionJudge(j, _noop) for j in ("bad", "good", "nan")]
    result = await PanelEvaluator(judges).score(Sample(id="s", user_input="q"), Echo())
    (failure,) = result.failures
    assert failure.judge_id == "bad" and failure.error_type == ScoreOutOfRange.__name__
    assert failure.step == "score" and failure.metric == "echo" and failure.sample_id == "s"
    assert repr(bad) in failure.message and "[0, 1]" in failure.message
    assert failure.raw is not None and '"reason":"echoed"' in failure.raw
    scores = result.by_judge()
    assert scores["good"] == 0.25 and math.isnan(scores["nan"]) and "bad" not in scores  # NaN stays unscored
    assert result.aggregate.value == 0.25
    assert (result.aggregate.n_ok, result.aggregate.n_nan, result.aggregate.n_failed) == (1, 1, 1)


async def test_the_declared_range_is_the_metrics_own() -> None:
    SignedEcho.VALUES = {"neg": -0.1, "over": 1.5}
    judges = [FunctionJudge(j, _noop) for j in ("neg", "over")]
    result = await PanelEvaluator(judges).score(Sample(id="s", user_input="q"), SignedEcho())
    assert result.by_judge() == {"neg": -0.1}
    assert [f.judge_id for f in result.failures] == ["over"] and "[-1, 1]" in result.failures[0].message


def test_check_score_raises_with_value_range_and_judge() -> None:
    with pytest.raises(ScoreOutOfRange) as info:
        Faithfulness().check_score(MetricScore(value=2.468), judge_id="j")
    err = info.value
    assert (err.metric, err.value, err.value_range, err.judge_id, err.step) == (
        "faithfulness",
        2.468,
        (0, 1),
        "j",
        "score",
    )
    Faithfulness().check_score(MetricScore(value=math.nan), judge_id="j")  # NaN: unscored, not out of range
    Faithfulness().check_score(MetricScore(value=0.0), judge_id="j")
    Faithfulness().check_score(MetricScore(value=1.0), judge_id="j")


async def test_a_verdict_that_slipped_past_validation_fails_only_its_judge() -> None:
    # model_construct skips validation: a buggy non-LLM judge handing back support 7.5
    forged = GradedNLIOutput.model_construct(
        verdicts=[GradedStatementVerdict.model_construct(statement="s", reason="r", verdict=1, support=7.5)]
    )

    def answer(verdicts: Any) -> Callable[[Any, Any], Any]:
        return lambda prompt, data: {"statements": ["s"]} if prompt is not NLI else verdicts

    honest = {"verdicts": [{"statement": "s", "reason": "r", "verdict": 1}]}
    judges = [FunctionJudge("forged", answer(forged)), FunctionJudge("honest", answer(honest))]
    sample = Sample(id="s", user_input="q", response="s.", retrieved_contexts=["c"])
    result = await PanelEvaluator(judges).score(sample, Faithfulness())
    assert result.by_judge() == {"honest": 1.0} and result.aggregate.value == 1.0
    (failure,) = result.failures
    assert failure.judge_id == "forged" and failure.error_type == "ScoreOutOfRange" and "7.5" in failure.message
