"""``ragqa calibrate`` sets the label-free (Dawid-Skene) estimates of each judge beside the measured ones."""

from __future__ import annotations

import asyncio
import math
import random
from typing import Any

import pytest

from ragqa.calibration import calibrate_report, calibration_table
from ragqa.calibration.label_free import label_free_rates
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics.faithfulness import Faithfulness
from ragqa.prompts.base import Prompt
from ragqa.testing import FunctionJudge, make_sample

ACCURACY = {"good": 0.95, "fair": 0.85, "poor": 0.7}


def _world(n: int, seed: int = 0) -> tuple[list[Any], dict[str, float], dict[str, list[int]]]:
    """``n`` samples with a human label each, and per judge a verdict that is right with its accuracy."""
    rng = random.Random(seed)
    labels = {f"s{i}": float(rng.random() < 0.6) for i in range(n)}
    said = {j: [int(labels[f"s{i}"]) ^ int(rng.random() > p) for i in range(n)] for j, p in ACCURACY.items()}
    samples = [
        make_sample(id=f"s{i}", user_input="Q?", response="A.", retrieved_contexts=[f"s{i}|doc"], metadata={})
        for i in range(n)
    ]
    return samples, labels, said


def _judge(judge_id: str, said: list[int]) -> FunctionJudge:
    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": ["the answer"]}
        i = int(data.context.split("|")[0][1:])
        return {"verdicts": [{"statement": "the answer", "reason": "scripted", "verdict": said[i]}]}

    return FunctionJudge(judge_id, answer)


@pytest.mark.slow
def test_dawid_skene_estimates_sit_next_to_the_measured_rates_and_recover_them() -> None:
    samples, labels, said = _world(400)
    judges = [_judge(j, said[j]) for j in ACCURACY]
    report = asyncio.run(PanelEvaluator(judges, [Faithfulness()], options=PanelOptions()).evaluate(samples))
    calibration = calibrate_report(report, labels, n_resamples=50)
    rows = calibration.metrics[0].judges
    for row in rows:
        free = row.label_free
        assert free is not None
        # the measured rates are those of the gate's verdicts against the labels
        verdicts = said[row.judge_id]
        passed = [labels[f"s{i}"] == 1.0 for i in range(400)]
        assert free.measured_sensitivity == pytest.approx(
            sum(v for v, p in zip(verdicts, passed, strict=True) if p) / sum(passed)
        )
        assert row.accuracy == pytest.approx(ACCURACY[row.judge_id], abs=0.05)
        # three independent judges: Dawid-Skene recovers each accuracy without the labels
        assert free.accuracy == pytest.approx(row.accuracy, abs=0.05), row.judge_id
        assert free.sensitivity == pytest.approx(free.measured_sensitivity, abs=0.06)
        assert free.specificity == pytest.approx(free.measured_specificity, abs=0.06)
    assert calibration.metrics[0].panel.label_free is None
    caption = str(calibration_table(calibration)[0].caption)
    assert "no labels (Dawid-Skene on each judge's pass/fail at its threshold) vs labels:" in caption
    good = next(r for r in rows if r.judge_id == "good")
    assert f"good: accuracy {good.label_free.accuracy:.3f} vs {good.accuracy:.3f}" in caption  # type: ignore[union-attr]


@pytest.mark.slow
def test_a_lone_judge_has_no_label_free_estimate() -> None:
    samples, labels, said = _world(30)
    report = asyncio.run(
        PanelEvaluator([_judge("good", said["good"])], [Faithfulness()], options=PanelOptions()).evaluate(samples)
    )
    calibration = calibrate_report(report, labels, n_resamples=20)
    assert calibration.metrics[0].judges[0].label_free is None
    assert "no labels" not in str(calibration_table(calibration)[0].caption)
    assert label_free_rates(report.results, ["good"], [1.0], labels, pass_label=1.0, direction="higher") == {}


def test_a_judge_without_a_threshold_gives_no_verdicts() -> None:
    samples, labels, said = _world(60)
    judges = [_judge(j, said[j]) for j in ACCURACY]
    report = asyncio.run(PanelEvaluator(judges, [Faithfulness()], options=PanelOptions()).evaluate(samples))
    rates = label_free_rates(
        report.results, list(ACCURACY), [1.0, 1.0, math.nan], labels, pass_label=1.0, direction="higher"
    )
    assert math.isnan(rates["poor"].measured_sensitivity) and math.isnan(rates["poor"].measured_specificity)
    assert set(rates) == set(ACCURACY)
