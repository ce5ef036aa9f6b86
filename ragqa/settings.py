"""Typed settings for ragqa, read from ``application.yaml`` (Spring AI shape) plus profiles.

The flow is one direction::

    application.yaml  ->  application-<profile>.yaml ...  ->  RAGQA__* environment overrides
        -> Settings (validated once)  ->  Settings.judges() / Settings.embedders()

* Keys are bound the Spring way ("relaxed binding"): ``max-attempts``, ``max_attempts`` and
  ``maxAttempts`` all name the field ``max_attempts``; the YAML key ``list`` is the field ``items``.
  Keys of maps (``ragqa.providers``, ``ragqa.prices``, ``ragqa.thresholds``, ``headers``) are
  kept verbatim. An unknown key is a :class:`~ragqa.errors.ConfigError` naming the dotted key,
  the file and the closest valid key ("did you mean").
* ``${VAR}`` / ``${VAR:default}`` are expanded on parsed string scalars (never on raw text, so
  comments and values with YAML syntax are safe). A missing variable is a ``ConfigError`` naming
  the variable and the key, raised at load time, except for ``api-key`` and ``base-url``: those
  keep an :class:`UnresolvedPlaceholder` and fail only when a model of the panel inherits them
  (:meth:`Settings.judges`, :meth:`Settings.embedders`), so ``--profile local`` needs no key.
* Durations accept ``2000ms``, ``2s``, ``1m``, ``1h``, ``1d`` (also ``ns``, ``us``), a bare
  number meaning **milliseconds** (as in Spring), and ISO-8601 (``PT2S``) via pydantic.
* Environment overrides: ``RAGQA__<PATH>`` with ``__`` between path segments, case-insensitive,
  the value parsed as a YAML scalar, applied after the profiles; for example
  ``RAGQA__RAGQA__LANGUAGE=ru`` or ``RAGQA__SPRING__AI__CHAT_MODELS__LIST__0__OPTIONS__TEMPERATURE=0.2``.

See ``docs/configuration.md`` for every key with its default.
"""

from __future__ import annotations

import difflib
import os
import re
import types
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict, Union, cast, get_args, get_origin
from urllib.parse import urlparse

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from ragqa.errors import ConfigError
from ragqa.schema import Language

__all__ = [
    "ENV_PREFIX",
    "MASK",
    "PROFILES_ENV",
    "AggregationSettings",
    "BackoffSettings",
    "CacheSettings",
    "ChatModelEntry",
    "ChatModelsSettings",
    "ChatOptions",
    "ConcurrencySettings",
    "Duration",
    "EmbeddingModelEntry",
    "EmbeddingModelsSettings",
    "EmbeddingOptions",
    "LocalJudgeSettings",
    "OpenAIChatSettings",
    "OpenAIEmbeddingSettings",
    "OpenAISettings",
    "Price",
    "ProviderLimits",
    "RagqaSettings",
    "ResolvedChatModel",
    "ResolvedEmbeddingModel",
    "RetrySettings",
    "Settings",
    "SpringAISettings",
    "SpringSettings",
    "SpringYamlSource",
    "ThreadsSettings",
    "UnresolvedPlaceholder",
    "VirtualThreadsSettings",
    "load_settings",
    "parse_duration",
    "render_settings",
]

ENV_PREFIX = "RAGQA__"
"""Prefix of environment variables that override single keys (``RAGQA__RAGQA__LANGUAGE=ru``)."""
PROFILES_ENV = "RAGQA_PROFILES_ACTIVE"
"""Comma-separated active profiles, used when no profiles are passed explicitly."""
MASK = "**********"
"""What every secret is rendered as."""
DEFAULT_CHAT_MODEL = "gpt-4o-mini"
"""Spring AI's default chat model, used when neither ``chat-models.list`` nor ``chat.options.model`` names one."""
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com"
"""Spring AI's default ``spring.ai.openai.base-url`` (without ``/v1``)."""

# --------------------------------------------------------------------------------------------
# Durations
# --------------------------------------------------------------------------------------------

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|m|h|d)?\s*$", re.IGNORECASE)
_UNIT_SECONDS: dict[str | None, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    None: 1e-3,  # a bare number is milliseconds, as in Spring
}


