"""Repeats reach every entry point: settings, ``ragqa.evaluate``, ``ragqa test`` and the pytest plugin.

Requests are counted at the fake OpenAI-compatible server; the offline local panel gives the
pytest plugin's run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from _pytest_run import run_pytest_inprocess

import ragqa
from ragqa.container import create_container
from ragqa.errors import ConfigError
from ragqa.promptfoo import run_promptfoo_file
from ragqa.run.merge import merge_results
from ragqa.testing import FakeOpenAIServer, ragqa_responder

ROOT = Path(__file__).resolve().parents[1]
PROMPTFOO = ROOT / "examples" / "promptfoo"
DATASET = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"

pytest_plugins = ("pytester",)


def test_settings_carry_repeats_and_the_reducer(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text("ragqa:\n  repeats: 3\n  repeat-reducer: median\n", encoding="utf-8")
    container = create_container(tmp_path / "application.yaml", ["local"])
    options = container.panel_options()
    assert (options.repeats, options.reducer) == (3, "median")
    (tmp_path / "bad.yaml").write_text("ragqa:\n  repeats: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="repeats"):
        create_container(tmp_path / "bad.yaml").settings()


def test_python_api_repeats_and_reducer() -> None:
    samples = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines()[:2]]
    plain = ragqa.evaluate(samples, metrics=["faithfulness"], profile="local")
    three = ragqa.evaluate(samples, metrics=["faithfulness"], profile="local", repeats=3, reducer="median")
    for a, b in zip(plain.results, three.results, strict=True):
        assert [len(o.repeats) for o in b.judges] == [3, 3]
        assert [o.score for o in b.judges] == [o.score for o in a.judges]  # the local judge: zero variance
    with pytest.raises(ConfigError, match="mean, median, mode"):
        ragqa.evaluate(samples, metrics=["faithfulness"], profile="local", repeats=2, reducer="max")


@pytest.mark.slow
def test_ragqa_test_makes_each_assertion_n_times(tmp_path: Path) -> None:
    counts = []
    for repeats in (None, 3):
        with FakeOpenAIServer() as server:
            for judge in ("judge-a", "judge-b", "judge-c"):
                server.script(judge, ragqa_responder())
            container = create_container(PROMPTFOO / "application.yaml", environ={"RAGQA_FAKE_URL": server.base_url})
            out = io.StringIO()
            code = run_promptfoo_file(
                PROMPTFOO / "context_faithfulness.yaml", container=container, out=out, repeats=repeats
            )
            assert code == 0, out.getvalue()
            counts.append(len([r for r in server.requests if r.path == "/v1/chat/completions"]))
    assert counts[0] > 0 and counts[1] == 3 * counts[0]


def test_ragqa_test_refuses_a_bad_reducer_before_any_call() -> None:
    with FakeOpenAIServer() as server:
        container = create_container(PROMPTFOO / "application.yaml", environ={"RAGQA_FAKE_URL": server.base_url})
        out = io.StringIO()
        code = run_promptfoo_file(PROMPTFOO / "context_faithfulness.yaml", container=container, out=out, reducer="avg")
        assert code == 2 and "reducer 'avg'" in out.getvalue()
        assert server.requests == []


PLUGIN_SUITE = """
import pytest

from ragqa import Sample

SAMPLE = Sample(
    id="capital",
    user_input="What is the capital of France?",
    response="Paris is the capital of France.",
    retrieved_contexts=["Paris is the capital and largest city of France."],
)


@pytest.mark.ragqa(repeats=3, reducer="median")
def test_marker(ragqa):
    result = ragqa.check_metric("faithfulness", SAMPLE, threshold=0.5)
    assert [len(o.repeats) for o in result.judges] == [3, 3]
    assert ragqa.evaluator.options.reducer == "median"


def test_command_line_option(ragqa):
    result = ragqa.check_metric("faithfulness", SAMPLE, threshold=0.5)
    assert [len(o.repeats) for o in result.judges] == [2, 2]
"""


ARGS = ("--ragqa-profile", "local", "--ragqa-repeats", "2")


def test_pytest_plugin_marker_and_option(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # in this process (the plugin loads from its entry point as in a user's run): a child's start-up
    # was the whole of this test's 3 CPU seconds
    (pytester.path / "test_repeats_suite.py").write_text(PLUGIN_SUITE, encoding="utf-8")
    (pytester.path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    proc = run_pytest_inprocess(pytester, monkeypatch, "-q", *ARGS)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


@pytest.mark.slow
def test_sharded_parts_with_repeats_merge_into_one_runs_file(tmp_path: Path) -> None:
    one, parts = tmp_path / "one.jsonl", [tmp_path / f"part-{k}.jsonl" for k in (1, 2)]
    ragqa.evaluate(DATASET, metrics=["faithfulness"], profile="local", out=one, repeats=2)
    for k, part in enumerate(parts, 1):
        ragqa.evaluate(DATASET, metrics=["faithfulness"], profile="local", out=part, repeats=2, shard=f"{k}/2")
    merged = tmp_path / "all.jsonl"
    merge_results(parts, merged)
    whole, joined = (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] for path in (one, merged)
    )
    assert joined[0]["repeats"] == whole[0]["repeats"] == 2
    assert joined[0]["config_fingerprint"] == whole[0]["config_fingerprint"]

    def repeats(rows: list[dict[str, Any]]) -> dict[str, list[list[float]]]:
        return {row["sample_id"]: [[r["score"] for r in j["repeats"]] for j in row["judges"]] for row in rows}

    assert len(joined) == len(whole) and repeats(joined[1:]) == repeats(whole[1:])
