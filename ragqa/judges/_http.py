"""The provider-neutral policy of an HTTP judge or embedder: limiter, breaker, retry, deadline, one client per loop.

:class:`HttpClientBase` is what every HTTP-backed judge and embedder shares, whatever its wire
format: it owns one HTTP client per event loop (made by the provider adapter's
``_new_http_client``, on first use in a loop and again when the running loop changes; closed
when its loop shuts down or by :meth:`HttpClientBase.aclose`), sends each request through the
provider's :class:`~ragqa.judges.ratelimit.ProviderLimiter`, the model's
:class:`~ragqa.judges.breaker.CircuitBreaker`, a per-request deadline and
:func:`~ragqa.judges.retry.call_with_retry`, records :class:`~ragqa.schema.Usage`, redacts the
API key from every message, and maps errors to ragqa's error tree (:func:`classify_error`).

A provider adapter (:mod:`ragqa.judges.openai` over :mod:`ragqa.judges._openai_wire`) implements
``_make_model``, ``_new_http_client`` and its wire format, and registers how its SDK's errors read
(:func:`ragqa.judges._failures.register_error_classifier`). This module imports no provider SDK and no LangChain class.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypedDict
from urllib.parse import urlparse

from ragqa.errors import JudgeError, JudgeHTTPError, JudgeOutputError, JudgeTimeout
from ragqa.judges._failures import error_classifiers, timeout_failure
from ragqa.judges._guard import check_remote_allowed
from ragqa.judges.breaker import (
    DEFAULT_COOL_DOWN_S,
    DEFAULT_FAILURE_THRESHOLD,
    DEFAULT_MAX_COOL_DOWN_S,
    CircuitBreaker,
)
from ragqa.judges.ratelimit import ProviderLimiter
from ragqa.judges.retry import Failure, RetryPolicy, call_with_retry
from ragqa.schema import Usage
from ragqa.settings import DEFAULT_TIMEOUT, Price, ResolvedChatModel, ResolvedEmbeddingModel
from ragqa.usage import record_usage

__all__ = [
    "DEFAULT_MAX_RESPONSE_BYTES",
    "DEFAULT_TIMEOUT_S",
    "NO_KEY",
    "RAW_LIMIT",
    "HttpClientBase",
    "ResponseTooLarge",
    "classify_error",
    "endpoint_of",
    "openai_base_url",
    "response_text",
    "usage_cost",
]

DEFAULT_TIMEOUT_S = DEFAULT_TIMEOUT.total_seconds()
"""Per-request timeout when the model sets none, seconds."""
RAW_LIMIT = 4000
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024
"""The largest answer body read from a judge or embedder, bytes (``ragqa.limits.max-response-bytes``)."""
"""The most characters of raw judge output kept in a failure."""
NO_KEY = "not-needed"
"""Sent when a model has no API key: local servers (vLLM, Ollama) accept any key; the SDK requires one."""
_DEFAULT_BASE = "https://api.openai.com"


def openai_base_url(base_url: str | None) -> str:
    """The SDK base URL for a Spring-style ``base-url``.

    Spring AI's ``base-url`` has no ``/v1``: the client calls ``<base-url>/v1/chat/completions``.
    A URL that already ends in ``/v1`` is not doubled.

    Args:
        base_url: the configured ``base-url`` (``None``: OpenAI's).

    Returns:
        The URL ending in ``/v1`` without a trailing slash, e.g.
        ``https://openrouter.ai/api`` -> ``https://openrouter.ai/api/v1``.
    """
    url = (base_url or _DEFAULT_BASE).rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


def endpoint_of(base_url: str | None) -> str:
    """``host:port`` of a Spring-style ``base-url`` (for logs and errors; never a path or key).

    Example: ``https://openrouter.ai/api`` -> ``openrouter.ai:443``.
    """
    parsed = urlparse(openai_base_url(base_url))
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return f"{parsed.hostname or '?'}:{port}"


def usage_cost(price: Price | None, prompt_tokens: int, completion_tokens: int) -> float | None:
    """Cost of one request from a price table given per one million tokens.

    Returns:
        ``(prompt_tokens * price.prompt + completion_tokens * price.completion) / 1e6`` in the
        table's currency, or ``None`` when no price is configured.
    """
    if price is None:
        return None
    return (prompt_tokens * price.prompt + completion_tokens * price.completion) / 1_000_000


def classify_error(exc: BaseException, *, endpoint: str | None = None, timeout_s: float | None = None) -> Failure:
    """Map what a request raised to a provider-neutral :class:`Failure`.

    An answer over the size cap first; then the registered provider classifiers
    (:func:`~ragqa.judges._failures.register_error_classifier`: the OpenAI adapter's reads
    ``openai.*`` errors); then a
    plain :class:`TimeoutError`; anything else is ``other``.

    Args:
        exc: what the request raised.
        endpoint: ``host:port`` named in the failure's cause.
        timeout_s: the per-request timeout named in a timeout's cause.

    Returns:
        The failure; its ``detail`` tells a refused connection (``connection refused by
        host:port``), another transport error, a timeout (``no answer within 5s from
        host:port``) and an HTTP status (``HTTP 503 from host:port``) apart.
    """
    too_large = _too_large(exc)
    if too_large is not None:  # an answer, not a transport failure: never retried, never "down"
        return Failure("other", detail=too_large)
    for classify in error_classifiers():
        found = classify(exc, endpoint, timeout_s)
        if found is not None:
            return found
    if isinstance(exc, TimeoutError):
        return timeout_failure(exc, endpoint, timeout_s)
    return Failure("other")


class ResponseTooLarge(Exception):
    """An answer body longer than the cap (``ragqa.limits.max-response-bytes``); reading stopped there.

    Attributes:
        limit: the cap, bytes.
    """

    def __init__(self, limit: int, *, declared: int | None = None) -> None:
        """Name the cap (and the declared ``Content-Length``, when the server sent one)."""
        said = f" (Content-Length {declared:,})" if declared is not None else ""
        super().__init__(
            f"the answer is larger than {limit:,} bytes{said}; reading stopped there "
            "(raise ragqa.limits.max-response-bytes if the judge really answers this much)"
        )
        self.limit = limit


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes, outermost first (at most 8)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _too_large(exc: BaseException) -> str | None:
    """The message of a :class:`ResponseTooLarge` in ``exc``'s chain (the SDK wraps it), or ``None``."""
    return next((str(e) for e in _chain(exc) if isinstance(e, ResponseTooLarge)), None)


def _root_message(exc: BaseException) -> str:
    """The innermost cause's text: the OS's ``Connect call failed ...``, not the SDK's ``Request timed out.``."""
    for cause in reversed(_chain(exc)):
        text = str(cause).strip()
        if text:
            return text
    return type(exc).__name__


@functools.cache
def _capped_stream_class(httpx_module: str) -> type:
    """A byte stream of ``httpx_module`` (``httpx`` or ``httpx2``, whichever the SDK uses) that stops at a cap."""
    base: type = importlib.import_module(httpx_module).AsyncByteStream

    class CappedStream(base):  # type: ignore[misc]
        def __init__(self, inner: Any, limit: int) -> None:
            self._inner = inner
            self._limit = limit

        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in self._inner:
                seen += len(chunk)
                if seen > self._limit:
                    raise ResponseTooLarge(self._limit)
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    return CappedStream


def response_cap_hook(limit: int) -> Callable[[Any], Awaitable[None]]:
    """An HTTP client ``response`` event hook that stops reading an answer body at ``limit`` bytes.

    A declared ``Content-Length`` over the cap fails at once; otherwise the body is counted as it
    streams in, so neither a large nor an endless body grows memory past the cap.

    Args:
        limit: the cap, bytes (>= 1).

    Returns:
        The hook, for ``event_hooks={"response": [hook]}`` of an ``httpx`` / ``httpx2`` client.

    Raises:
        ResponseTooLarge: (from the hook or while the body is read) when the body is larger.
    """

    async def hook(response: Any) -> None:
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise ResponseTooLarge(limit, declared=int(declared))
        capped = _capped_stream_class(type(response).__module__.split(".")[0])
        response.stream = capped(response.stream, limit)

    return hook


async def _close_with_loop(http: Any) -> AsyncIterator[None]:
    """A one-step async generator that closes ``http`` when finalized.

    Its first step registers it with the running loop, which finalizes it on shutdown
    (``asyncio.run`` calls ``loop.shutdown_asyncgens()``): the client is closed on its own loop.
    """
    try:
        yield
    finally:
        await http.aclose()


class _LoopBound:
    """The HTTP client and LangChain object of one event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, http: Any, model: Any, guard: Any | None) -> None:
        self.loop = loop
        self.http = http
        self.model = model
        self.guard = guard
        self.started = False


class HttpOptions(TypedDict, total=False):
    """The transport keywords shared by :class:`HttpClientBase` and its judges and embedders (all optional).

    Meanings and defaults are those of :class:`ragqa.judges.openai.OpenAIJudge`: ``limiter``
    (:class:`ProviderLimiter`), ``http_client`` (an ``httpx.AsyncClient``, left open), ``breaker``
    (:class:`CircuitBreaker`), ``failure_threshold`` (consecutive failures, >= 1), ``cool_down_s`` and
    ``max_cool_down_s`` (seconds), ``max_response_bytes`` (bytes), ``clock`` (monotonic seconds),
    ``retry_random`` (uniform in ``[0, 1)``) and ``sleep`` (async sleep, seconds). Spelling the keywords
    once here keeps the subclasses' signatures from drifting from the base's.
    """

    limiter: ProviderLimiter | None
    http_client: Any | None
    breaker: CircuitBreaker | None
    failure_threshold: int
    cool_down_s: float
    max_cool_down_s: float
    max_response_bytes: int
    clock: Callable[[], float]
    retry_random: Callable[[], float]
    sleep: Callable[[float], Awaitable[None]]


class HttpClientBase:
    """What judges and embedders share: limiter, breaker, retry, key redaction, usage and the per-loop clients."""

    def __init__(
        self,
        model: ResolvedChatModel | ResolvedEmbeddingModel,
        *,
        limiter: ProviderLimiter | None = None,
        http_client: Any | None = None,
        breaker: CircuitBreaker | None = None,
        failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
        cool_down_s: float = DEFAULT_COOL_DOWN_S,
        max_cool_down_s: float = DEFAULT_MAX_COOL_DOWN_S,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        clock: Callable[[], float] = time.monotonic,
        retry_random: Callable[[], float] = random.random,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        timeout = model.options.timeout
        self._max_response_bytes = max_response_bytes
        self._id = model.id
        self._model_name = model.model
        self._secret = model.api_key.get_secret_value() if model.api_key is not None else ""
        self._price = model.price
        self._policy = RetryPolicy(model.retry, random=retry_random)
        self._sleep = sleep
        self.limiter = limiter or ProviderLimiter(model.provider_key, model.limits)
        self.limiter.register(model.id)
        self._given_http = http_client
        self._bound: _LoopBound | None = None
        self._timeout_s = timeout.total_seconds() if timeout is not None else DEFAULT_TIMEOUT_S
        self._base_url = openai_base_url(model.base_url)
        self.endpoint = endpoint_of(model.base_url)
        """``host:port`` of the provider (named in logs and errors)."""
        kind = "judge" if isinstance(model, ResolvedChatModel) else "embedder"
        self._label = f"{kind} {model.id!r} (model {model.model} at {self.endpoint})"
        self.breaker = breaker or CircuitBreaker(
            self._label,
            judge_id=model.id,
            failure_threshold=failure_threshold,
            cool_down_s=cool_down_s,
            max_cool_down_s=max(max_cool_down_s, cool_down_s),
            hang_cool_down_s=self._timeout_s,
            clock=clock,
        )
        """The circuit breaker of this judge or embedder."""

    @property
    def id(self) -> str:
        """The model id of the settings (shown in reports)."""
        return self._id

    def _make_model(self, http: Any) -> Any:
        """The LangChain object over ``http`` (one per event loop)."""
        raise NotImplementedError

    def _new_http_client(self, response_hook: Callable[[Any], Awaitable[None]]) -> Any:
        """A new HTTP client of the provider's SDK for the running loop, with ``response_hook`` on every answer."""
        raise NotImplementedError

    def _loop_bound(self) -> _LoopBound:
        """The client of the running loop, created on first use and again when the loop changed."""
        loop = asyncio.get_running_loop()
        bound = self._bound
        if bound is not None and (bound.loop is loop or self._given_http is not None):
            return bound
        if self._given_http is not None:
            http, guard = self._given_http, None
        else:
            http = self._new_http_client(response_cap_hook(self._max_response_bytes))
            guard = _close_with_loop(http)
        self._bound = _LoopBound(loop, http, self._make_model(http), guard)
        return self._bound

    async def _bind(self) -> _LoopBound:
        """:meth:`_loop_bound`, registering a new client's closer with the running loop."""
        bound = self._loop_bound()
        if bound.guard is not None and not bound.started:
            bound.started = True
            await bound.guard.__anext__()
        return bound

    def _redact(self, text: str) -> str:
        if self._secret and len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text

    def _record(self, prompt_tokens: int, completion_tokens: int, latency_s: float) -> None:
        record_usage(
            Usage(
                calls=1,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                latency_s=latency_s,
                cost=usage_cost(self._price, prompt_tokens, completion_tokens),
            )
        )

    def _classify(self, exc: BaseException) -> Failure:
        return classify_error(exc, endpoint=self.endpoint, timeout_s=self._timeout_s)

    async def _send(self, call: Any, step: str) -> Any:
        """Run ``call()`` (one request) under the limiter, a deadline, the breaker and the retry policy."""
        check_remote_allowed(self._base_url, judge_id=self._id, step=step)  # RAGQA_BLOCK_REMOTE
        attempts = 0

        async def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            async with self.breaker.scope(self._timeout_s) as scope, self.limiter.slot(self._id, step):
                scope.arm()  # the request timeout counts from the slot, not from the wait for it
                return await call()

        try:
            return await call_with_retry(
                attempt,
                policy=self._policy,
                classify=self._classify,
                label=self._label,
                breaker=self.breaker,
                step=step,
                sleep=self._sleep,
            )
        except JudgeError:
            raise
        except Exception as exc:
            error = self._map_error(exc, step, attempts)
            if self._secret and self._secret in str(exc):
                raise error from None  # the provider echoed the key: keep it out of tracebacks
            raise error from exc

    def _map_error(self, exc: Exception, step: str, attempts: int = 1) -> JudgeError:
        failure = self._classify(exc)
        where = f"{self._label}, step {step!r}"
        tries = f"after {attempts} attempt(s)"
        if self.breaker.hung and failure.kind == "timeout" and attempts < self._policy.max_attempts:
            tries += " (the circuit breaker ended the retries: the judge hangs)"
        too_large = _too_large(exc)
        if too_large is not None:
            return JudgeOutputError(f"{where}: {too_large}", judge_id=self._id, step=step)
        if failure.kind == "timeout":
            return JudgeTimeout(f"{where}: {failure.cause} {tries}", judge_id=self._id, step=step)
        if failure.kind == "status":
            detail = self._redact(getattr(exc, "message", "") or str(exc))[:300]
            return JudgeHTTPError(
                f"{where}: {failure.cause} {tries}: {detail}", status=failure.status, judge_id=self._id, step=step
            )
        if failure.kind == "transport":
            return JudgeHTTPError(
                f"{where}: {failure.cause} {tries}: {self._redact(_root_message(exc))[:300]}",
                status=None,
                judge_id=self._id,
                step=step,
            )
        if isinstance(exc, RuntimeError):  # e.g. a client used after it was closed: not the answer's fault
            return JudgeHTTPError(
                f"{where}: the HTTP client failed ({type(exc).__name__}: {self._redact(str(exc))[:300]})",
                status=None,
                judge_id=self._id,
                step=step,
            )
        # An answer that is not a valid completion (truncated JSON body, missing choices...).
        body = response_text(exc)
        return JudgeOutputError(
            f"{where}: the provider's answer is not a valid completion ({type(exc).__name__}: "
            f"{self._redact(str(exc))[:300]})",
            judge_id=self._id,
            step=step,
            raw=self._redact(body)[:RAW_LIMIT] if body else None,
        )

    async def aclose(self) -> None:
        """Close the HTTP client this object created for the running loop (a client passed in is left open).

        A client of an earlier loop was closed when that loop shut down.
        """
        bound, self._bound = self._bound, None
        if bound is None or bound.guard is None or bound.loop is not asyncio.get_running_loop():
            return
        if bound.started:
            await bound.guard.aclose()
        else:
            await bound.http.aclose()


def response_text(exc: BaseException) -> str | None:
    """The body an SDK or JSON error carries (the provider's answer), or ``None``."""
    response = getattr(exc, "response", None)
    text = getattr(response, "text", None)
    if isinstance(text, str):
        return text
    doc = getattr(exc, "doc", None)
    return doc if isinstance(doc, str) else None
