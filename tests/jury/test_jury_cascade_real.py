"""The real-data cascade study (``benchmarks/_jury_cascade_real.py``) counts as a cascade audit run does."""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from factories import CASCADE_PANEL_YAML, benchmark_module

import ragqa as api
from ragqa.jury.cascade import CascadeRule

ROOT = Path(__file__).resolve().parents[2]
IT = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"


@pytest.fixture(scope="module")
def study() -> ModuleType:
    """``benchmarks/_jury_cascade_real.py``."""
    return benchmark_module(ROOT, "_jury_cascade_real")


def test_the_studys_escalations_share_and_agreement_equal_an_audit_runs(study: ModuleType, tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(CASCADE_PANEL_YAML, encoding="utf-8")
    threshold = study.THRESHOLD
    report = api.evaluate(
        IT, metrics=["faithfulness"], config=config, cascade_audit=True, thresholds={"faithfulness": threshold}
    )
    c = report.summary("faithfulness").cascade
    assert c is not None and c.audit and c.threshold == threshold
    labels = {r.sample_id: True for r in report.results}
    items = study.items_of(report.results, ("dear",), labels)
    cols = study.columns(items, CascadeRule(spread=0.2, margin=0.05, split=True))
    figures = study._figures(cols, np.arange(len(items)))
    assert 0 < c.n_escalated < c.n_items == len(items) == 60
    assert int(cols.escalated.sum()) == c.n_escalated
    assert c.tier2_share_basis == "calls" and math.isclose(figures[1], c.tier2_share)
    assert math.isclose(figures[2], c.agreement)
    never = study.columns(items, None)  # tier 1 alone
    assert not never.escalated.any() and np.array_equal(never.full, cols.full)


def test_the_table_reports_every_rule_on_the_held_out_half(study: ModuleType) -> None:
    report = api.evaluate(IT, metrics=["faithfulness"], profile="local")
    labels = {r.sample_id: i % 2 == 0 for i, r in enumerate(report.results)}
    text = study.table("IT", report.results, labels, ("local-strict",), n_boot=20, seed=0)
    assert "30 samples to fit (half A), 30 reported (half B)" in text
    for row in (
        "tier 1 alone",
        "default (spread 0.3",
        "spread 0.5, margin 0.1, split off",
        "fitted on half A",
        "full panel",
    ):
        assert f"| {row}" in text
