"""A judge's answer body is read up to a cap: a larger one is a recorded JudgeOutputError, not memory growth.

Also the wording of failures whose causes used to be mixed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import factories
import httpx2
import pytest

from ragqa.errors import JudgeHTTPError, JudgeOutputError
from ragqa.judges._http import ResponseTooLarge, response_cap_hook
from ragqa.judges.openai import OpenAIJudge
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import ResolvedChatModel, RetrySettings
from ragqa.testing import FakeOpenAIServer, Fault

pytestmark = pytest.mark.usefixtures("reset_srv")

DATA = StatementsInput(question="q", answer="a")


def chat_model(url: str, name: str) -> ResolvedChatModel:
    return factories.chat_model(url, name, id=f"judge-{name}", api_key="sk-cap-0123456789", attempts=5)


def completion(content: str) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    )


async def test_an_oversized_answer_is_a_judge_output_error_not_retried(srv: FakeOpenAIServer) -> None:
    big = completion(json.dumps({"statements": ["x" * 50_000]}))
    srv.inject("big", Fault(status=200, body=big))
    judge = OpenAIJudge(chat_model(srv.base_url, "big"), max_response_bytes=4096)
    with pytest.raises(JudgeOutputError) as info:
        await judge.ask(STATEMENTS, DATA)
    assert "larger than 4,096 bytes" in str(info.value) and "max-response-bytes" in str(info.value)
    assert len(srv.requests_for("big")) == 1  # an answer, not a transport fault: not retried
    assert judge.breaker.state == "closed" and judge.breaker.consecutive_failures == 0
    small = await judge.ask(STATEMENTS, DATA)  # an answer under the cap goes through
    await judge.aclose()
    assert small.statements == ["ok"]


class Chunks(httpx2.AsyncByteStream):
    """An endless body without Content-Length: 1 KiB chunks, counted as they are read."""

    def __init__(self) -> None:
        self.sent = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            self.sent += 1
            yield b"x" * 1024

    async def aclose(self) -> None:
        self.closed = True


async def test_a_streamed_body_without_length_stops_at_the_cap() -> None:
    body = Chunks()
    response = httpx2.Response(200, stream=body)
    await response_cap_hook(10 * 1024)(response)
    with pytest.raises(ResponseTooLarge):
        await response.aread()
    assert body.sent == 11  # stopped at the first chunk past the cap; the rest was never read


async def test_a_declared_length_over_the_cap_fails_before_reading() -> None:
    body = Chunks()
    response = httpx2.Response(200, headers={"content-length": str(1 << 30)}, stream=body)
    with pytest.raises(ResponseTooLarge, match="Content-Length 1,073,741,824"):
        await response_cap_hook(1024)(response)
    assert body.sent == 0 and body.closed


async def test_a_refused_connection_reads_as_refused_not_timed_out() -> None:
    with FakeOpenAIServer() as gone:
        url = gone.base_url
    judge = OpenAIJudge(chat_model(url, "gone").model_copy(update={"retry": RetrySettings(max_attempts=1)}))
    with pytest.raises(JudgeHTTPError) as info:
        await judge.ask(STATEMENTS, DATA)
    await judge.aclose()
    text = str(info.value)
    assert "connection refused by" in text and "after 1 attempt(s)" in text
    assert "timed out" not in text.lower()


async def test_an_unrepairable_output_names_the_judge_once(srv: FakeOpenAIServer) -> None:
    srv.script("prose", lambda request: completion("I think it is fine."))
    judge = OpenAIJudge(chat_model(srv.base_url, "prose"))
    with pytest.raises(JudgeOutputError) as info:
        await judge.ask(STATEMENTS, DATA)
    await judge.aclose()
    assert str(info.value).startswith("judge 'judge-prose' (model prose")
    assert "judge judge" not in str(info.value)