def parse_duration(value: Any) -> Any:
    """Parse a Spring-style duration; anything else is left for pydantic (ISO-8601, ``timedelta``).

    Args:
        value: ``"2000ms"``, ``"2s"``, ``"1m"``, ``"1h"``, ``"1d"`` (also ``ns``, ``us``; unit
            case-insensitive), or a bare number (``2000``, ``"2000"``) meaning **milliseconds**
            (Spring's ``DurationStyle.SIMPLE`` with its default unit).

    Returns:
        A ``timedelta`` for the forms above; other values unchanged (pydantic then accepts
        ISO-8601 ``"PT2S"``, ``"00:00:02"`` or a ``timedelta``, and rejects the rest).
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return timedelta(milliseconds=value)
    if isinstance(value, str) and (match := _DURATION.match(value)):
        unit = match[2].lower() if match[2] else None
        return timedelta(seconds=float(match[1]) * _UNIT_SECONDS[unit])
    return value


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]
"""A ``timedelta`` that also accepts Spring durations (``2000ms``, ``2s``; bare number = ms)."""

# --------------------------------------------------------------------------------------------
# Building blocks (the contract other modules build against)
# --------------------------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UnresolvedPlaceholder(_Model):
    """An ``api-key``/``base-url`` whose ``${VAR}`` was not set; an error only if a panel model uses it.

    Attributes:
        variable: the environment variable that was missing (``OPENROUTER_API_KEY``).
        key: the dotted settings key that holds it (``spring.ai.openai.api-key``).
        text: the value as written (``${OPENROUTER_API_KEY}``), shown by :func:`render_settings`.
    """

    variable: str
    key: str
    text: str

    def error(self, user: str) -> ConfigError:
        """The start-up error for ``user`` (e.g. ``chat model 'openai/gpt-4o-mini'``) inheriting this value."""
        return ConfigError(
            f"environment variable {self.variable} is not set; {self.key} = {self.text} is needed by {user}. "
            f"Set {self.variable}, give the value a default (${{{self.variable}:...}}), "
            "or choose a profile whose panel does not use it (e.g. --profile local).",
            key=self.key,
        )


class BackoffSettings(_Model):
    """Spring retry backoff: wait ``initial * multiplier**n``, capped at ``max_interval``.

    Defaults are Spring AI's (2 s, x5, 3 min); the seed sets 2000 ms, x2, 30000 ms.
    """

    initial_interval: Duration = timedelta(seconds=2)
    multiplier: float = Field(default=5.0, ge=1.0)
    max_interval: Duration = timedelta(minutes=3)


class RetrySettings(_Model):
    """``spring.ai.retry`` (Spring AI defaults)."""

    max_attempts: int = Field(default=10, ge=1)
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
    temperature: float | None = Field(default=None, ge=0.0)
    max_tokens: int | None = Field(default=None, ge=1)
    top_p: float | None = Field(default=None, ge=0.0, le=1.0)
    seed: int | None = None
    timeout: Duration | None = None
    """Per-request timeout (default 60 s when unset). A bare number is milliseconds."""
    structured_output: StructuredOutput | None = None
    """How structured output is requested (default ``json_schema``)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers sent with every request of this model (merged key by key across layers)."""


class EmbeddingOptions(_Model):
    """Options of an embedding model."""

    model: str | None = None
    dimensions: int | None = Field(default=None, ge=1)
    batch_size: int | None = Field(default=None, ge=1)
    """Texts per request (default 64)."""
    timeout: Duration | None = None


class LocalJudgeSettings(_Model):
    """Options of the offline local judge (``provider: local``)."""

    support_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """Graded support at or above which a statement's binary verdict is 1."""
    use_embeddings: bool = False
    """Use MiniLM embeddings (needs the ``embeddings`` extra) where the judge ranks relevance."""
    number_check: bool = True
    """Cap support by the share of the statement's numbers found in the context."""
    entity_check: bool = True
    """Cap support by the share of the statement's named entities found in the context."""


class ProviderLimits(_Model):
    """Rate limit and concurrency of one provider, shared by all its models and metrics."""

    rps: float | None = Field(default=None, gt=0.0)
    """Requests per second (token bucket); ``None`` = unlimited."""
    strategy: Literal["wait", "reject"] = "wait"
    timeout: Duration | None = None
    """With ``wait``: the longest wait for a token before the call fails (``None`` = forever)."""
    max_in_flight: int = Field(default=16, ge=1)
    """Calls in flight at once."""


class Price(_Model):
    """Price of a model per one million tokens, in any one currency."""

    prompt: float = Field(default=0.0, ge=0.0)
    completion: float = Field(default=0.0, ge=0.0)


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


# --------------------------------------------------------------------------------------------
# The settings tree (mirrors application.yaml)
# --------------------------------------------------------------------------------------------

ApiKey = SecretStr | UnresolvedPlaceholder | None
"""An API key: a secret, a placeholder whose variable is unset (fails lazily), or unset."""
BaseUrl = str | UnresolvedPlaceholder | None
"""A base URL (Spring semantics, without ``/v1``), a lazily failing placeholder, or unset."""


class OpenAIChatSettings(_Model):
    """``spring.ai.openai.chat``: Spring's default chat client; its options are the lowest layer."""

    base_url: BaseUrl = None
    """Overrides ``spring.ai.openai.base-url`` for chat models."""
    api_key: ApiKey = None
    """Overrides ``spring.ai.openai.api-key`` for chat models."""
    options: ChatOptions = Field(default_factory=ChatOptions)


class OpenAIEmbeddingSettings(_Model):
    """``spring.ai.openai.embedding``: connection and options inherited by embedding models."""

    base_url: BaseUrl = None
    api_key: ApiKey = None
    options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)


