"""Judge providers register themselves; settings check `provider:` against the registry; the factory builds by it."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

from ragqa.errors import ConfigError
from ragqa.factory import Closer, build_embedders, build_judges, make_limiters
from ragqa.judges.local import LocalEmbedder, LocalJudge
from ragqa.judges.providers import ProviderContext
from ragqa.settings import (
    ResolvedChatModel,
    Settings,
    check_provider,
    known_providers,
    load_settings,
    provider,
    register_provider,
)
from ragqa.settings import _providers as registry
from ragqa.testing import FunctionJudge


@pytest.fixture
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget providers registered or looked up by a test (built-ins come back on first use)."""
    monkeypatch.setattr(registry, "_PROVIDERS", dict(registry._PROVIDERS))
    monkeypatch.setattr(registry, "_broken", {})
    monkeypatch.setattr(registry, "_installed_loaded", False)
    yield


def load(tmp_path: Path, text: str) -> Settings:
    (tmp_path / "application.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    return load_settings(tmp_path, environ={})


class EchoProvider:
    """Judges whose every answer comes from a function; counts what it built."""

    name = "echo"

    def __init__(self) -> None:
        self.built: list[tuple[str, str | None, Any]] = []

    def judge(self, model: ResolvedChatModel, context: ProviderContext) -> FunctionJudge:
        self.built.append((model.id, model.base_url, model.api_key))
        return FunctionJudge(model.id, lambda prompt, data: {"verdicts": []})


def test_an_unknown_provider_stops_loading_naming_the_judge_the_known_providers_and_the_fix(
    tmp_path: Path, clean_registry: None
) -> None:
    with pytest.raises(ConfigError) as caught:
        load(
            tmp_path,
            "spring: {ai: {chat-models: {list: [{id: judge-a, provider: local}, {id: b, provider: anthropik}]}}}",
        )
    message = str(caught.value)
    assert "spring.ai.chat-models.list[1]" in message
    assert "chat model 'b' has an unknown provider 'anthropik'" in message
    assert "known providers: local, openai" in message
    assert "ragqa.providers" in message and "register_provider" in message
    with pytest.raises(ConfigError, match=r"embedding-models\.list\[0\].*embedding model 'e' has an unknown provider"):
        load(tmp_path, "spring: {ai: {embedding-models: {list: [{id: e, provider: nope}]}}}")


def test_a_provider_registered_in_code_builds_the_judges_that_name_it(tmp_path: Path, clean_registry: None) -> None:
    echo = register_provider(EchoProvider())
    assert "echo" in known_providers() and check_provider("echo") == "echo"
    settings = load(
        tmp_path,
        """
        spring:
          ai:
            chat-models:
              list:
                - {id: native, provider: echo, base-url: "http://127.0.0.1:9", api-key: sk-own}
                - {id: offline, provider: local}
        """,
    )
    [native, _offline] = settings.judges()
    assert (native.provider, native.provider_key, native.base_url) == ("echo", "127.0.0.1", "http://127.0.0.1:9")
    judges = build_judges(settings.judges(), make_limiters(), Closer())
    assert isinstance(judges[0], FunctionJudge) and judges[0].id == "native"
    assert isinstance(judges[1], LocalJudge)
    assert [(i, b, k.get_secret_value()) for i, b, k in echo.built] == [("native", "http://127.0.0.1:9", "sk-own")]


def test_a_native_provider_without_a_base_url_is_its_own_rate_limit_group(tmp_path: Path, clean_registry: None) -> None:
    register_provider(EchoProvider())
    settings = load(tmp_path, "spring: {ai: {chat-models: {list: [{id: n, provider: echo}]}}}")
    [model] = settings.judges()
    assert (model.provider_key, model.base_url, model.api_key) == ("echo", None, None)


def test_the_built_in_providers_build_what_the_factory_built_before(tmp_path: Path) -> None:
    from ragqa.judges.openai import OpenAIEmbedder, OpenAIJudge

    openai = '{base-url: "http://127.0.0.1:9", api-key: none}'
    chat = "[{id: remote}, {id: offline, provider: local, local: {use-embeddings: true}}]"
    embedding = "[{id: e-local, provider: local, method: hashing}, {id: e-remote}]"
    ai = f"openai: {openai}, chat-models: {{list: {chat}}}, embedding-models: {{list: {embedding}}}"
    settings = load(tmp_path, f"spring: {{ai: {{{ai}}}}}")
    limiters = make_limiters()
    embedders = build_embedders(settings.embedders(), limiters, Closer())
    assert isinstance(embedders[0], LocalEmbedder) and isinstance(embedders[1], OpenAIEmbedder)
    remote, offline = build_judges(settings.judges(), limiters, Closer(), embedders)
    assert isinstance(remote, OpenAIJudge) and isinstance(offline, LocalJudge)
    assert remote.limiter is limiters.get("127.0.0.1", settings.judges()[0].limits)
    assert offline.embedder is embedders[0]


def test_a_built_in_name_is_taken_once(clean_registry: None) -> None:
    class Impostor:
        name = "openai"

        def judge(self, model: Any, context: Any) -> Any:
            raise AssertionError("never built")

    with pytest.raises(ConfigError, match=r"'openai' of .* is ragqa's own; give the provider another name"):
        register_provider(Impostor)
    with pytest.raises(TypeError, match="not a judge provider"):
        register_provider(object())
    assert type(provider("openai")).__module__ == "ragqa.judges.providers"


def test_a_provider_without_embedder_cannot_serve_an_embedding_model(tmp_path: Path, clean_registry: None) -> None:
    register_provider(EchoProvider())
    settings = load(tmp_path, "spring: {ai: {embedding-models: {list: [{id: vectors, provider: echo}]}}}")
    with pytest.raises(ConfigError, match="embedding model 'vectors': provider 'echo' serves no embedding models"):
        build_embedders(settings.embedders(), make_limiters(), Closer())


def test_a_broken_installed_provider_stops_only_the_runs_that_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_registry: None
) -> None:
    points = [EntryPoint(name="broken", value="acme_missing:Nope", group="ragqa.providers")]
    looked_up: list[str] = []

    def entry_points(*, group: str) -> list[EntryPoint]:
        looked_up.append(group)
        return [p for p in points if p.group == group]

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)
    load(tmp_path, "spring: {ai: {chat-models: {list: [{id: a, provider: local}]}}}")
    assert looked_up == []  # built-in names never look installed packages up
    with pytest.raises(ConfigError, match=r"chat model 'a'.*judge provider 'broken' = 'acme_missing:Nope' could not"):
        load(tmp_path, "spring: {ai: {chat-models: {list: [{id: a, provider: broken}]}}}")
    assert looked_up == ["ragqa.providers"]
