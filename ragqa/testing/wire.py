"""What the fake OpenAI-compatible server and its responders exchange: requests, faults, errors.

A responder (:data:`Responder`) gets a :class:`ChatRequest` and returns a dict (sent as JSON), a
string (sent verbatim) or a :class:`Fault`. When it cannot answer, it raises
:class:`ResponderError`: the server then answers HTTP 400 with the message in an OpenAI-style
error body and records a :class:`ResponderFailure`, so neither the client nor the test can miss
it. Nothing here makes up an answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragqa.errors import RagqaError
from ragqa.prompts.base import DATA_CLOSE, DATA_OPEN, read_data_blocks

__all__ = [
    "Answer",
    "ChatRequest",
    "Fault",
    "RecordedRequest",
    "Responder",
    "ResponderError",
    "ResponderFailure",
    "content_text",
    "count_tokens",
]

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Fault:
    """A failure the server answers instead of a completion.

    Attributes:
        status: the HTTP status (e.g. 429, 500, 503); ignored when ``body`` is a 200 body.
        retry_after: ``Retry-After`` header in seconds (sent as a decimal number), or ``None``.
        retry_after_ms: ``retry-after-ms`` header in milliseconds, or ``None``.
        hang_s: sleep this long before answering (past the client's timeout), or ``None``. A
            hang with status 200 and no body then answers normally (a slow answer).
            ``math.inf``: no answer until the server stops (a timeout that must fire, fires).
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
class ResponderFailure:
    """A chat request the server refused because its responder could not answer it.

    Attributes:
        model: the requested model.
        status: the HTTP status sent (400 for a :class:`ResponderError`, 500 for any other exception).
        message: what went wrong (also the ``error.message`` of the response body).
        t: ``time.monotonic()`` when it was refused.
    """

    model: str
    status: int
    message: str
    t: float


class ResponderError(RagqaError):
    """A responder cannot answer a request: an unknown prompt, a missing data block, unknown input keys.

    The server answers HTTP 400 with the message and records a :class:`ResponderFailure`.
    """


def content_text(content: Any) -> str:
    """The text of an OpenAI message ``content``: a string, or the ``text`` of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def count_tokens(text: str) -> int:
    r"""The fake server's token count: the number of words (``\w+`` runs) in ``text``."""
    return len(_WORD.findall(text))


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

    def _texts(self, role: str) -> list[str]:
        return [content_text(m.get("content")) for m in self.messages if m.get("role") == role]

    @property
    def system(self) -> str:
        """The text of the first system message (ragqa's judge rules), or ``""``."""
        texts = self._texts("system")
        return texts[0] if texts else ""

    @property
    def prompt(self) -> str:
        """The text of the last user message (the ragqa prompt, or the repair request after one)."""
        texts = self._texts("user")
        return texts[-1] if texts else ""

    @property
    def is_repair(self) -> bool:
        """Whether this is a follow-up turn such as ragqa's repair request (an assistant message is in it)."""
        return any(m.get("role") == "assistant" for m in self.messages)

    @property
    def prompt_text(self) -> str:
        """The last user message that holds a data block (the ragqa prompt, also in a repair turn), or ``""``."""
        for text in reversed(self._texts("user")):
            if DATA_OPEN in text and DATA_CLOSE in text:
                return text
        return ""

    @property
    def input(self) -> dict[str, Any] | None:
        """The ragqa prompt's input: the last data block of :attr:`prompt_text`, or ``None``.

        Data blocks are read with :func:`ragqa.prompts.base.read_data_blocks`, so text inside the
        data (an ``Input:``, a forged end marker) cannot change what is read.
        """
        blocks = read_data_blocks(self.prompt_text)
        value = blocks[-1] if blocks else None
        return value if isinstance(value, dict) else None

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


Answer = dict[str, Any] | str | Fault
"""What a responder returns: a dict (sent as JSON), a string (sent verbatim) or a :class:`Fault`."""

Responder = Callable[[ChatRequest], Answer]
"""Answers a chat request, or raises :class:`ResponderError` when it cannot."""
