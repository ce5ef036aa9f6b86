"""A metric from a user's installed package is usable by name everywhere a built-in one is."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.container import create_container
from ragqa.errors import ConfigError
from ragqa.metrics import METRICS, Metric, build_metric, register_metric
from ragqa.metrics.text._base import TextMetric, TextScore
from ragqa.promptfoo.running import run_promptfoo_files

PLUGIN = '''
from ragqa.metrics.text._base import TextMetric


class ShortAnswer(TextMetric):
    """1 when the response has at most as many words as the reference, else 0 (a user's metric)."""

    name = "short_answer"
    description = "1 when the response is no longer than the reference"
    default_threshold = 1.0

    def compute(self, response, reference):
        return float(len(response.split()) <= len(reference.split())), {}

    def explain(self, value, details):
        return "short enough" if value else "longer than the reference"
'''

SAMPLES = [
    {"id": "a", "user_input": "q", "response": "thirty days", "reference": "within thirty days"},
    {"id": "b", "user_input": "q", "response": "you may return it within thirty days", "reference": "thirty days"},
]


@pytest.fixture
def registry_state() -> Iterator[None]:
    saved = (dict(METRICS._classes), dict(METRICS._broken), METRICS._plugins_loaded)
    yield
    METRICS._classes, METRICS._broken, METRICS._plugins_loaded = dict(saved[0]), dict(saved[1]), saved[2]


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, registry_state: None) -> Path:
    """A package ``acme_metrics`` declaring ``short_answer`` in the ``ragqa.metrics`` entry-point group."""
    (tmp_path / "acme_metrics.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "acme_metrics", raising=False)
    points = [
        EntryPoint(name="short_answer", value="acme_metrics:ShortAnswer", group="ragqa.metrics"),
        EntryPoint(name="broken_metric", value="acme_missing:Nope", group="ragqa.metrics"),
    ]

    def entry_points(*, group: str) -> list[EntryPoint]:
        return [p for p in points if p.group == group]

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)
    METRICS._plugins_loaded = False
    return tmp_path


def test_an_installed_metric_is_found_by_name_in_python(installed: Path) -> None:
    report = ragqa.evaluate(SAMPLES, ["short_answer"], profile="local")
    assert [r.aggregate.value for r in report.results] == [1.0, 0.0]
    assert list(METRICS)[-1] == "short_answer"  # after the built-ins; the broken one is not listed


def test_an_installed_metric_is_found_from_application_yaml_and_the_cli(installed: Path) -> None:
    data = installed / "data.jsonl"
    data.write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    config = installed / "application.yaml"
    config.write_text("ragqa:\n  metrics: [short_answer]\n", encoding="utf-8")
    report = ragqa.evaluate(data, config=config, profile="local")
    assert [r.metric for r in report.results] == ["short_answer", "short_answer"]
    out = installed / "out.jsonl"
    result = CliRunner().invoke(
        app, ["evaluate", str(data), "--profile", "local", "--metrics", "short_answer", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "short_answer" in result.output


def test_an_installed_metric_runs_in_a_promptfoo_file(installed: Path) -> None:
    suite = installed / "checks.yaml"
    suite.write_text(
        "tests:\n  - vars: {query: q, response: thirty days}\n"
        "    assert:\n      - type: ragqa:short_answer\n        value: within thirty days\n",
        encoding="utf-8",
    )
    out = io.StringIO()
    code = run_promptfoo_files([suite], container=create_container(None, ["local"]), out=out)
    assert code == 0, out.getvalue()
    assert "short_answer" in out.getvalue()


def test_a_broken_package_stops_only_runs_that_use_it(installed: Path) -> None:
    assert "short_answer" in METRICS
    with pytest.raises(ConfigError, match=r"acme_missing:Nope.*could not be loaded"):
        build_metric("broken_metric")
    assert build_metric("faithfulness").name == "faithfulness"


def test_register_metric_decorates_a_class_and_refuses_a_taken_name(registry_state: None) -> None:
    @register_metric
    class Echo(TextMetric):
        name: ClassVar[str] = "echo_match"

        def compute(self, response: str, reference: str) -> TextScore:
            return float(response == reference), {}

        def explain(self, value: float, details: Any) -> str:
            return ""

    assert METRICS["echo_match"] is Echo
    report = ragqa.evaluate([{"id": "x", "response": "a", "reference": "a"}], ["echo_match"], profile="local")
    assert report.results[0].aggregate.value == 1.0

    class Impostor(Echo):
        name: ClassVar[str] = "faithfulness"

    with pytest.raises(ConfigError, match=r"taken by ragqa\.metrics\.faithfulness\.Faithfulness"):
        register_metric(Impostor)
    with pytest.raises(TypeError, match="not a ragqa Metric"):
        register_metric(dict)  # type: ignore[type-var]
    assert issubclass(METRICS["faithfulness"], Metric)
