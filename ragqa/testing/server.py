"""A fake OpenAI-compatible HTTP server for testing the real client path offline.

:class:`FakeOpenAIServer` is an aiohttp app on ``127.0.0.1`` with a free port, running in a
background thread with its own event loop, so it serves sync and async code alike. It answers

- ``POST /v1/chat/completions`` with structured output (``response_format`` ``json_schema`` or
  ``json_object``), function calling (``tools``) or plain text, every reply with ``usage``;
- ``POST /v1/embeddings`` with deterministic unit vectors of ``dimensions`` (default 8) for a
  string, a list of strings or token arrays, as floats or base64 (``encoding_format``).

Answers are scripted per model with :meth:`FakeOpenAIServer.script` (a function of the
:class:`ChatRequest`); by default a schema-valid instance is built from the request's JSON schema.
Faults come on demand (:meth:`~FakeOpenAIServer.fail`, :meth:`~FakeOpenAIServer.hang`,
:meth:`~FakeOpenAIServer.malformed`) and every request is recorded (:attr:`~FakeOpenAIServer.requests`)
so tests can assert on prompts, headers and counts. :func:`ragqa_responder` answers ragqa's
``statements`` and ``nli`` prompts from simple rules so real metrics can run end to end over HTTP.

Example::

    with FakeOpenAIServer() as srv:
        srv.script("judge-a", ragqa_responder())
        srv.fail("judge-a", times=2, status=429, retry_after=0.1)
        ...  # point a judge's base-url at srv.base_url
        assert len(srv.requests_for("judge-a")) == 3
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import hashlib
import json
import math
import random
import re
import socket
import struct
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ragqa.schema import Language
from ragqa.settings import LocalJudgeSettings

__all__ = [
    "ChatRequest",
    "FakeOpenAIServer",
    "Fault",
    "RecordedRequest",
    "Responder",
    "example_from_schema",
    "fake_openai_server",
    "fake_openai_server_fixture",
    "fake_openai_server_process",
    "local_judge_responder",
    "ragqa_responder",
]


@dataclass(frozen=True)
class Fault:
    """A failure the server answers instead of a completion.

    Attributes:
        status: the HTTP status (e.g. 429, 500, 503); ignored when ``body`` is a 200 body.
        retry_after: ``Retry-After`` header in seconds (sent as a decimal number), or ``None``.
        retry_after_ms: ``retry-after-ms`` header in milliseconds, or ``None``.
        hang_s: sleep this long before answering (past the client's timeout), or ``None``. A
            hang with status 200 and no body then answers normally (a slow answer).
        body: a raw response body sent with ``status`` as-is (e.g. truncated JSON with 200), or
            ``None`` for an OpenAI-style error object.
    """

    status: int = 500
    retry_after: float | None = None
    retry_after_ms: float | None = None
    hang_s: float | None = None
    body: str | None = None


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        path: the URL path (``/v1/chat/completions``).
        model: the ``model`` of the body (``""`` when absent).
        headers: request headers, names lower-cased.
        body: the parsed JSON body (``{}`` when it was not JSON).
        t: ``time.monotonic()`` when the request arrived.
    """

    path: str
    model: str
    headers: dict[str, str]
    body: dict[str, Any]
    t: float


@dataclass(frozen=True)
class ChatRequest:
    """A chat completion request, as seen by a responder.

    Attributes:
        model: the requested model.
        messages: the OpenAI-style messages.
        body: the whole JSON body.
        headers: request headers, names lower-cased.
    """

    model: str
    messages: list[dict[str, Any]]
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def prompt(self) -> str:
        """The text of the last user message (the rendered ragqa prompt)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _content_text(message.get("content"))
        return ""

    @property
    def mode(self) -> str:
        """How structured output was asked: ``json_schema``, ``json_object``, ``tools`` or ``text``."""
        if self.body.get("tools"):
            return "tools"
        fmt = self.body.get("response_format") or {}
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        return kind if kind in ("json_schema", "json_object") else "text"

    @property
    def schema(self) -> dict[str, Any] | None:
        """The JSON schema asked for (``response_format.json_schema.schema`` or the first tool's parameters)."""
        if self.mode == "tools":
            tool = self.body["tools"][0]
            params = tool.get("function", {}).get("parameters")
            return params if isinstance(params, dict) else None
        fmt = self.body.get("response_format") or {}
        if self.mode == "json_schema":
            schema = fmt.get("json_schema", {}).get("schema")
            return schema if isinstance(schema, dict) else None
        return None

    @property
    def input(self) -> dict[str, Any] | None:
        """The ragqa prompt's input object (the JSON after the last ``Input:``), or ``None``."""
        return _prompt_input(self.prompt)


Responder = Callable[[ChatRequest], "dict[str, Any] | str | Fault"]
"""Answers a chat request: a dict (sent as JSON), a string (sent verbatim) or a :class:`Fault`."""


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _prompt_input(prompt: str) -> dict[str, Any] | None:
    marker = prompt.rfind("Input: ")
    if marker < 0:
        marker = prompt.rfind("Вход: ")
        if marker < 0:
            return None
        start = marker + len("Вход: ")
    else:
        start = marker + len("Input: ")
    try:
        value, _ = json.JSONDecoder().raw_decode(prompt[start:].lstrip())
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def example_from_schema(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """Build a value that validates against a JSON schema (pydantic's flavour).

    Objects get every property, arrays one item, strings ``"ok"``, numbers 0.75 (clamped to
    ``minimum``/``maximum``), integers 1 (clamped), booleans ``true``, enums their first value;
    ``$ref`` into ``$defs`` and ``anyOf``/``oneOf`` (first non-null branch) are followed.

    Args:
        schema: the (sub)schema.
        root: the root schema holding ``$defs`` (default: ``schema``).

    Returns:
        A JSON-compatible value.
    """
    root = root if root is not None else schema
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return example_from_schema(root.get("$defs", {}).get(name, {}), root)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            return example_from_schema(branches[0], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        return {name: example_from_schema(sub, root) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [example_from_schema(schema.get("items", {}), root)]
    if kind == "string":
        return "ok"
    if kind in ("integer", "number"):
        value: float = 1 if kind == "integer" else 0.75
        if "maximum" in schema:
            value = min(value, schema["maximum"])
        if "minimum" in schema:
            value = max(value, schema["minimum"])
        return int(value) if kind == "integer" else value
    if kind == "boolean":
        return True
    return None


def default_responder(request: ChatRequest) -> dict[str, Any] | str:
    """Answer with a schema-valid instance, ``{"ok": true}`` in JSON mode, or a short text."""
    schema = request.schema
    if schema is not None:
        value = example_from_schema(schema)
        return value if isinstance(value, dict) else {"value": value}
    if request.mode == "json_object":
        return {"ok": True}
    return "ok"


_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_STOP_WORDS = (
    "a an the is are was were be been of in on at to for and or by with as it its this that from "
    "which who whom what when where has have had do does did not no"
)
_STOP = frozenset(_STOP_WORDS.split(" "))


def _content_words(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


def ragqa_responder(
    *, support_threshold: float = 0.8, fallback: Responder | None = None
) -> Callable[[ChatRequest], dict[str, Any] | str | Fault]:
    """A responder that answers ragqa's ``statements`` and ``nli`` prompts from simple rules.

    - ``statements`` (input ``{question, answer}``): the answer split into sentences.
    - ``nli`` (input ``{context, statements}``): verdict 1 when at least ``support_threshold``
      of the statement's content words (stop words removed, case-folded) occur in the context.

    Other prompts go to ``fallback`` (default: a schema-valid instance).

    Args:
        support_threshold: share of content words in [0, 1] needed for verdict 1.
        fallback: responder for prompts this one does not know.

    Returns:
        A responder for :meth:`FakeOpenAIServer.script`.
    """
    other = fallback or default_responder

    def respond(request: ChatRequest) -> dict[str, Any] | str | Fault:
        data = request.input or {}
        if {"question", "answer"} <= data.keys():
            sentences = [s.strip() for s in _SENTENCE_END.split(str(data["answer"])) if s.strip()]
            return {"statements": sentences}
        if {"context", "statements"} <= data.keys():
            context = _content_words(str(data["context"]))
            verdicts = []
            for statement in data["statements"]:
                words = _content_words(str(statement))
                share = len(words & context) / len(words) if words else 1.0
                ok = share >= support_threshold
                verdicts.append(
                    {
                        "statement": statement,
                        "reason": f"{share:.0%} of its content words occur in the context",
                        "verdict": int(ok),
                    }
                )
            return {"verdicts": verdicts}
        return other(request)

    return respond


def local_judge_responder(
    settings: LocalJudgeSettings | None = None, *, fallback: Responder | None = None
) -> Callable[[ChatRequest], dict[str, Any] | str | Fault]:
    """A responder that answers every ragqa prompt the way the offline local judge would.

    The prompt is recognised by the requested schema's title (the output model's name) or, in
    modes without a schema, by the input's fields; the local judge answers it and the output
    goes back as JSON, so graded support is lost and the client sees binary verdicts as from
    an LLM. Use it to drive every metric end to end over real HTTP.

    Args:
        settings: the local judge's settings (default: its defaults).
        fallback: responder for requests that are not ragqa prompts (default: schema instance).

    Returns:
        A responder for :meth:`FakeOpenAIServer.script`.
    """
    from ragqa.judges.local import LocalJudge
    from ragqa.prompts import PROMPTS

    judge = LocalJudge("fake-local", settings)
    other = fallback or default_responder
    by_title = {p.output_model.__name__: p for p in PROMPTS.values()}
    by_fields = {frozenset(p.input_model.model_fields): p for p in PROMPTS.values()}

    def respond(request: ChatRequest) -> dict[str, Any] | str | Fault:
        data = request.input
        title = (request.schema or {}).get("title")
        prompt = by_title.get(str(title)) if title else None
        if prompt is None and data is not None:
            prompt = by_fields.get(frozenset(data))
        if prompt is None or data is None:
            return other(request)
        parsed = prompt.input_model.model_validate(data)
        language: Language = "ru" if "Теперь сделай то же самое" in request.prompt else "en"
        # The server's own loop is running in this thread: answer on a short-lived loop beside it.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            out = pool.submit(asyncio.run, judge.ask(prompt, parsed, language=language)).result()
        answer: dict[str, Any] = out.model_dump(mode="json")
        return answer

    return respond


def _embedding(text: str, dimensions: int) -> list[float]:
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")
    rng = random.Random(seed)
    vec = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _count_tokens(text: str) -> int:
    return len(_WORD.findall(text))


@dataclass
class _State:
    scripts: dict[str, Responder] = field(default_factory=dict)
    faults: dict[str, deque[Fault]] = field(default_factory=lambda: defaultdict(deque))
    latency: dict[str, float] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)


class FakeOpenAIServer:
    """An OpenAI-compatible server on ``127.0.0.1`` for tests (see the module docstring).

    Args:
        latency_s: delay before every answer, seconds (per model: :meth:`set_latency`).
        api_key: when set, requests without ``Authorization: Bearer <api_key>`` get 401.
        host: the interface to bind (loopback by default).
        port: the port (0 = a free one).
        record: keep every request in :attr:`requests` (turn off for long benchmarks).

    Thread-safety: scripting methods may be called from any thread while the server runs.
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record: bool = True,
    ) -> None:
        self.latency_s = latency_s
        self.api_key = api_key
        self.record = record
        self._host = host
        self._port = port
        self._state = _State()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Start serving in a background thread; returns ``self`` (idempotent)."""
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._port))
        self._port = sock.getsockname()[1]
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(self._serve(sock))
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"fake-openai-{self._port}", daemon=True)
        self._thread.start()
        if not ready.wait(timeout=10):
            raise RuntimeError("fake OpenAI server did not start within 10 s")
        return self

    async def _serve(self, sock: socket.socket) -> None:
        self._closing = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_post("/embeddings", self._embeddings)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        self._runner = runner

    def stop(self) -> None:
        """Stop the server and its thread (idempotent); hanging requests are cut."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shutdown() -> None:
            if self._closing is not None:
                self._closing.set()
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._loop = self._thread = self._runner = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> FakeOpenAIServer:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)

    # -- addresses ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (valid after :meth:`start`)."""
        return self._port

    @property
    def base_url(self) -> str:
        """The Spring-style base URL, without ``/v1`` (what ``base-url`` of a model takes)."""
        return f"http://{self._host}:{self._port}"

    @property
    def openai_base_url(self) -> str:
        """The base URL with ``/v1``, for clients that want it (the OpenAI SDK)."""
        return self.base_url + "/v1"

    # -- scripting ---------------------------------------------------------------------------

    def script(self, model: str, fn: Responder) -> None:
        """Answer chat requests for ``model`` with ``fn(request)`` (``"*"``: every unscripted model)."""
        with self._lock:
            self._state.scripts[model] = fn

    def fail(
        self,
        model: str,
        *,
        times: int = 1,
        status: int = 500,
        retry_after: float | None = None,
        retry_after_ms: float | None = None,
    ) -> None:
        """Answer the next ``times`` requests for ``model`` (``"*"``: any model) with HTTP ``status``."""
        self.inject(model, Fault(status=status, retry_after=retry_after, retry_after_ms=retry_after_ms), times=times)

    def hang(self, model: str, *, times: int = 1, seconds: float = 30.0) -> None:
        """Let the next ``times`` requests for ``model`` hang ``seconds``, then answer normally.

        A hang longer than the client's timeout makes the client time out; stopping the server
        ends every hang at once.
        """
        self.inject(model, Fault(status=200, hang_s=seconds), times=times)

    def malformed(self, model: str, *, times: int = 1, body: str = '{"id": "chatcmpl-x", "choices": [{"mess') -> None:
        """Answer the next ``times`` requests for ``model`` with a truncated (invalid) JSON body."""
        self.inject(model, Fault(status=200, body=body), times=times)

    def inject(self, model: str, fault: Fault, *, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests of ``model`` (``"*"``: any model)."""
        with self._lock:
            self._state.faults[model].extend([fault] * times)

    def set_latency(self, model: str, seconds: float) -> None:
        """Delay every answer for ``model`` by ``seconds``."""
        with self._lock:
            self._state.latency[model] = seconds

    def reset(self) -> None:
        """Forget scripts, faults, latencies and recorded requests."""
        with self._lock:
            self._state = _State()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._state.requests)

    def requests_for(self, model: str, path: str | None = None) -> list[RecordedRequest]:
        """The requests for ``model`` (optionally only those to ``path``)."""
        return [r for r in self.requests if r.model == model and (path is None or r.path == path)]

    def clear_requests(self) -> None:
        """Forget recorded requests."""
        with self._lock:
            self._state.requests.clear()

    # -- handlers ----------------------------------------------------------------------------

    async def _receive(self, request: web.Request) -> tuple[dict[str, Any], str, dict[str, str], web.Response | None]:
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            body = await request.json()
            if not isinstance(body, dict):
                body = {}
        except ValueError:
            body = {}
        model = str(body.get("model", ""))
        with self._lock:
            if self.record:
                self._state.requests.append(
                    RecordedRequest(path=request.path, model=model, headers=headers, body=body, t=time.monotonic())
                )
            queue = self._state.faults.get(model) or self._state.faults.get("*")
            fault = queue.popleft() if queue else None
            latency = self._state.latency.get(model, self.latency_s)
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return body, model, headers, _error(401, "invalid api key", "invalid_request_error")
        if latency > 0:
            await asyncio.sleep(latency)
        if fault is not None:
            if fault.hang_s is not None:
                await self._hang(fault.hang_s)
                if fault.body is None and fault.status == 200:
                    return body, model, headers, None  # a slow but normal answer
            return body, model, headers, await self._fault(fault)
        return body, model, headers, None

    async def _hang(self, seconds: float) -> None:
        assert self._closing is not None
        with suppress(TimeoutError):
            await asyncio.wait_for(self._closing.wait(), timeout=seconds)

    async def _fault(self, fault: Fault) -> web.Response:
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = f"{fault.retry_after:g}"
        if fault.retry_after_ms is not None:
            headers["retry-after-ms"] = f"{fault.retry_after_ms:g}"
        if fault.body is not None:
            return web.Response(status=fault.status, text=fault.body, content_type="application/json", headers=headers)
        kind = "rate_limit_exceeded" if fault.status == 429 else "server_error"
        return _error(fault.status, f"injected fault {fault.status}", kind, headers)

    async def _chat(self, request: web.Request) -> web.Response:
        body, model, headers, early = await self._receive(request)
        if early is not None:
            return early
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        chat = ChatRequest(model=model, messages=list(messages or []), body=body, headers=headers)
        with self._lock:
            responder = self._state.scripts.get(model) or self._state.scripts.get("*") or default_responder
        answer = responder(chat)
        if isinstance(answer, Fault):
            if answer.hang_s is not None:
                await self._hang(answer.hang_s)
            if answer.status != 200 or answer.body is not None:
                return await self._fault(answer)
            answer = default_responder(chat)  # a hang that ended before the client gave up
        text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        prompt_tokens = sum(_count_tokens(_content_text(m.get("content"))) for m in chat.messages)
        completion_tokens = max(1, _count_tokens(text))
        message: dict[str, Any] = {"role": "assistant", "content": text}
        finish = "stop"
        if chat.mode == "tools":
            tool = body["tools"][0].get("function", {})
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{time.monotonic_ns()}",
                        "type": "function",
                        "function": {"name": tool.get("name", "tool"), "arguments": text},
                    }
                ],
            }
            finish = "tool_calls"
        return web.json_response(
            {
                "id": f"chatcmpl-{time.monotonic_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    async def _embeddings(self, request: web.Request) -> web.Response:
        body, model, _, early = await self._receive(request)
        if early is not None:
            return early
        raw = body.get("input", [])
        if isinstance(raw, str) or (isinstance(raw, list) and raw and isinstance(raw[0], int)):
            raw = [raw]
        texts = [t if isinstance(t, str) else " ".join(map(str, t)) for t in raw]
        dims = int(body.get("dimensions") or 8)
        b64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vec = _embedding(text, dims)
            emb: Any = base64.b64encode(struct.pack(f"<{dims}f", *vec)).decode("ascii") if b64 else vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(_count_tokens(t) for t in texts)
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )


def _error(status: int, message: str, kind: str, headers: Mapping[str, str] | None = None) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": kind, "code": kind, "param": None}},
        status=status,
        headers=dict(headers or {}),
    )


@contextmanager
def fake_openai_server(**kwargs: Any) -> Iterator[FakeOpenAIServer]:
    """Run a :class:`FakeOpenAIServer` for the block (keyword arguments go to its constructor).

    Example::

        @pytest.fixture
        def server():
            with fake_openai_server(latency_s=0.01) as srv:
                yield srv
    """
    server = FakeOpenAIServer(**kwargs)
    with server:
        yield server


def fake_openai_server_fixture(*, scope: str = "function", **kwargs: Any) -> Any:
    """Make a pytest fixture that yields a running :class:`FakeOpenAIServer`.

    Put ``fake_server = fake_openai_server_fixture(scope="module")`` in a ``conftest.py`` (or a
    test module) and ask for ``fake_server`` in tests. With a scope wider than ``function`` the
    server is shared: call :meth:`FakeOpenAIServer.reset` where a test needs a clean one.

    Args:
        scope: the pytest fixture scope.
        **kwargs: passed to :class:`FakeOpenAIServer`.

    Returns:
        A pytest fixture function.
    """
    import pytest

    def fixture() -> Iterator[FakeOpenAIServer]:
        with fake_openai_server(**kwargs) as srv:
            yield srv

    return pytest.fixture(scope=scope)(fixture)  # type: ignore[call-overload]


@contextmanager
def fake_openai_server_process(*, latency_s: float = 0.0, responder: str = "default") -> Iterator[str]:
    """Run a fake server in a child process (its CPU is not the caller's); yields its base URL.

    Args:
        latency_s: delay before every answer, seconds.
        responder: ``default`` (schema-valid instances) or ``ragqa`` (:func:`ragqa_responder`).
    """
    import subprocess
    import sys

    cmd = [sys.executable, "-c", "from ragqa.testing.server import main; main()"]
    cmd += ["--latency", str(latency_s), "--responder", responder]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("READY "):
            raise RuntimeError(f"fake server did not start: {line!r}")
        yield line.split(" ", 1)[1]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    """Run a fake server in the foreground.

    ``python -c "from ragqa.testing.server import main; main()" --latency 0.2 --responder ragqa``

    Prints ``READY <base_url>`` once it listens, then serves until interrupted. Used by the
    benchmarks to keep the server in a process of its own.
    """
    import argparse
    import signal

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--responder", choices=["default", "ragqa"], default="default")
    parser.add_argument("--record", action="store_true", help="keep every request in memory")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency_s=args.latency, host=args.host, port=args.port, record=args.record)
    if args.responder == "ragqa":
        server.script("*", ragqa_responder())
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"READY {server.base_url}", flush=True)
        with suppress(KeyboardInterrupt):
            stop.wait()


if __name__ == "__main__":
    main()
