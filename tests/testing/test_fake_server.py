"""The fake OpenAI-compatible server itself, driven with the plain OpenAI SDK and raw HTTP."""

from __future__ import annotations

import ast
import base64
import json
import math
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest

import ragqa.testing.launch as launch
from ragqa.prompts.nli import NLI, NLIOutput
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.testing import ChatRequest, FakeOpenAIServer, Fault
from ragqa.testing.server import example_from_schema, fake_openai_server_fixture, fake_openai_server_process

pytestmark = pytest.mark.usefixtures("reset_srv")


def post(srv: FakeOpenAIServer, path: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    req = urllib.request.Request(
        srv.base_url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=600) as resp:  # a hang guard, not a speed check
        return resp.status, dict(resp.headers), resp.read().decode()


def chat(srv: FakeOpenAIServer, model: str = "m", **extra: Any) -> dict[str, Any]:
    body = {"model": model, "messages": [{"role": "user", "content": "say hi please"}], **extra}
    status, _, text = post(srv, "/v1/chat/completions", body)
    assert status == 200
    result: dict[str, Any] = json.loads(text)
    return result


def test_sync_context_manager_binds_a_free_loopback_port() -> None:
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        assert a.base_url.startswith("http://127.0.0.1:")
        assert a.port != b.port and a.port > 0
        assert a.openai_base_url == a.base_url + "/v1"
        assert chat(a)["choices"][0]["message"]["content"] == "ok"


def test_json_schema_request_gets_a_schema_valid_instance_and_usage(srv: FakeOpenAIServer) -> None:
    schema = NLI.output_schema
    body = chat(srv, response_format={"type": "json_schema", "json_schema": {"name": "NLIOutput", "schema": schema}})
    content = body["choices"][0]["message"]["content"]
    parsed = NLIOutput.model_validate_json(content)
    assert len(parsed.verdicts) == 1 and parsed.verdicts[0].verdict == 1  # integer clamped into 0..1
    assert body["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": body["usage"]["completion_tokens"],
        "total_tokens": 3 + body["usage"]["completion_tokens"],
    }
    assert body["usage"]["completion_tokens"] > 0


def test_json_object_tools_and_text_modes(srv: FakeOpenAIServer) -> None:
    assert json.loads(chat(srv, response_format={"type": "json_object"})["choices"][0]["message"]["content"]) == {
        "ok": True
    }
    tool = {"type": "function", "function": {"name": "StatementsOutput", "parameters": STATEMENTS.output_schema}}
    message = chat(srv, tools=[tool], tool_choice="required")["choices"][0]["message"]
    call = message["tool_calls"][0]["function"]
    assert call["name"] == "StatementsOutput"
    assert json.loads(call["arguments"]) == {"statements": ["ok"]}
    assert chat(srv)["choices"][0]["finish_reason"] == "stop"


def test_script_sees_the_request_and_can_return_text_or_a_fault(srv: FakeOpenAIServer) -> None:
    seen: list[ChatRequest] = []

    def fn(request: ChatRequest) -> dict[str, Any] | str | Fault:
        seen.append(request)
        if len(seen) == 1:
            return '```json\n{"a": 1}\n```'
        return Fault(status=503)

    srv.script("scripted", fn)
    assert chat(srv, "scripted")["choices"][0]["message"]["content"].startswith("```json")
    with pytest.raises(urllib.error.HTTPError) as info:
        chat(srv, "scripted")
    assert info.value.code == 503
    assert seen[0].prompt == "say hi please" and seen[0].mode == "text" and seen[0].model == "scripted"
    # other models keep the default responder
    assert chat(srv, "other")["choices"][0]["message"]["content"] == "ok"


def test_fail_n_times_with_retry_after_then_succeed(srv: FakeOpenAIServer) -> None:
    srv.fail("m", times=2, status=429, retry_after=1.5, retry_after_ms=1500)
    for _ in range(2):
        with pytest.raises(urllib.error.HTTPError) as info:
            chat(srv)
        assert info.value.code == 429
        assert info.value.headers["Retry-After"] == "1.5"
        assert info.value.headers["retry-after-ms"] == "1500"
        assert json.loads(info.value.read())["error"]["type"] == "rate_limit_exceeded"
    assert chat(srv)["choices"][0]["message"]["content"] == "ok"
    assert len(srv.requests_for("m")) == 3


def test_malformed_body_and_latency(srv: FakeOpenAIServer) -> None:
    srv.malformed("m")
    status, _, text = post(srv, "/v1/chat/completions", {"model": "m", "messages": []})
    assert status == 200
    with pytest.raises(ValueError):
        json.loads(text)
    srv.set_latency("slow", 0.2)
    started = time.perf_counter()
    chat(srv, "slow")
    assert time.perf_counter() - started >= 0.2


def test_hang_is_cut_by_the_client_timeout_and_by_stop() -> None:
    server = FakeOpenAIServer().start()
    server.hang("m", seconds=math.inf)
    client = openai.OpenAI(base_url=server.openai_base_url, api_key="k", max_retries=0, timeout=0.3)
    with pytest.raises(openai.APITimeoutError):  # the endless hang ends by the client's timeout
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert len(server.requests_for("m")) == 1
    # stop() must not wait for the hanging handler: with an endless hang, finishing at all proves it
    stopper = threading.Thread(target=server.stop, daemon=True)
    stopper.start()
    stopper.join(timeout=600)
    assert not stopper.is_alive()
    client.close()


def _chat_in_thread(srv: FakeOpenAIServer, model: str) -> tuple[threading.Thread, list[Any]]:
    """Send one chat request from a thread; the list gets its answer (or the exception it raised)."""
    outcome: list[Any] = []

    def send() -> None:
        try:
            outcome.append(chat(srv, model))
        except Exception as exc:  # stop() may cut the connection of a released request
            outcome.append(exc)

    worker = threading.Thread(target=send, daemon=True)
    worker.start()
    return worker, outcome


def _until_parked(srv: FakeOpenAIServer, n: int) -> None:
    while srv.parked < n:  # a lower bound on time only
        time.sleep(0.005)


def test_hold_parks_requests_until_release(srv: FakeOpenAIServer) -> None:
    srv.hold("held")
    worker, outcome = _chat_in_thread(srv, "held")
    _until_parked(srv, 1)
    assert len(srv.requests_for("held")) == 1 and outcome == []  # recorded, in flight, not answered
    assert chat(srv, "other")["choices"][0]["message"]["content"] == "ok"  # other models are not held
    assert srv.parked == 1
    srv.release("held")
    worker.join(timeout=600)  # a hang guard, not a speed check
    assert outcome[0]["choices"][0]["message"]["content"] == "ok" and srv.parked == 0
    srv.release("held")  # releasing again does nothing


def test_reset_and_stop_release_held_requests() -> None:
    server = FakeOpenAIServer().start()
    server.hold("*")
    worker, outcome = _chat_in_thread(server, "a")
    _until_parked(server, 1)
    server.reset()
    worker.join(timeout=600)
    assert outcome[0]["choices"][0]["message"]["content"] == "ok" and server.parked == 0
    server.hold("*")
    worker, outcome = _chat_in_thread(server, "b")
    _until_parked(server, 1)
    stopper = threading.Thread(target=server.stop, daemon=True)
    stopper.start()
    stopper.join(timeout=600)  # stop() ends the hold instead of waiting for a release that never comes
    worker.join(timeout=600)
    assert not stopper.is_alive() and not worker.is_alive() and len(outcome) == 1


def test_api_key_check_and_recorded_headers() -> None:
    with FakeOpenAIServer(api_key="sk-right") as server:
        good = openai.OpenAI(base_url=server.openai_base_url, api_key="sk-right", max_retries=0)
        bad = openai.OpenAI(base_url=server.openai_base_url, api_key="sk-wrong", max_retries=0)
        good.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(openai.AuthenticationError):
            bad.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        auth = [r.headers["authorization"] for r in server.requests]
        assert auth == ["Bearer sk-right", "Bearer sk-wrong"]
        assert all(r.path == "/v1/chat/completions" for r in server.requests)
        good.close()
        bad.close()


def test_embeddings_are_deterministic_unit_vectors_in_float_and_base64(srv: FakeOpenAIServer) -> None:
    _, _, text = post(srv, "/v1/embeddings", {"model": "e", "input": ["alpha", "beta"], "dimensions": 6})
    body = json.loads(text)
    vectors = [d["embedding"] for d in body["data"]]
    assert [len(v) for v in vectors] == [6, 6]
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-9) for v in vectors)
    assert vectors[0] != vectors[1]
    assert body["usage"]["prompt_tokens"] == 2
    _, _, text = post(
        srv, "/v1/embeddings", {"model": "e", "input": "alpha", "encoding_format": "base64", "dimensions": 6}
    )
    raw = base64.b64decode(json.loads(text)["data"][0]["embedding"])
    decoded = struct.unpack("<6f", raw)
    assert all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-7) for a, b in zip(decoded, vectors[0], strict=True))
    _, _, text = post(srv, "/v1/embeddings", {"model": "e", "input": "alpha"})
    assert len(json.loads(text)["data"][0]["embedding"]) == 8  # default dimensions


