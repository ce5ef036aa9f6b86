"""The settings schema: pydantic models mirroring ``application.yaml`` and the resolved panel types.

Every model is frozen and forbids unknown fields; keys arrive already normalised to snake_case
field names by the Spring YAML source (:mod:`ragqa.settings._spring_source`). The root
:class:`~ragqa.settings.Settings` lives in :mod:`ragqa.settings._settings`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal, Self, TypedDict

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from ragqa.errors import ConfigError
from ragqa.repeats import Reducer
from ragqa.schema import Language
from ragqa.settings._durations import Duration, PositiveDuration
from ragqa.settings._masking import mask_url
from ragqa.settings._providers import check_provider

__all__ = [
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_EMBEDDING_BATCH",
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_STRUCTURED_OUTPUT",
    "DEFAULT_TIMEOUT",
    "AggregationSettings",
    "ApiKey",
    "BackoffSettings",
    "BaseUrl",
    "CacheSettings",
    "ChatModelEntry",
    "ChatModelsSettings",
    "ChatOptions",
    "CircuitBreakerSettings",
    "ConcurrencySettings",
    "EmbeddingModelEntry",
    "EmbeddingModelsSettings",
    "EmbeddingOptions",
    "LimitsSettings",
    "LocalJudgeSettings",
    "OpenAIChatSettings",
    "OpenAIEmbeddingSettings",
    "OpenAISettings",
    "Price",
    "Provider",
    "ProviderLimits",
    "RagqaSettings",
    "ResolvedChatModel",
    "ResolvedEmbeddingModel",
    "RetrySettings",
    "RunSettings",
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


class AggregationSettings(_Model):
    """``ragqa.aggregation``: how per-judge scores become the panel's aggregate."""

    strategy: Literal["mean", "median", "min", "max", "majority", "claim-vote", "dawid-skene"] = "mean"
    """How a sample's judges become its aggregate: a score strategy, or a vote per statement
    (``claim-vote``, ``dawid-skene``; see ``docs/jury.md``)."""
    quorum: int = Field(default=1, ge=1)
    """Minimum successful judges for an aggregate to exist."""


class CascadeSettings(_Model):
    """``ragqa.jury.cascade``: tier 1 scores everything, tier 2 only where tier 1 is unsure (``docs/jury.md``).

    The rule (:func:`ragqa.jury.cascade.escalation`; Jung et al., "Trust or Escalate", ICLR 2025)
    escalates a (sample, metric) when tier 1's judges fall on both sides of the threshold
    (``split``), their spread is above ``spread``, their aggregate lies within ``margin`` of the
    threshold, or (with repeats, ``interval``) its confidence interval contains the threshold. A
    metric without a threshold escalates by ``spread`` only.
    """

    enabled: bool = False
    """Whether the panel runs as a cascade."""
    tier_2: list[str] = Field(default_factory=list)
    """The judge ids of tier 2 (the expensive judges); every other judge is tier 1."""
    spread: float | None = Field(default=0.3, ge=0)
    """Escalate when tier 1's spread (max - min of its judges' scores) is above this; ``null``: off."""
    margin: float = Field(default=0.1, ge=0)
    """Escalate when tier 1's aggregate lies within this distance of the metric's threshold."""
    split: bool = True
    """Escalate when tier 1's judges fall on both sides of the threshold."""
    interval: bool = True
    """With repeats: escalate when the confidence interval of tier 1's values contains the threshold."""
    fit: str | None = None
    """A rule fitted by ``ragqa calibrate --fit-cascade`` (a JSON file); its spread, margin and split
    replace the three above, and the run's header names the data it was fitted on."""


class JurySettings(_Model):
    """``ragqa.jury``: the panel as a jury (``claim-vote`` and ``dawid-skene`` aggregation, the cascade)."""

    extractor: str | None = None
    """The judge id that extracts the statements once per sample for the whole panel; ``None``: the first judge."""
    cascade: CascadeSettings = Field(default_factory=CascadeSettings)
    """The cascade of judge tiers (``docs/jury.md``)."""


class OrderProbeSettings(_Model):
    """``ragqa.probe.order``: the order probe's sample share, seed and flag rate (see ``docs/panel.md``)."""

    share: float = Field(default=0.2, gt=0.0, le=1.0)
    """Share of the samples re-judged with their contexts reversed, in (0, 1]; chosen by a seeded hash of the id."""
    seed: int = 0
    """Seed of the selection: the same seed and ids always select the same samples."""
    max_change_rate: float = Field(default=0.1, ge=0.0, lt=1.0)
    """A judge whose share of changed verdicts exceeds this is flagged, in [0, 1)."""


class ProbeSettings(_Model):
    """``ragqa.probe``: bias probes a run makes beside its scores (never changing them)."""

    enabled: list[Literal["order"]] = Field(default_factory=list)
    """The probes every run makes (``[order]``); ``--probe order`` adds one for a run."""
    order: OrderProbeSettings = Field(default_factory=OrderProbeSettings)


class ConcurrencySettings(_Model):
    """``ragqa.concurrency``."""

    max_concurrent_samples: int = Field(default=16, ge=1)
    """Samples scored at once (judge calls are further bounded per provider)."""


class CacheSettings(_Model):
    """``ragqa.cache``: on-disk cache of finished judge calls (never keyed on the API key)."""

    enabled: bool = False
    directory: Path = Path(".ragqa-cache")


