"""The root :class:`Settings` and :func:`load_settings`, its one entry point."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from pydantic import Field, PrivateAttr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from ragqa.settings._errors import config_error
from ragqa.settings._notes import log_notes
from ragqa.settings._ragqa_schema import RagqaSettings
from ragqa.settings._resolve import HOSTED_KEY_VARIABLES, resolve_embedders, resolve_judges
from ragqa.settings._schema import ResolvedChatModel, ResolvedEmbeddingModel, SpringSettings
from ragqa.settings._spring_source import SpringYamlSource

__all__ = ["PROFILES_ENV", "Settings", "load_settings"]

PROFILES_ENV = "RAGQA_PROFILES_ACTIVE"
"""Comma-separated active profiles, used when no profiles are passed explicitly."""

_SOURCE: ContextVar[SpringYamlSource | None] = ContextVar("ragqa_settings_source", default=None)
"""The Spring source of the :func:`load_settings` call in progress (``None`` otherwise)."""


@contextmanager
def _active(source: SpringYamlSource) -> Iterator[None]:
    token = _SOURCE.set(source)
    try:
        yield
    finally:
        _SOURCE.reset(token)


class Settings(BaseSettings):
    """The whole configuration: ``spring`` (Spring AI shape) and ``ragqa`` (ragqa's own section).

    Build it with :func:`load_settings`. ``Settings()`` alone gives the defaults: it reads no
    file and no environment variable (its only sources are the keyword arguments and, during
    :func:`load_settings`, that call's :class:`SpringYamlSource`).
    """

    model_config = SettingsConfigDict(extra="forbid", frozen=True)

    spring: SpringSettings = Field(default_factory=SpringSettings)
    ragqa: RagqaSettings = Field(default_factory=RagqaSettings)
    _notes: tuple[str, ...] = PrivateAttr(default=())
    _keys: dict[str, str] = PrivateAttr(default_factory=dict)
    """The hosted providers' key variables (``OPENAI_API_KEY``, ``OPENROUTER_API_KEY``) set at load time."""

    @property
    def notes(self) -> tuple[str, ...]:
        """Warnings about values that load but may not mean what they say, one per key.

        Today: a duration written as a bare number under 1000 (``timeout: 60`` is 60 **ms**, as in
        Spring): ``"<key>: 60 means 60 ms; write 60s for seconds (or 60ms to keep milliseconds)"``.
        :func:`load_settings` logs each once per process (``ragqa.settings`` logger, WARNING), and
        ``ragqa config show`` prints them. Empty for ``Settings()`` built in code.
        """
        return self._notes

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Keyword arguments first, then the Spring YAML source of the :func:`load_settings` call, if any.

        The ambient environment is never read here: the Spring source reads its own ``environ``.
        """
        source = _SOURCE.get()
        return (init_settings,) if source is None else (init_settings, source)

    def judges(self) -> list[ResolvedChatModel]:
        """The judge panel: one resolved chat model per ``spring.ai.chat-models.list`` entry, in order.

        Per entry: ``provider`` defaults to ``openai``; ``model`` is ``options.model`` else ``id``;
        ``base-url`` / ``api-key`` come from the entry, else ``spring.ai.openai.chat``, else
        ``spring.ai.openai``; options are ``spring.ai.openai.chat.options`` (openai entries only) <
        ``default-options`` < entry ``options``, field by field (``model`` excluded); ``retry`` is
        ``spring.ai.retry``; ``provider_key`` is ``group``, else ``local`` for local judges, else
        the base URL's ``host[:port]`` (port only when not the scheme's default) with ``#<tag>``
        appended when models of that server send different keys (the tag: 8 hex digits of a
        SHA-256, never the key); ``limits`` is the first of ``ragqa.providers[provider_key]``,
        ``[host:port]``, ``[host]`` that exists, else ``ragqa.default-limits``; ``price`` is
        ``ragqa.prices[model]`` (else ``[id]``). No ``list`` key gives Spring's default client: one
        judge named after ``spring.ai.openai.chat.options.model`` (default ``gpt-4o-mini``); an
        explicit ``list: []`` gives no judge (only judge-free metrics can run). A model of a hosted
        provider (``api.openai.com``, ``openrouter.ai``) with no ``api-key`` configured takes
        ``OPENAI_API_KEY`` / ``OPENROUTER_API_KEY`` as it was when :func:`load_settings` ran
        (``Settings()`` built in code reads no environment, so give it the key).

        Raises:
            ConfigError: when an ``openai`` model inherits an ``api-key``/``base-url`` whose
                ``${VAR}`` is unset (naming the variable and the key), a hosted provider's model
                has no key (naming the model, the variable and ``ragqa init``), or ids are duplicated.
        """
        return resolve_judges(self.spring.ai, self.ragqa, self._keys)

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
        return resolve_embedders(self.spring.ai, self.ragqa, self._keys)

    def check(self) -> None:
        """Resolve the panel once (judges and embedders) so that configuration errors surface at start-up.

        Raises:
            ConfigError: see :meth:`judges`.
        """
        self.judges()
        self.embedders()


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
    overrides. A missing implicit ``application.yaml`` means the built-in one (the seed's
    OpenRouter panel with ``${OPENROUTER_API_KEY}``; ``ragqa init`` writes it). A profile file is looked
    up beside the base file first, then among the profiles built into ragqa (``local``), so
    ``load_settings(any_dir, ["local"])`` works from any folder.

    Args:
        directory: where ``application.yaml`` and the profile files are (ignored for the base
            file when ``config_file`` is given; profile files are looked up beside the base file).
        profiles: active profiles; when empty, ``RAGQA_PROFILES_ACTIVE`` (comma separated).
        config_file: an explicit base file (must exist).
        environ: variables for placeholders, profiles and overrides (default ``os.environ``).

    Returns:
        The validated, frozen :class:`Settings`, with its :attr:`Settings.notes` (each also
        logged once as a WARNING). ``api-key``/``base-url`` placeholders whose
        variable is unset stay :class:`UnresolvedPlaceholder` until :meth:`Settings.judges` /
        :meth:`Settings.embedders` resolve a model that uses them.

    Raises:
        ConfigError: a file is missing or invalid, a named profile has no file (beside the base
            file nor built in), a key is unknown (with a "did you mean" hint), a required variable
            is unset, a value is invalid, or ids are duplicated. Messages never contain secret
            values.
    """
    env: Mapping[str, str] = os.environ if environ is None else environ
    active = [p.strip() for p in profiles if p.strip()]
    if not active:
        active = [p.strip() for p in env.get(PROFILES_ENV, "").split(",") if p.strip()]
    base = Path(config_file) if config_file is not None else Path(directory) / "application.yaml"
    source = SpringYamlSource(Settings, base, active, env, base_required=config_file is not None)
    try:
        with _active(source):
            settings = Settings()
    except ValidationError as exc:
        raise config_error(exc, source.files) from None
    settings._notes = tuple(source.notes)
    settings._keys = {name: env[name] for name in HOSTED_KEY_VARIABLES.values() if env.get(name)}
    log_notes(settings.notes)
    return settings
