"""Settings-side fixes: positive timeouts, provider keys per server and key, masked URL userinfo, new keys."""

import hashlib
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from ragqa.errors import ConfigError
from ragqa.judges.ratelimit import ProviderLimiters
from ragqa.settings import (
    MASK,
    ChatOptions,
    CircuitBreakerSettings,
    EmbeddingOptions,
    LimitsSettings,
    Provider,
    ProviderLimits,
    RunSettings,
    Settings,
    load_settings,
    mask_url,
    render_settings,
)

KEY_A = "sk-first-very-secret-aaaa"
KEY_B = "sk-second-very-secret-bbbb"


def load(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> Settings:
    (tmp_path / "application.yaml").write_text(textwrap.dedent(text), encoding="utf-8")
    return load_settings(tmp_path, environ=environ or {})


def tag(key: str) -> str:
    return hashlib.sha256(f"\0{key}".encode()).hexdigest()[:8]


# ------------------------------------------------------------------------------------------ timeouts


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        ("spring: {ai: {openai: {chat: {options: {timeout: 0s}}}}}", "spring.ai.openai.chat.options.timeout"),
        (
            "spring: {ai: {chat-models: {default-options: {timeout: 0}}}}",
            "spring.ai.chat-models.default-options.timeout",
        ),
        (
            "spring: {ai: {chat-models: {list: [{id: a, options: {timeout: 0ms}}]}}}",
            "spring.ai.chat-models.list[0].options.timeout",
        ),
        (
            "spring: {ai: {openai: {embedding: {options: {timeout: PT0S}}}}}",
            "spring.ai.openai.embedding.options.timeout",
        ),
        (
            "spring: {ai: {embedding-models: {list: [{id: e, options: {timeout: 0s}}]}}}",
            "spring.ai.embedding-models.list[0].options.timeout",
        ),
        ("ragqa: {default-limits: {timeout: 0s}}", "ragqa.default-limits.timeout"),
        ("ragqa: {providers: {openrouter.ai: {timeout: 0s}}}", "ragqa.providers.openrouter.ai.timeout"),
    ],
)
def test_zero_timeouts_are_config_errors_naming_the_key(tmp_path: Path, yaml_text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, yaml_text + "\n")
    assert info.value.key == key
    assert f"{key}: Value error, must be a duration greater than 0" in str(info.value)


def test_zero_timeout_from_the_environment_is_an_error_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "{}\n", {"RAGQA__SPRING__AI__OPENAI__CHAT__OPTIONS__TIMEOUT": "0s"})
    assert info.value.key == "spring.ai.openai.chat.options.timeout"


def test_positive_timeouts_still_load_and_models_build_directly() -> None:
    assert ChatOptions(timeout="1ms").timeout == timedelta(milliseconds=1)  # type: ignore[arg-type]
    assert EmbeddingOptions(timeout=timedelta(seconds=2)).timeout == timedelta(seconds=2)
    assert ProviderLimits(timeout=None).timeout is None
    with pytest.raises(ValueError, match="greater than 0"):
        ProviderLimits(timeout=timedelta(0))
    with pytest.raises(ValueError, match="greater than 0"):
        ChatOptions(timeout=timedelta(seconds=-1))


# ------------------------------------------------------------------------------------- provider keys


def test_two_servers_on_one_host_get_two_provider_keys_and_two_limiters(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
        spring: {ai: {chat-models: {list: [
          {id: vllm, base-url: "http://localhost:8000"},
          {id: vllm-2, base-url: "http://localhost:8000/"},
          {id: ollama, base-url: "http://LOCALHOST:11434"}]}}}
        ragqa:
          providers:
            localhost:8000: {max-in-flight: 2}
            localhost: {max-in-flight: 3}
        """,
    )
    vllm, vllm2, ollama = settings.judges()
    assert (vllm.provider_key, vllm2.provider_key, ollama.provider_key) == (
        "localhost:8000",
        "localhost:8000",
        "localhost:11434",
    )
    # ragqa.providers is matched by the key, then host:port, then the host
    assert (vllm.limits.max_in_flight, ollama.limits.max_in_flight) == (2, 3)
    limiters = ProviderLimiters()
    assert limiters.get(vllm.provider_key, vllm.limits) is limiters.get(vllm2.provider_key, vllm2.limits)
    assert limiters.get(ollama.provider_key, ollama.limits) is not limiters.get(vllm.provider_key)
    assert len(limiters) == 2


def test_one_server_keeps_the_host_as_key_whatever_the_spelling_of_its_default_port(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
        spring:
          ai:
            openai: {base-url: "https://openrouter.ai/api", api-key: k}
            chat-models: {list: [{id: a}, {id: b, base-url: "https://openrouter.ai:443/api"}]}
            embedding-models: {list: [{id: e}]}
        ragqa: {providers: {"openrouter.ai:443": {rps: 7}}}
        """,
    )
    keys = {m.provider_key for m in [*settings.judges(), *settings.embedders()]}
    assert keys == {"openrouter.ai"}  # chat and embedding models of one server share one limiter
    assert all(m.limits.rps == 7 for m in settings.judges())  # matched through host:port
    # http on 80 and https on 443 are different ports: both spelled out
    two = load(
        tmp_path,
        """
        spring: {ai: {chat-models: {list: [{id: a, base-url: "http://example.com"}, {id: b, base-url: "https://example.com"}]}}}
        """,
    )
    assert [j.provider_key for j in two.judges()] == ["example.com:80", "example.com:443"]


