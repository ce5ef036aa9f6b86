"""Judges and embedders over any OpenAI-compatible endpoint (LangChain ``ChatOpenAI`` / ``OpenAIEmbeddings``).

This module, :mod:`ragqa.judges._chat_openai` (the judge's ``ChatOpenAI`` subclass) and
:mod:`ragqa.judges._openai_embedder` (the embedder, re-exported here) are the only modules of
ragqa that import LangChain model classes. One :class:`OpenAIJudge` per configured chat model
and one :class:`OpenAIEmbedder` per embedding model; each owns one HTTP client (an
aiohttp-backed ``openai.DefaultAioHttpClient``, the cheapest client measured) per event loop: the
client and its LangChain object are created on first use in a loop and again when the running
loop changes (a second ``asyncio.run`` on the same container). A client is closed when its loop
shuts down (``asyncio.run`` finalizes asynchronous generators, and a
one-step generator per client closes it) or by ``aclose()`` on the loop that used it.

What one :meth:`OpenAIJudge.ask` does:

1. renders the prompt as a system message (rules) and a user message (RAGAS-style task, data
   blocks): ``prompt.messages(data, language)``;
2. asks for structured output the way the model's ``structured-output`` option says:
   ``json_schema`` (default: ``response_format={"type": "json_schema", ...}``), ``json_mode``
   (``{"type": "json_object"}``), ``function_calling`` (one forced tool whose parameters are the
   schema) or ``prompt`` (plain text; the schema is already in the rendered prompt);
3. sends it through the provider's :class:`~ragqa.judges.ratelimit.ProviderLimiter`, the
   judge's :class:`~ragqa.judges.breaker.CircuitBreaker` and
   :func:`~ragqa.judges.retry.call_with_retry` (``spring.ai.retry``; the SDK's own retries are
   off, ``max_retries=0``), recording :class:`~ragqa.schema.Usage` after every answered request;
4. validates the answer against ``prompt.output_model`` (tolerantly: the first balanced JSON
   object, also inside a fenced code block); on failure sends ONE repair request with the raw
   output and the validation errors; then raises :class:`~ragqa.errors.JudgeOutputError` with
   the raw text kept (truncated to :data:`RAW_LIMIT` characters).

Pitfalls handled (measured on this stack): ``ChatOpenAI`` sends ``max_completion_tokens``, which
many OpenAI-compatible backends ignore, so ``max-tokens`` goes on the wire as ``max_tokens`` via
``extra_body``; ``OpenAIEmbeddings`` would download a tiktoken file unless
``check_embedding_ctx_length=False``; LangChain's default async client is cached per base URL and
bound to the first event loop, so every judge gets its own client per loop. The API key is a
:class:`~pydantic.SecretStr` and is redacted from every error message and raw output.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar, Unpack, cast

from langchain_core.callbacks import AsyncCallbackManager
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import ensure_config
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, SecretStr, ValidationError

from ragqa.errors import JudgeOutputError
from ragqa.judges._chat_openai import _JudgeChatOpenAI
from ragqa.judges._http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT_S,
    NO_KEY,
    RAW_LIMIT,
    HttpClientBase,
    HttpOptions,
    classify_error,
    endpoint_of,
    openai_base_url,
    usage_cost,
)
from ragqa.judges._openai_embedder import OpenAIEmbedder, build_openai_embedders
from ragqa.judges._openai_wire import openai_http_client
from ragqa.judges.breaker import (
    DEFAULT_COOL_DOWN_S,
    DEFAULT_FAILURE_THRESHOLD,
    DEFAULT_MAX_COOL_DOWN_S,
)
from ragqa.judges.ratelimit import ProviderLimiters
from ragqa.prompts.base import Prompt
from ragqa.schema import Language
from ragqa.settings import (
    DEFAULT_EMBEDDING_BATCH,
    DEFAULT_STRUCTURED_OUTPUT,
    ResolvedChatModel,
)

__all__ = [
    "DEFAULT_EMBEDDING_BATCH",
    "DEFAULT_TIMEOUT_S",
    "RAW_LIMIT",
    "OpenAIEmbedder",
    "OpenAIJudge",
    "aclose_all",
    "build_openai_embedders",
    "build_openai_judges",
    "classify_error",
    "endpoint_of",
    "extract_json",
    "openai_base_url",
    "usage_cost",
]

log = logging.getLogger(__name__)

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def extract_json(text: str) -> str | None:
    """Find the JSON object in a judge's free-form answer.

    Looks inside fenced code blocks (```` ```json ... ``` ````) first, then at the first
    balanced JSON object of the whole text (strings and escapes respected).

    Returns:
        The JSON object's text, or ``None`` when the text holds none.
    """
    decoder = json.JSONDecoder()
    for candidate in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        start = candidate.find("{")
        tries = 0
        while start >= 0 and tries < 64:
            try:
                value, end = decoder.raw_decode(candidate, start)
            except ValueError:
                start = candidate.find("{", start + 1)
                tries += 1
                continue
            if isinstance(value, dict):
                return candidate[start:end]
            start = candidate.find("{", end)
    return None


def _validate(prompt: Prompt[Any, Out], text: str) -> Out:
    """Validate ``text`` against the prompt's output model, tolerating prose and code fences."""
    try:
        return prompt.output_model.model_validate_json(text)
    except ValidationError:
        candidate = extract_json(text)
        if candidate is None or candidate == text.strip():
            raise
        return prompt.output_model.model_validate_json(candidate)


