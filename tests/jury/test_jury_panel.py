"""Claim-level voting and label-free reliability in a run (``ragqa.aggregation.strategy: claim-vote | dawid-skene``)."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _cli import run_cli as ragqa

from ragqa.errors import ConfigError, JudgeOutputError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.jury.reliability import estimate_reliability
from ragqa.jury.tally import vote_unit
from ragqa.metrics.base import MetricContext
from ragqa.metrics.factual_correctness import FactualCorrectness, claim_counts, factual_correctness_score
from ragqa.metrics.faithfulness import Faithfulness, faithfulness_score
from ragqa.metrics.hallucination import Hallucination
from ragqa.metrics.response_relevancy_llm import ResponseRelevancyLLM
from ragqa.prompts.base import Prompt
from ragqa.render.console import report_to_text
from ragqa.report import Report
from ragqa.run.estimate import estimate_pairs
from ragqa.schema import Sample
from ragqa.testing import FunctionJudge, make_sample

ROOT = Path(__file__).resolve().parents[2]
IT = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"

STATEMENTS = ["the VPN needs MFA", "the token lasts 30 days", "reset takes an hour"]


def _judge(judge_id: str, verdicts: dict[str, list[int]], statements: list[str] = STATEMENTS) -> FunctionJudge:
    """A judge that extracts ``statements`` and gives, per sample id (read from the context), ``verdicts``."""

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": statements}
        if prompt.name == "nli":
            key = data.context.split("|")[0]
            return {
                "verdicts": [
                    {"statement": s, "reason": "scripted", "verdict": v}
                    for s, v in zip(data.statements, verdicts[key], strict=False)
                ]
            }
        raise AssertionError(f"unexpected prompt {prompt.name}")

    return FunctionJudge(judge_id, answer)


def _samples(n: int) -> list[Sample]:
    return [
        make_sample(id=f"s{i}", user_input="How do I log in?", response="...", retrieved_contexts=[f"s{i}|doc"])
        for i in range(n)
    ]


def _run(judges: list[FunctionJudge], samples: list[Sample], metrics: Any, **options: Any) -> Report:
    return asyncio.run(PanelEvaluator(judges, metrics, options=PanelOptions(**options)).evaluate(samples))


VERDICTS = {
    "a": {"s0": [1, 1, 0], "s1": [1, 1, 1]},
    "b": {"s0": [1, 0, 0], "s1": [0, 0, 1]},
    "c": {"s0": [0, 1, 1], "s1": [0, 1, 1]},
}
"""Per judge and sample. Majority: s0 -> [1, 1, 0] (2/3 supported), s1 -> [0, 1, 1] (2/3)."""


def test_claim_vote_scores_the_formula_on_the_majority_with_one_extraction_per_sample() -> None:
    judges = [_judge(j, v) for j, v in VERDICTS.items()]
    report = _run(judges, _samples(2), [Faithfulness(), Hallucination()], strategy="claim-vote")
    faith = {r.sample_id: r for r in report.results if r.metric == "faithfulness"}
    assert faith["s0"].aggregate.value == faithfulness_score([1, 1, 0]) == pytest.approx(2 / 3)
    assert faith["s1"].aggregate.value == faithfulness_score([0, 1, 1])
    assert faith["s0"].aggregate.strategy == "claim-vote"
    # every judge's own score stays, next to the voted one
    assert [o.score.value for o in faith["s0"].judges if o.score] == pytest.approx([2 / 3, 1 / 3, 2 / 3])
    halluc = next(r for r in report.results if r.metric == "hallucination" and r.sample_id == "s0")
    assert halluc.aggregate.value == pytest.approx(1 / 3)
    # one extraction per sample, by the first judge, shared by both metrics and every judge
    assert len(judges[0].calls_to("statements")) == 2
    assert [len(j.calls_to("statements")) for j in judges[1:]] == [0, 0]
    assert [len(j.calls_to("nli")) for j in judges] == [2, 2, 2]


def test_the_mean_path_is_the_plain_path_and_each_judge_extracts_its_own() -> None:
    judges = [_judge(j, v) for j, v in VERDICTS.items()]
    report = _run(judges, _samples(2), [Faithfulness()])
    fresh = [_judge(j, v) for j, v in VERDICTS.items()]
    for result in report.results:
        sample = next(s for s in _samples(2) if s.id == result.sample_id)
        plain = [asyncio.run(Faithfulness().score(sample, j, MetricContext())).value for j in fresh]
        assert [o.score.value for o in result.judges if o.score] == plain
        assert result.aggregate.value == math.fsum(plain) / len(plain)
        assert result.aggregate.strategy == "mean"
    assert [len(j.calls_to("statements")) for j in judges] == [2, 2, 2]
    assert all(s.jury is None for s in report.summaries)


def test_a_tie_goes_to_the_extractor_and_the_extractor_is_configurable() -> None:
    verdicts = {"a": {"s0": [1, 0, 1]}, "b": {"s0": [0, 1, 1]}}
    judges = [_judge(j, v) for j, v in verdicts.items()]
    report = _run(judges, _samples(1), [Faithfulness()], strategy="claim-vote", extractor="b")
    assert report.results[0].aggregate.value == faithfulness_score([0, 1, 1])
    assert [len(j.calls_to("statements")) for j in judges] == [0, 1]
    with pytest.raises(ConfigError, match=r"ragqa\.jury\.extractor 'z'"):
        PanelEvaluator(judges, [Faithfulness()], options=PanelOptions(strategy="claim-vote", extractor="z"))


def test_metrics_without_statements_to_vote_keep_their_own_calls_and_the_mean() -> None:
    seen: list[str] = []

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        seen.append(prompt.name)
        if prompt.name == "statements":
            return {"statements": ["x"]}
        return {"question": "How do I log in?", "noncommittal": 0}

    judges = [FunctionJudge("a", answer), FunctionJudge("b", answer)]
    sample = make_sample(id="s0", user_input="How do I log in?", response="use the VPN")
    report = _run(judges, [sample], [ResponseRelevancyLLM()], strategy="claim-vote")
    assert report.results[0].aggregate.strategy == "mean"
    assert [len(j.calls_to("statements")) for j in judges] == [1, 1]


def test_a_judge_that_failed_does_not_vote() -> None:
    judges = [_judge("a", {"s0": [1, 1, 1]}), _judge("b", {"s0": [0, 0, 0]}), _judge("c", {"s0": [1, 0]})]
    report = _run(judges, _samples(1), [Faithfulness()], strategy="claim-vote")
    result = report.results[0]
    assert not result.judges[2].ok  # two verdicts for three statements
    assert result.aggregate.n_failed == 1
    assert result.aggregate.value == faithfulness_score([1, 1, 1])  # a 1-1 tie each time: the extractor's


def test_the_estimate_counts_one_extraction_per_sample() -> None:
    sample = _samples(1)[0]
    pairs = [(sample, Faithfulness()), (sample, Hallucination())]
    plain = estimate_pairs(pairs, 3, plan="batched")
    voted = estimate_pairs(pairs, 3, plan="batched", claim_vote=True)
    assert (plain.calls, voted.calls, voted.panel_calls) == (6, 4, 1)
    assert "made once per sample for the panel" in str(voted)
    assert "once per sample" not in str(plain)


def _noisy_panel(seed: int, n_samples: int = 80) -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(seed)
    accuracy = np.array([0.95, 0.9, 0.85, 0.6])
    blocks, truth = [], []
    for _ in range(n_samples):
        t = (rng.random(4) < 0.7).astype(float)
        right = rng.random((4, 4)) < accuracy
        blocks.append(np.where(right, t[:, None], 1 - t[:, None]))
        truth.append(t)
    return blocks, np.concatenate(truth)


def _faith(lists: Sequence[Sequence[float]]) -> float:
    return faithfulness_score(lists[0])


@pytest.mark.slow
def test_reliability_recovers_the_judges_and_flags_judges_that_err_together() -> None:
    blocks, _ = _noisy_panel(7)
    ids = ["best", "good", "fair", "weak"]
    fit = estimate_reliability([[[b]] for b in blocks], ids, _faith, seed=1)
    assert fit is not None and fit.converged and fit.n_samples == 80
    for judge, expected in zip(fit.judges, [0.95, 0.9, 0.85, 0.6], strict=True):
        assert abs(judge.accuracy.estimate - expected) < 0.06
        assert judge.accuracy.low <= judge.accuracy.estimate <= judge.accuracy.high
        assert judge.accuracy.method == "cluster-bootstrap"
    assert fit.warnings == []
    assert fit == estimate_reliability([[[b]] for b in blocks], ids, _faith, seed=1)  # seeded
    copied = [np.column_stack([b, b[:, 3]]) for b in blocks]  # a fifth judge that errs exactly as "weak"
    flagged = estimate_reliability([[[b]] for b in copied], [*ids, "weak-copy"], _faith, seed=1)
    assert flagged is not None
    assert any("weak and weak-copy err together" in w for w in flagged.warnings)


def test_dawid_skene_run_reports_reliability_next_to_the_voted_aggregate() -> None:
    blocks, _ = _noisy_panel(3, n_samples=30)
    ids = ["j0", "j1", "j2", "j3"]
    verdicts = {j: {f"s{i}": [int(v) for v in blocks[i][:, k]] for i in range(30)} for k, j in enumerate(ids)}
    statements = ["p", "q", "r", "s"]
    judges = [_judge(j, verdicts[j], statements) for j in ids]
    report = _run(judges, _samples(30), [Faithfulness()], strategy="dawid-skene")
    jury = report.summaries[0].jury
    assert jury is not None and [j.judge_id for j in jury.judges] == ids
    assert jury.n_statements == 120
    assert jury.majority_mean == pytest.approx(report.summaries[0].aggregate_mean)
    first = report.results[0].judges
    assert all(o.score is not None and o.score.details["statements"] == statements for o in first)
    unit = vote_unit(first, Faithfulness().claim_vote)  # the (statements x judges) verdicts the vote read
    assert unit is not None and len(unit[0]) == 1
    assert unit[0][0].tolist() == blocks[0].tolist()
    text = report_to_text(report)
    assert "reliability (Dawid-Skene, no labels, 120 statements of 30 samples" in text
    assert "j3: accuracy" in text and "Dawid-Skene aggregate" in text


@pytest.mark.parametrize("how", ["flag", "settings"])
@pytest.mark.slow
def test_the_helpdesk_job_votes_and_keeps_each_judges_score(tmp_path: Path, how: str) -> None:
    strategy = "claim-vote" if how == "flag" else "dawid-skene"
    if how == "settings":
        (tmp_path / "application.yaml").write_text(f"ragqa:\n  aggregation:\n    strategy: {strategy}\n")
    extra = ["--aggregation", strategy] if how == "flag" else []
    done = ragqa(
        "evaluate",
        str(IT),
        "--profile",
        "local",
        "-m",
        "faithfulness",
        *extra,
        "--no-progress",
        "-o",
        "out.json",
        "-o",
        "out.html",
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT)},  # this checkout's ragqa, from the temporary folder
    )
    assert done.returncode == 0, done.stderr
    assert f"aggregate ({strategy})" in done.stdout
    assert "local-strict" in done.stdout and "local-lenient" in done.stdout
    assert "statement extraction(s) made once per sample" in done.stdout + done.stderr
    summary = json.loads((tmp_path / "out.json").read_text())["summaries"][0]
    assert summary["strategy"] == strategy
    assert {j["judge_id"] for j in summary["judges"]} == {"local-strict", "local-lenient"}
    assert summary["jury"]["n_samples"] == 60
    assert "reliability (Dawid-Skene, no labels, " in (tmp_path / "out.html").read_text()
    # the extractor (the first judge) extracts as it does alone, so its scores are today's
    assert summary["judges"][0]["mean"] == 0.6048997486685315


def test_with_repeats_each_repeat_votes_on_its_own_extraction_and_the_reducer_reduces() -> None:
    judges = [_judge(j, v) for j, v in VERDICTS.items()]
    report = _run(judges, _samples(2), [Faithfulness()], strategy="claim-vote", repeats=3, reducer="median")
    s0 = next(r for r in report.results if r.sample_id == "s0")
    assert s0.aggregate.value == faithfulness_score([1, 1, 0])  # the same vote in each repeat
    assert [len(o.repeats) for o in s0.judges] == [3, 3, 3]
    assert len(judges[0].calls_to("statements")) == 2 * 3  # once per sample and repeat
    assert [len(j.calls_to("statements")) for j in judges[1:]] == [0, 0]
    jury = report.summaries[0].jury
    assert jury is not None and jury.n_statements == 2 * 3 * 3 and jury.n_samples == 2


def test_an_extractor_failure_fails_every_judge_of_that_sample_and_is_never_a_score() -> None:
    def broken(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            raise JudgeOutputError("no JSON", judge_id="a", step="statements")
        raise AssertionError("no verdict is asked without statements")

    judges = [FunctionJudge("a", broken), _judge("b", VERDICTS["b"]), _judge("c", VERDICTS["c"])]
    report = _run(judges, _samples(1), [Faithfulness()], strategy="claim-vote")
    result = report.results[0]
    assert [o.ok for o in result.judges] == [False, False, False]
    assert all("no JSON" in o.failure.message for o in result.judges if o.failure)
    assert math.isnan(result.aggregate.value) and result.aggregate.n_failed == 3
    assert [len(j.calls_to("nli")) for j in judges[1:]] == [0, 0]


def _fc_judge(judge_id: str, precision: list[int], recall: list[int]) -> FunctionJudge:
    claims = {"RESP": ["r1", "r2", "r3"], "REF": ["g1", "g2"]}

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "claim_decomposition":
            return {"claims": claims[data.response]}
        verdicts = precision if data.statements[0].startswith("r") else recall
        return {
            "verdicts": [
                {"statement": s, "reason": "scripted", "verdict": v}
                for s, v in zip(data.statements, verdicts, strict=True)
            ]
        }

    return FunctionJudge(judge_id, answer)


def test_factual_correctness_votes_on_both_claim_lists_with_one_decomposition_of_each_text() -> None:
    judges = [_fc_judge("a", [1, 1, 0], [1, 0]), _fc_judge("b", [1, 0, 0], [1, 1]), _fc_judge("c", [0, 1, 1], [0, 1])]
    sample = make_sample(id="s0", user_input="q", response="RESP", reference="REF")
    metric = FactualCorrectness()
    report = _run(judges, [sample], [metric], strategy="claim-vote")
    result = report.results[0]
    # majority: precision [1, 1, 0] -> TP 2, FP 1; recall [1, 1] -> FN 0; F1 = 0.8
    tp, fp, fn = claim_counts([1, 1, 0], [1, 1])
    assert result.aggregate.value == factual_correctness_score(tp, fp, fn) == 0.8
    assert result.aggregate.strategy == "claim-vote"
    assert len(judges[0].calls_to("claim_decomposition")) == 2  # the response and the reference, once each
    assert [len(j.calls_to("claim_decomposition")) for j in judges[1:]] == [0, 0]
    assert estimate_pairs([(sample, metric)], 3, claim_vote=True).calls == 4 * 3 - 2 * 2
