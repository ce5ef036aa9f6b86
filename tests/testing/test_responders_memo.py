"""A memoised responder answers exactly as the plain one: same bytes, same scores, fewer runs of the rules.

The side-by-side benchmark's fake server remembers answers by request content
(:func:`ragqa.testing.responders.memoised`), so every judge of a panel that asks the same prompt
costs the server one run of the local judge's rules. These tests prove nothing changes for the
client: the reply text of every request is the plain responder's, and a panel scored against a
memoised server gets the plain server's report, score for score and verdict for verdict.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import CALL_PLAN_METRICS

import ragqa
from ragqa.datasets import load_dataset
from ragqa.schema import PanelResult, Sample
from ragqa.testing import ChatRequest, FakeOpenAIServer, Fault, ResponderError, fake_openai_server
from ragqa.testing.responders import foreign_prompt_responder, memoised, ragqa_responder

ROOT = Path(__file__).resolve().parents[2]
SIX = list(CALL_PLAN_METRICS)
APPLICATION_YAML = """
spring:
  ai:
    retry: {max-attempts: 1}
    openai: {base-url: "${FAKE_URL}", api-key: sk-test-not-secret}
    chat-models:
      default-options: {temperature: 0.0, timeout: 30s}
      list:
        - {id: judge-a}
        - {id: judge-b, options: {structured-output: function_calling}}
        - {id: judge-c}
    embedding-models:
      list:
        - {id: embed-small, options: {dimensions: 16}}
"""


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return load_dataset(ROOT / "examples/datasets/it_helpdesk.jsonl")[:4]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "application.yaml"
    path.write_text(APPLICATION_YAML, encoding="utf-8")
    return path


class Counting:
    """A responder that counts how often it is asked (the rules' runs)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def __call__(self, request: ChatRequest) -> Any:
        self.calls += 1
        return self.inner(request)


@pytest.fixture
def servers() -> Iterator[tuple[FakeOpenAIServer, FakeOpenAIServer, Counting, Counting]]:
    plain_rules = Counting(ragqa_responder(fallback=foreign_prompt_responder))
    memo_rules = Counting(ragqa_responder(fallback=foreign_prompt_responder))
    with fake_openai_server() as plain, fake_openai_server() as memo:
        plain.script("*", plain_rules)
        memo.script("*", memoised(memo_rules))
        yield plain, memo, plain_rules, memo_rules


def _table(results: list[PanelResult]) -> list[tuple[Any, ...]]:
    """Everything a score is made of, per (sample, metric, judge): value, details, failure."""
    rows = []
    for r in results:
        for o in r.judges:
            score = o.score.model_dump(mode="json") if o.score is not None else None
            rows.append((r.sample_id, r.metric, o.judge_id, json.dumps(score, sort_keys=True), o.failure))
        rows.append((r.sample_id, r.metric, "aggregate", r.aggregate.model_dump_json()))
    return rows


@pytest.mark.slow
def test_a_panel_scores_the_same_against_a_memoised_server(
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer, Counting, Counting],
    config: Path,
    samples: list[Sample],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain, memo, plain_rules, memo_rules = servers
    reports = {}
    for name, server in (("plain", plain), ("memo", memo)):
        monkeypatch.setenv("FAKE_URL", server.base_url)
        reports[name] = ragqa.evaluate(samples, SIX, config=config, no_cache=True)
    assert not plain.failures and not memo.failures
    assert _table(reports["memo"].results) == _table(reports["plain"].results)
    assert [o.score for r in reports["plain"].results for o in r.judges if o.score is None] == []
    # the same requests reached both servers; the memoised one ran the rules once per distinct prompt
    assert len(memo.requests_for("judge-a")) == len(plain.requests_for("judge-a"))
    chat_requests = sum(1 for r in plain.requests if r.path.endswith("/chat/completions"))
    assert plain_rules.calls == chat_requests
    # judge-b asks with a tool, judge-a and judge-c with a JSON schema: judge-c repeats judge-a's prompts
    assert memo_rules.calls == chat_requests - len(plain.requests_for("judge-c", "/v1/chat/completions"))


@pytest.mark.slow
def test_the_reply_text_is_the_plain_responders_for_every_request(
    servers: tuple[FakeOpenAIServer, FakeOpenAIServer, Counting, Counting],
    config: Path,
    samples: list[Sample],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain, _, _, _ = servers
    monkeypatch.setenv("FAKE_URL", plain.base_url)
    ragqa.evaluate(samples[:2], SIX, config=config, no_cache=True)
    rules = ragqa_responder(fallback=foreign_prompt_responder)
    memo = memoised(ragqa_responder(fallback=foreign_prompt_responder))
    chats = [r for r in plain.requests if r.path.endswith("/chat/completions")]
    assert chats
    for _ in range(2):  # first asked, then remembered
        for recorded in chats:
            request = ChatRequest(recorded.model, recorded.body["messages"], recorded.body, recorded.headers)
            expected = rules(request)
            got = memo(request)
            assert got == (expected if isinstance(expected, str) else json.dumps(expected, ensure_ascii=False))


def test_graded_answers_keep_every_digit_and_faults_and_errors_are_not_remembered() -> None:
    graded = {"verdicts": [{"statement": "s", "verdict": 1, "support": 0.8999999999999999}], "note": "é <x>"}
    calls: list[str] = []

    def responder(request: ChatRequest) -> Any:
        calls.append(request.model)
        text = request.prompt
        if text == "fault":
            return Fault(status=503)
        if text == "error":
            raise ResponderError("cannot answer")
        return graded

    memo = memoised(responder)

    def ask(model: str, text: str) -> Any:
        return memo(ChatRequest(model, [{"role": "user", "content": text}], {"model": model}, {}))

    first, second = ask("judge-a", "q"), ask("judge-b", "q")
    assert first == second == json.dumps(graded, ensure_ascii=False)
    assert json.loads(first) == graded  # 0.8999999999999999 stays itself, not 0.9
    assert calls == ["judge-a"]  # the model is not part of the key by default
    assert ask("judge-a", "fault") == Fault(status=503) and ask("judge-a", "fault") == Fault(status=503)
    for _ in range(2):
        with pytest.raises(ResponderError):
            ask("judge-a", "error")
    assert calls == ["judge-a", "judge-a", "judge-a", "judge-a", "judge-a"]


def test_by_model_keys_on_the_model_and_old_answers_are_dropped_past_the_bound() -> None:
    calls: list[tuple[str, str]] = []

    def responder(request: ChatRequest) -> Any:
        calls.append((request.model, request.prompt))
        return f"{request.model}:{request.prompt}"

    memo = memoised(responder, by_model=True, max_entries=2)

    def ask(model: str, text: str) -> Any:
        return memo(ChatRequest(model, [{"role": "user", "content": text}], {"model": model}, {}))

    assert ask("a", "1") == "a:1" and ask("b", "1") == "b:1" and ask("a", "1") == "a:1"
    assert calls == [("a", "1"), ("b", "1")]
    ask("a", "2")  # a third entry drops the least recently used, ("b", "1")
    ask("b", "1")
    assert calls == [("a", "1"), ("b", "1"), ("a", "2"), ("b", "1")]
    with pytest.raises(ValueError, match="max_entries"):
        memoised(responder, max_entries=0)
