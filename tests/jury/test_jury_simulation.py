"""The jury's simulation study (``benchmarks/jury.py``) holds what ``docs/jury.md`` says, seeded."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def study() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jury_study", ROOT / "benchmarks" / "jury.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_independent_judges_dawid_skene_recovers_accuracies_and_both_votes_beat_the_mean(study: ModuleType) -> None:
    outcome = study.run(seed=0, n_samples=500, correlated=False)
    assert outcome.ds_accuracy_error < 0.05
    assert outcome.mae["claim-vote"] < outcome.mae["mean of scores"]
    assert outcome.mae["dawid-skene"] < outcome.mae["claim-vote"]
    assert abs(outcome.weak_pair_correlation) < 0.3


def test_correlated_judges_are_flagged_and_hurt_the_plain_majority(study: ModuleType) -> None:
    plain = study.run(seed=0, n_samples=500, correlated=False)
    together = study.run(seed=0, n_samples=500, correlated=True)
    assert together.weak_pair_correlation > 0.3
    assert together.statement_accuracy["claim-vote"] < plain.statement_accuracy["claim-vote"]
    assert together.statement_accuracy["claim-vote"] < together.statement_accuracy["best judge alone"]
