"""Embedders over any OpenAI-compatible ``/v1/embeddings`` endpoint (LangChain ``OpenAIEmbeddings``).

Part of :mod:`ragqa.judges.openai` (which re-exports every name here; import them from there): the
embedder shares the judge's HTTP stack (one aiohttp-backed client per event loop, the provider's
limiter, the breaker and retries of :class:`~ragqa.judges._http.HttpClientBase`). Like the
judge, it sends ``check_embedding_ctx_length=False`` so that ``OpenAIEmbeddings`` downloads no
tiktoken file.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Unpack

from langchain_openai import OpenAIEmbeddings
from pydantic import SecretStr

from ragqa.errors import JudgeOutputError
from ragqa.judges._http import (
    DEFAULT_MAX_RESPONSE_BYTES,
    NO_KEY,
    HttpClientBase,
    HttpOptions,
    openai_base_url,
)
from ragqa.judges._openai_wire import openai_http_client
from ragqa.judges.breaker import (
    DEFAULT_COOL_DOWN_S,
    DEFAULT_FAILURE_THRESHOLD,
    DEFAULT_MAX_COOL_DOWN_S,
)
from ragqa.judges.ratelimit import ProviderLimiters
from ragqa.settings import (
    DEFAULT_EMBEDDING_BATCH,
    ResolvedEmbeddingModel,
)

__all__ = ["OpenAIEmbedder", "build_openai_embedders"]


class OpenAIEmbedder(HttpClientBase):
    """An embedding model over an OpenAI-compatible ``/v1/embeddings`` endpoint.

    Args:
        model: the resolved embedding model (``options.dimensions`` is sent when set;
            ``options.batch_size`` texts per request, default 64; ``options.timeout``, default 60 s).
        limiter: the provider's shared limiter (default: a private one from ``model.limits``).
        http_client: an ``httpx.AsyncClient`` to use (left open); default: an own client per loop.
        breaker, failure_threshold, cool_down_s, max_cool_down_s, max_response_bytes, clock, retry_random, sleep:
            as for :class:`OpenAIJudge`.
    """

    def __init__(
        self,
        model: ResolvedEmbeddingModel,
        **transport: Unpack[HttpOptions],
    ) -> None:
        options = model.options
        super().__init__(model, **transport)
        self.model = model
        self.batch_size = max(1, options.batch_size or DEFAULT_EMBEDDING_BATCH)
        self._params: dict[str, Any] = {"model": model.model}
        if options.dimensions is not None:
            self._params["dimensions"] = options.dimensions

    def _new_http_client(self, response_hook: Callable[[Any], Awaitable[None]]) -> Any:
        """The OpenAI SDK's aiohttp client (:func:`~ragqa.judges._openai_wire.openai_http_client`)."""
        return openai_http_client(response_hook)

    def _make_model(self, http: Any) -> OpenAIEmbeddings:
        model, options = self.model, self.model.options
        return OpenAIEmbeddings(
            model=model.model,
            dimensions=options.dimensions,
            openai_api_base=openai_base_url(model.base_url),
            openai_api_key=model.api_key or SecretStr(NO_KEY),
            check_embedding_ctx_length=False,
            chunk_size=self.batch_size,
            max_retries=0,
            request_timeout=self._timeout_s,
            http_async_client=http,
        )

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts`` in batches of :attr:`batch_size` (batches run concurrently).

        Returns:
            One vector per text, in order; every vector has ``dimensions`` floats when set.

        Raises:
            JudgeOutputError: the provider returned a different number of vectors or ragged ones.
            JudgeHTTPError, JudgeTimeout, JudgeRateLimited: as for judges.
        """
        items = list(texts)
        if not items:
            return []
        batches = [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        await self._bind()
        tasks = [asyncio.ensure_future(self._embed_batch(b)) for b in batches]
        try:
            parts = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:  # a failed or cancelled call stops its other batches
                task.cancel()
            raise
        vectors = [v for part in parts for v in part]
        dims = {len(v) for v in vectors}
        if len(dims) > 1:
            raise JudgeOutputError(f"embedder {self._label}: vectors of mixed sizes {sorted(dims)}", judge_id=self.id)
        return vectors

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        client = (await self._bind()).model.async_client

        async def call() -> Any:
            started = time.perf_counter()
            response = await client.create(input=batch, **self._params)
            usage = getattr(response, "usage", None)
            self._record(int(getattr(usage, "prompt_tokens", 0) or 0), 0, time.perf_counter() - started)
            return response

        response = await self._send(call, "embed")
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise JudgeOutputError(
                f"embedder {self._label}: {len(data)} vectors for {len(batch)} texts", judge_id=self.id, step="embed"
            )
        return [list(d.embedding) for d in data]

    def __repr__(self) -> str:
        url = openai_base_url(self.model.base_url)
        return f"OpenAIEmbedder(id={self.id!r}, model={self.model.model!r}, base_url={url!r})"


def build_openai_embedders(
    models: Iterable[ResolvedEmbeddingModel],
    limiters: ProviderLimiters | None = None,
    *,
    failure_threshold: int = DEFAULT_FAILURE_THRESHOLD,
    cool_down_s: float = DEFAULT_COOL_DOWN_S,
    max_cool_down_s: float = DEFAULT_MAX_COOL_DOWN_S,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
) -> list[OpenAIEmbedder]:
    """One :class:`OpenAIEmbedder` per model, sharing one limiter per ``provider_key`` (breaker as for judges)."""
    registry = limiters if limiters is not None else ProviderLimiters()
    return [
        OpenAIEmbedder(
            m,
            limiter=registry.get(m.provider_key, m.limits),
            failure_threshold=failure_threshold,
            cool_down_s=cool_down_s,
            max_cool_down_s=max_cool_down_s,
            max_response_bytes=max_response_bytes,
        )
        for m in models
    ]
