"""The OpenAI-compatible judge and embedder over real HTTP: wire format, structured output, repair, usage."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import factories
import pytest
from pydantic import SecretStr

from ragqa.errors import JudgeOutputError
from ragqa.judges.base import Embedder, Judge
from ragqa.judges.openai import (
    OpenAIEmbedder,
    OpenAIJudge,
    aclose_all,
    build_openai_embedders,
    extract_json,
    openai_base_url,
    usage_cost,
)
from ragqa.prompts.nli import NLI, NLIInput
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import (
    ChatOptions,
    EmbeddingOptions,
    Price,
    ResolvedChatModel,
    ResolvedEmbeddingModel,
    RetrySettings,
)
from ragqa.testing import ChatRequest, FakeOpenAIServer, ragqa_responder
from ragqa.usage import usage_scope

KEY = "sk-judge-test-5f1e2d3c4b5a"
DATA = StatementsInput(question="Who?", answer="Ada wrote programs. She lived in London.")


pytestmark = pytest.mark.usefixtures("reset_srv")


def chat_model(
    srv: FakeOpenAIServer, name: str = "m", base_url: str | None = None, **options: Any
) -> ResolvedChatModel:
    return factories.chat_model(
        base_url if base_url is not None else srv.base_url, name, id=f"judge-{name}", api_key=KEY,
        options=ChatOptions(**{"timeout": timedelta(minutes=10), **options}),  # never reached, however loaded
    )  # fmt: skip


async def ask(judge: OpenAIJudge, prompt: Any = STATEMENTS, data: Any = DATA) -> Any:
    try:
        return await judge.ask(prompt, data)
    finally:
        await judge.aclose()


@pytest.mark.parametrize(
    ("configured", "expected"),
    [
        ("https://openrouter.ai/api", "https://openrouter.ai/api/v1"),
        ("https://openrouter.ai/api/", "https://openrouter.ai/api/v1"),
        ("http://localhost:8000/v1", "http://localhost:8000/v1"),
        ("http://localhost:8000/v1/", "http://localhost:8000/v1"),
        (None, "https://api.openai.com/v1"),
    ],
)
def test_base_url_follows_spring_without_doubling_v1(configured: str | None, expected: str) -> None:
    assert openai_base_url(configured) == expected


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
async def test_requests_go_to_v1_chat_completions(srv: FakeOpenAIServer, suffix: str) -> None:
    await ask(OpenAIJudge(chat_model(srv, base_url=srv.base_url + suffix)))
    assert [r.path for r in srv.requests] == ["/v1/chat/completions"]


async def test_options_headers_and_max_tokens_on_the_wire(srv: FakeOpenAIServer) -> None:
    judge = OpenAIJudge(
        chat_model(srv, temperature=0.0, max_tokens=1000, top_p=0.9, seed=7, headers={"X-Title": "ragqa-tests"})
    )
    assert isinstance(judge, Judge)
    out = await ask(judge)
    assert out.statements == ["ok"]
    (request,) = srv.requests
    body = request.body
    assert body["model"] == "m"
    assert body["max_tokens"] == 1000 and "max_completion_tokens" not in body
    assert body["temperature"] == 0.0 and body["top_p"] == 0.9 and body["seed"] == 7
    assert request.headers["x-title"] == "ragqa-tests"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert body["messages"] == [{"role": m.role, "content": m.content} for m in STATEMENTS.messages(DATA)]


async def test_unset_options_are_not_sent(srv: FakeOpenAIServer) -> None:
    await ask(OpenAIJudge(chat_model(srv)))
    body = srv.requests[0].body
    for key in ("max_tokens", "max_completion_tokens", "temperature", "top_p", "seed"):
        assert key not in body


async def test_json_schema_is_the_default_structured_output(srv: FakeOpenAIServer) -> None:
    await ask(OpenAIJudge(chat_model(srv)))
    fmt = srv.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "StatementsOutput"
    assert fmt["json_schema"]["schema"] == STATEMENTS.output_schema


async def test_json_mode(srv: FakeOpenAIServer) -> None:
    srv.script("m", lambda r: {"statements": ["Ada wrote programs."]})
    out = await ask(OpenAIJudge(chat_model(srv, structured_output="json_mode")))
    assert out.statements == ["Ada wrote programs."]
    assert srv.requests[0].body["response_format"] == {"type": "json_object"}


async def test_function_calling_mode_forces_one_tool_with_the_schema(srv: FakeOpenAIServer) -> None:
    srv.script("m", ragqa_responder())
    out = await ask(OpenAIJudge(chat_model(srv, structured_output="function_calling")))
    assert out.statements == ["Ada wrote programs.", "She lived in London."]
    body = srv.requests[0].body
    assert "response_format" not in body
    assert body["tools"][0]["function"]["parameters"] == STATEMENTS.output_schema
    assert body["tool_choice"] == {"type": "function", "function": {"name": "StatementsOutput"}}


async def test_prompt_mode_extracts_json_from_prose_and_fences(srv: FakeOpenAIServer) -> None:
    srv.script("m", lambda r: 'Sure! Here it is:\n```json\n{"statements": ["a {b}"]}\n```\nAnything else?')
    out = await ask(OpenAIJudge(chat_model(srv, structured_output="prompt")))
    assert out.statements == ["a {b}"]
    body = srv.requests[0].body
    assert "response_format" not in body and "tools" not in body
    assert len(srv.requests) == 1  # no repair needed


def test_extract_json_finds_the_first_balanced_object() -> None:
    assert extract_json('noise {"a": "}"} tail {"b": 2}') == '{"a": "}"}'
    assert extract_json('```\n{"x": [1, {"y": 2}]}\n```') == '{"x": [1, {"y": 2}]}'
    assert extract_json('{broken {"ok": 1}') == '{"ok": 1}'
    assert extract_json("[1, 2] no object") is None
    assert extract_json("") is None


async def test_one_repair_attempt_fixes_invalid_output(srv: FakeOpenAIServer) -> None:
    answers = iter(['{"statement": "wrong key"}', '{"statements": ["fixed"]}'])
    srv.script("m", lambda r: next(answers))
    out = await ask(OpenAIJudge(chat_model(srv)))
    assert out.statements == ["fixed"]
    first, repair = srv.requests
    messages = repair.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == '{"statement": "wrong key"}'
    assert "statements: Field required" in messages[3]["content"]
    assert repair.body["response_format"] == first.body["response_format"]


async def test_garbage_after_repair_is_a_typed_output_error_with_raw_kept(srv: FakeOpenAIServer) -> None:
    srv.script("m", lambda r: "I cannot answer that. " * 500)
    with pytest.raises(JudgeOutputError) as info:
        await ask(OpenAIJudge(chat_model(srv)))
    err = info.value
    assert err.judge_id == "judge-m" and err.step == "statements"
    assert "after one repair" in str(err) and "StatementsOutput" in str(err)
    assert err.raw is not None and err.raw.startswith("I cannot answer that.")
    assert "--- after repair ---" in err.raw and len(err.raw) < 4100
    assert len(srv.requests) == 2


async def test_malformed_http_body_is_a_typed_output_error(srv: FakeOpenAIServer) -> None:
    srv.malformed("m")
    with pytest.raises(JudgeOutputError) as info:
        await ask(OpenAIJudge(chat_model(srv)))
    assert info.value.raw is not None and info.value.raw.startswith('{"id": "chatcmpl-x"')
    assert "not a valid completion" in str(info.value)


async def test_usage_and_cost_recorded_per_request_including_the_repair(srv: FakeOpenAIServer) -> None:
    answers = iter(["nope", '{"statements": ["x"]}'])
    srv.script("m", lambda r: next(answers))
    model = chat_model(srv).model_copy(update={"price": Price(prompt=2.0, completion=10.0)})
    with usage_scope() as meter:
        await ask(OpenAIJudge(model))
    usage = meter.total
    assert usage.calls == 2
    assert usage.prompt_tokens > 100 and usage.completion_tokens == 1 + 2  # words of "nope" and {"statements": ["x"]}
    assert usage.cost == pytest.approx(usage_cost(model.price, usage.prompt_tokens, usage.completion_tokens))
    assert usage.latency_s > 0
    assert usage_cost(None, 10, 10) is None
    assert usage_cost(Price(prompt=1.0, completion=2.0), 1_000_000, 500_000) == 2.0


async def test_nli_over_http_with_the_ragqa_responder(srv: FakeOpenAIServer) -> None:
    srv.script("m", ragqa_responder())
    data = NLIInput(context="Ada Lovelace wrote programs in London.", statements=["Ada wrote programs.", "Ada flew."])
    out = await ask(OpenAIJudge(chat_model(srv)), NLI, data)
    assert [v.verdict for v in out.verdicts] == [1, 0]


def test_fingerprint_names_model_and_options_but_never_the_key(srv: FakeOpenAIServer) -> None:
    judge = OpenAIJudge(chat_model(srv, temperature=0.0, headers={"X-Api-Key": KEY}))
    fp = json.loads(judge.fingerprint)
    assert fp["model"] == "m" and fp["temperature"] == 0.0 and fp["structured_output"] == "json_schema"
    assert KEY not in judge.fingerprint and KEY not in repr(judge)


async def test_a_shared_request_recorder_sees_the_script_input(srv: FakeOpenAIServer) -> None:
    seen: list[ChatRequest] = []

    def fn(request: ChatRequest) -> dict[str, Any]:
        seen.append(request)
        return {"statements": []}

    srv.script("m", fn)
    await ask(OpenAIJudge(chat_model(srv)))
    assert seen[0].input == DATA.model_dump()
    assert seen[0].schema == STATEMENTS.output_schema and seen[0].mode == "json_schema"


# -- embeddings ---------------------------------------------------------------------------------


def emb_model(srv: FakeOpenAIServer, **options: Any) -> ResolvedEmbeddingModel:
    return ResolvedEmbeddingModel(
        id="emb",
        model="text-embedding-test",
        base_url=srv.base_url,
        api_key=SecretStr(KEY),
        options=EmbeddingOptions(**options),
        retry=RetrySettings(max_attempts=2),
    )


async def test_embeddings_are_batched_and_honour_dimensions(srv: FakeOpenAIServer) -> None:
    embedder = OpenAIEmbedder(emb_model(srv, dimensions=12, batch_size=4))
    assert isinstance(embedder, Embedder)
    texts = [f"text number {i}" for i in range(10)]
    with usage_scope() as meter:
        vectors = await embedder.embed(texts)
    again = await embedder.embed(["text number 3"])
    await embedder.aclose()
    assert len(vectors) == 10 and {len(v) for v in vectors} == {12}
    assert again[0] == pytest.approx(vectors[3])  # order kept across concurrent batches
    requests = srv.requests_for("text-embedding-test")
    assert sorted(len(r.body["input"]) for r in requests[:3]) == [2, 4, 4]
    assert all(r.path == "/v1/embeddings" and r.body["dimensions"] == 12 for r in requests)
    assert all(isinstance(t, str) for r in requests for t in r.body["input"])  # no tiktoken token ids
    assert meter.total.calls == 3 and meter.total.prompt_tokens == 30


async def test_embedding_default_batch_and_no_dimensions(srv: FakeOpenAIServer) -> None:
    (embedder,) = build_openai_embedders([emb_model(srv)])
    vectors = await embedder.embed([f"t{i}" for i in range(70)])
    await aclose_all([embedder])
    assert len(vectors) == 70 and len(vectors[0]) == 8
    requests = srv.requests_for("text-embedding-test")
    assert sorted(len(r.body["input"]) for r in requests) == [6, 64]
    assert all("dimensions" not in r.body for r in requests)
    assert await OpenAIEmbedder(emb_model(srv)).embed([]) == []


@pytest.mark.slow
async def test_embedding_retries_429_then_succeeds(srv: FakeOpenAIServer) -> None:
    srv.fail("text-embedding-test", times=1, status=503)
    embedder = OpenAIEmbedder(emb_model(srv))
    vectors = await embedder.embed(["a"])
    await embedder.aclose()
    assert len(vectors) == 1 and len(srv.requests) == 2