class OpenAISettings(_Model):
    """``spring.ai.openai``: the OpenAI-compatible connection every ``provider: openai`` model inherits."""

    base_url: BaseUrl = DEFAULT_OPENAI_BASE_URL
    api_key: ApiKey = None
    chat: OpenAIChatSettings = Field(default_factory=OpenAIChatSettings)
    embedding: OpenAIEmbeddingSettings = Field(default_factory=OpenAIEmbeddingSettings)


class ChatModelEntry(_Model):
    """One entry of ``spring.ai.chat-models.list``: a judge of the panel."""

    id: str = Field(min_length=1)
    """Judge id in reports; also the model name unless ``options.model`` is set."""
    provider: Literal["openai", "local"] = "openai"
    group: str | None = None
    """Rate-limit group (``ragqa.providers`` key); default: the base URL's host, or ``local``."""
    base_url: BaseUrl = None
    api_key: ApiKey = None
    options: ChatOptions = Field(default_factory=ChatOptions)
    local: LocalJudgeSettings = Field(default_factory=LocalJudgeSettings)
    """Only for ``provider: local``."""

    @model_validator(mode="after")
    def _local_only_for_local(self) -> ChatModelEntry:
        if self.provider != "local" and "local" in self.model_fields_set:
            raise ValueError("'local' options apply only to entries with provider: local")
        return self


class EmbeddingModelEntry(_Model):
    """One entry of ``spring.ai.embedding-models.list``."""

    id: str = Field(min_length=1)
    provider: Literal["openai", "local"] = "openai"
    group: str | None = None
    base_url: BaseUrl = None
    api_key: ApiKey = None
    options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)
    method: Literal["auto", "minilm", "hashing"] = "auto"
    """Only for ``provider: local``: MiniLM when installed (``auto``), ``minilm``, or ``hashing``."""


def _check_unique_ids(ids: Iterable[str], key: str) -> None:
    seen: set[str] = set()
    for index, model_id in enumerate(ids):
        if model_id in seen:
            raise ConfigError(
                f"duplicate id {model_id!r} at {key}[{index}]: ids name judges in reports and must be unique",
                key=f"{key}[{index}].id",
            )
        seen.add(model_id)


class ChatModelsSettings(_Model):
    """``spring.ai.chat-models``: the judge panel."""

    default_options: ChatOptions = Field(default_factory=ChatOptions)
    """Options every entry inherits, field by field (``model`` is never inherited)."""
    items: list[ChatModelEntry] = Field(default_factory=list)
    """YAML key ``list``. Empty: one judge from ``spring.ai.openai.chat.options``."""

    @model_validator(mode="after")
    def _unique(self) -> ChatModelsSettings:
        _check_unique_ids((e.id for e in self.items), "spring.ai.chat-models.list")
        return self


class EmbeddingModelsSettings(_Model):
    """``spring.ai.embedding-models``."""

    default_options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)
    items: list[EmbeddingModelEntry] = Field(default_factory=list)
    """YAML key ``list``. Empty: one model from ``spring.ai.openai.embedding`` if it names a model."""

    @model_validator(mode="after")
    def _unique(self) -> EmbeddingModelsSettings:
        _check_unique_ids((e.id for e in self.items), "spring.ai.embedding-models.list")
        return self


class SpringAISettings(_Model):
    """``spring.ai``."""

    retry: RetrySettings = Field(default_factory=RetrySettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)
    chat_models: ChatModelsSettings = Field(default_factory=ChatModelsSettings)
    embedding_models: EmbeddingModelsSettings = Field(default_factory=EmbeddingModelsSettings)


class VirtualThreadsSettings(_Model):
    """``spring.threads.virtual``: accepted for compatibility with Spring configs; no effect."""

    enabled: bool = False


class ThreadsSettings(_Model):
    """``spring.threads``: accepted for compatibility; no effect (ragqa uses asyncio)."""

    virtual: VirtualThreadsSettings = Field(default_factory=VirtualThreadsSettings)


class SpringSettings(_Model):
    """``spring``."""

    ai: SpringAISettings = Field(default_factory=SpringAISettings)
    threads: ThreadsSettings = Field(default_factory=ThreadsSettings)


class AggregationSettings(_Model):
    """``ragqa.aggregation``: how per-judge scores become the panel's aggregate."""

    strategy: Literal["mean", "median", "min", "max", "majority"] = "mean"
    quorum: int = Field(default=1, ge=1)
    """Minimum successful judges for an aggregate to exist."""


class ConcurrencySettings(_Model):
    """``ragqa.concurrency``."""

    max_concurrent_samples: int = Field(default=16, ge=1)
    """Samples scored at once (judge calls are further bounded per provider)."""


class CacheSettings(_Model):
    """``ragqa.cache``: on-disk cache of finished judge calls (never keyed on the API key)."""

    enabled: bool = False
    directory: Path = Path(".ragqa-cache")


