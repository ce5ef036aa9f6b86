"""The three ways in agree: ``ragqa evaluate``, ``ragqa test`` and the pytest plugin give the same exit
code and the same validation error on the same samples, judged by the same scripted panel.

Each case is one or two samples scored for faithfulness (threshold 0.6) by three judges on the fake
OpenAI-compatible server. A judge's verdicts per statement are scripted, and a response marked
``[fail]`` makes every judge answer HTTP 400 (a judge failure). The same samples are written as a
JSON Lines dataset (``ragqa evaluate``), a promptfoo-style file (``ragqa test``) and a pytest suite
run with ``--ragqa-exit-code`` (each in this process, as ``tests/testing/`` runs pytest on a user's
suite); all three must exit alike, and a sample the validator refuses must be
refused by all three with the same field and the same reason, before any judge call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from factories import application_yaml
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.testing import ChatRequest, FakeOpenAIServer, fake_openai_server
from ragqa.testing.responders import ragqa_prompt_of
from ragqa.testing.wire import ResponderError

pytestmark = pytest.mark.slow  # seven pytest sessions and fourteen CLI runs, in this process (about 12 CPU-s)
pytest_plugins = ("pytester",)  # the pytest entry point runs in this process (Pytester.runpytest_inprocess)

JUDGES = ("judge-a", "judge-b", "judge-c")
STATEMENTS = ["The office opens at nine.", "The office has a kitchen."]
CONTEXT = "The office opens at nine. It has a kitchen and a garden."
THRESHOLD = 0.6

APPLICATION_YAML = application_yaml(JUDGES, base_url="${RAGQA_FAKE_URL}", api_key="sk-test", timeout="30s")

SUITE = """
import json
from pathlib import Path

import pytest

from ragqa import Sample

SAMPLES = [json.loads(line) for line in Path(__file__).with_name("data.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("record", SAMPLES, ids=[s["id"] for s in SAMPLES])
def test_sample(ragqa_panel, record):
    ragqa_panel.check_metric("faithfulness", Sample(**record), threshold=THRESHOLD)
""".replace("THRESHOLD", str(THRESHOLD))


@dataclass
class Case:
    """Samples and each judge's verdicts on the two statements (1 supported, 0 not)."""

    samples: list[dict[str, Any]]
    verdicts: dict[str, tuple[int, int]] = field(default_factory=lambda: {j: (1, 1) for j in JUDGES})
    exit_code: int = 0
    refused: tuple[str, str] | None = None
    """(field, words of the reason) that every entry point names, for a sample the validator refuses."""


def sample(id: str, response: str = "The office opens at nine and has a kitchen.", **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"id": id, "user_input": "When does the office open?", "response": response}
    record["retrieved_contexts"] = [CONTEXT]
    record.update(fields)
    return {k: v for k, v in record.items() if v is not None}


CASES = {
    "all pass": Case([sample("s1")]),
    "missed threshold": Case([sample("s1")], verdicts={j: (0, 0) for j in JUDGES}, exit_code=1),
    # 1.0, 0.5 and 0.0: the mean 0.5 has the interval [0, 1] across the judges, which holds 0.6
    "undecided": Case([sample("s1")], verdicts=dict(zip(JUDGES, [(1, 1), (1, 0), (0, 0)], strict=True)), exit_code=4),
    "judge failure": Case([sample("s1", response="[fail] The office opens at nine.")], exit_code=3),
    # a missed threshold and an incomplete pair: incomplete wins everywhere (3 > 1 > 4)
    "missed threshold and judge failure": Case(
        [sample("s1"), sample("s2", response="[fail] The office opens at nine.")],
        verdicts={j: (0, 0) for j in JUDGES},
        exit_code=3,
    ),
    "bad sample field": Case(
        [sample("s1", retrieved_contexts=None)], exit_code=2, refused=("retrieved_contexts", "faithfulness")
    ),
    "over-long context": Case(
        [sample("s1", retrieved_contexts=["x" * 300_000])],
        exit_code=2,
        refused=("retrieved_contexts", "300,000 characters, more than ragqa.limits.max-text-chars (200,000)"),
    ),
}


def responder(verdicts: tuple[int, int]) -> Any:
    def answer(request: ChatRequest) -> dict[str, Any]:
        prompt = ragqa_prompt_of(request)
        if prompt is None or "[fail]" in request.prompt_text:
            raise ResponderError("scripted judge failure")
        if prompt.name == "statements":
            return {"statements": STATEMENTS}
        return {
            "verdicts": [
                {"statement": s, "reason": "scripted", "verdict": v} for s, v in zip(STATEMENTS, verdicts, strict=True)
            ]
        }

    return answer


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as server:
        yield server


def project(tmp_path: Path, case: Case) -> Path:
    (tmp_path / "application.yaml").write_text(APPLICATION_YAML, encoding="utf-8")
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in case.samples), encoding="utf-8")
    tests = []
    for s in case.samples:
        test: dict[str, Any] = {"description": s["id"], "vars": {"query": s["user_input"]}, "output": s["response"]}
        if "retrieved_contexts" in s:
            test["vars"]["context"] = s["retrieved_contexts"][0]
        test["assert"] = [{"type": "context-faithfulness", "threshold": THRESHOLD}]
        tests.append(test)
    (tmp_path / "cases.yaml").write_text(yaml.safe_dump({"tests": tests}, width=10**7), encoding="utf-8")
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    # pytest-asyncio warns (in this process too) when a project leaves its loop scope unset
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n", encoding="utf-8")
    return tmp_path