def _error_summary(exc: ValidationError, limit: int = 8) -> str:
    lines = []
    for err in exc.errors(include_url=False)[:limit]:
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
        lines.append(f"- {loc}: {err.get('msg', 'invalid')}")
    more = exc.error_count() - limit
    if more > 0:
        lines.append(f"- ... and {more} more")
    return "\n".join(lines)


_REPAIR = (
    "Your previous answer does not match the required JSON schema.\n"
    "Validation errors:\n{errors}\n\n"
    "Answer again with only the corrected JSON object that complies with the schema given above, "
    "with no other text."
)


def _callbacks_configured() -> bool:
    """Whether a LangChain callback would see a judge call (tracing on, or handlers in the context).

    Builds the callback manager exactly as ``ainvoke`` would (the ambient runnable config, the
    ``LANGSMITH_TRACING`` / ``LANGCHAIN_TRACING_V2`` hooks, a ``tracing_context``) and asks
    whether it has a handler.
    """
    config = ensure_config()
    manager = AsyncCallbackManager.configure(
        config.get("callbacks"), None, inheritable_tags=config.get("tags"), inheritable_metadata=config.get("metadata")
    )
    return bool(manager.handlers)


class OpenAIJudge(HttpClientBase):
    """A judge over an OpenAI-compatible chat completions endpoint.

    Args:
        model: the resolved chat model: ``base_url`` (Spring style, ``/v1`` appended unless
            present), ``api_key``, ``model``, ``options`` (temperature, max_tokens sent as
            ``max_tokens``, top_p, seed, timeout (default 60 s), structured_output (default
            ``json_schema``), headers), ``retry``, ``limits`` and ``price``.
        limiter: the provider's shared limiter (default: a private one from ``model.limits``).
        http_client: an ``httpx.AsyncClient`` to use (left open by :meth:`aclose`; the caller keeps
            it on one loop); default: an own ``openai.DefaultAioHttpClient`` per event loop,
            closed by :meth:`aclose` or when its loop shuts down.
        breaker: the circuit breaker (default: an own one from the next arguments).
        failure_threshold: consecutive transport or timeout failures that open the breaker.
        cool_down_s: seconds an open breaker fails fast before its first probe request.
        max_cool_down_s: the cap of the cool-down, which doubles after each failed probe, seconds.
        max_response_bytes: the largest answer body read, bytes; a larger one is a
            :class:`~ragqa.errors.JudgeOutputError` (not applied to a ``http_client`` passed in).
        clock: the breaker's monotonic clock, seconds (injectable for tests).
        retry_random: the retry jitter's source of uniform numbers in ``[0, 1)`` (for tests).
        sleep: the sleep between retry attempts (for tests).
    """

    def __init__(
        self,
        model: ResolvedChatModel,
        **transport: Unpack[HttpOptions],
    ) -> None:
        options = model.options
        super().__init__(model, **transport)
        self.model = model
        self.structured_output = options.structured_output or DEFAULT_STRUCTURED_OUTPUT
        self._extra_body: dict[str, Any] = {}
        if options.max_tokens is not None:  # ChatOpenAI would send max_completion_tokens
            self._extra_body["max_tokens"] = options.max_tokens

    def _new_http_client(self, response_hook: Callable[[Any], Awaitable[None]]) -> Any:
        """The OpenAI SDK's aiohttp client (:func:`~ragqa.judges._openai_wire.openai_http_client`)."""
        return openai_http_client(response_hook)

    def _make_model(self, http: Any) -> ChatOpenAI:
        model, options = self.model, self.model.options
        return _JudgeChatOpenAI(
            model=model.model,
            base_url=openai_base_url(model.base_url),
            api_key=model.api_key or SecretStr(NO_KEY),
            temperature=options.temperature,
            top_p=options.top_p,
            seed=options.seed,
            timeout=self._timeout_s,
            max_retries=0,
            default_headers=dict(options.headers) or None,
            extra_body=self._extra_body or None,
            http_async_client=http,
            use_responses_api=False,
        )

    @property
    def fingerprint(self) -> str:
        """The judge's identity for caches: provider, endpoint, model and decoding options.

        A JSON string; it never contains the API key or headers (which may carry secrets).
        """
        o = self.model.options
        return json.dumps(
            {
                "provider": "openai",
                "base_url": openai_base_url(self.model.base_url),
                "model": self.model.model,
                "temperature": o.temperature,
                "max_tokens": o.max_tokens,
                "top_p": o.top_p,
                "seed": o.seed,
                "structured_output": self.structured_output,
            },
            sort_keys=True,
        )

    def _request_kwargs(self, prompt: Prompt[Any, Any]) -> dict[str, Any]:
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", prompt.output_model.__name__)[:64]
        mode = self.structured_output
        # response_format travels in extra_body: as a keyword, LangChain switches to the SDK's
        # ``parse`` helper, which costs about 1 ms of client CPU per call and adds nothing here.
        if mode == "json_schema":
            fmt = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": prompt.output_schema, "strict": False},
            }
            return {"extra_body": {**self._extra_body, "response_format": fmt}}
        if mode == "json_mode":
            return {"extra_body": {**self._extra_body, "response_format": {"type": "json_object"}}}
        if mode == "function_calling":
            tool = {
                "type": "function",
                "function": {
                    "name": name,
                    "description": f"Return the {prompt.name} result.",
                    "parameters": prompt.output_schema,
                },
            }
            return {"tools": [tool], "tool_choice": {"type": "function", "function": {"name": name}}}
        return {}

    async def _complete(self, messages: list[BaseMessage], prompt: Prompt[Any, Any]) -> str:
        kwargs = self._request_kwargs(prompt)

        llm: ChatOpenAI = (await self._bind()).model

        async def call() -> AIMessage:
            started = time.perf_counter()
            if _callbacks_configured():  # tracing or handlers: the full Runnable path, so they see the call
                message = await llm.ainvoke(messages, **kwargs)
            else:  # no one listens: the model's own step, without LangChain's callback machinery
                result = await llm._agenerate(messages, **kwargs)
                message = cast(AIMessage, result.generations[0].message)  # _create_chat_result's AIMessage
            latency = time.perf_counter() - started
            usage = getattr(message, "usage_metadata", None) or {}
            self._record(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0)), latency)
            return message

        message: AIMessage = await self._send(call, prompt.name)
        return _message_text(message)

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer ``prompt`` for ``data`` with a validated ``prompt.output_model``.

        Returns:
            The validated output.

        Raises:
            JudgeOutputError: the output does not validate after one repair request (``raw``
                keeps both answers, truncated), or the provider's answer is not a completion.
            JudgeHTTPError: an HTTP error that is not retried, or retries ran out (``status``).
            JudgeTimeout: no answer within the timeout on every attempt.
            JudgeRateLimited: the provider's limiter refused the call.
        """
        messages: list[BaseMessage] = [
            SystemMessage(content=m.content) if m.role == "system" else HumanMessage(content=m.content)
            for m in prompt.messages(data, language)
        ]
        raw = await self._complete(messages, prompt)
        try:
            return _validate(prompt, raw)
        except ValidationError as first:
            errors = _error_summary(first)
            log.info("%s: output of %r does not validate; asking once for a repair", self._label, prompt.name)
        repair = [*messages, AIMessage(content=raw), HumanMessage(content=_REPAIR.format(errors=errors))]
        raw2 = await self._complete(repair, prompt)
        try:
            return _validate(prompt, raw2)
        except ValidationError as second:
            kept = self._redact(f"{raw[: RAW_LIMIT // 2]}\n--- after repair ---\n{raw2[: RAW_LIMIT // 2]}")
            raise JudgeOutputError(
                f"{self._label}: output of step {prompt.name!r} does not fit "
                f"{prompt.output_model.__name__} after one repair:\n{self._redact(_error_summary(second, 4))}",
                judge_id=self.id,
                step=prompt.name,
                raw=kept,
            ) from None

    def __repr__(self) -> str:
        url = openai_base_url(self.model.base_url)
        return f"OpenAIJudge(id={self.id!r}, model={self.model.model!r}, base_url={url!r})"


def _message_text(message: AIMessage) -> str:
    """The answer's text: the forced tool call's arguments, else the content."""
    if message.tool_calls:
        return json.dumps(message.tool_calls[0].get("args", {}), ensure_ascii=False)
    if message.invalid_tool_calls:
        args = message.invalid_tool_calls[0].get("args")
        return args if isinstance(args, str) else ""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content)


def build_openai_judges(
    models: Iterable[ResolvedChatModel],
    limiters: ProviderLimiters | None = None,
    *,
    failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
    cool_down_s: float = DEFAULT_COOL_DOWN_S,
    max_cool_down_s: float = DEFAULT_MAX_COOL_DOWN_S,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> list[OpenAIJudge]:
    """One :class:`OpenAIJudge` per model, sharing one limiter per ``provider_key``.

    Args:
        models: the resolved chat models.
        limiters: the registry to share limiters from (default: a new one).
        failure_threshold: each judge's circuit breaker threshold (consecutive down-failures).
        cool_down_s: each judge's circuit breaker first cool-down, seconds.
        max_cool_down_s: the cap of each breaker's growing cool-down, seconds.
        max_response_bytes: the largest answer body read from a judge, bytes.

    Close them with :func:`aclose_all` on the event loop that used them.
    """
    registry = limiters if limiters is not None else ProviderLimiters()
    return [
        OpenAIJudge(
            m,
            limiter=registry.get(m.provider_key, m.limits),
            failure_threshold=failure_threshold,
            cool_down_s=cool_down_s,
            max_cool_down_s=max_cool_down_s,
            max_response_bytes=max_response_bytes,
        )
        for m in models
    ]


async def aclose_all(clients: Iterable[Any]) -> None:
    """Close every judge or embedder that has ``aclose()``; failures are logged, not raised."""
    for client in clients:
        closer = getattr(client, "aclose", None)
        if closer is None:
            continue
        try:
            await closer()
        except Exception:  # closing is best effort
            log.warning("closing %r failed", client, exc_info=True)
