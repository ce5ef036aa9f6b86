"""A fake OpenAI-compatible HTTP server for testing the real client path offline.

:class:`FakeOpenAIServer` is an aiohttp app on ``127.0.0.1`` with a free port, running in a
background thread with its own event loop, so it serves sync and async code alike. It answers

- ``POST /v1/chat/completions`` with structured output (``response_format`` ``json_schema`` or
  ``json_object``), function calling (``tools``) or plain text, every reply with ``usage`` (and
  ``n`` identical choices when the request asks for ``n``);
- ``POST /v1/embeddings`` with deterministic unit vectors of ``dimensions`` (default 8) for a
  string, a list of strings or token arrays, as floats or base64 (``encoding_format``);
- ``GET /_fake/counts`` with the number of requests received per path (:attr:`FakeOpenAIServer.counts`);
- ``GET /_fake/stats`` with the counts, the requests in flight over time and the CPU of the
  server's process (:attr:`FakeOpenAIServer.stats`).

Answers are scripted per model with :meth:`FakeOpenAIServer.script` (a responder: a function of
the :class:`~ragqa.testing.wire.ChatRequest`; see :mod:`ragqa.testing.responders`). Unscripted
models get :func:`~ragqa.testing.responders.default_responder`'s schema-valid placeholder. A
responder that cannot answer raises :class:`~ragqa.testing.wire.ResponderError`: the request gets
HTTP 400 with the reason and is listed in :attr:`FakeOpenAIServer.failures` (any other exception
of a responder: HTTP 500, listed too). Faults come on demand (:meth:`~FakeOpenAIServer.fail`,
:meth:`~FakeOpenAIServer.hang`, :meth:`~FakeOpenAIServer.malformed`) and every request is
recorded (:attr:`~FakeOpenAIServer.requests`) so tests can assert on prompts, headers and counts.
:meth:`~FakeOpenAIServer.hold` parks a model's requests until the test calls
:meth:`~FakeOpenAIServer.release`, so a test knows a request is in flight without racing a clock.

Example::

    with FakeOpenAIServer() as srv:
        srv.script("judge-a", ragqa_responder())
        srv.fail("judge-a", times=2, status=429, retry_after=0.1)
        ...  # point a judge's base-url at srv.base_url
        assert len(srv.requests_for("judge-a")) == 3
        assert srv.failures == []
"""

from __future__ import annotations

import asyncio
import math
import socket
import threading
import time
from collections import defaultdict, deque
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ragqa.run.loop import LoopThread
from ragqa.testing.bodies import chat_completion_body, embeddings_body, error_response
from ragqa.testing.load import InFlight
from ragqa.testing.responders import default_responder
from ragqa.testing.wire import (
    Answer,
    ChatRequest,
    Fault,
    RecordedRequest,
    Responder,
    ResponderError,
    ResponderFailure,
)

__all__ = ["FakeOpenAIServer"]