class RagqaSettings(_Model):
    """``ragqa``: ragqa's own section."""

    metrics: list[str] = Field(default_factory=lambda: ["faithfulness", "hallucination"])
    """Default metric set (registry names, see ``ragqa metrics``)."""
    metric_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Keyword options per metric name (``noise_sensitivity: {mode: irrelevant}``)."""
    aggregation: AggregationSettings = Field(default_factory=AggregationSettings)
    language: Language = "en"
    """Prompt and report language."""
    concurrency: ConcurrencySettings = Field(default_factory=ConcurrencySettings)
    providers: dict[str, ProviderLimits] = Field(default_factory=dict)
    """Limits per provider key (a model's ``group``, else its base URL host, else ``local``)."""
    default_limits: ProviderLimits = Field(default_factory=ProviderLimits)
    """Limits of providers not listed in ``providers``."""
    cache: CacheSettings = Field(default_factory=CacheSettings)
    thresholds: dict[str, float] = Field(default_factory=dict)
    """Pass thresholds per metric key (used by the pytest plugin and CLI exit codes)."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Prices per model name (or judge id), per one million tokens."""


# --------------------------------------------------------------------------------------------
# Resolution helpers
# --------------------------------------------------------------------------------------------


def _overlay_chat(*layers: ChatOptions) -> dict[str, Any]:
    """Merge options field by field: later layers win for every field they set; headers merge by key."""
    data: dict[str, Any] = {}
    for layer in layers:
        for name in layer.model_fields_set:
            if name == "headers":
                data["headers"] = {**data.get("headers", {}), **layer.headers}
            else:
                data[name] = getattr(layer, name)
    return data


def _overlay_embedding(*layers: EmbeddingOptions) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for layer in layers:
        for name in layer.model_fields_set:
            data[name] = getattr(layer, name)
    return data


def _first_set(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _require(value: Any, user: str) -> Any:
    """Raise the lazy placeholder error if ``value`` is unresolved; map empty strings to ``None``."""
    if isinstance(value, UnresolvedPlaceholder):
        raise value.error(user)
    if isinstance(value, SecretStr) and not value.get_secret_value():
        return None
    if isinstance(value, str) and not value:
        return None
    return value


def _provider_key(group: str | None, provider: str, base_url: str | None) -> str:
    if group:
        return group
    if provider == "local":
        return "local"
    host = urlparse(base_url).hostname if base_url else None
    return host or "default"


class _ResolvedCommon(TypedDict):
    """What :class:`ResolvedChatModel` and :class:`ResolvedEmbeddingModel` resolve alike."""

    id: str
    provider: Literal["openai", "local"]
    model: str
    base_url: str | None
    api_key: SecretStr | None
    provider_key: str
    retry: RetrySettings
    limits: ProviderLimits
    price: Price | None


class Settings(BaseSettings):
    """The whole configuration: ``spring`` (Spring AI shape) and ``ragqa`` (ragqa's own section).

    Build it with :func:`load_settings`. ``Settings()`` alone gives the defaults: it reads no
    file and no environment variable (the only source is the data :func:`load_settings` passes).
    """

    model_config = SettingsConfigDict(extra="forbid", frozen=True)

    spring: SpringSettings = Field(default_factory=SpringSettings)
    ragqa: RagqaSettings = Field(default_factory=RagqaSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the data passed in (from :class:`SpringYamlSource`); ambient env is read by the source."""
        return (init_settings,)

    def judges(self) -> list[ResolvedChatModel]:
        """The judge panel: one resolved chat model per ``spring.ai.chat-models.list`` entry, in order.

        Per entry: ``provider`` defaults to ``openai``; ``model`` is ``options.model`` else ``id``;
        ``base-url`` / ``api-key`` come from the entry, else ``spring.ai.openai.chat``, else
        ``spring.ai.openai``; options are ``spring.ai.openai.chat.options`` (openai entries only) <
        ``default-options`` < entry ``options``, field by field (``model`` excluded); ``retry`` is ``spring.ai.retry``;
        ``provider_key`` is ``group``, else the base URL's host (``local`` for local judges);
        ``limits`` is ``ragqa.providers[provider_key]`` else ``ragqa.default-limits``; ``price`` is
        ``ragqa.prices[model]`` (else ``[id]``). An empty list gives Spring's default client: one
        judge named after ``spring.ai.openai.chat.options.model`` (default ``gpt-4o-mini``).

        Raises:
            ConfigError: when an ``openai`` model inherits an ``api-key``/``base-url`` whose
                ``${VAR}`` is unset (naming the variable and the key), or ids are duplicated.
        """
        ai = self.spring.ai
        openai = ai.openai
        entries = list(ai.chat_models.items)
        base_key = "spring.ai.chat-models.list"
        if not entries:
            entries = [ChatModelEntry(id=openai.chat.options.model or DEFAULT_CHAT_MODEL)]
            base_key = "spring.ai.openai.chat"
        _check_unique_ids((e.id for e in entries), base_key)
        out: list[ResolvedChatModel] = []
        for entry in entries:
            lowest = openai.chat.options if entry.provider == "openai" else ChatOptions()
            options = _overlay_chat(lowest, ai.chat_models.default_options, entry.options)
            common = self._resolve_common(entry, openai.chat, f"chat model {entry.id!r}")
            options["model"] = common["model"]
            out.append(ResolvedChatModel(**common, options=ChatOptions.model_validate(options), local=entry.local))
        return out

    def embedders(self) -> list[ResolvedEmbeddingModel]:
        """One resolved embedding model per ``spring.ai.embedding-models.list`` entry, in order.

        Same rules as :meth:`judges`, with ``base-url``/``api-key`` from the entry, else
        ``spring.ai.openai.embedding``, else ``spring.ai.openai``, and options
        ``spring.ai.openai.embedding.options`` < ``default-options`` < entry ``options``. An empty
        list gives one model from ``spring.ai.openai.embedding.options.model`` when that is set,
        else no embedder.

        Raises:
            ConfigError: as :meth:`judges`.
        """
        ai = self.spring.ai
        openai = ai.openai
        entries = list(ai.embedding_models.items)
        base_key = "spring.ai.embedding-models.list"
        if not entries and openai.embedding.options.model:
            entries = [EmbeddingModelEntry(id=openai.embedding.options.model)]
            base_key = "spring.ai.openai.embedding"
        _check_unique_ids((e.id for e in entries), base_key)
        out: list[ResolvedEmbeddingModel] = []
        for entry in entries:
            lowest = openai.embedding.options if entry.provider == "openai" else EmbeddingOptions()
            options = _overlay_embedding(lowest, ai.embedding_models.default_options, entry.options)
            common = self._resolve_common(entry, openai.embedding, f"embedding model {entry.id!r}")
            options["model"] = common["model"]
            out.append(
                ResolvedEmbeddingModel(**common, options=EmbeddingOptions.model_validate(options), method=entry.method)
            )
        return out

    def _resolve_common(
        self,
        entry: ChatModelEntry | EmbeddingModelEntry,
        client: OpenAIChatSettings | OpenAIEmbeddingSettings,
        user: str,
    ) -> _ResolvedCommon:
        """The fields chat and embedding models resolve alike (see :meth:`judges`).

        ``model`` is ``options.model`` else ``id``; an ``openai`` entry takes ``base-url`` /
        ``api-key`` from itself, else ``client``, else ``spring.ai.openai`` (``user`` names the
        model in errors); then the provider key, retry, limits and price follow.
        """
        openai = self.spring.ai.openai
        model = entry.options.model or entry.id
        base_url: str | None = None
        api_key: SecretStr | None = None
        if entry.provider == "openai":
            base_url = _require(_first_set(entry.base_url, client.base_url, openai.base_url), user)
            api_key = _require(_first_set(entry.api_key, client.api_key, openai.api_key), user)
        provider_key = _provider_key(entry.group, entry.provider, base_url)
        return _ResolvedCommon(
            id=entry.id,
            provider=entry.provider,
            model=model,
            base_url=base_url,
            api_key=api_key,
            provider_key=provider_key,
            retry=self.spring.ai.retry,
            limits=self.ragqa.providers.get(provider_key, self.ragqa.default_limits),
            price=self.ragqa.prices.get(model, self.ragqa.prices.get(entry.id)),
        )

    def check(self) -> None:
        """Resolve the panel once (judges and embedders) so that configuration errors surface at start-up.

        Raises:
            ConfigError: see :meth:`judges`.
        """
        self.judges()
        self.embedders()


# --------------------------------------------------------------------------------------------
# Schema-aware key normalisation, placeholders and hints
# --------------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\$\{([^}:]+)(?::([^}]*))?\}")
_LAZY_FIELDS = frozenset({"api_key", "base_url"})
_SECRET_HINTS = ("key", "secret", "token", "password", "authorization", "cookie")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _snake(key: str) -> str:
    """Spring relaxed binding: ``max-attempts`` / ``maxAttempts`` / ``MAX_ATTEMPTS`` -> ``max_attempts``."""
    return _CAMEL.sub("_", key).replace("-", "_").lower()


def _kebab(name: str) -> str:
    return "list" if name == "items" else name.replace("_", "-")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of ``annotation`` with ``Annotated`` and ``None`` stripped."""
    if get_origin(annotation) is Annotated:
        return _unwrap(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        out: list[Any] = []
        for arg in get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    if annotation is type(None):
        return []
    return [annotation]


def _model_in(annotation: Any) -> type[BaseModel] | None:
    for alt in _unwrap(annotation):
        if isinstance(alt, type) and issubclass(alt, BaseModel) and alt is not UnresolvedPlaceholder:
            return alt
    return None


def _container_in(annotation: Any, origin: type) -> Any | None:
    for alt in _unwrap(annotation):
        if get_origin(alt) is origin:
            return alt
    return None


def _is_text(annotation: Any) -> bool:
    alts = _unwrap(annotation)
    return bool(alts) and any(a in (str, SecretStr) for a in alts) and not any(a in (int, float, bool) for a in alts)


def _field_for(model: type[BaseModel], key: str) -> str | None:
    name = _snake(key)
    if name == "list" and "items" in model.model_fields:
        return "items"
    return name if name in model.model_fields else None


def _unknown_key(model: type[BaseModel], key: str, path: str, where: str) -> ConfigError:
    valid = [_kebab(n) for n in model.model_fields]
    close = difflib.get_close_matches(key.replace("_", "-").lower(), valid, n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    dotted = _join(path, key)
    return ConfigError(
        f"unknown key {dotted!r} in {where}.{hint} Valid keys at {path or 'the top level'}: {', '.join(valid)}",
        key=dotted,
    )


class _Expander:
    """Expands ``${VAR}`` / ``${VAR:default}`` against one environment."""

    def __init__(self, environ: Mapping[str, str], where: str) -> None:
        self.environ = environ
        self.where = where

    def __call__(self, text: str, path: str, lazy: bool) -> str | UnresolvedPlaceholder:
        missing: list[str] = []

        def repl(match: re.Match[str]) -> str:
            name, default = match[1].strip(), match[2]
            value = self.environ.get(name)
            if value is not None:
                return value
            if default is not None:
                return default
            missing.append(name)
            return ""

        expanded = _PLACEHOLDER.sub(repl, text)
        if not missing:
            return expanded
        if lazy:
            return UnresolvedPlaceholder(variable=missing[0], key=path, text=text)
        raise ConfigError(
            f"environment variable {missing[0]} is not set; it is required by {path} in {self.where}. "
            f"Set it or give a default: ${{{missing[0]}:default}}.",
            key=path,
        )


def _normalise(value: Any, annotation: Any, path: str, where: str, expand: _Expander | None, field: str = "") -> Any:
    """Rename keys to field names, check unknown keys and expand placeholders, guided by the schema.

    Args:
        value: parsed YAML (or an env override value).
        annotation: the type this value will be validated as.
        path: dotted kebab key of ``value`` for messages.
        where: the file (or environment variable) the value comes from.
        expand: placeholder expander, or ``None`` to leave strings as they are.
        field: the field name holding ``value`` (decides lazy placeholders).

    Raises:
        ConfigError: unknown key (with a hint), or a required placeholder variable is unset.
    """
    model = _model_in(annotation)
    if isinstance(value, dict) and model is not None:
        out: dict[str, Any] = {}
        for raw_key, item in value.items():
            key = str(raw_key)
            name = _field_for(model, key)
            if name is None:
                raise _unknown_key(model, key, path, where)
            if name in out:
                raise ConfigError(f"key {_join(path, key)!r} is given twice in {where}", key=_join(path, key))
            sub = model.model_fields[name].annotation
            out[name] = _normalise(item, sub, _join(path, _kebab(name)), where, expand, name)
        return out
    dict_type = _container_in(annotation, dict)
    if isinstance(value, dict) and dict_type is not None:
        _, value_type = get_args(dict_type)
        snake_keys = value_type is Any  # metric options are keyword names: relaxed binding
        return {
            (_snake(str(k)) if snake_keys else str(k)): _normalise(v, value_type, _join(path, str(k)), where, expand)
            for k, v in value.items()
        }
    list_type = _container_in(annotation, list)
    if isinstance(value, list) and list_type is not None:
        (item_type,) = get_args(list_type)
        return [_normalise(v, item_type, f"{path}[{i}]", where, expand) for i, v in enumerate(value)]
    if isinstance(value, str) and expand is not None and "${" in value:
        value = expand(value, path, field in _LAZY_FIELDS)
    if isinstance(value, int | float) and not isinstance(value, bool) and _is_text(annotation):
        return str(value)  # api-key: 12345 is text, not a number
    if isinstance(value, dict | list):
        return _expand_any(value, path, expand)
    return value


def _expand_any(value: Any, path: str, expand: _Expander | None) -> Any:
    """Expand placeholders inside free-form values (``Any``), keeping keys."""
    if isinstance(value, dict):
        return {k: _expand_any(v, _join(path, str(k)), expand) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_any(v, f"{path}[{i}]", expand) for i, v in enumerate(value)]
    if isinstance(value, str) and expand is not None and "${" in value:
        return expand(value, path, False)
    return value


def _deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Spring profile overlay: dicts merge recursively, everything else (lists too) replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------------------------
# Files and environment
# --------------------------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that rejects duplicate keys in one mapping (PyYAML keeps the last silently)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _read_yaml(path: Path) -> dict[str, Any]:
    """Parse one settings file; errors name the file and position, never the line's text (it may hold a key)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc.strerror}") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"invalid YAML in {path}{where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError:
        raise ConfigError(f"invalid YAML in {path}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must contain a mapping at the top level, not {type(data).__name__}")
    return data


def _profile_file(base: Path, profile: str) -> Path:
    """``<stem>-<profile>.yaml`` (or ``.yml``) beside the base file, else ``application-<profile>.yaml``."""
    stems = [base.stem] if base.stem == "application" else [base.stem, "application"]
    candidates = [base.parent / f"{stem}-{profile}{ext}" for stem in stems for ext in (".yaml", ".yml")]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"profile {profile!r} is active but no profile file exists: looked for "
        f"{', '.join(c.name for c in candidates)} in {base.parent}",
        key="profiles",
    )


def _parse_scalar(text: str) -> Any:
    """An environment value as a YAML scalar (``3`` -> 3, ``true`` -> True, ``[a, b]`` -> list)."""
    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        return text


def _apply_env_override(data: dict[str, Any], name: str, raw: str) -> dict[str, Any]:
    """Set the single key ``RAGQA__A__B__C`` names (case-insensitive; numeric segments index lists)."""
    segments = [s for s in name[len(ENV_PREFIX) :].split("__")]
    if not segments or any(not s for s in segments):
        raise ConfigError(f"environment variable {name}: empty path segment", key=name)
    annotation: Any = Settings
    path = ""
    data = dict(data)
    node: Any = data
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        model = _model_in(annotation)
        list_type = _container_in(annotation, list)
        dict_type = _container_in(annotation, dict)
        key: Any
        if model is not None:
            field = _field_for(model, segment)
            if field is None:
                raise _unknown_key(model, segment.lower().replace("_", "-"), path, f"environment variable {name}")
            key, annotation = field, model.model_fields[field].annotation
            path = _join(path, _kebab(field))
        elif list_type is not None:
            if not segment.isdigit():
                raise ConfigError(f"environment variable {name}: {path} is a list; use an index, not {segment!r}")
            key, annotation = int(segment), get_args(list_type)[0]
            path = f"{path}[{key}]"
        elif dict_type is not None:
            key, annotation = segment.lower(), get_args(dict_type)[1]
            path = _join(path, key)
        else:
            raise ConfigError(f"environment variable {name}: {path} has no sub-keys", key=path)
        if isinstance(node, list):
            if not isinstance(key, int) or key >= len(node):
                raise ConfigError(
                    f"environment variable {name}: {path} does not exist (the list has {len(node)} entries)",
                    key=path,
                )
        elif not isinstance(node, dict):
            raise ConfigError(f"environment variable {name}: cannot set {path} inside a non-mapping value", key=path)
        if last:
            value = raw if _is_text(annotation) else _parse_scalar(raw)
            node[key] = _normalise(value, annotation, path, f"environment variable {name}", None, str(key))
            break
        child = node[key] if isinstance(node, list) else node.get(key)
        if isinstance(child, dict):
            child = dict(child)
        elif isinstance(child, list):
            child = list(child)
        elif child is None:
            if isinstance(key, int):
                raise ConfigError(f"environment variable {name}: {path} does not exist", key=path)
            child = {}
        node[key] = child
        node = child
    return data


class SpringYamlSource(PydanticBaseSettingsSource):
    """pydantic-settings source: ``application.yaml`` + profiles + placeholders + ``RAGQA__`` overrides.

    Keys are normalised to field names inside the source (Spring relaxed binding), so the models
    use plain snake_case fields with ``extra="forbid"``.

    Args:
        settings_cls: the settings class (:class:`Settings`).
        base: the base file; ``None`` or a missing implicit ``application.yaml`` means defaults.
        profiles: active profiles, overlaid in order.
        environ: variables for placeholders and overrides.
        base_required: whether a missing ``base`` is an error (an explicit ``config_file``).
    """

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        base: Path,
        profiles: Sequence[str],
        environ: Mapping[str, str],
        *,
        base_required: bool = False,
    ) -> None:
        super().__init__(settings_cls)
        self.base = base
        self.profiles = list(profiles)
        self.environ = environ
        self.base_required = base_required
        self.files: list[Path] = []
        """The files read, in order (filled by :meth:`__call__`)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        """Unused: this source returns the whole tree from :meth:`__call__`."""
        return None, field_name, False

    def _load(self, path: Path) -> dict[str, Any]:
        self.files.append(path)
        data = _normalise(_read_yaml(path), self.settings_cls, "", path.name, _Expander(self.environ, path.name))
        return cast(dict[str, Any], data)

    def __call__(self) -> dict[str, Any]:
        """The merged, normalised tree.

        Raises:
            ConfigError: a file is missing/invalid, a key is unknown, a required variable is unset.
        """
        self.files = []
        data: dict[str, Any] = {}
        if self.base.is_file():
            data = self._load(self.base)
        elif self.base_required:
            raise ConfigError(f"settings file {self.base} does not exist", key="config")
        for profile in self.profiles:
            data = _deep_merge(data, self._load(_profile_file(self.base, profile)))
        for name in sorted(self.environ):
            if name.upper().startswith(ENV_PREFIX):
                data = _apply_env_override(data, name.upper(), self.environ[name])
        return data


# --------------------------------------------------------------------------------------------
# Validation errors
# --------------------------------------------------------------------------------------------


def _dotted(loc: Iterable[int | str]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before") or "[" in part:
            continue  # pydantic's internal validator steps and union branch names
        else:
            out = _join(out, _kebab(part))
    return out


def _config_error(exc: ValidationError, files: Sequence[Path]) -> ConfigError:
    """Translate pydantic errors into one ConfigError naming each dotted key; input shown only when harmless."""
    lines: list[str] = []
    first: str | None = None
    for err in exc.errors(include_url=False):
        key = _dotted(err["loc"])
        first = first or key
        text = f"{key or '(top level)'}: {err['msg']}"
        value = err.get("input")
        if (
            isinstance(value, str | int | float | bool)
            and not any(h in key.lower() for h in _SECRET_HINTS)
            and "headers" not in key
            and len(str(value)) <= 80
        ):
            text += f" (got {value!r})"
        lines.append(text)
    source = f" (from {', '.join(p.name for p in files)})" if files else ""
    return ConfigError(f"invalid settings{source}:\n  " + "\n  ".join(lines), key=first)


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


def load_settings(
    directory: str | Path = ".",
    profiles: Sequence[str] = (),
    *,
    config_file: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Load, merge and validate the settings once.

    Order (later wins): ``application.yaml`` (or ``config_file``), then ``application-<p>.yaml``
    for each profile in order (dicts merge, lists replace), then ``RAGQA__...`` environment
    overrides. A missing implicit ``application.yaml`` means defaults.

    Args:
        directory: where ``application.yaml`` and the profile files are (ignored for the base
            file when ``config_file`` is given; profile files are looked up beside the base file).
        profiles: active profiles; when empty, ``RAGQA_PROFILES_ACTIVE`` (comma separated).
        config_file: an explicit base file (must exist).
        environ: variables for placeholders, profiles and overrides (default ``os.environ``).

    Returns:
        The validated, frozen :class:`Settings`. ``api-key``/``base-url`` placeholders whose
        variable is unset stay :class:`UnresolvedPlaceholder` until :meth:`Settings.judges` /
        :meth:`Settings.embedders` resolve a model that uses them.

    Raises:
        ConfigError: a file is missing or invalid, a named profile has no file, a key is unknown
            (with a "did you mean" hint), a required variable is unset, a value is invalid, or
            ids are duplicated. Messages never contain secret values.
    """
    env: Mapping[str, str] = os.environ if environ is None else environ
    active = [p.strip() for p in profiles if p.strip()]
    if not active:
        active = [p.strip() for p in env.get(PROFILES_ENV, "").split(",") if p.strip()]
    base = Path(config_file) if config_file is not None else Path(directory) / "application.yaml"
    source = SpringYamlSource(Settings, base, active, env, base_required=config_file is not None)
    data = source()
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise _config_error(exc, source.files) from None


def _render_value(value: Any, key: str = "") -> Any:
    if isinstance(value, SecretStr):
        return MASK
    if isinstance(value, UnresolvedPlaceholder):
        return value.text
    if isinstance(value, BaseModel):
        return _render_model(value)
    if isinstance(value, timedelta):
        return _render_duration(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        if key == "headers":
            return {k: MASK if any(h in k.lower() for h in _SECRET_HINTS) else v for k, v in value.items()}
        return {k: _render_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_render_value(v) for v in value]
    return value


_LOCAL_ONLY = frozenset({"local", "method"})
"""Fields that only mean something for ``provider: local`` (hidden for other providers)."""


def _render_model(model: BaseModel) -> dict[str, Any]:
    hide = _LOCAL_ONLY if getattr(model, "provider", "local") != "local" else frozenset()
    return {
        _kebab(name): _render_value(getattr(model, name), name) for name in type(model).model_fields if name not in hide
    }


def _render_duration(value: timedelta) -> str:
    ms = round(value.total_seconds() * 1000)
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def render_settings(settings: Settings, *, panel: bool = True) -> str:
    """The settings as YAML with kebab-case keys and every secret masked (``ragqa config show``).

    Args:
        settings: loaded settings.
        panel: append a second YAML document with the resolved judges and embedders (what each
            model inherits). When the panel cannot be resolved, the document is replaced by a
            comment with the error (which names no secret).

    Returns:
        YAML text. API keys and secret-looking headers read ``**********``; unset placeholders
        show as written (``${OPENROUTER_API_KEY}``); durations as ``2s`` / ``1500ms``.
    """

    def dump(data: Any) -> str:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)

    text = dump(_render_model(settings))
    if not panel:
        return text
    try:
        resolved = {
            "judges": [_render_model(m) for m in settings.judges()],
            "embedders": [_render_model(m) for m in settings.embedders()],
        }
    except ConfigError as exc:
        return text + "---\n# resolved panel: not resolvable\n" + "".join(f"# {ln}\n" for ln in str(exc).splitlines())
    return text + "---\n# resolved panel\n" + dump(resolved)