def chat_requests(srv: FakeOpenAIServer) -> int:
    return sum(len(srv.requests_for(j, "/v1/chat/completions")) for j in JUDGES)


@dataclass
class Outcome:
    code: int
    text: str
    calls: int


def run_each(
    srv: FakeOpenAIServer, work: Path, case: Case, monkeypatch: pytest.MonkeyPatch, pytester: pytest.Pytester
) -> dict[str, Outcome]:
    """Run the case through the three entry points, each on a fresh script of the same panel.

    The pytest run is ``pytest`` on the suite in this process, as the CLI runs here: its plugin is
    loaded from its ``pytest11`` entry point, and its exit code is the session's.
    """
    monkeypatch.chdir(work)
    monkeypatch.setenv("RAGQA_FAKE_URL", srv.base_url)
    monkeypatch.delenv("RAGQA_PROFILES_ACTIVE", raising=False)
    outcomes: dict[str, Outcome] = {}

    def fresh() -> None:
        srv.reset()
        for judge in JUDGES:
            srv.script(judge, responder(case.verdicts[judge]))

    fresh()
    threshold = f"faithfulness={THRESHOLD}"
    cli = CliRunner().invoke(app, ["evaluate", "data.jsonl", "--metrics", "faithfulness", "--threshold", threshold])
    outcomes["ragqa evaluate"] = Outcome(cli.exit_code, cli.output, chat_requests(srv))
    fresh()
    test = CliRunner().invoke(app, ["test", "cases.yaml"])
    outcomes["ragqa test"] = Outcome(test.exit_code, test.output, chat_requests(srv))
    fresh()
    # langsmith's plugin left out as in the repository's addopts: each session would import it again
    args = ("-p", "no:cacheprovider", "-p", "no:langsmith_plugin", "-q", "--ragqa-exit-code", "test_suite.py")
    run = pytester.runpytest_inprocess(*args)
    text = run.stdout.str() + "\n" + run.stderr.str()
    outcomes["pytest plugin"] = Outcome(int(run.ret), text, chat_requests(srv))
    return outcomes


@pytest.mark.parametrize("name", list(CASES))
def test_the_three_entry_points_give_the_same_exit_code_and_error(
    name: str, srv: FakeOpenAIServer, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CASES[name]
    outcomes = run_each(srv, project(pytester.path, case), case, monkeypatch, pytester)
    codes = {entry: outcome.code for entry, outcome in outcomes.items()}
    shown = "\n\n".join(f"--- {entry} (exit {o.code}):\n{o.text[-3000:]}" for entry, o in outcomes.items())
    assert set(codes.values()) == {case.exit_code}, shown
    if case.refused is not None:
        field_name, reason = case.refused
        for entry, outcome in outcomes.items():
            assert f"field {field_name!r}" in outcome.text, f"{entry}:\n{outcome.text}"
            assert reason in outcome.text, f"{entry}:\n{outcome.text}"
            assert outcome.calls == 0, f"{entry} called a judge for a sample it refuses"
    else:
        assert all(outcome.calls > 0 for outcome in outcomes.values()), shown
