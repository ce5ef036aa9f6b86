"""The settings schema: pydantic models mirroring ``application.yaml`` and the resolved panel types.

Every model is frozen and forbids unknown fields; keys arrive already normalised to snake_case
field names by the Spring YAML source (:mod:`ragqa.settings._spring_source`). This module holds the
``spring.*`` side (connections, models and their options) and the resolved panel types; ragqa's own
section is :mod:`ragqa.settings._ragqa_schema`. The root :class:`~ragqa.settings.Settings` lives
in :mod:`ragqa.settings._settings`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any, Literal, Self, TypedDict

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from ragqa.errors import ConfigError
from ragqa.settings._durations import Duration, PositiveDuration
from ragqa.settings._masking import mask_url
from ragqa.settings._providers import check_provider

__all__ = [
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_EMBEDDING_BATCH",
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_STRUCTURED_OUTPUT",
    "DEFAULT_TIMEOUT",
    "ApiKey",
    "BackoffSettings",
    "BaseUrl",
    "ChatModelEntry",
    "ChatModelsSettings",
    "ChatOptions",
    "EmbeddingModelEntry",
    "EmbeddingModelsSettings",
    "EmbeddingOptions",
    "LocalJudgeSettings",
    "OpenAIChatSettings",
    "OpenAIEmbeddingSettings",
    "OpenAISettings",
    "Price",
    "Provider",
    "ProviderLimits",
    "ResolvedChatModel",
    "ResolvedEmbeddingModel",
    "RetrySettings",
    "SpringAISettings",
    "SpringSettings",
    "ThreadsSettings",
    "UnresolvedPlaceholder",
    "VirtualThreadsSettings",
]

DEFAULT_CHAT_MODEL = "gpt-4o-mini"
"""Spring AI's default chat model, used when neither ``chat-models.list`` nor ``chat.options.model`` names one."""
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com"
"""Spring AI's default ``spring.ai.openai.base-url`` (without ``/v1``)."""
DEFAULT_TIMEOUT = timedelta(seconds=60)
"""Per-request timeout of a chat or embedding model whose ``options.timeout`` is unset."""
DEFAULT_STRUCTURED_OUTPUT: Literal["json_schema"] = "json_schema"
"""How structured output is requested when ``options.structured-output`` is unset."""
DEFAULT_EMBEDDING_BATCH = 64
"""Texts per embedding request when ``options.batch-size`` is unset."""

Provider = str
"""Who serves a model: a name of the provider registry (:mod:`ragqa.settings._providers`): ``openai``
(any OpenAI-compatible HTTP server), ``local`` (ragqa's offline judge), or one registered in code or
by an installed package; entries are validated against the registry when the settings load."""
EmbeddingMethod = Literal["auto", "minilm", "hashing"]
"""How a local embedder embeds: MiniLM when installed (``auto``), ``minilm``, or a hashing bag-of-words."""

# --------------------------------------------------------------------------------------------
# Building blocks (the contract other modules build against)
# --------------------------------------------------------------------------------------------