def test_one_server_used_with_two_keys_gets_a_tag_per_key_never_the_key(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
        spring:
          ai:
            openai: {base-url: "https://openrouter.ai/api", api-key: "${KEY_A}"}
            chat-models:
              list:
                - {id: a}
                - {id: a-again}
                - {id: b, api-key: "${KEY_B}"}
                - {id: keyless, api-key: ""}
                - {id: grouped, api-key: "${KEY_B}", group: team}
        ragqa: {providers: {openrouter.ai: {rps: 5}, team: {rps: 1}}}
        """,
        {"KEY_A": KEY_A, "KEY_B": KEY_B},
    )
    a, a_again, b, keyless, grouped = settings.judges()
    assert a.provider_key == a_again.provider_key == f"openrouter.ai#{tag(KEY_A)}"
    assert b.provider_key == f"openrouter.ai#{tag(KEY_B)}" != a.provider_key
    assert keyless.provider_key == "openrouter.ai"
    assert grouped.provider_key == "team" and grouped.limits.rps == 1  # group: still overrides
    assert a.limits.rps == b.limits.rps == keyless.limits.rps == 5  # the host entry applies to each
    shown = render_settings(settings)
    assert KEY_A not in shown and KEY_B not in shown and tag(KEY_A) in shown


def test_a_key_in_the_url_userinfo_counts_as_a_credential(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
        spring: {ai: {chat-models: {list: [
          {id: a, base-url: "http://u:pw1@gpu-box:8000"},
          {id: b, base-url: "http://u:pw2@gpu-box:8000"}]}}}
        """,
    )
    a, b = settings.judges()
    assert a.provider_key.startswith("gpu-box#") and b.provider_key.startswith("gpu-box#")
    assert a.provider_key != b.provider_key and "pw1" not in a.provider_key


