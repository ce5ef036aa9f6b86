"""The provider seam: what a judge provider implements, and ragqa's own two providers.

A provider builds the judge of one resolved chat model (and, optionally, the embedder of one
resolved embedding model); :func:`ragqa.factory.build_judges` finds it by the model's
``provider:`` in the registry (:func:`ragqa.settings.register_provider`, entry-point group
``ragqa.providers``) and never branches on names. A native (non-OpenAI) provider is one module:
a class with ``name`` and ``judge()`` decorated with :func:`~ragqa.settings.register_provider`,
or declared as an entry point (``docs/extending.md``, "A native judge provider").

ragqa's own providers register here the same way; their clients are imported only when a model
of theirs is built, so validating a ``provider:`` name or building a local panel imports no HTTP
client or LLM SDK.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragqa.judges.base import Embedder, Judge
from ragqa.settings import ResolvedChatModel, ResolvedEmbeddingModel, register_provider

__all__ = ["JudgeProvider", "LocalProvider", "OpenAIProvider", "ProviderContext"]


@dataclass(frozen=True)
class ProviderContext:
    """What one container shares with every provider it builds models with.

    Attributes:
        limiters: the per-provider-key limiter registry (:class:`~ragqa.judges.ratelimit.ProviderLimiters`);
            ``limiters.get(model.provider_key, model.limits)`` is a model's rate limiter.
        http: the circuit breaker and answer-size keyword arguments of HTTP clients
            (``failure_threshold``, ``cool_down_s``, ``max_cool_down_s``, ``max_response_bytes``;
            :class:`ragqa.factory.HttpPolicy`).
        embedders: the container's embedders, uncached, in configured order.
    """

    limiters: Any
    http: Mapping[str, Any] = field(default_factory=dict)
    embedders: Sequence[Embedder] = ()


class JudgeProvider(Protocol):
    """Who serves the models of one ``provider:`` name.

    The factory registers whatever is returned that has an async ``aclose()`` to be closed with the
    container, and wraps it with the disk cache when caching is on; the provider only builds.
    """

    @property
    def name(self) -> str:
        """The name written as ``provider:`` in ``application.yaml``."""
        ...

    def judge(self, model: ResolvedChatModel, context: ProviderContext) -> Judge:
        """The judge of one chat model (``model.id`` is its id in reports).

        Raises:
            ragqa.errors.ConfigError: when the model's settings cannot serve it.
        """
        ...


@register_provider
class OpenAIProvider:
    """``provider: openai``: any OpenAI-compatible HTTP server (:class:`~ragqa.judges.openai.OpenAIJudge`)."""

    name = "openai"

    def judge(self, model: ResolvedChatModel, context: ProviderContext) -> Judge:
        """An :class:`~ragqa.judges.openai.OpenAIJudge` limited by its provider key's limiter."""
        from ragqa.judges.openai import OpenAIJudge  # the HTTP stack only when an OpenAI model is built

        return OpenAIJudge(model, limiter=context.limiters.get(model.provider_key, model.limits), **context.http)

    def embedder(self, model: ResolvedEmbeddingModel, context: ProviderContext) -> Embedder:
        """An :class:`~ragqa.judges.openai.OpenAIEmbedder` limited by its provider key's limiter."""
        from ragqa.judges.openai import OpenAIEmbedder

        return OpenAIEmbedder(model, limiter=context.limiters.get(model.provider_key, model.limits), **context.http)


@register_provider
class LocalProvider:
    """``provider: local``: ragqa's offline judge and embedder (:mod:`ragqa.judges.local`)."""

    name = "local"

    def judge(self, model: ResolvedChatModel, context: ProviderContext) -> Judge:
        """A :class:`~ragqa.judges.local.LocalJudge`; with ``use-embeddings``, it uses the first local embedder."""
        from ragqa.judges.local import LocalEmbedder, LocalJudge

        local_embedder = next((e for e in context.embedders if isinstance(e, LocalEmbedder)), None)
        return LocalJudge(model.id, model.local, embedder=local_embedder if model.local.use_embeddings else None)

    def embedder(self, model: ResolvedEmbeddingModel, context: ProviderContext) -> Embedder:
        """A :class:`~ragqa.judges.local.LocalEmbedder` of the model's ``method``."""
        from ragqa.judges.local import LocalEmbedder

        return LocalEmbedder(model.id, model.method)
