"""The judge's ``ChatOpenAI``: LangChain's request and result, without two per-call costs.

:class:`_JudgeChatOpenAI` overrides only ``_agenerate`` (LangChain's extension point for a chat
model). For the Chat Completions request ragqa sends (``response_format`` rides in
``extra_body``, no streaming, no Responses API, no response headers asked for), it:

- builds the request with ``ChatOpenAI``'s own ``_get_request_payload`` (LangChain's message
  conversion and default parameters);
- sends it with the OpenAI SDK client LangChain built (``root_async_client``), through the same
  ``post`` call, request options, auth and raw-response wrapper that
  ``chat.completions.with_raw_response.create`` uses, minus one step: the SDK's request
  ``transform``. That step walks the payload against the ``CompletionCreateParams`` type hints
  (about 0.5 ms of CPU per call on this 4 kB prompt) to rename aliased keys and format dates or
  files; the chat parameters have none of those, so on the plain JSON values LangChain builds it
  returns an equal copy. ``tests/judges/test_http_judge_paths.py`` proves it on every payload the judge
  sends (each structured-output mode) and checks that the parameter types still have no alias or
  format, so an SDK that adds one fails the test instead of changing a request; at run time the
  first body of each shape goes through the installed SDK's transform once, and a shape it would
  change is sent through ``create`` from then on (so a newer SDK cannot change a request either);
  if the SDK's private helpers move, the judge falls back to ``create`` for every call;
- builds the ``ChatResult`` with ``ChatOpenAI``'s ``_create_chat_result`` inline (LangChain runs
  it in a thread pool; handing 0.03 ms of pure CPU to a thread and back costs more than the work);
- maps errors exactly as ``ChatOpenAI._agenerate`` does.

Anything else (a ``response_format`` keyword, streaming, the Responses API, response headers,
a keyword the SDK's ``create`` does not take) goes to ``ChatOpenAI._agenerate`` unchanged.
"""

from __future__ import annotations

import inspect
from typing import Any

import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import _handle_openai_api_error, _handle_openai_bad_request
from openai.resources.chat.completions import AsyncCompletions
from openai.types.chat import ChatCompletion, ChatCompletionChunk

try:  # private SDK helpers: an SDK that moves them loses only the fast path, never the judge
    from openai._base_client import make_request_options
    from openai._constants import RAW_RESPONSE_HEADER
    from openai._utils import async_maybe_transform
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
except ImportError:  # pragma: no cover - depends on the installed SDK
    _FAST_PATH = False
else:
    _FAST_PATH = True

__all__ = ["BODY_KEYS", "OPTION_KEYS", "_JudgeChatOpenAI", "wire_request"]

OPTION_KEYS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})
"""Keywords of the SDK's ``chat.completions.create`` that become request options, not body keys."""
BODY_KEYS = frozenset(inspect.signature(AsyncCompletions.create).parameters) - OPTION_KEYS - {"self"}
"""Keywords of the SDK's ``chat.completions.create`` that become keys of the JSON body."""
_REQUIRED = ("messages", "model")
_STREAM_CLS = openai.AsyncStream[ChatCompletionChunk]


def wire_request(payload: dict[str, Any]) -> tuple[dict[str, Any], Any] | None:
    """Split a LangChain Chat Completions payload into the SDK's JSON body and request options.

    Does what ``chat.completions.with_raw_response.create(**payload)`` does before it posts,
    except the request transform (see the module docstring): every keyword that ``create`` puts
    in the body goes to the body as it is; ``extra_headers``, ``extra_query``, ``extra_body`` and
    ``timeout`` become request options, with the raw-response header and bearer auth ``create``
    adds.

    Args:
        payload: ``ChatOpenAI._get_request_payload``'s result.

    Returns:
        ``(body, options)`` for ``AsyncOpenAI.post("/chat/completions", ...)``, or ``None`` when
        the payload needs ``create`` itself: a key ``create`` does not take, a missing
        ``messages`` or ``model``, ``response_format`` as a keyword or streaming.
    """
    if not _FAST_PATH:
        return None
    if "response_format" in payload or payload.get("stream") or not payload.keys() <= BODY_KEYS | OPTION_KEYS:
        return None
    if any(key not in payload for key in _REQUIRED):
        return None
    body = {k: v for k, v in payload.items() if k not in OPTION_KEYS}
    headers = payload.get("extra_headers")
    options = make_request_options(
        extra_headers={**(headers or {}), RAW_RESPONSE_HEADER: "true"},
        extra_query=payload.get("extra_query"),
        extra_body=payload.get("extra_body"),
        timeout=payload.get("timeout", openai.NOT_GIVEN),
        security={"bearer_auth": True},
    )
    return body, options


_VERIFIED: dict[tuple[tuple[str, str], ...], bool] = {}
"""Per body shape (each key and its value's type), whether the installed SDK's transform left it unchanged."""


async def _transform_is_identity(body: dict[str, Any]) -> bool:
    """Whether the installed SDK's request transform returns ``body`` unchanged, checked once per body shape.

    The tests prove it for the SDK they run with; this check keeps the promise for any other
    release a user installs: the first body of each shape (its keys and their values' types) goes
    through the real ``async_maybe_transform``, and a shape it would change is sent through
    ``create`` from then on. Costs one transform (about 0.5 ms) per shape per process.
    """
    shape = tuple(sorted((k, type(v).__name__) for k, v in body.items()))
    known = _VERIFIED.get(shape)
    if known is None:
        known = _VERIFIED[shape] = await async_maybe_transform(body, CompletionCreateParamsNonStreaming) == body
    return known


class _JudgeChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` whose Chat Completions call skips the SDK's request transform and the thread hop.

    See the module docstring; the request body, options, response, message and errors are
    ``ChatOpenAI``'s.
    """

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        wire = None if self.include_response_headers or self._use_responses_api(payload) else wire_request(payload)
        if wire is None:
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        body, options = wire
        if not await _transform_is_identity(body):
            return await super()._agenerate(messages, stop=stop, run_manager=run_manager, **kwargs)
        raw_response: Any = None
        try:
            raw_response = await self.root_async_client.post(
                "/chat/completions",
                body=body,
                options=options,
                cast_to=ChatCompletion,
                stream=False,
                stream_cls=_STREAM_CLS,
            )
            response = raw_response.parse()
        except openai.BadRequestError as e:
            _handle_openai_bad_request(e)
            raise
        except openai.APIError as e:
            _handle_openai_api_error(e)
            raise
        except Exception as e:
            if raw_response is not None and hasattr(raw_response, "http_response"):
                e.response = raw_response.http_response  # type: ignore[attr-defined]
            raise
        return self._create_chat_result(response)
