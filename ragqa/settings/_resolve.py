"""Panel resolution: every list entry becomes a :class:`ResolvedChatModel` / :class:`ResolvedEmbeddingModel`.

A model inherits, field by field: its connection (entry < ``spring.ai.openai.chat|embedding`` <
``spring.ai.openai``), its options (``spring.ai.openai.*.options`` < ``default-options`` < entry
``options``), ``spring.ai.retry``, the limits of its provider key and its price. Chat and
embedding models share every rule here; only their lists and default entries differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from pydantic import SecretStr

from ragqa.errors import ConfigError
from ragqa.settings._ragqa_schema import RagqaSettings
from ragqa.settings._schema import (
    DEFAULT_CHAT_MODEL,
    ChatModelEntry,
    ChatOptions,
    EmbeddingModelEntry,
    EmbeddingOptions,
    OpenAIChatSettings,
    OpenAIEmbeddingSettings,
    ProviderLimits,
    ResolvedChatModel,
    ResolvedCommon,
    ResolvedEmbeddingModel,
    SpringAISettings,
    UnresolvedPlaceholder,
    check_unique_ids,
)

__all__ = ["HOSTED_KEY_VARIABLES", "Server", "credential_tag", "resolve_embedders", "resolve_judges", "server_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443}

HOSTED_KEY_VARIABLES: Mapping[str, str] = {"api.openai.com": "OPENAI_API_KEY", "openrouter.ai": "OPENROUTER_API_KEY"}
"""Hosted providers that always need a key, by host, and the environment variable their key is read from.

