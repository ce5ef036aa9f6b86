"""What the side-by-side benchmark needs of the fake server: request counts, ``n`` choices, foreign prompts."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from pydantic import BaseModel

from ragqa.prompts.nli import NLI, NLIInput
from ragqa.testing import ChatRequest, FakeOpenAIServer, ragqa_responder
from ragqa.testing.responders import default_responder, foreign_prompt_responder

pytestmark = pytest.mark.usefixtures("reset_srv")


def post(srv: FakeOpenAIServer, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        srv.base_url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        return json.load(resp)


def get(srv: FakeOpenAIServer, path: str) -> Any:
    with urllib.request.urlopen(srv.base_url + path, timeout=5) as resp:
        return json.load(resp)


def test_requests_are_counted_per_path_also_without_recording() -> None:
    with FakeOpenAIServer(record=False) as srv:
        for _ in range(3):
            post(srv, "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        post(srv, "/v1/embeddings", {"model": "e", "input": ["a", "b"]})
        assert srv.requests == []
        expected = {"/v1/chat/completions": 3, "/v1/embeddings": 1}
        assert srv.counts == expected
        assert get(srv, "/_fake/counts") == expected  # for a server in another process


def test_n_choices_repeat_the_answer_and_count_their_tokens(srv: FakeOpenAIServer) -> None:
    srv.script("m", lambda r: "three little words")
    one = post(srv, "/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "q"}]})
    three = post(srv, "/v1/chat/completions", {"model": "m", "n": 3, "messages": [{"role": "user", "content": "q"}]})
    assert [c["index"] for c in three["choices"]] == [0, 1, 2]
    assert {c["message"]["content"] for c in three["choices"]} == {"three little words"}
    assert len(one["choices"]) == 1
    assert three["usage"]["completion_tokens"] == 3 * one["usage"]["completion_tokens"] == 9


class _Verdict(BaseModel):
    statement: str
    verdict: int


class _Verdicts(BaseModel):
    statements: list[_Verdict]


def ragas_style(schema_owner: type[BaseModel]) -> ChatRequest:
    """A request shaped like RAGAS's PydanticPrompt: the JSON schema written inside the prompt text."""
    text = (
        "Judge the statements.\nPlease return the output in a JSON format that complies with the following schema "
        f"as specified in JSON Schema:\n{json.dumps(schema_owner.model_json_schema())}Do not use single quotes.\n"
        "-----------------------------\nNow perform the same with the following input\ninput: {}\nOutput: "
    )
    messages = [{"role": "user", "content": text}]
    return ChatRequest(model="m", messages=messages, body={"model": "m", "messages": messages}, headers={})


def test_a_foreign_prompt_gets_a_placeholder_valid_against_the_schema_in_its_text() -> None:
    answer = foreign_prompt_responder(ragas_style(_Verdicts))
    assert _Verdicts.model_validate(answer) == _Verdicts(statements=[_Verdict(statement="ok", verdict=1)])
    plain = ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], body={}, headers={})
    assert foreign_prompt_responder(plain) == default_responder(plain) == "ok"


def test_ragqa_prompts_still_get_the_local_judges_answer_with_the_foreign_fallback(srv: FakeOpenAIServer) -> None:
    srv.script("*", ragqa_responder(fallback=foreign_prompt_responder))
    data = NLIInput(context="Ada Lovelace wrote programs in London.", statements=["Ada wrote programs.", "Ada flew."])
    messages = [{"role": m.role, "content": m.content} for m in NLI.messages(data)]
    fmt = {"type": "json_schema", "json_schema": {"name": "NLIOutput", "schema": NLI.output_schema}}
    ours = post(srv, "/v1/chat/completions", {"model": "m", "messages": messages, "response_format": fmt})
    verdicts = json.loads(ours["choices"][0]["message"]["content"])["verdicts"]
    assert [v["verdict"] for v in verdicts] == [1, 0]
    theirs = post(srv, "/v1/chat/completions", ragas_style(_Verdicts).body)
    assert _Verdicts.model_validate_json(theirs["choices"][0]["message"]["content"])
    assert srv.failures == []
