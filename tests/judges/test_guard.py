"""RAGQA_BLOCK_REMOTE: a judge pointed at a non-loopback host fails typed, before anything is sent."""

from __future__ import annotations

import json
import os
from typing import Any

import factories
import httpx2
import pytest
from pydantic import SecretStr

from ragqa.errors import JudgeError
from ragqa.judges._guard import (
    BLOCK_REMOTE_ENV,
    RemoteCallBlocked,
    check_remote_allowed,
    is_loopback,
    remote_calls_blocked,
)
from ragqa.judges.openai import OpenAIEmbedder, OpenAIJudge
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import ResolvedChatModel, ResolvedEmbeddingModel
from ragqa.testing import FakeOpenAIServer, ragqa_responder

DATA = StatementsInput(question="Who?", answer="Ada wrote programs.")


class Recorder:
    """An httpx transport that answers every request itself and counts them: nothing leaves the process."""

    def __init__(self) -> None:
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        if request.url.path.endswith("/embeddings"):
            body: dict[str, Any] = {
                "object": "list",
                "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}],
                "model": "e",
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        else:
            content = json.dumps({"statements": ["Ada wrote programs."]})
            body = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        return httpx2.Response(200, json=body)


def chat_model(base_url: str) -> ResolvedChatModel:
    return factories.chat_model(base_url, id="remote", api_key="sk-x", timeout_s=None, attempts=3)


def test_the_suite_runs_with_remote_calls_blocked() -> None:
    assert os.environ[BLOCK_REMOTE_ENV] == "1"
    assert remote_calls_blocked()


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080", True),
        ("http://127.8.9.10", True),
        ("http://localhost:8000/v1", True),
        ("http://LOCALHOST.", True),
        ("http://api.localhost", True),
        ("http://[::1]:9000", True),
        ("http://[::ffff:127.0.0.1]", True),
        ("https://openrouter.ai/api", False),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000", False),
        ("http://localhost.example.com", False),
        ("http://0.0.0.0:8000", False),
        ("not a url", False),
    ],
)
def test_loopback_is_decided_from_the_url_text(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


@pytest.mark.parametrize(("value", "blocked"), [("1", True), ("yes", True), ("0", False), ("", False), ("off", False)])
def test_the_variable_values(monkeypatch: pytest.MonkeyPatch, value: str, blocked: bool) -> None:
    monkeypatch.setenv(BLOCK_REMOTE_ENV, value)
    assert remote_calls_blocked() is blocked
    if blocked:
        with pytest.raises(RemoteCallBlocked, match=r"openrouter\.ai"):
            check_remote_allowed("https://openrouter.ai/api/v1", judge_id="j", step="nli")
    else:
        check_remote_allowed("https://openrouter.ai/api/v1")


async def test_a_judge_at_a_remote_url_fails_typed_and_sends_nothing() -> None:
    recorder = Recorder()
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
    judge = OpenAIJudge(chat_model("https://openrouter.ai/api"), http_client=http)
    try:
        with pytest.raises(RemoteCallBlocked) as info:
            await judge.ask(STATEMENTS, DATA)
    finally:
        await http.aclose()
    assert isinstance(info.value, JudgeError)
    assert info.value.judge_id == "remote" and info.value.step == "statements"
    assert BLOCK_REMOTE_ENV in str(info.value) and "openrouter.ai" in str(info.value)
    assert recorder.requests == []  # not one attempt, although max-attempts is 3


async def test_an_embedder_at_a_remote_url_fails_typed_and_sends_nothing() -> None:
    recorder = Recorder()
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
    model = ResolvedEmbeddingModel(id="emb", model="e", base_url="https://api.openai.com", api_key=SecretStr("sk-x"))
    embedder = OpenAIEmbedder(model, http_client=http)
    try:
        with pytest.raises(RemoteCallBlocked) as info:
            await embedder.embed(["a"])
    finally:
        await http.aclose()
    assert info.value.step == "embed"
    assert recorder.requests == []


async def test_with_the_block_off_the_same_judge_reaches_its_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    # the control: the judge above fails because of the block, not because the transport is unusable
    monkeypatch.setenv(BLOCK_REMOTE_ENV, "0")
    recorder = Recorder()
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(recorder))
    judge = OpenAIJudge(chat_model("https://openrouter.ai/api"), http_client=http)
    try:
        out = await judge.ask(STATEMENTS, DATA)
    finally:
        await http.aclose()
    assert out.statements == ["Ada wrote programs."]
    assert [str(r.url) for r in recorder.requests] == ["https://openrouter.ai/api/v1/chat/completions"]


async def test_loopback_judges_keep_working_under_the_block() -> None:
    with FakeOpenAIServer() as srv:
        srv.script("m", ragqa_responder())
        for host in ("127.0.0.1", "localhost"):
            judge = OpenAIJudge(chat_model(srv.base_url.replace("127.0.0.1", host)))
            try:
                out = await judge.ask(STATEMENTS, DATA)
            finally:
                await judge.aclose()
            assert out.statements == ["Ada wrote programs."]
