"""Intervals and the variance decomposition in the summaries: summarize, the streamed RunSummary, a panel run."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import ragqa
from ragqa.aggregate import aggregate
from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.factory import panel_options
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.render.console import fmt_mean, plus_minus, uncertainty_line
from ragqa.report import MetricSummary, Report, summarize
from ragqa.run.summary import RunSummary
from ragqa.schema import JudgeFailure, JudgeOutcome, MetricScore, PanelResult, RepeatOutcome, Sample, Usage
from ragqa.settings import load_settings
from ragqa.testing import NoiseModel, NoisyJudge
from ragqa.uncertainty import mean_interval, variance_components

IT_HELPDESK = str(Path(__file__).resolve().parents[2] / "examples/datasets/it_helpdesk.jsonl")


def _exact(summaries: Sequence[MetricSummary]) -> str:
    return json.dumps([s.model_dump() for s in summaries], allow_nan=True)


def _repeated_results(seed: int, n_samples: int, judges: Sequence[str] = ("a", "b", "c")) -> list[PanelResult]:
    """Results with 1 to 3 repeats per judge, failed and NaN repeats, failed judges and usage."""
    rng = random.Random(seed)
    out = []
    for i in range(n_samples):
        outcomes = []
        for jid in judges:
            usage = Usage(calls=rng.randint(0, 3))
            if rng.random() < 0.1:
                failure = JudgeFailure(
                    judge_id=jid, metric="m", sample_id=f"s{i}", error_type="JudgeTimeout", message="t"
                )
                outcomes.append(JudgeOutcome(judge_id=jid, failure=failure, usage=usage))
                continue
            repeats = []
            for k in range(rng.choice((1, 2, 3))):
                roll = rng.random()
                if roll < 0.05:
                    failure = JudgeFailure(judge_id=jid, metric="m", sample_id=f"s{i}", error_type="X", message="x")
                    repeats.append(RepeatOutcome(index=k, failure=failure))
                else:
                    value = math.nan if roll < 0.1 else rng.random()
                    repeats.append(RepeatOutcome(index=k, score=MetricScore(value=value)))
            values = [r.score.value for r in repeats if r.score is not None and not math.isnan(r.score.value)]
            score = MetricScore(value=sum(values) / len(values) if values else math.nan)
            outcomes.append(JudgeOutcome(judge_id=jid, score=score, usage=usage, repeats=repeats))
        scores = [o.score.value for o in outcomes if o.score is not None]
        n_failed = sum(1 for o in outcomes if o.failure is not None)
        out.append(
            PanelResult(
                sample_id=f"s{i}",
                metric="faithfulness",
                direction="higher",
                judges=outcomes,
                aggregate=aggregate(scores, n_failed=n_failed),
            )
        )
    return out


def test_the_streamed_summary_equals_summarize_with_repeats_whatever_the_order() -> None:
    judges = ["a", "b", "c"]
    for seed in range(3):
        results = _repeated_results(seed, 50)
        summary = RunSummary(judges, ["faithfulness"], 50, confidence=0.9, ranges={"faithfulness": (0.0, 1.0)})
        arrived = list(results)
        random.Random(seed).shuffle(arrived)
        for result in arrived:
            summary.add(int(result.sample_id[1:]), result)
        streamed = summary.summaries()
        assert _exact(streamed) == _exact(summarize(results, judges, confidence=0.9, ranges={"faithfulness": (0, 1)}))
        [metric] = streamed
        assert metric.interval is not None and metric.interval.confidence == 0.9
        assert metric.decomposition is not None and metric.decomposition.repeats == 3


def test_a_replaced_result_with_fewer_repeats_leaves_no_stale_repeat() -> None:
    results = _repeated_results(1, 10)
    first = results[0]  # judge c failed: the pair is scored again (--retry-failed), and the new result replaces it
    failure = JudgeFailure(judge_id="c", metric=first.metric, sample_id="s0", error_type="JudgeTimeout", message="t")
    failed = first.model_copy(
        update={
            "judges": [
                o if o.judge_id != "c" else JudgeOutcome(judge_id="c", failure=failure, usage=Usage(calls=3))
                for o in first.judges
            ]
        }
    )
    summary = RunSummary(["a", "b", "c"], ["faithfulness"], 10)
    for r in [failed, *results[1:]]:
        summary.add(int(r.sample_id[1:]), r)
    plain = first.model_copy(
        update={"judges": [o.model_copy(update={"repeats": []}) for o in first.judges if o.judge_id != "c"]}
    )
    summary.add(0, plain)
    assert _exact(summary.summaries()) == _exact(summarize([plain, *results[1:]], ["a", "b", "c"]))
    assert all(r.sample_id != "s0" for r in summary.failed_results())


def test_a_pair_without_failure_is_added_once() -> None:
    results = _repeated_results(2, 3)
    summary = RunSummary(["a", "b", "c"], ["faithfulness"], 3)
    for r in results:
        summary.add(int(r.sample_id[1:]), r)
    with pytest.raises(ValueError, match="position 1 already has a result of faithfulness"):
        summary.add(1, results[1])
    assert _exact(summary.summaries()) == _exact(summarize(results, ["a", "b", "c"]))


@pytest.mark.slow
def test_more_repeats_than_a_16_bit_count_are_counted() -> None:
    n = 70_000  # above 65,535: the repeat counts are 32-bit
    scores = [MetricScore(value=v / 4) for v in range(5)]  # shared: the repeats' values, not their objects, count
    repeats = [RepeatOutcome(index=k, score=scores[k % 5]) for k in range(n)]
    outcome = JudgeOutcome(judge_id="a", score=MetricScore(value=0.5), repeats=repeats, usage=Usage(calls=n))
    other = JudgeOutcome(judge_id="b", score=MetricScore(value=0.25), usage=Usage(calls=1))
    results = [
        PanelResult(
            sample_id=f"s{i}",
            metric="faithfulness",
            direction="higher",
            judges=[outcome, other],
            aggregate=aggregate([0.5, 0.25], n_failed=0, strategy="mean", quorum=1),
        )
        for i in range(2)
    ]
    summary = RunSummary(["a", "b"], ["faithfulness"], 2)
    for i, r in enumerate(results):
        summary.add(i, r)
    [metric] = summary.summaries()
    assert _exact([metric]) == _exact(summarize(results, ["a", "b"]))
    assert metric.decomposition is not None and metric.decomposition.repeats == n  # not 70,000 - 65,536


def test_the_summary_intervals_are_the_uncertainty_functions_of_the_scores() -> None:
    results = _repeated_results(4, 40)
    [metric] = summarize(results, ["a", "b", "c"], ranges={"faithfulness": (0.0, 1.0)})
    [unclamped] = summarize(results, ["a", "b", "c"])
    assert unclamped.interval == mean_interval([r.aggregate.value for r in results])
    aggregates = [r.aggregate.value for r in results]
    assert metric.interval == mean_interval(aggregates, bounds=(0.0, 1.0))
    assert metric.interval is not None and metric.interval.estimate == pytest.approx(metric.aggregate_mean)
    for judge in metric.judges:
        scores = [
            o.score.value
            for r in results
            for o in r.judges
            if o.judge_id == judge.judge_id and o.score is not None and not math.isnan(o.score.value)
        ]
        assert judge.interval == mean_interval(scores, bounds=(0.0, 1.0))
    cube = np.full((40, 3, 3), np.nan)
    for i, r in enumerate(results):
        for j, o in enumerate(r.judges):
            values = o.repeat_values()
            cube[i, j, : len(values)] = values
    assert metric.decomposition is not None
    assert metric.decomposition.components == variance_components(cube)


def test_the_advice_costs_the_runs_calls_per_judgement() -> None:
    results = _repeated_results(5, 30)
    [metric] = summarize(results, ["a", "b", "c"])
    calls = sum(o.usage.calls for r in results for o in r.judges)
    judgements = sum(len(o.repeat_values()) for r in results for o in r.judges)
    assert metric.decomposition is not None
    assert metric.decomposition.calls_per_judgement == calls / judgements
    samples = metric.decomposition.advice[0]
    assert samples.lever == "samples" and samples.extra_judgements is not None
    assert samples.extra_calls == round(samples.extra_judgements * calls / judgements)


def test_one_scored_sample_gives_its_interval_across_judges_and_no_decomposition() -> None:
    # the interval an assertion on that sample gates on, so every entry point gates one sample alike
    from ragqa.thresholds import sample_scores
    from ragqa.uncertainty import sample_interval

    results = _repeated_results(6, 1)
    [metric] = summarize(results, ["a", "b", "c"])
    assert metric.interval is not None and metric.decomposition is None
    assert metric.interval == sample_interval(sample_scores(results[0]), confidence=0.95, bounds=(0.0, 1.0))


def test_a_bad_confidence_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        RunSummary(["a"], ["faithfulness"], 1, confidence=1.5)
    with pytest.raises(ValueError, match="between 0 and 1"):
        summarize(_repeated_results(0, 5), ["a", "b", "c"], confidence=0.0)


async def _noisy_run(repeat_sd: float, options: PanelOptions) -> tuple[NoiseModel, Report]:
    """Four noisy judges (biases -0.05 to 0.06) on 40 samples with true scores in [0.3, 0.9]."""
    truth = np.random.default_rng(1).uniform(0.3, 0.9, size=40)
    model = NoiseModel(truth=truth, biases=(-0.05, 0.0, 0.02, 0.06), interaction_sd=0.05, repeat_sd=repeat_sd, seed=3)
    responses = [f"answer number {i}." for i in range(40)]
    samples = [
        Sample(id=f"s{i}", user_input="q?", response=text, retrieved_contexts=["c"]) for i, text in enumerate(responses)
    ]
    evaluator = PanelEvaluator(NoisyJudge.panel(model, responses), [Faithfulness(), Hallucination()], options=options)
    return model, await evaluator.evaluate(samples)


async def test_a_panel_of_noisy_judges_scores_what_the_noise_model_says() -> None:
    model, report = await _noisy_run(0.05, PanelOptions(call_plan="ragas"))
    expected = model.scores(1)[:, :, 0]
    faithfulness = [r for r in report.results if r.metric == "faithfulness"]
    for i, result in enumerate(faithfulness):
        assert [o.score.value for o in result.judges if o.score is not None] == list(expected[i])
    summary = report.summary("faithfulness")
    assert summary.interval is not None and summary.interval.n == 40
    assert summary.interval.contains(model.panel_truth)
    assert [j.interval is not None for j in summary.judges] == [True] * 4
    assert summary.decomposition is not None
    assert summary.decomposition.components.repeats is None  # one repeat: not separated from the interaction
    hallucination = report.summary("hallucination")
    assert hallucination.interval is not None
    assert hallucination.interval.estimate == pytest.approx(1 - summary.interval.estimate)


def test_the_confidence_comes_from_the_settings_and_the_python_call(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text("ragqa:\n  confidence: 0.8\n", encoding="utf-8")
    settings = load_settings(tmp_path, ["local"], environ={})
    assert settings.ragqa.confidence == 0.8 and panel_options(settings).confidence == 0.8
    (tmp_path / "application.yaml").write_text("ragqa:\n  confidence: 95\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="confidence"):
        load_settings(tmp_path, ["local"], environ={})
    report = ragqa.evaluate(IT_HELPDESK, ["faithfulness"], profile="local", confidence=0.8)
    summary = report.summary("faithfulness")
    assert summary.interval is not None and summary.interval.confidence == 0.8
    assert all(j.interval is not None and j.interval.confidence == 0.8 for j in summary.judges)
    with pytest.raises(ConfigError, match=r"confidence 1\.0: use a level between 0 and 1") as refused:
        ragqa.evaluate(IT_HELPDESK, ["faithfulness"], profile="local", confidence=1.0)
    assert refused.value.key == "--confidence"


async def test_a_panel_run_with_repeats_gets_the_models_draws_and_separates_repeat_noise() -> None:
    model, report = await _noisy_run(0.1, PanelOptions(repeats=3))
    expected = model.scores(3)
    faithfulness = [r for r in report.results if r.metric == "faithfulness"]
    for i, result in enumerate(faithfulness):
        assert [o.repeat_values() for o in result.judges] == [list(expected[i, j]) for j in range(4)]
    decomposition = report.summary("faithfulness").decomposition
    assert decomposition is not None and decomposition.repeats == 3
    components = decomposition.components
    assert components.confounded == [] and components.repeats == pytest.approx(0.1**2, rel=0.25)
    assert set(decomposition.share) == {"samples", "interaction", "repeats"}


def test_the_local_judge_repeats_with_zero_variance() -> None:
    report = ragqa.evaluate(IT_HELPDESK, ["faithfulness"], profile="local", repeats=3)
    decomposition = report.summary("faithfulness").decomposition
    assert decomposition is not None and decomposition.components.repeats == 0.0  # exactly: deterministic
    repeats = {o.lever: o for o in decomposition.advice}["repeats"]
    assert repeats.possible is False


def test_the_console_line_names_each_lever_in_english_and_russian() -> None:
    [metric] = summarize(_repeated_results(7, 60), ["a", "b", "c"])
    assert metric.decomposition is not None and metric.interval is not None
    line = uncertainty_line(metric)
    assert line is not None
    text = line.plain
    assert text.startswith("variance: samples ") and " · judges " in text and " · repeats " in text
    assert f"to halve ±{plus_minus(metric.interval):.3f}: " in text
    samples = metric.decomposition.advice[0]
    assert f"{samples.target:,} samples (+{samples.extra_calls:,} calls)" in text
    russian = uncertainty_line(metric, language="ru")
    assert russian is not None and russian.plain.startswith("дисперсия: примеры ")
    assert fmt_mean(metric.aggregate_mean, metric.interval) == (
        f"{metric.aggregate_mean:.3f} ± {plus_minus(metric.interval):.3f}"
    )
    assert fmt_mean(metric.aggregate_mean, None) == f"{metric.aggregate_mean:.3f}"
    assert uncertainty_line(metric.model_copy(update={"decomposition": None})) is None