A model of one of these hosts with no ``api-key`` configured anywhere takes the variable's value
(the convention of the providers' own SDKs); with the variable unset it is refused at start-up,
before any call, instead of sending calls that can only fail.
"""

_Entry = ChatModelEntry | EmbeddingModelEntry
_Client = OpenAIChatSettings | OpenAIEmbeddingSettings


class Server(NamedTuple):
    """Where a base URL points: ``host`` (lower-cased, IPv6 in brackets) and ``host:port``.

    The port is explicit even when the URL leaves it out (80 for ``http``, 443 for ``https``), so
    ``https://openrouter.ai/api`` and ``https://openrouter.ai:443/api`` are one server.
    """

    host: str
    hostport: str
    """``host:port``; just ``host`` for a scheme without a default port and no port given."""


def server_of(base_url: str) -> Server | None:
    """The server a base URL names (userinfo is never part of it), or ``None`` when it has no host.

    ``http://localhost:8000`` -> ``Server("localhost", "localhost:8000")``;
    ``https://openrouter.ai/api`` -> ``Server("openrouter.ai", "openrouter.ai:443")``.
    """
    try:
        parts = urlsplit(base_url)
        host = parts.hostname
    except ValueError:
        return None
    if not host:
        return None
    try:
        port = parts.port
    except ValueError:  # a non-numeric or out-of-range port: the scheme's default
        port = None
    port = port or _DEFAULT_PORTS.get(parts.scheme.lower())
    if ":" in host:
        host = f"[{host}]"
    return Server(host, f"{host}:{port}" if port else host)


def credential_tag(base_url: str, api_key: SecretStr | None) -> str | None:
    """A short, non-reversible tag of the credentials a model sends (API key and URL userinfo).

    Returns:
        The first 8 hex digits of the SHA-256 of the userinfo and key, or ``None`` when the model
        sends neither. Only the tag is ever shown, never the key.
    """
    try:
        userinfo = urlsplit(base_url).netloc.rpartition("@")[0]
    except ValueError:
        userinfo = ""
    secret = api_key.get_secret_value() if api_key is not None else ""
    if not userinfo and not secret:
        return None
    return hashlib.sha256(f"{userinfo}\0{secret}".encode()).hexdigest()[:8]


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


def _chat_entries(ai: SpringAISettings) -> tuple[list[ChatModelEntry], str]:
    """The chat list and its dotted key; absent: Spring's default client (one judge); ``list: []``: no judge."""
    if ai.chat_models.items or ai.chat_models.empty_panel:
        return list(ai.chat_models.items), "spring.ai.chat-models.list"
    return [ChatModelEntry(id=ai.openai.chat.options.model or DEFAULT_CHAT_MODEL)], "spring.ai.openai.chat"


def _embedding_entries(ai: SpringAISettings) -> tuple[list[EmbeddingModelEntry], str]:
    """The embedding list and its dotted key; empty: one model if ``spring.ai.openai.embedding`` names one."""
    if ai.embedding_models.items or not ai.openai.embedding.options.model:
        return list(ai.embedding_models.items), "spring.ai.embedding-models.list"
    return [EmbeddingModelEntry(id=ai.openai.embedding.options.model)], "spring.ai.openai.embedding"


class _Resolver:
    """Resolves entries of one settings tree; knows every model's server to tell shared servers apart.

    Only ungrouped ``openai`` models (chat and embedding alike) count: a model with a ``group``
    is keyed by it, a local one by ``local``.
    """

    def __init__(self, ai: SpringAISettings, ragqa: RagqaSettings, keys: Mapping[str, str]) -> None:
        self.ai = ai
        self.ragqa = ragqa
        self.keys = keys
        """The values of :data:`HOSTED_KEY_VARIABLES` that were set when the settings were loaded."""
        self.ports: dict[str, set[str]] = {}
        """Per host, the ``host:port`` servers used on it."""
        self.tags: dict[str, set[str | None]] = {}
        """Per ``host:port``, the credential tags used against it."""
        pairs: list[tuple[_Entry, _Client]] = [(e, ai.openai.chat) for e in _chat_entries(ai)[0]]
        pairs += [(e, ai.openai.embedding) for e in _embedding_entries(ai)[0]]
        for entry, client in pairs:
            if entry.provider != "openai" or entry.group:
                continue
            try:
                base_url, api_key = self._connection(entry, client, "")
            except ConfigError:  # an unset placeholder: that model fails when (if) it is resolved
                continue
            server = server_of(base_url) if base_url else None
            if server is not None:
                self.ports.setdefault(server.host, set()).add(server.hostport)
                self.tags.setdefault(server.hostport, set()).add(credential_tag(base_url or "", api_key))

    def _connection(self, entry: _Entry, client: _Client, user: str) -> tuple[str | None, SecretStr | None]:
        openai = self.ai.openai
        if entry.provider == "local":
            return None, None
        if entry.provider != "openai":  # a native provider: only what its own entry writes
            return _require(entry.base_url, user), _require(entry.api_key, user)
        base_url = _require(_first_set(entry.base_url, client.base_url, openai.base_url), user)
        written = _first_set(entry.api_key, client.api_key, openai.api_key)
        api_key = _require(written, user)
        if written is None and base_url:  # an explicit `api-key: ""` means "send none"
            api_key = self._hosted_key(base_url, user)
        return base_url, api_key

    def _hosted_key(self, base_url: str, user: str) -> SecretStr | None:
        """The key of a hosted provider read from its variable (:data:`HOSTED_KEY_VARIABLES`); ``None`` elsewhere.

        Raises:
            ConfigError: for a hosted provider whose variable is unset, naming ``user``, the variable,
                ``ragqa init`` and ``--profile local``.
        """
        server = server_of(base_url)
        variable = HOSTED_KEY_VARIABLES.get(server.host) if server is not None else None
        if variable is None:
            return None  # a server of the user's own (vLLM, Ollama, a proxy) may need no key
        value = self.keys.get(variable)
        if value:
            return SecretStr(value)
        assert server is not None
        raise ConfigError(
            f"{user or 'a model'} has no api-key for {server.host}: set {variable} (read for {server.host} when "
            f"no api-key is configured), write api-key: ${{{variable}}} in application.yaml (`ragqa init` writes "
            "a commented one), or use --profile local for the offline judges",
            key="spring.ai.openai.api-key",
        )

    def _key_and_limits(
        self, entry: _Entry, base_url: str | None, api_key: SecretStr | None
    ) -> tuple[str, ProviderLimits]:
        """The provider key, and the first of its ``ragqa.providers`` names that has an entry.

        Key: ``group``; else ``local``; else ``host`` (a native provider's entry without a
        ``base-url``: the provider's name), written ``host:port`` when the panel uses
        that host on several ports, followed by ``#<tag>`` when models of that ``host:port`` send
        different credentials. Names looked up in ``ragqa.providers``: the key, ``host:port``, ``host``.
        """
        if entry.group:
            names = [entry.group]
        elif entry.provider == "local":
            names = ["local"]
        else:
            server = server_of(base_url) if base_url else None
            if server is None:
                names = ["default" if entry.provider == "openai" else entry.provider]
            else:
                key = server.hostport if len(self.ports.get(server.host, ())) > 1 else server.host
                tag = credential_tag(base_url or "", api_key)
                if tag is not None and len(self.tags.get(server.hostport, ())) > 1:
                    key = f"{key}#{tag}"
                names = list(dict.fromkeys([key, server.hostport, server.host]))
        limits = next((self.ragqa.providers[n] for n in names if n in self.ragqa.providers), None)
        return names[0], limits or self.ragqa.default_limits

    def common(self, entry: _Entry, client: _Client, user: str) -> ResolvedCommon:
        """The fields chat and embedding models resolve alike (``user`` names the model in errors).

        Raises:
            ConfigError: an ``openai`` entry inherits an ``api-key``/``base-url`` whose ``${VAR}`` is unset.
        """
        base_url, api_key = self._connection(entry, client, user)
        provider_key, limits = self._key_and_limits(entry, base_url, api_key)
        model = entry.options.model or entry.id
        return ResolvedCommon(
            id=entry.id,
            provider=entry.provider,
            model=model,
            base_url=base_url,
            api_key=api_key,
            provider_key=provider_key,
            retry=self.ai.retry,
            limits=limits,
            price=self.ragqa.prices.get(model, self.ragqa.prices.get(entry.id)),
        )


def resolve_judges(
    ai: SpringAISettings, ragqa: RagqaSettings, keys: Mapping[str, str] | None = None
) -> list[ResolvedChatModel]:
    """The judge panel of ``spring.ai`` (see :meth:`ragqa.settings.Settings.judges` for the rules).

    Args:
        ai: ``spring.ai``.
        ragqa: ragqa's own section.
        keys: values of :data:`HOSTED_KEY_VARIABLES` for hosted models with no ``api-key``.

    Raises:
        ConfigError: a model inherits an unset ``${VAR}``, a hosted model has no key, or ids are duplicated.
    """
    entries, key = _chat_entries(ai)
    check_unique_ids((e.id for e in entries), key)
    resolver = _Resolver(ai, ragqa, keys or {})
    out: list[ResolvedChatModel] = []
    for entry in entries:
        common = resolver.common(entry, ai.openai.chat, f"chat model {entry.id!r}")
        lowest = ai.openai.chat.options if entry.provider == "openai" else ChatOptions()
        options = ChatOptions.merge(
            lowest, ai.chat_models.default_options, entry.options, ChatOptions(model=common["model"])
        )
        out.append(ResolvedChatModel(**common, options=options, local=entry.local))
    return out


def resolve_embedders(
    ai: SpringAISettings, ragqa: RagqaSettings, keys: Mapping[str, str] | None = None
) -> list[ResolvedEmbeddingModel]:
    """The embedding models of ``spring.ai`` (see :meth:`ragqa.settings.Settings.embedders`).

    Raises:
        ConfigError: as :func:`resolve_judges`.
    """
    entries, key = _embedding_entries(ai)
    check_unique_ids((e.id for e in entries), key)
    resolver = _Resolver(ai, ragqa, keys or {})
    out: list[ResolvedEmbeddingModel] = []
    for entry in entries:
        common = resolver.common(entry, ai.openai.embedding, f"embedding model {entry.id!r}")
        lowest = ai.openai.embedding.options if entry.provider == "openai" else EmbeddingOptions()
        options = EmbeddingOptions.merge(
            lowest, ai.embedding_models.default_options, entry.options, EmbeddingOptions(model=common["model"])
        )
        out.append(ResolvedEmbeddingModel(**common, options=options, method=entry.method))
    return out
