"""Modules split by concern keep their former import paths: each name is the moved object itself."""

from __future__ import annotations

import importlib

import pytest

MOVED = [  # (home, former path, names; ["*"]: every name of the home's __all__)
    ("ragqa.report.jury_model", "ragqa.report.model", ["CascadeSummary", "JudgeReliability", "JuryReliability"]),
    ("ragqa.report.jury_model", "ragqa.report", ["CascadeSummary", "JudgeReliability", "JuryReliability"]),
    (
        "ragqa.render.console_jury",
        "ragqa.render.console",
        ["cascade_lines", "cascade_texts", "jury_lines", "jury_texts"],
    ),
    ("ragqa.render.numbers", "ragqa.render.console", ["fmt_cost", "fmt_mean", "fmt_score", "fmt_tokens", "plus_minus"]),
    ("ragqa.run.results_file", "ragqa.run.stream", ["*"]),
    ("ragqa.run.results_file", "ragqa.run", ["ResultsHeader", "read_results"]),
    ("ragqa.run.identity", "ragqa.run.runner", ["config_fingerprint"]),
    ("ragqa.run.estimate", "ragqa.run.runner", ["TooManyCalls"]),
    ("ragqa.run.estimate", "ragqa.run", ["TooManyCalls"]),
]


@pytest.mark.parametrize(("home", "former", "names"), MOVED)
def test_former_path_gives_the_same_object(home: str, former: str, names: list[str]) -> None:
    new, old = importlib.import_module(home), importlib.import_module(former)
    for name in new.__all__ if names == ["*"] else names:
        assert getattr(old, name) is getattr(new, name), f"{former}.{name}"
        assert name in old.__all__, f"{former}.__all__ lacks {name}"


def test_jury_shapes_keep_their_json_names() -> None:
    from ragqa.report.model import CascadeSummary, JuryReliability, MetricSummary

    assert MetricSummary.model_fields["jury"].annotation == JuryReliability | None
    assert MetricSummary.model_fields["cascade"].annotation == CascadeSummary | None
    assert set(CascadeSummary(tier1=["a"], tier2=["b"]).model_dump()) >= {"tier1", "tier2", "n_escalated", "audit"}
    assert set(JuryReliability.model_fields) == {
        "method",
        "unit",
        "threshold",
        "n_statements",
        "n_samples",
        "prevalence",
        "converged",
        "judges",
        "correlations",
        "warnings",
        "voted_mean",
        "majority_mean",
        "n_changed",
    }
