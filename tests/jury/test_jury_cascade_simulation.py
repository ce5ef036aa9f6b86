"""The cascade on the simulated jury (``benchmarks/_jury_cascade.py``), and its rule fitted on labels, seeded."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from types import ModuleType

import pytest
from _cli import run_cli
from factories import benchmark_module

from ragqa.aggregate import aggregate
from ragqa.calibration.cascade import CascadeItem, fit_cascade
from ragqa.jury.cascade import CascadeRule, read_fit
from ragqa.render.console import report_to_text
from ragqa.schema import JudgeOutcome, MetricScore, PanelResult

ROOT = Path(__file__).resolve().parents[2]
ragqa = partial(run_cli, cwd=ROOT)  # the CLI in process, in the repository root unless told


@pytest.fixture(scope="module")
def study() -> ModuleType:
    """``benchmarks/_jury_cascade.py``, imported from its folder (a sibling module of the benchmarks)."""
    return benchmark_module(ROOT, "_jury_cascade")


@pytest.mark.slow
def test_cascade_saves_tier_two_calls_and_keeps_the_full_panels_verdicts(study: ModuleType) -> None:
    """Issue 19's criterion: five judges (0.95 ... 0.6) on 500 samples, the two best as tier 2."""
    outcome = study.run(seed=0, n_samples=500)
    assert outcome.tier2_share <= 0.60  # tier-2 requests counted at the judges, cascade over full panel
    assert outcome.agreement >= 0.95  # pass/fail verdicts of the cascade run equal the full panel run's
    audit = outcome.audit  # the audit run measures the same two numbers on its own
    assert audit.tier2_share == pytest.approx(outcome.tier2_share)
    assert audit.agreement == pytest.approx(outcome.agreement)
    assert audit.n_compared == 500
    text = report_to_text(outcome.audit_report)  # and its report prints both
    assert f"agree with the full panel's on {100 * audit.agreement:.1f} % of 500 sample(s)" in text
    assert f"would have made {100 * audit.tier2_share:.1f} % of the full panel's tier-2" in text


@pytest.mark.slow
def test_a_rule_fitted_on_another_seeds_labels_holds_on_this_seed(study: ModuleType) -> None:
    fitted = study.fitted_rule(seed=1, n_samples=500)
    outcome = study.run(seed=0, n_samples=500, rule=fitted)
    assert outcome.tier2_share <= 0.60
    assert outcome.agreement >= 0.95


def _result(tier1: list[float], tier2: list[float]) -> PanelResult:
    outcomes = [JudgeOutcome(judge_id=f"j{i}", score=MetricScore(value=v)) for i, v in enumerate([*tier2, *tier1])]
    scores = [*tier2, *tier1]
    return PanelResult(
        sample_id="s", metric="faithfulness", direction="higher", judges=outcomes, aggregate=aggregate(scores)
    )


def test_fit_picks_the_fewest_escalations_that_keep_agreement() -> None:
    # tier 2 (j0) is always right; tier 1 (j1, j2) is right far from 0.5 and wrong close to it
    right = [CascadeItem.of(_result([0.9, 0.95], [0.9]), tier2=["j0"], label=True) for _ in range(8)]
    near = [CascadeItem.of(_result([0.55, 0.56], [0.0]), tier2=["j0"], label=False) for _ in range(2)]
    fit = fit_cascade(right + near, threshold=0.5, target=1.0)
    assert fit.reached and fit.agreement == 1.0 and fit.n == 10
    assert fit.tier2_share == pytest.approx(0.2)  # only the two near items go up
    assert 0.05 <= fit.rule.margin < 0.4
    never = fit_cascade(right + near, threshold=0.5, target=0.0)
    assert never.tier2_share == 0.0 and never.agreement == 0.8
    with pytest.raises(ValueError, match="no labelled item"):
        fit_cascade([CascadeItem.of(_result([0.9], [0.9]), tier2=["j0"], label=None)], threshold=0.5)


@pytest.mark.slow
def test_calibrate_fits_the_rule_and_writes_a_file_a_run_reads(tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(
        "spring: {ai: {chat-models: {list: ["
        "{id: cheap-a, provider: local, local: {support-threshold: 0.6}},"
        "{id: cheap-b, provider: local, local: {support-threshold: 0.4, number-check: false}},"
        "{id: dear, provider: local}]}}}\n"
        "ragqa: {cache: {enabled: false}, jury: {cascade: {enabled: true, tier-2: [dear]}}}\n",
        encoding="utf-8",
    )
    fit = tmp_path / "cascade-fit.json"
    data = ROOT / "examples" / "datasets" / "begin_wow_labelled.jsonl"
    result = ragqa(
        "calibrate", str(data), "-m", "faithfulness", "--config", str(config), "--limit", "40",
        "--fit-cascade", str(fit), "--no-progress", "--resamples", "20",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    body = json.loads(fit.read_text())  # samples whose full panel has no aggregate are left out
    assert body["format"] == "ragqa-cascade-fit/1" and 30 <= body["n"] <= 40
    shown = f"cascade rule fitted on {body['n']} labelled item(s) of begin_wow_labelled.jsonl (human_score)"
    assert shown in result.stdout
    assert body["agreement"] >= body["target"] or not body["reached"]
    rule, source = read_fit(fit)
    assert isinstance(rule, CascadeRule) and source.startswith("fitted on begin_wow_labelled.jsonl")