def test_the_process_runner_serves_ragqa_prompts_from_python_dash_m() -> None:
    data = StatementsInput(question="q", answer="Ada wrote programs. She lived in London.")
    messages = [{"role": m.role, "content": m.content} for m in STATEMENTS.messages(data)]
    fmt = {"type": "json_schema", "json_schema": {"name": "StatementsOutput", "schema": STATEMENTS.output_schema}}
    with fake_openai_server_process(responder="ragqa") as base_url:
        assert base_url.startswith("http://127.0.0.1:")
        client = openai.OpenAI(base_url=base_url + "/v1", api_key="k", max_retries=0, timeout=10)
        reply = client.chat.completions.create(model="any", messages=messages, response_format=fmt)  # type: ignore[arg-type]
        client.close()
    assert json.loads(reply.choices[0].message.content or "") == {
        "statements": ["Ada wrote programs.", "She lived in London."]
    }


def test_the_module_entry_point_has_a_help_text() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ragqa.testing.server", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "--responder {default,ragqa,ragqa+foreign}" in proc.stdout
    assert "RuntimeWarning" not in proc.stderr


def test_example_from_schema_follows_refs_enums_and_bounds() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {"enum": ["b", "a"]},
            "n": {"type": "integer", "minimum": 3},
            "x": {"type": "number", "maximum": 0.5},
            "maybe": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        },
        "$defs": {"Item": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    assert example_from_schema(schema) == {
        "kind": "b",
        "n": 3,
        "x": 0.5,
        "maybe": True,
        "items": [{"name": "ok"}],
    }


server_fixture = fake_openai_server_fixture(scope="function", latency_s=0.0)


def test_fixture_factory_yields_a_running_server(server_fixture: FakeOpenAIServer) -> None:
    assert chat(server_fixture)["model"] == "m"
    assert len(server_fixture.requests) == 1


def test_the_launcher_imports_only_the_standard_library() -> None:
    # benchmarks/_fake_server.py loads ragqa/testing/launch.py by file so that a benchmark's launcher
    # never imports ragqa: the module must stay free of ragqa (and of any third-party package)
    tree = ast.parse(Path(launch.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert {name.split(".")[0] for name in imported} <= set(sys.stdlib_module_names) | {"__future__"}
    assert fake_openai_server_process is launch.fake_openai_server_process
