"""Typed settings for ragqa, read from ``application.yaml`` (Spring AI shape) plus profiles.

SKELETON: the models below are the contract other modules build against. The loader
(profiles, ``${VAR}`` placeholders, durations, env overrides, unknown-key hints) is filled in
by :func:`load_settings`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = [
    "BackoffSettings",
    "ChatOptions",
    "EmbeddingOptions",
    "LocalJudgeSettings",
    "Price",
    "ProviderLimits",
    "ResolvedChatModel",
    "ResolvedEmbeddingModel",
    "RetrySettings",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BackoffSettings(_Model):
    """Spring retry backoff: wait ``initial * multiplier**n``, capped at ``max_interval``."""

    initial_interval: timedelta = timedelta(seconds=2)
    multiplier: float = 5.0
    max_interval: timedelta = timedelta(minutes=3)


class RetrySettings(_Model):
    """``spring.ai.retry`` (Spring AI defaults)."""

    max_attempts: int = 10
    """Total attempts including the first."""
    on_http_codes: list[int] = Field(default_factory=list)
    """Always retried."""
    on_client_errors: bool = False
    """Also retry other 4xx codes."""
    exclude_on_http_codes: list[int] = Field(default_factory=list)
    """Never retried (highest precedence)."""
    backoff: BackoffSettings = Field(default_factory=BackoffSettings)


StructuredOutput = Literal["json_schema", "json_mode", "function_calling", "prompt"]


class ChatOptions(_Model):
    """Options of a chat model (``default-options`` merged field by field with per-model options)."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    timeout: timedelta | None = None
    """Per-request timeout (default 60 s when unset)."""
    structured_output: StructuredOutput | None = None
    """How structured output is requested (default ``json_schema``)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers sent with every request of this model."""


class EmbeddingOptions(_Model):
    """Options of an embedding model."""

    model: str | None = None
    dimensions: int | None = None
    batch_size: int | None = None
    """Texts per request (default 64)."""
    timeout: timedelta | None = None


class LocalJudgeSettings(_Model):
    """Options of the offline local judge (``provider: local``)."""

    support_threshold: float = 0.5
    """Graded support at or above which a statement's binary verdict is 1."""
    use_embeddings: bool = False
    """Use MiniLM embeddings (needs the ``embeddings`` extra) where the judge ranks relevance."""
    number_check: bool = True
    """Cap support by the share of the statement's numbers found in the context."""
    entity_check: bool = True
    """Cap support by the share of the statement's named entities found in the context."""


class ProviderLimits(_Model):
    """Rate limit and concurrency of one provider, shared by all its models and metrics."""

    rps: float | None = None
    """Requests per second (token bucket); ``None`` = unlimited."""
    strategy: Literal["wait", "reject"] = "wait"
    timeout: timedelta | None = None
    """With ``wait``: the longest wait for a token before the call fails (``None`` = forever)."""
    max_in_flight: int = 16
    """Calls in flight at once."""


class Price(_Model):
    """Price of a model per one million tokens, in any one currency."""

    prompt: float = 0.0
    completion: float = 0.0


class ResolvedChatModel(_Model):
    """One judge of the panel, with every inherited value resolved."""

    id: str
    """The judge id shown in reports (``chat-models.list[].id``)."""
    provider: Literal["openai", "local"] = "openai"
    model: str
    """The model name sent to the provider (``options.model``, else ``id``)."""
    base_url: str | None = None
    """Spring semantics: without ``/v1`` (the adapter appends it unless present)."""
    api_key: SecretStr | None = None
    provider_key: str = "default"
    """Groups models sharing rate limits (``group`` of the entry, else the base URL's host)."""
    options: ChatOptions = Field(default_factory=ChatOptions)
    local: LocalJudgeSettings = Field(default_factory=LocalJudgeSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    limits: ProviderLimits = Field(default_factory=ProviderLimits)
    price: Price | None = None


class ResolvedEmbeddingModel(_Model):
    """One embedding model, with every inherited value resolved."""

    id: str
    provider: Literal["openai", "local"] = "openai"
    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None
    provider_key: str = "default"
    options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    limits: ProviderLimits = Field(default_factory=ProviderLimits)
    price: Price | None = None
    method: Literal["auto", "minilm", "hashing"] = "auto"
    """Local embedders only: MiniLM when installed (``auto``), or a hashing bag-of-words."""

    def extra(self) -> dict[str, Any]:
        """Reserved for provider-specific options."""
        return {}