@dataclass
class _State:
    scripts: dict[str, Responder] = field(default_factory=dict)
    faults: dict[str, deque[Fault]] = field(default_factory=lambda: defaultdict(deque))
    latency: dict[str, float] = field(default_factory=dict)
    holds: dict[str, asyncio.Event] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    failures: list[ResponderFailure] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))


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
        self._loop_thread: LoopThread | None = None
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._parked = 0
        self._in_flight = InFlight()

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Start serving in a background thread; returns ``self`` (idempotent)."""
        if self._loop_thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._port))
        self._port = sock.getsockname()[1]
        loop_thread = LoopThread(name=f"fake-openai-{self._port}")
        try:
            loop_thread.run(self._serve(sock))
        except BaseException:
            loop_thread.stop()
            raise
        self._loop_thread = loop_thread
        return self

    async def _serve(self, sock: socket.socket) -> None:
        self._closing = asyncio.Event()
        app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=[self._follow_in_flight])
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_post("/embeddings", self._embeddings)
        app.router.add_get("/_fake/counts", self._counts)
        app.router.add_get("/_fake/stats", self._stats)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        self._runner = runner

    def stop(self) -> None:
        """Stop the server and its thread (idempotent); hanging requests are cut."""
        loop_thread = self._loop_thread
        if loop_thread is None:
            return

        async def shutdown() -> None:
            if self._closing is not None:
                self._closing.set()
            with self._lock:
                holds = list(self._state.holds.values())
            for gate in holds:
                gate.set()
            if self._runner is not None:
                await self._runner.cleanup()

        try:
            loop_thread.run(shutdown())
        finally:
            loop_thread.stop()
            self._loop_thread = self._runner = None

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
        """Answer chat requests for ``model`` with ``fn(request)`` (``"*"``: every unscripted model).

        ``fn`` returns a dict (sent as JSON), a string (sent verbatim) or a :class:`~ragqa.testing.wire.Fault`,
        or raises :class:`~ragqa.testing.wire.ResponderError` when it cannot answer (HTTP 400, see :attr:`failures`).
        """
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
        ends every hang at once. ``seconds=math.inf`` (also as a :class:`~ragqa.testing.wire.Fault`'s
        ``hang_s``) never answers: a client timeout that must fire then fires however slow the
        machine is.
        """
        self.inject(model, Fault(status=200, hang_s=seconds), times=times)

    def malformed(self, model: str, *, times: int = 1, body: str = '{"id": "chatcmpl-x", "choices": [{"mess') -> None:
        """Answer the next ``times`` requests for ``model`` with a truncated (invalid) JSON body."""
        self.inject(model, Fault(status=200, body=body), times=times)

    def inject(self, model: str, fault: Fault, *, times: int = 1) -> None:
        """Queue ``fault`` for the next ``times`` requests of ``model`` (``"*"``: any model)."""
        with self._lock:
            self._state.faults[model].extend([fault] * times)

    def hold(self, model: str) -> None:
        """Park every request for ``model`` (``"*"``: any model) until :meth:`release`.

        A parked request is recorded in :attr:`requests` first, then waits with no time limit
        (counted in :attr:`parked`); once released it goes on as usual (latency, faults, the
        responder). Use it where a test must know that a request is in flight, or must act
        (cancel a waiter, count slots) before any answer comes, without racing a clock.
        :meth:`reset` and :meth:`stop` release every held model.

        Args:
            model: the model name of the requests to park, or ``"*"``.
        """
        with self._lock:
            self._state.holds.setdefault(model, asyncio.Event())

    def release(self, model: str = "*") -> None:
        """Let the requests parked by :meth:`hold` for ``model`` go on, and park no more of them.

        Args:
            model: the model given to :meth:`hold` (``"*"`` releases only a ``hold("*")``).
        """
        with self._lock:
            gate = self._state.holds.pop(model, None)
        if gate is not None:
            self._set_soon(gate)

    @property
    def parked(self) -> int:
        """How many requests :meth:`hold` parks right now (recorded, not yet released)."""
        with self._lock:
            return self._parked

    def _set_soon(self, gate: asyncio.Event) -> None:
        """Set ``gate`` on the server's loop (an :class:`asyncio.Event` is not thread-safe)."""
        loop_thread = self._loop_thread
        if loop_thread is None:
            gate.set()
        else:
            loop_thread.loop.call_soon_threadsafe(gate.set)

    def set_latency(self, model: str, seconds: float) -> None:
        """Delay every answer for ``model`` by ``seconds``."""
        with self._lock:
            self._state.latency[model] = seconds

    def reset(self) -> None:
        """Forget scripts, faults, latencies, recorded requests and failures; release held models."""
        with self._lock:
            holds, self._state = self._state.holds, _State()
        for gate in holds.values():
            self._set_soon(gate)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._state.requests)

    def requests_for(self, model: str, path: str | None = None) -> list[RecordedRequest]:
        """The requests for ``model`` (optionally only those to ``path``)."""
        return [r for r in self.requests if r.model == model and (path is None or r.path == path)]

    @property
    def failures(self) -> list[ResponderFailure]:
        """The chat requests refused because a responder could not answer them, in order (a copy).

        Each was answered with an HTTP error naming the problem (400 for a
        :class:`~ragqa.testing.wire.ResponderError`, 500 for any other exception of a responder).
        """
        with self._lock:
            return list(self._state.failures)

    @property
    def counts(self) -> dict[str, int]:
        """Requests received so far per path (``/v1/chat/completions``...), also when ``record`` is off.

        Over HTTP: ``GET /_fake/counts`` answers the same mapping as JSON (for a server in another
        process, see :mod:`ragqa.testing.process`).
        """
        with self._lock:
            return dict(self._state.counts)

    @property
    def stats(self) -> dict[str, Any]:
        """How busy the server has been: :attr:`counts`, requests in flight over time, process CPU.

        Returns:
            ``counts`` (as :attr:`counts`), ``cpu_s`` (CPU seconds of this whole process so far,
            :func:`time.process_time`: the server's own only when it runs in a process of its own,
            see :mod:`ragqa.testing.process`) and :meth:`ragqa.testing.load.InFlight.snapshot`'s
            keys (``in_flight``, ``peak_in_flight``, ``seconds_at``, ``busy_s``,
            ``request_seconds``) over the API requests (``/_fake/...`` not included). Every value
            only grows (but ``in_flight``): take differences around a run. Over HTTP:
            ``GET /_fake/stats``.
        """
        return {"counts": self.counts, "cpu_s": time.process_time(), **self._in_flight.snapshot()}

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
            self._state.counts[request.path] += 1
            if self.record:
                self._state.requests.append(
                    RecordedRequest(path=request.path, model=model, headers=headers, body=body, t=time.monotonic())
                )
            queue = self._state.faults.get(model) or self._state.faults.get("*")
            fault = queue.popleft() if queue else None
            latency = self._state.latency.get(model, self.latency_s)
            gate = self._state.holds.get(model) or self._state.holds.get("*")
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return body, model, headers, error_response(401, "invalid api key", "invalid_request_error")
        if gate is not None:
            await self._park(gate)
        if latency > 0:
            await asyncio.sleep(latency)
        if fault is not None:
            if fault.hang_s is not None:
                await self._hang(fault.hang_s)
                if fault.body is None and fault.status == 200:
                    return body, model, headers, None  # a slow but normal answer
            return body, model, headers, await self._fault(fault)
        return body, model, headers, None

    async def _counts(self, request: web.Request) -> web.Response:
        return web.json_response(self.counts)

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.stats)

    @web.middleware
    async def _follow_in_flight(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path.startswith("/_fake/"):
            response: web.StreamResponse = await handler(request)
            return response
        self._in_flight.enter()
        try:
            response = await handler(request)
            return response
        finally:
            self._in_flight.leave()

    async def _park(self, gate: asyncio.Event) -> None:
        with self._lock:
            self._parked += 1
        try:
            await gate.wait()
        finally:
            with self._lock:
                self._parked -= 1

    async def _hang(self, seconds: float) -> None:
        assert self._closing is not None
        if math.isinf(seconds):
            await self._closing.wait()
            return
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
        return error_response(fault.status, f"injected fault {fault.status}", kind, headers)

    def _refuse(self, model: str, status: int, message: str) -> web.Response:
        with self._lock:
            self._state.failures.append(
                ResponderFailure(model=model, status=status, message=message, t=time.monotonic())
            )
        kind = "responder_error" if status == 400 else "responder_crashed"
        return error_response(status, f"fake server cannot answer: {message}", kind)

    async def _chat(self, request: web.Request) -> web.Response:
        body, model, headers, early = await self._receive(request)
        if early is not None:
            return early
        messages = body.get("messages") if isinstance(body.get("messages"), list) else []
        chat = ChatRequest(model=model, messages=list(messages or []), body=body, headers=headers)
        with self._lock:
            responder = self._state.scripts.get(model) or self._state.scripts.get("*") or default_responder
        try:
            answer: Answer = responder(chat)
        except ResponderError as exc:
            return self._refuse(model, 400, str(exc))
        except Exception as exc:  # a bug in a test's responder: loud, and the server keeps serving
            return self._refuse(model, 500, f"the responder raised {type(exc).__name__}: {exc}")
        if isinstance(answer, Fault):
            if answer.hang_s is not None:
                await self._hang(answer.hang_s)
            if answer.status != 200 or answer.body is not None:
                return await self._fault(answer)
            # a hang that ended before the client gave up has nothing to send: say so, make nothing up
            return self._refuse(model, 400, "the responder's Fault hang ended with no answer to send")
        return web.json_response(chat_completion_body(chat, answer))

    async def _embeddings(self, request: web.Request) -> web.Response:
        body, model, _, early = await self._receive(request)
        if early is not None:
            return early
        return web.json_response(embeddings_body(body, model))
