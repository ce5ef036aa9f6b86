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
* Profile files are looked up beside the base file, then among the profiles built into ragqa
  (``local``: the offline panel), so ``--profile local`` works in any folder. Where no
  ``application.yaml`` exists, ragqa uses its built-in one (:func:`builtin_base`: the seed's
  OpenRouter panel with ``${OPENROUTER_API_KEY}``), which ``ragqa init`` writes out to edit.
* A model of a hosted provider with no ``api-key`` reads it from the provider's variable
  (``OPENAI_API_KEY`` for ``api.openai.com``, ``OPENROUTER_API_KEY`` for ``openrouter.ai``); with
  the variable unset it is refused at start-up, naming the model, the variable and ``ragqa init``.
* Durations accept ``2000ms``, ``2s``, ``1m``, ``1h``, ``1d`` (also ``ns``, ``us``), a bare
  number meaning **milliseconds** (as in Spring), and ISO-8601 (``PT2S``) via pydantic. A bare
  number under 1000 gets a note (:attr:`Settings.notes`, logged once as a WARNING).
* Environment overrides: ``RAGQA__<PATH>`` with ``__`` between path segments, case-insensitive,
  the value parsed as a YAML scalar, applied after the profiles; for example
  ``RAGQA__RAGQA__LANGUAGE=ru`` or ``RAGQA__SPRING__AI__CHAT_MODELS__LIST__0__OPTIONS__TEMPERATURE=0.2``.

Modules, one concern each: ``_schema`` (the pydantic models), ``_durations`` (Spring durations),
``_resolve`` (the panel), ``_spring_source`` and ``_binding`` (the Spring YAML source),
``_errors`` (validation errors as ``ConfigError``), ``_render`` (``ragqa config show``),
``_masking`` (what is never shown), ``_notes`` (warnings on values that load but may not mean
what they say: a bare-number duration under 1000), ``_settings`` (the root model and
:func:`load_settings`).
Import from ``ragqa.settings`` only.

See ``docs/configuration.md`` for every key with its default.
"""

from __future__ import annotations

from ragqa.settings._durations import Duration, PositiveDuration, parse_duration
from ragqa.settings._masking import MASK, mask_url
from ragqa.settings._providers import BUILTIN_PROVIDERS, check_provider, known_providers, provider, register_provider
from ragqa.settings._ragqa_schema import (
    AggregationSettings,
    CacheSettings,
    CascadeSettings,
    CircuitBreakerSettings,
    ConcurrencySettings,
    LimitsSettings,
    RagqaSettings,
    RunSettings,
)
from ragqa.settings._render import render_model as _render_model  # noqa: F401 - the former private name
from ragqa.settings._render import render_settings
from ragqa.settings._schema import (
    DEFAULT_CHAT_MODEL,
    DEFAULT_EMBEDDING_BATCH,
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_STRUCTURED_OUTPUT,
    DEFAULT_TIMEOUT,
    ApiKey,
    BackoffSettings,
    BaseUrl,
    ChatModelEntry,
    ChatModelsSettings,
    ChatOptions,
    EmbeddingModelEntry,
    EmbeddingModelsSettings,
    EmbeddingOptions,
    LocalJudgeSettings,
    OpenAIChatSettings,
    OpenAIEmbeddingSettings,
    OpenAISettings,
    Price,
    Provider,
    ProviderLimits,
    ResolvedChatModel,
    ResolvedEmbeddingModel,
    RetrySettings,
    SpringAISettings,
    SpringSettings,
    StructuredOutput,
    ThreadsSettings,
    UnresolvedPlaceholder,
    VirtualThreadsSettings,
)
from ragqa.settings._settings import PROFILES_ENV, Settings, load_settings
from ragqa.settings._spring_source import ENV_PREFIX, SpringYamlSource, builtin_base, builtin_profiles

__all__ = [
    "BUILTIN_PROVIDERS",
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_EMBEDDING_BATCH",
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_STRUCTURED_OUTPUT",
    "DEFAULT_TIMEOUT",
    "ENV_PREFIX",
    "MASK",
    "PROFILES_ENV",
    "AggregationSettings",
    "ApiKey",
    "BackoffSettings",
    "BaseUrl",
    "CacheSettings",
    "CascadeSettings",
    "ChatModelEntry",
    "ChatModelsSettings",
    "ChatOptions",
    "CircuitBreakerSettings",
    "ConcurrencySettings",
    "Duration",
    "EmbeddingModelEntry",
    "EmbeddingModelsSettings",
    "EmbeddingOptions",
    "LimitsSettings",
    "LocalJudgeSettings",
    "OpenAIChatSettings",
    "OpenAIEmbeddingSettings",
    "OpenAISettings",
    "PositiveDuration",
    "Price",
    "Provider",
    "ProviderLimits",
    "RagqaSettings",
    "ResolvedChatModel",
    "ResolvedEmbeddingModel",
    "RetrySettings",
    "RunSettings",
    "Settings",
    "SpringAISettings",
    "SpringSettings",
    "SpringYamlSource",
    "StructuredOutput",
    "ThreadsSettings",
    "UnresolvedPlaceholder",
    "VirtualThreadsSettings",
    "builtin_base",
    "builtin_profiles",
    "check_provider",
    "known_providers",
    "load_settings",
    "mask_url",
    "parse_duration",
    "provider",
    "register_provider",
    "render_settings",
]