class _Model(BaseModel):
    """Frozen, no unknown fields; ``repr`` masks URL userinfo (``https://user:key@host``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __repr_args__(self) -> Iterable[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, mask_url(value) if isinstance(value, str) else value


class UnresolvedPlaceholder(_Model):
    """An ``api-key``/``base-url`` whose ``${VAR}`` was not set; an error only if a panel model uses it.

    Attributes:
        variable: the environment variable that was missing (``OPENROUTER_API_KEY``).
        key: the dotted settings key that holds it (``spring.ai.openai.api-key``).
        text: the value as written (``${OPENROUTER_API_KEY}``), shown by :func:`render_settings`
            with any URL userinfo masked.
        source: the file it was written in, as messages name it (``application.yaml (built-in)``
            for the settings ragqa uses where no ``application.yaml`` exists).
    """

    variable: str
    key: str
    text: str
    source: str = ""

    def error(self, user: str) -> ConfigError:
        """The start-up error for ``user`` (e.g. ``chat model 'openai/gpt-4o-mini'``) inheriting this value."""
        builtin = self.source.endswith("(built-in)")
        where = " (ragqa's built-in settings: there is no application.yaml here)" if builtin else ""
        fix = (
            f"Set {self.variable}, run `ragqa init` to write the settings to ./application.yaml and edit the "
            "panel, or use --profile local for the offline judges."
            if builtin
            else f"Set {self.variable}, give the value a default (${{{self.variable}:...}}), "
            "or choose a profile whose panel does not use it (e.g. --profile local)."
        )
        return ConfigError(
            f"environment variable {self.variable} is not set; {self.key} = {mask_url(self.text)}{where} is "
            f"needed by {user}. {fix}",
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


class _Options(_Model):
    """Options of a model; layers merge field by field (:meth:`merge`)."""

    @classmethod
    def merge(cls, *layers: _Options) -> Self:
        """Overlay ``layers`` field by field, later layers winning for every field they set.

        A field counts as set when it was given explicitly (an explicit ``null`` unsets a lower
        layer's value); mapping fields (``headers``) merge key by key instead of replacing.

        Args:
            layers: lowest first; each an instance of this class.

        Returns:
            A new validated instance of this class.
        """
        data: dict[str, Any] = {}
        for layer in layers:
            for name in layer.model_fields_set:
                value = getattr(layer, name)
                if isinstance(value, Mapping):
                    data[name] = {**data.get(name, {}), **value}
                else:
                    data[name] = value
        return cls.model_validate(data)


class ChatOptions(_Options):
    """Options of a chat model (``default-options`` merged field by field with per-model options)."""

    model: str | None = None
    temperature: float | None = Field(default=None, ge=0.0)
    max_tokens: int | None = Field(default=None, ge=1)
    top_p: float | None = Field(default=None, ge=0.0, le=1.0)
    seed: int | None = None
    timeout: PositiveDuration | None = None
    """Per-request timeout, > 0 (default 60 s when unset). A bare number is milliseconds."""
    structured_output: StructuredOutput | None = None
    """How structured output is requested (default ``json_schema``)."""
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra HTTP headers sent with every request of this model (merged key by key across layers)."""


class EmbeddingOptions(_Options):
    """Options of an embedding model."""

    model: str | None = None
    dimensions: int | None = Field(default=None, ge=1)
    batch_size: int | None = Field(default=None, ge=1)
    """Texts per request (default 64)."""
    timeout: PositiveDuration | None = None
    """Per-request timeout, > 0 (default 60 s when unset)."""


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
    timeout: PositiveDuration | None = None
    """With ``wait``: the longest wait for a token before the call fails, > 0 (``None`` = forever)."""
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
    provider: Provider = "openai"
    model: str
    """The model name sent to the provider (``options.model``, else ``id``)."""
    base_url: str | None = None
    """Spring semantics: without ``/v1`` (the adapter appends it unless present)."""
    api_key: SecretStr | None = None
    provider_key: str = "default"
    """Groups models sharing one rate limiter: the entry's ``group``; else ``local`` for local models;
    else the base URL's ``host[:port]`` (the port only when not the scheme's default), followed by
    ``#`` and 8 hex digits of a SHA-256 of the credentials when models of that server use different keys."""
    options: ChatOptions = Field(default_factory=ChatOptions)
    local: LocalJudgeSettings = Field(default_factory=LocalJudgeSettings)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    limits: ProviderLimits = Field(default_factory=ProviderLimits)
    price: Price | None = None


class ResolvedEmbeddingModel(_Model):
    """One embedding model, with every inherited value resolved."""

    id: str
    provider: Provider = "openai"
    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None
    provider_key: str = "default"
    """As :attr:`ResolvedChatModel.provider_key` (chat and embedding models of one server share it)."""
    options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)
    retry: RetrySettings = Field(default_factory=RetrySettings)
    limits: ProviderLimits = Field(default_factory=ProviderLimits)
    price: Price | None = None
    method: EmbeddingMethod = "auto"
    """Local embedders only: MiniLM when installed (``auto``), or a hashing bag-of-words."""

    def extra(self) -> dict[str, Any]:
        """Reserved for provider-specific options."""
        return {}


class ResolvedCommon(TypedDict):
    """What :class:`ResolvedChatModel` and :class:`ResolvedEmbeddingModel` resolve alike."""

    id: str
    provider: Provider
    model: str
    base_url: str | None
    api_key: SecretStr | None
    provider_key: str
    retry: RetrySettings
    limits: ProviderLimits
    price: Price | None