def test_unresolved_placeholder_of_an_unused_model_does_not_disturb_keys(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
        spring:
          ai:
            openai: {base-url: "http://localhost:8000", api-key: "${MISSING_KEY}"}
            chat-models: {list: [{id: local-one, provider: local}]}
            embedding-models: {list: [{id: e, base-url: "http://localhost:9000", api-key: none}]}
        """,
    )
    assert [j.provider_key for j in settings.judges()] == ["local"]
    with pytest.raises(ConfigError, match="MISSING_KEY"):
        load(tmp_path, "spring: {ai: {openai: {api-key: '${MISSING_KEY}'}}}\n").judges()


def test_provider_names_come_from_the_one_registry() -> None:
    from ragqa.settings import BUILTIN_PROVIDERS, known_providers

    assert Provider is str
    assert list(BUILTIN_PROVIDERS) == ["openai", "local"]
    assert {"openai", "local"} <= set(known_providers())


# ------------------------------------------------------------------------------------------ masking


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:sk-123@host.example/api", f"https://{MASK}@host.example/api"),
        ("https://sk-123@host.example:8443", f"https://{MASK}@host.example:8443"),
        ("https://host.example/a@b", "https://host.example/a@b"),
        ("https://host.example/api", "https://host.example/api"),
        ("not a url @ all", "not a url @ all"),
    ],
)
def test_mask_url(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_url_userinfo_is_masked_in_render_repr_and_errors(tmp_path: Path) -> None:
    secret = "s3cr3t-in-url"
    settings = load(
        tmp_path,
        f"""
        spring:
          ai:
            openai: {{base-url: "https://bob:{secret}@llm.example/api"}}
            chat-models: {{list: [{{id: a}}, {{id: b, base-url: "https://{secret}@other.example"}}]}}
        """,
    )
    text = render_settings(settings)
    assert secret not in text
    tree, panel = yaml.safe_load_all(text)
    assert tree["spring"]["ai"]["openai"]["base-url"] == f"https://{MASK}@llm.example/api"
    assert panel["judges"][1]["base-url"] == f"https://{MASK}@other.example"
    assert secret not in repr(settings) and secret not in str(settings.judges()) and secret not in str(settings)
    assert settings.judges()[0].base_url == f"https://bob:{secret}@llm.example/api"  # the value itself is intact
    # validation errors show a harmless input, but never the userinfo
    with pytest.raises(ConfigError) as info:
        load(tmp_path, f"ragqa: {{language: 'https://bob:{secret}@x.example'}}\n")
    assert secret not in str(info.value) and MASK in str(info.value)
    # a lazily failing placeholder inside such a URL shows masked in its error
    lazy = load(tmp_path, "spring: {ai: {openai: {base-url: 'https://bob:pw@${HOST}/api'}}}\n")
    with pytest.raises(ConfigError) as err:
        lazy.judges()
    assert "bob:pw" not in str(err.value) and "HOST" in str(err.value)
    assert "bob:pw" not in render_settings(lazy)


# ----------------------------------------------------------------------------------------- new keys


def test_new_keys_defaults() -> None:
    ragqa = Settings().ragqa
    assert ragqa.circuit_breaker == CircuitBreakerSettings(
        failure_threshold=5, cool_down=timedelta(seconds=1), max_cool_down=timedelta(seconds=30)
    )
    assert ragqa.limits.max_response_bytes == 4 * 1024 * 1024
    assert ragqa.run == RunSettings(deadline=None)
    assert ragqa.limits == LimitsSettings(max_contexts_per_sample=100, max_text_chars=200_000, max_calls=None)
    tree = next(yaml.safe_load_all(render_settings(Settings(), panel=False)))["ragqa"]
    assert tree["circuit-breaker"] == {"failure-threshold": 5, "cool-down": "1s", "max-cool-down": "30s"}
    assert tree["run"] == {"deadline": None}
    assert tree["limits"] == {
        "max-contexts-per-sample": 100,
        "max-text-chars": 200000,
        "max-calls": None,
        "max-response-bytes": 4194304,
    }


def test_new_keys_bind_relaxed_and_from_the_environment(tmp_path: Path) -> None:
    settings = load(
        tmp_path,
        """
        ragqa:
          circuit-breaker: {failure-threshold: 3, coolDown: 1500ms, max-cool-down: 1m}
          run: {deadline: 10m}
          limits: {max_contexts_per_sample: 20, max-text-chars: 5000}
        """,
        {"RAGQA__RAGQA__LIMITS__MAX_CALLS": "1000"},
    )
    ragqa = settings.ragqa
    assert ragqa.circuit_breaker.failure_threshold == 3
    assert ragqa.circuit_breaker.cool_down == timedelta(milliseconds=1500)
    assert ragqa.circuit_breaker.max_cool_down == timedelta(minutes=1)
    assert ragqa.run.deadline == timedelta(minutes=10)
    assert (ragqa.limits.max_contexts_per_sample, ragqa.limits.max_text_chars, ragqa.limits.max_calls) == (
        20,
        5000,
        1000,
    )


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        ("ragqa: {circuit-breaker: {failure-threshold: 0}}", "ragqa.circuit-breaker.failure-threshold"),
        ("ragqa: {circuit-breaker: {cool-down: 0s}}", "ragqa.circuit-breaker.cool-down"),
        ("ragqa: {circuit-breaker: {cool-down: 1m, max-cool-down: 30s}}", "ragqa.circuit-breaker"),
        ("ragqa: {limits: {max-response-bytes: 10}}", "ragqa.limits.max-response-bytes"),
        ("ragqa: {run: {deadline: 0s}}", "ragqa.run.deadline"),
        ("ragqa: {limits: {max-contexts-per-sample: 0}}", "ragqa.limits.max-contexts-per-sample"),
        ("ragqa: {limits: {max-text-chars: 0}}", "ragqa.limits.max-text-chars"),
        ("ragqa: {limits: {max-calls: 0}}", "ragqa.limits.max-calls"),
    ],
)
def test_new_keys_reject_out_of_range_values_naming_the_key(tmp_path: Path, yaml_text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, yaml_text + "\n")
    assert info.value.key == key and key in str(info.value)


def test_unknown_new_key_suggests_the_right_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Did you mean 'max-calls'"):
        load(tmp_path, "ragqa: {limits: {max-call: 3}}\n")


# ------------------------------------------------------------------- the source and options merging


def test_settings_alone_reads_no_file_and_no_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGQA__RAGQA__LANGUAGE", "ru")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "application.yaml").write_text("ragqa: {language: ru}\n", encoding="utf-8")
    assert Settings().ragqa.language == "en"
    assert load_settings(tmp_path).ragqa.language == "ru"  # the source reads them during load_settings
    assert Settings().ragqa.language == "en"  # ... and only then
    assert Settings(ragqa={"language": "ru"}).ragqa.language == "ru"  # type: ignore[arg-type]


def test_options_merge_field_by_field_headers_by_key_and_null_unsets() -> None:
    low = ChatOptions(temperature=0.5, max_tokens=10, headers={"A": "1", "B": "2"})
    mid = ChatOptions(max_tokens=None, headers={"B": "3"})
    top = ChatOptions(top_p=0.9)
    merged = ChatOptions.merge(low, mid, top)
    assert (merged.temperature, merged.max_tokens, merged.top_p) == (0.5, None, 0.9)
    assert merged.headers == {"A": "1", "B": "3"}
    assert merged.model_fields_set == {"temperature", "max_tokens", "top_p", "headers"}
    assert EmbeddingOptions.merge(EmbeddingOptions(dimensions=8), EmbeddingOptions(batch_size=2)) == EmbeddingOptions(
        dimensions=8, batch_size=2
    )