class CircuitBreakerSettings(_Model):
    """``ragqa.circuit-breaker``: stop calling a judge that is down, for a while, then probe it again.

    After ``failure_threshold`` consecutive failed calls of one judge that say it is down (a refused
    or reset connection, a timeout; not an HTTP answer such as a 5xx, which the retry block
    outlives), its next calls fail at once (no request) until ``cool_down`` has passed; then one
    probe call decides whether it closes, and the calls arriving meanwhile wait behind it. Each
    failed probe doubles the cool-down, up to ``max_cool_down``. A judge that hangs (its first
    timeouts come with no answer at all) opens it at once and its other calls are cut short.
    """

    failure_threshold: int = Field(default=5, ge=1)
    """Consecutive down-failures that open the breaker (>= 1)."""
    cool_down: PositiveDuration = timedelta(seconds=1)
    """How long an open breaker refuses calls before its first probe (> 0); doubled after each failed probe."""
    max_cool_down: PositiveDuration = timedelta(seconds=30)
    """The cap of the growing cool-down (>= ``cool_down``)."""

    @model_validator(mode="after")
    def _cap_not_below_start(self) -> CircuitBreakerSettings:
        if self.max_cool_down < self.cool_down:
            raise ValueError(
                f"max-cool-down ({self.max_cool_down.total_seconds():g}s) must not be shorter than "
                f"cool-down ({self.cool_down.total_seconds():g}s)"
            )
        return self


class RunSettings(_Model):
    """``ragqa.run``: limits of one evaluation run as a whole."""

    deadline: PositiveDuration | None = None
    """Wall-clock budget of the whole run (> 0); ``None`` = no deadline. Calls still pending when it
    passes fail as timeouts and are reported, never scored."""


class LimitsSettings(_Model):
    """``ragqa.limits``: input-size guards checked before any judge call."""

    max_contexts_per_sample: int = Field(default=100, ge=1)
    """Most retrieved/reference contexts one sample may carry (>= 1)."""
    max_text_chars: int = Field(default=200_000, ge=1)
    """Longest single text field or context chunk, in characters (>= 1)."""
    max_calls: int | None = Field(default=None, ge=1)
    """Refuse a run whose estimated judge calls exceed this (>= 1); ``None`` = no limit."""
    max_response_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)
    """Largest answer body read from an HTTP judge or embedder, bytes (>= 1024); a larger answer is
    a ``JudgeOutputError`` and reading stops there, so memory does not grow with it."""


class RagqaSettings(_Model):
    """``ragqa``: ragqa's own section."""

    metrics: list[str] = Field(default_factory=lambda: ["faithfulness", "hallucination"])
    """Default metric set (registry names, see ``ragqa metrics``)."""
    metric_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Keyword options per metric name (``noise_sensitivity: {mode: irrelevant}``)."""
    aspects: dict[str, str] = Field(default_factory=dict)
    """User-defined aspects of ``aspect_critic``: name -> definition (a yes/no question); ``aspect_critic(name=x)``."""
    aggregation: AggregationSettings = Field(default_factory=AggregationSettings)
    jury: JurySettings = Field(default_factory=JurySettings)
    probe: ProbeSettings = Field(default_factory=ProbeSettings)
    language: Language = "en"
    """Prompt and report language."""
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    """Level of every confidence interval in reports (``0.95`` = 95 %; see ``docs/uncertainty.md``)."""
    call_plan: Literal["batched", "ragas"] = "batched"
    """How metrics ask their judges: ``batched`` (one call per step for all contexts, questions or texts)
    or ``ragas`` (RAGAS's prompts, one call per item); see ``docs/call-plan.md``."""
    repeats: int = Field(default=1, ge=1)
    """How many times every judge scores every (sample, metric), with independent calls (>= 1;
    Inspect AI's epochs); see ``docs/cli.md`` (Repeats)."""
    repeat_reducer: Reducer = "mean"
    """How a judge's repeats become its score: ``mean``, ``median``, or ``mode`` for binary metrics."""
    concurrency: ConcurrencySettings = Field(default_factory=ConcurrencySettings)
    providers: dict[str, ProviderLimits] = Field(default_factory=dict)
    """Limits per provider key (see :attr:`ResolvedChatModel.provider_key` and ``docs/configuration.md``)."""
    default_limits: ProviderLimits = Field(default_factory=ProviderLimits)
    """Limits of providers not listed in ``providers``."""
    cache: CacheSettings = Field(default_factory=CacheSettings)
    thresholds: dict[str, float] = Field(default_factory=dict)
    """Pass thresholds per metric key (used by the pytest plugin and CLI exit codes)."""
    on_undecided: Literal["fail", "pass", "warn"] = "fail"
    """What a threshold gate whose confidence interval contains the threshold counts as: ``fail``
    (exit 4, a failed test), ``pass``, or ``warn`` (pass with a warning); see ``docs/cli.md``."""
    prices: dict[str, Price] = Field(default_factory=dict)
    """Prices per model name (or judge id), per one million tokens."""
    circuit_breaker: CircuitBreakerSettings = Field(default_factory=CircuitBreakerSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)

    @model_validator(mode="before")
    @classmethod
    def _aspects_reach_aspect_critic(cls, data: Any) -> Any:
        """Pass ``aspects`` to ``aspect_critic`` as its ``aspects`` option (under any it sets itself)."""
        if not isinstance(data, dict) or not data.get("aspects"):
            return data
        options = dict(data.get("metric_options") or {})
        critic = dict(options.get("aspect_critic") or {})
        critic["aspects"] = {**data["aspects"], **(critic.get("aspects") or {})}
        return {**data, "metric_options": {**options, "aspect_critic": critic}}