# --------------------------------------------------------------------------------------------
# The settings tree (mirrors application.yaml)
# --------------------------------------------------------------------------------------------

ApiKey = SecretStr | UnresolvedPlaceholder | None
"""An API key: a secret, a placeholder whose variable is unset (fails lazily), or unset."""
BaseUrl = str | UnresolvedPlaceholder | None
"""A base URL (Spring semantics, without ``/v1``), a lazily failing placeholder, or unset."""


class _Connection(_Model):
    """An OpenAI-compatible connection: ``base-url`` and ``api-key`` (both inherited when unset)."""

    base_url: BaseUrl = None
    api_key: ApiKey = None


class OpenAIChatSettings(_Connection):
    """``spring.ai.openai.chat``: Spring's default chat client; its options are the lowest layer.

    ``base-url`` / ``api-key`` override ``spring.ai.openai``'s for chat models.
    """

    options: ChatOptions = Field(default_factory=ChatOptions)


class OpenAIEmbeddingSettings(_Connection):
    """``spring.ai.openai.embedding``: connection and options inherited by embedding models."""

    options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)


class OpenAISettings(_Connection):
    """``spring.ai.openai``: the OpenAI-compatible connection every ``provider: openai`` model inherits."""

    base_url: BaseUrl = DEFAULT_OPENAI_BASE_URL
    chat: OpenAIChatSettings = Field(default_factory=OpenAIChatSettings)
    embedding: OpenAIEmbeddingSettings = Field(default_factory=OpenAIEmbeddingSettings)


class _Entry(_Model):
    """What chat and embedding list entries share: id, provider, rate-limit group and connection."""

    id: str = Field(min_length=1)
    """Judge id in reports; also the model name unless ``options.model`` is set."""
    provider: Provider = "openai"
    group: str | None = None
    """Rate-limit group (``ragqa.providers`` key); default: the base URL's ``host[:port]``, or ``local``."""
    base_url: BaseUrl = None
    api_key: ApiKey = None

    @model_validator(mode="after")
    def _known_provider(self) -> _Entry:
        what = "embedding model" if isinstance(self, EmbeddingModelEntry) else "chat model"
        try:
            check_provider(self.provider, f"{what} {self.id!r}")
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return self


class ChatModelEntry(_Entry):
    """One entry of ``spring.ai.chat-models.list``: a judge of the panel."""

    options: ChatOptions = Field(default_factory=ChatOptions)
    local: LocalJudgeSettings = Field(default_factory=LocalJudgeSettings)
    """Only for ``provider: local``."""

    @model_validator(mode="after")
    def _local_only_for_local(self) -> ChatModelEntry:
        if self.provider != "local" and "local" in self.model_fields_set:
            raise ValueError("'local' options apply only to entries with provider: local")
        return self


class EmbeddingModelEntry(_Entry):
    """One entry of ``spring.ai.embedding-models.list``."""

    options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)
    method: EmbeddingMethod = "auto"
    """Only for ``provider: local``: MiniLM when installed (``auto``), ``minilm``, or ``hashing``."""


def check_unique_ids(ids: Iterable[str], key: str) -> None:
    """Raise when an id repeats in the list at dotted ``key``.

    Raises:
        ConfigError: naming the id and ``key[index].id`` of its second occurrence.
    """
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
    """YAML key ``list``. Absent: one judge from ``spring.ai.openai.chat.options``; ``[]``: no judge."""

    @model_validator(mode="after")
    def _unique(self) -> ChatModelsSettings:
        check_unique_ids((e.id for e in self.items), "spring.ai.chat-models.list")
        return self

    @property
    def empty_panel(self) -> bool:
        """True when ``list: []`` is written: a panel of no judge, for runs of judge-free metrics only."""
        return "items" in self.model_fields_set and not self.items


class EmbeddingModelsSettings(_Model):
    """``spring.ai.embedding-models``."""

    default_options: EmbeddingOptions = Field(default_factory=EmbeddingOptions)
    items: list[EmbeddingModelEntry] = Field(default_factory=list)
    """YAML key ``list``. Empty: one model from ``spring.ai.openai.embedding`` if it names a model."""

    @model_validator(mode="after")
    def _unique(self) -> EmbeddingModelsSettings:
        check_unique_ids((e.id for e in self.items), "spring.ai.embedding-models.list")
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
