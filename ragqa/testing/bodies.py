"""The JSON bodies the fake OpenAI-compatible server answers with (:mod:`ragqa.testing.app`).

Pure functions of a request: :func:`chat_completion_body` (a ``chat.completion`` with ``usage``,
the answer as content or as a tool call, ``n`` identical choices), :func:`embeddings_body`
(deterministic unit vectors, floats or base64) and :func:`error_response` (an OpenAI-style error).
Token counts are :func:`ragqa.testing.wire.count_tokens`'s.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import struct
import time
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from ragqa.testing.wire import ChatRequest, content_text, count_tokens

__all__ = ["chat_completion_body", "embedding_vector", "embeddings_body", "error_response"]


def embedding_vector(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector of ``dimensions`` floats for ``text`` (seeded by its BLAKE2b hash)."""
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")
    rng = random.Random(seed)
    vec = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def chat_completion_body(chat: ChatRequest, answer: dict[str, Any] | str) -> dict[str, Any]:
    """The ``chat.completion`` body answering ``chat`` with ``answer`` (a dict is sent as JSON text).

    With ``tools`` in the request the answer is the first tool's call arguments; ``usage`` counts
    the prompt's and the answer's tokens (the completion's times ``n`` choices).
    """
    text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
    prompt_tokens = sum(count_tokens(content_text(m.get("content"))) for m in chat.messages)
    completion_tokens = max(1, count_tokens(text))
    message: dict[str, Any] = {"role": "assistant", "content": text}
    finish = "stop"
    if chat.mode == "tools":
        tool = chat.body["tools"][0].get("function", {})
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
    n = chat.body.get("n")
    choices = max(1, n) if isinstance(n, int) else 1  # ``n`` completions: the same answer n times
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": chat.model,
        "choices": [
            {"index": i, "message": message, "finish_reason": finish, "logprobs": None} for i in range(choices)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens * choices,
            "total_tokens": prompt_tokens + completion_tokens * choices,
        },
    }


def embeddings_body(body: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The ``/v1/embeddings`` body for a request ``body``: one vector per input (a string, strings or token arrays).

    ``dimensions`` defaults to 8; ``encoding_format`` ``base64`` packs little-endian float32s.
    """
    raw = body.get("input", [])
    if isinstance(raw, str) or (isinstance(raw, list) and raw and isinstance(raw[0], int)):
        raw = [raw]
    texts = [t if isinstance(t, str) else " ".join(map(str, t)) for t in raw]
    dims = int(body.get("dimensions") or 8)
    b64 = body.get("encoding_format") == "base64"
    data = []
    for i, text in enumerate(texts):
        vec = embedding_vector(text, dims)
        emb: Any = base64.b64encode(struct.pack(f"<{dims}f", *vec)).decode("ascii") if b64 else vec
        data.append({"object": "embedding", "index": i, "embedding": emb})
    tokens = sum(count_tokens(t) for t in texts)
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def error_response(status: int, message: str, kind: str, headers: Mapping[str, str] | None = None) -> web.Response:
    """An OpenAI-style error: HTTP ``status`` with ``{"error": {"message", "type", "code", "param"}}``."""
    return web.json_response(
        {"error": {"message": message, "type": kind, "code": kind, "param": None}},
        status=status,
        headers=dict(headers or {}),
    )
