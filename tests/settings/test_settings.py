"""Settings: the seed loads, profiles, placeholders, durations, overrides, errors and secrets."""

from __future__ import annotations

import shutil
import textwrap
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from ragqa.errors import ConfigError
from ragqa.settings import (
    MASK,
    ChatOptions,
    Settings,
    UnresolvedPlaceholder,
    load_settings,
    parse_duration,
    render_settings,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-or-v1-very-secret-value"


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def seed_dir(tmp_path: Path) -> Path:
    """A directory holding the shipped application.yaml and application-local.yaml."""
    shutil.copy(ROOT / "application.yaml", tmp_path / "application.yaml")
    shutil.copy(ROOT / "application-local.yaml", tmp_path / "application-local.yaml")
    return tmp_path


# ------------------------------------------------------------------------------------------ seed


def test_seed_loads_unchanged_and_resolves_the_four_judge_panel(seed_dir: Path) -> None:
    settings = load_settings(seed_dir, environ={"OPENROUTER_API_KEY": KEY})
    retry = settings.spring.ai.retry
    assert retry.on_http_codes == [429]
    assert retry.on_client_errors is True
    assert retry.backoff.initial_interval == timedelta(seconds=2)
    assert retry.backoff.max_interval == timedelta(seconds=30)
    assert retry.backoff.multiplier == 2
    assert settings.spring.threads.virtual.enabled is True

    judges = settings.judges()
    assert [j.id for j in judges] == [
        "anthropic/claude-4.5-sonnet",
        "google/gemini-2.5-flash",
        "openai/gpt-4o-mini",
        "deepseek/deepseek-v3.2",
    ]
    first = judges[0]
    assert first.provider == "openai"
    assert first.model == "anthropic/claude-4.5-sonnet"  # the id, not chat.options.model
    assert first.base_url == "https://openrouter.ai/api"
    assert first.api_key is not None and first.api_key.get_secret_value() == KEY
    assert first.provider_key == "openrouter.ai"
    assert (first.options.temperature, first.options.max_tokens, first.options.top_p) == (0.0, 1000, 1.0)
    assert first.retry == retry

    embedders = settings.embedders()
    assert [(e.id, e.options.dimensions) for e in embedders] == [
        ("openai/text-embedding-3-large", 3072),
        ("qwen/qwen3-embedding-8b", 1024),
    ]
    assert embedders[1].base_url == "https://openrouter.ai/api"
    # ragqa's own section takes its defaults when absent
    assert settings.ragqa.metrics == ["faithfulness", "hallucination"]
    assert settings.ragqa.aggregation.strategy == "mean"
    assert settings.ragqa.aggregation.quorum == 1


def test_seed_loads_without_key_but_the_openai_panel_fails_naming_variable_and_key(seed_dir: Path) -> None:
    settings = load_settings(seed_dir, environ={})
    assert isinstance(settings.spring.ai.openai.api_key, UnresolvedPlaceholder)
    with pytest.raises(ConfigError) as err:
        settings.judges()
    assert "OPENROUTER_API_KEY" in str(err.value)
    assert "spring.ai.openai.api-key" in str(err.value)
    assert err.value.key == "spring.ai.openai.api-key"
    with pytest.raises(ConfigError, match="OPENROUTER_API_KEY") as err_e:
        settings.embedders()
    assert err_e.value.key == "spring.ai.openai.embedding.api-key"


def test_local_profile_needs_no_key_and_has_two_differently_configured_judges(seed_dir: Path) -> None:
    settings = load_settings(seed_dir, ["local"], environ={})
    settings.check()
    judges = settings.judges()
    assert [j.id for j in judges] == ["local-strict", "local-lenient"]
    assert all(j.provider == "local" and j.api_key is None and j.provider_key == "local" for j in judges)
    assert judges[0].local.support_threshold == 0.6
    assert judges[1].local.support_threshold == 0.4
    assert judges[1].local.number_check is False
    assert judges[0].local.number_check is True
    (embedder,) = settings.embedders()
    assert (embedder.id, embedder.provider, embedder.method) == ("local-minilm", "local", "auto")
    # the base file's retry block is still merged in (dicts merge)
    assert settings.spring.ai.retry.on_http_codes == [429]


# -------------------------------------------------------------------------------------- profiles


def test_profiles_deep_merge_dicts_and_replace_lists_in_order(tmp_path: Path) -> None:
    write(
        tmp_path,
        "application.yaml",
        """
        spring:
          ai:
            retry: {max-attempts: 5, on-http-codes: [429, 503], backoff: {multiplier: 3}}
            chat-models:
              default-options: {temperature: 0.0, max-tokens: 500}
              list: [{id: a}, {id: b}, {id: c}]
        ragqa: {language: en, metrics: [faithfulness, hallucination]}
        """,
    )
    write(
        tmp_path,
        "application-ci.yaml",
        """
        spring:
          ai:
            retry: {on-http-codes: [500], backoff: {initial-interval: 1s}}
            chat-models:
              default-options: {max-tokens: 2000}
              list: [{id: z}]
        ragqa: {metrics: [faithfulness]}
        """,
    )
    write(tmp_path, "application-ru.yaml", "ragqa: {language: ru}\nspring: {ai: {retry: {max-attempts: 7}}}\n")
    settings = load_settings(tmp_path, ["ci", "ru"], environ={"OPENAI_KEY": "x"})
    retry = settings.spring.ai.retry
    assert retry.max_attempts == 7  # later profile wins
    assert retry.on_http_codes == [500]  # list replaced, not appended
    assert retry.backoff.multiplier == 3  # sibling key kept (dict merge)
    assert retry.backoff.initial_interval == timedelta(seconds=1)
    models = settings.spring.ai.chat_models
    assert [e.id for e in models.items] == ["z"]
    assert models.default_options.temperature == 0.0 and models.default_options.max_tokens == 2000
    assert settings.ragqa.metrics == ["faithfulness"]
    assert settings.ragqa.language == "ru"


def test_profiles_from_environment_variable_when_none_given(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "ragqa: {language: en}\n")
    write(tmp_path, "application-a.yaml", "ragqa: {language: ru, aggregation: {quorum: 2}}\n")
    write(tmp_path, "application-b.yaml", "ragqa: {language: en}\n")
    settings = load_settings(tmp_path, environ={"RAGQA_PROFILES_ACTIVE": " b , a "})
    assert settings.ragqa.language == "ru"  # a comes after b
    assert settings.ragqa.aggregation.quorum == 2
    # explicit profiles win over the variable
    assert load_settings(tmp_path, ["b"], environ={"RAGQA_PROFILES_ACTIVE": "a"}).ragqa.language == "en"


def test_missing_profile_file_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "ragqa: {language: en}\n")
    with pytest.raises(ConfigError, match=r"profile 'prod'.*application-prod\.yaml"):
        load_settings(tmp_path, ["prod"], environ={})


def test_config_file_must_exist_and_its_profiles_are_found_beside_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config_file=tmp_path / "nope.yaml", environ={})
    conf = write(tmp_path, "ci.yaml", "ragqa: {language: en}\n")
    write(tmp_path, "ci-ru.yaml", "ragqa: {language: ru}\n")
    assert load_settings(config_file=conf, profiles=["ru"], environ={}).ragqa.language == "ru"
    # an implicit application.yaml that is absent means defaults
    assert load_settings(tmp_path / "empty-dir-does-not-exist", environ={}).ragqa.language == "en"


# ----------------------------------------------------------------------------------- placeholders


def test_placeholders_with_defaults_and_inside_strings(tmp_path: Path) -> None:
    write(
        tmp_path,
        "application.yaml",
        """
        # a comment mentioning ${NOT_SET_ANYWHERE} is ignored
        spring:
          ai:
            openai:
              base-url: http://${LLM_HOST:localhost}:${LLM_PORT:8000}
              api-key: ${LLM_KEY:}
            retry: {max-attempts: "${ATTEMPTS:4}"}
        ragqa:
          language: ${LANG_CODE:en}
          cache: {directory: "${CACHE_DIR:.cache}/ragqa"}
          metric-options: {faithfulness: {note: "${NOTE:a: b #c}"}}
        """,
    )
    env = {"LLM_HOST": "gpu-box", "CACHE_DIR": "/var/cache"}
    settings = load_settings(tmp_path, environ=env)
    assert settings.spring.ai.openai.base_url == "http://gpu-box:8000"
    assert settings.spring.ai.retry.max_attempts == 4
    assert settings.ragqa.language == "en"
    assert str(settings.ragqa.cache.directory) == "/var/cache/ragqa"
    assert settings.ragqa.metric_options["faithfulness"]["note"] == "a: b #c"
    # the empty default leaves the key unset for the resolved judge
    (judge,) = settings.judges()
    assert judge.api_key is None and judge.provider_key == "gpu-box"
    # an env value with YAML syntax is taken verbatim (expanded after parsing)
    settings = load_settings(tmp_path, environ={"LLM_KEY": "abc: def #x"})
    key = settings.spring.ai.openai.api_key
    assert not isinstance(key, UnresolvedPlaceholder) and key is not None
    assert key.get_secret_value() == "abc: def #x"


def test_missing_required_variable_outside_api_key_fails_at_load_naming_it_and_the_key(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "ragqa:\n  cache: {directory: '${CACHE_ROOT}/x'}\n")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={})
    assert "CACHE_ROOT" in str(err.value) and "ragqa.cache.directory" in str(err.value)
    assert err.value.key == "ragqa.cache.directory"


def test_entry_api_key_placeholder_fails_only_for_that_entry(tmp_path: Path) -> None:
    write(
        tmp_path,
        "application.yaml",
        """
        spring:
          ai:
            openai: {api-key: "${MAIN_KEY:main}"}
            chat-models:
              list:
                - {id: ok}
                - {id: cloud, base-url: "${CLOUD_URL}", api-key: "${CLOUD_KEY}"}
        """,
    )
    settings = load_settings(tmp_path, environ={})
    with pytest.raises(ConfigError) as err:
        settings.judges()
    assert "CLOUD_URL" in str(err.value)
    assert err.value.key == "spring.ai.chat-models.list[1].base-url"
    assert "'cloud'" in str(err.value)


# ------------------------------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2000ms", timedelta(seconds=2)),
        ("2s", timedelta(seconds=2)),
        ("1m", timedelta(minutes=1)),
        ("1h", timedelta(hours=1)),
        ("1d", timedelta(days=1)),
        ("1.5s", timedelta(milliseconds=1500)),
        ("500MS", timedelta(milliseconds=500)),
        (2000, timedelta(seconds=2)),  # bare number = milliseconds (Spring)
        ("250", timedelta(milliseconds=250)),
        ("PT3S", timedelta(seconds=3)),  # ISO-8601 via pydantic
    ],
)
def test_durations(tmp_path: Path, raw: object, expected: timedelta) -> None:
    write(
        tmp_path, "application.yaml", yaml.safe_dump({"spring": {"ai": {"retry": {"backoff": {"max-interval": raw}}}}})
    )
    assert load_settings(tmp_path, environ={}).spring.ai.retry.backoff.max_interval == expected


def test_bad_duration_names_the_key(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "ragqa: {default-limits: {timeout: 2 fortnights}}\n")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={})
    assert err.value.key == "ragqa.default-limits.timeout"
    assert "2 fortnights" in str(err.value)


def test_parse_duration_leaves_other_values_for_pydantic() -> None:
    assert parse_duration("PT2S") == "PT2S"
    assert parse_duration(True) is True
    assert parse_duration(1.5) == timedelta(microseconds=1500)


# -------------------------------------------------------------------------------- per-model values


def test_per_model_overrides_field_by_field(tmp_path: Path) -> None:
    write(
        tmp_path,
        "application.yaml",
        """
        spring:
          ai:
            openai:
              base-url: https://openrouter.ai/api
              api-key: or-key
              chat:
                options: {model: ignored-for-list-entries, temperature: 0.3, seed: 7, headers: {X-Title: ragqa}}
            chat-models:
              default-options: {temperature: 0.0, max-tokens: 1000, timeout: 30s, headers: {X-Env: ci}}
              list:
                - {id: plain}
                - id: vllm
                  base-url: http://localhost:8000
                  api-key: vllm-key
                  group: home
                  options: {model: Qwen/Qwen3-8B, max-tokens: 2000, headers: {X-Env: home}}
                - {id: hot, options: {temperature: 0.7, seed: null}}
        ragqa:
          providers:
            openrouter.ai: {rps: 5, strategy: reject}
            home: {max-in-flight: 2}
          default-limits: {rps: 1}
          prices:
            Qwen/Qwen3-8B: {prompt: 0.1, completion: 0.2}
            plain: {prompt: 1.0}
        """,
    )
    plain, vllm, hot = load_settings(tmp_path, environ={}).judges()

    assert plain.model == "plain"  # chat.options.model never names list entries
    assert plain.options.temperature == 0.0  # default-options over spring.ai.openai.chat.options
    assert plain.options.seed == 7  # ...which still supplies fields nobody overrides
    assert plain.options.timeout == timedelta(seconds=30)
    assert plain.options.headers == {"X-Title": "ragqa", "X-Env": "ci"}
    assert plain.base_url == "https://openrouter.ai/api"
    assert plain.limits.rps == 5 and plain.limits.strategy == "reject"
    assert plain.price is not None and plain.price.prompt == 1.0  # by id when the model has no price

    assert vllm.id == "vllm" and vllm.model == "Qwen/Qwen3-8B" and vllm.options.model == "Qwen/Qwen3-8B"
    assert vllm.base_url == "http://localhost:8000"
    assert vllm.api_key is not None and vllm.api_key.get_secret_value() == "vllm-key"
    assert vllm.options.max_tokens == 2000 and vllm.options.temperature == 0.0
    assert vllm.options.headers == {"X-Title": "ragqa", "X-Env": "home"}
    assert vllm.provider_key == "home" and vllm.limits.max_in_flight == 2 and vllm.limits.rps is None
    assert vllm.price is not None and vllm.price.completion == 0.2

    assert hot.options.temperature == 0.7
    assert hot.options.seed is None  # an explicit null overrides the lower layer
    assert hot.api_key is not None and hot.api_key.get_secret_value() == "or-key"


def test_embedding_connection_falls_back_to_openai_and_default_client(tmp_path: Path) -> None:
    write(
        tmp_path,
        "application.yaml",
        """
        spring:
          ai:
            openai:
              base-url: https://main.example/api
              api-key: main
              chat: {options: {model: judge-x, temperature: 0.1}}
              embedding: {options: {model: emb-x, dimensions: 256}}
            embedding-models:
              default-options: {batch-size: 8}
        """,
    )
    settings = load_settings(tmp_path, environ={})
    (judge,) = settings.judges()  # empty list: Spring's default client
    assert (judge.id, judge.model, judge.options.temperature) == ("judge-x", "judge-x", 0.1)
    (emb,) = settings.embedders()
    assert (emb.id, emb.options.dimensions, emb.options.batch_size) == ("emb-x", 256, 8)
    assert emb.base_url == "https://main.example/api" and emb.provider_key == "main.example"
    # no embedding model named anywhere: no embedder, and the default judge is gpt-4o-mini at OpenAI,
    # which needs a key (Settings() built in code reads no environment: tests/cli/test_init.py)
    bare = Settings(spring={"ai": {"openai": {"api_key": "sk-x"}}})  # type: ignore[arg-type]
    assert bare.embedders() == []
    assert [j.model for j in bare.judges()] == ["gpt-4o-mini"]
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        Settings().judges()


# ------------------------------------------------------------------------------------ env overrides


def test_env_overrides_single_keys_after_profiles(tmp_path: Path) -> None:
    write(
        tmp_path,
        "application.yaml",
        """
        spring:
          ai:
            retry: {max-attempts: 10}
            chat-models: {list: [{id: a}, {id: b, options: {temperature: 0.0}}]}
        ragqa: {language: en}
        """,
    )
    write(tmp_path, "application-p.yaml", "ragqa: {language: en, aggregation: {strategy: median}}\n")
    env = {
        "RAGQA__RAGQA__LANGUAGE": "ru",
        "ragqa__spring__ai__retry__max_attempts": "3",  # case-insensitive
        "RAGQA__SPRING__AI__RETRY__ON_HTTP_CODES": "[429, 503]",
        "RAGQA__SPRING__AI__RETRY__BACKOFF__INITIAL_INTERVAL": "500ms",
        "RAGQA__SPRING__AI__CHAT_MODELS__LIST__1__OPTIONS__TEMPERATURE": "0.5",
        "RAGQA__SPRING__AI__OPENAI__API_KEY": "12345",  # stays text, not a number
        "RAGQA__RAGQA__PROVIDERS__LOCAL__RPS": "2.5",
        "RAGQA__RAGQA__METRIC_OPTIONS__NOISE_SENSITIVITY__MODE": "irrelevant",
    }
    settings = load_settings(tmp_path, ["p"], environ=env)
    assert settings.ragqa.language == "ru"
    assert settings.ragqa.aggregation.strategy == "median"
    retry = settings.spring.ai.retry
    assert retry.max_attempts == 3 and retry.on_http_codes == [429, 503]
    assert retry.backoff.initial_interval == timedelta(milliseconds=500)
    assert settings.spring.ai.chat_models.items[1].options.temperature == 0.5
    key = settings.spring.ai.openai.api_key
    assert key is not None and not isinstance(key, UnresolvedPlaceholder) and key.get_secret_value() == "12345"
    assert settings.ragqa.providers["local"].rps == 2.5
    assert settings.ragqa.metric_options == {"noise_sensitivity": {"mode": "irrelevant"}}


def test_env_override_errors_name_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"RAGQA__RAGQA__LANGAUGE.*Did you mean 'language'"):
        load_settings(tmp_path, environ={"RAGQA__RAGQA__LANGAUGE": "ru"})
    with pytest.raises(ConfigError, match=r"list\[7\] does not exist"):  # the built-in panel has 4 judges
        load_settings(tmp_path, environ={"RAGQA__SPRING__AI__CHAT_MODELS__LIST__7__ID": "x"})
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={"RAGQA__RAGQA__LANGUAGE": "fr"})
    assert err.value.key == "ragqa.language"


# ------------------------------------------------------------------------------------------ errors


def test_unknown_key_names_the_dotted_key_and_suggests(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "spring:\n  ai:\n    retry:\n      max-atempts: 3\n")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={})
    message = str(err.value)
    assert "spring.ai.retry.max-atempts" in message
    assert "Did you mean 'max-attempts'?" in message
    assert "application.yaml" in message
    assert err.value.key == "spring.ai.retry.max-atempts"


def test_unknown_key_in_list_entry_and_profile_file(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "spring: {ai: {chat-models: {list: [{id: a}]}}}\n")
    write(tmp_path, "application-x.yaml", "spring: {ai: {chat-models: {list: [{id: a, optoins: {}}]}}}\n")
    with pytest.raises(ConfigError, match=r"chat-models\.list\[0\]\.optoins.*application-x\.yaml.*'options'"):
        load_settings(tmp_path, ["x"], environ={})
    write(tmp_path, "application-y.yaml", "spring: {ai: {chat-models: {lst: []}}}\n")
    with pytest.raises(ConfigError, match="Did you mean 'list'"):
        load_settings(tmp_path, ["y"], environ={})


def test_relaxed_binding_accepts_snake_and_camel_case(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "spring: {ai: {retry: {maxAttempts: 4, on_client_errors: true}}}\n")
    retry = load_settings(tmp_path, environ={}).spring.ai.retry
    assert retry.max_attempts == 4 and retry.on_client_errors is True


def test_duplicate_ids_are_an_error(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "spring: {ai: {chat-models: {list: [{id: a}, {id: b}, {id: a}]}}}\n")
    with pytest.raises(ConfigError, match="duplicate id 'a'") as err:
        load_settings(tmp_path, environ={})
    assert err.value.key == "spring.ai.chat-models.list[2].id"


def test_invalid_values_and_yaml_errors_name_the_place(tmp_path: Path) -> None:
    write(tmp_path, "application.yaml", "ragqa: {aggregation: {strategy: avg, quorum: 0}}\n")
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={})
    assert "ragqa.aggregation.strategy" in str(err.value) and "ragqa.aggregation.quorum" in str(err.value)
    write(tmp_path, "application.yaml", "ragqa: {language: en}\nragqa: {language: ru}\n")
    with pytest.raises(ConfigError, match="line 2, column 1: duplicate key 'ragqa'"):
        load_settings(tmp_path, environ={})
    write(tmp_path, "application.yaml", "spring:\n  ai: [unclosed\n")
    with pytest.raises(ConfigError, match=r"invalid YAML in .*application\.yaml at line"):
        load_settings(tmp_path, environ={})
    write(
        tmp_path, "application.yaml", "spring: {ai: {chat-models: {list: [{id: a, local: {number-check: false}}]}}}\n"
    )
    with pytest.raises(ConfigError, match="only to entries with provider: local"):
        load_settings(tmp_path, environ={})


# ----------------------------------------------------------------------------------------- secrets


def test_secrets_never_appear_in_render_repr_or_errors(tmp_path: Path, seed_dir: Path) -> None:
    settings = load_settings(seed_dir, environ={"OPENROUTER_API_KEY": KEY})
    text = render_settings(settings)
    assert KEY not in text
    assert text.count(MASK) >= 2 + 4 + 2  # openai + embedding keys, then 4 judges and 2 embedders
    assert KEY not in repr(settings) and KEY not in str(settings.judges()) and KEY not in repr(settings.embedders())
    # the rendered tree uses kebab-case keys, the YAML key `list`, and Spring durations
    tree = next(yaml.safe_load_all(text))
    assert tree["spring"]["ai"]["retry"]["backoff"]["initial-interval"] == "2s"
    assert [e["id"] for e in tree["spring"]["ai"]["chat-models"]["list"]][::3] == [
        "anthropic/claude-4.5-sonnet",
        "deepseek/deepseek-v3.2",
    ]
    assert "max-concurrent-samples" in tree["ragqa"]["concurrency"]
    panel = list(yaml.safe_load_all(text))[1]
    assert panel["judges"][0]["api-key"] == MASK and panel["judges"][0]["provider-key"] == "openrouter.ai"

    # invalid values next to a secret: the message names the key, never the value
    write(
        tmp_path,
        "application.yaml",
        f"spring: {{ai: {{openai: {{api-key: {KEY}, chat: {{options: {{headers: {{Authorization: [{KEY}]}}}}}}}}}}}}\n",
    )
    with pytest.raises(ConfigError) as err:
        load_settings(tmp_path, environ={})
    assert KEY not in str(err.value) and "headers" in str(err.value)


def test_render_masks_secret_headers_and_shows_unset_placeholders(seed_dir: Path) -> None:
    settings = load_settings(seed_dir, environ={})
    text = render_settings(settings)
    assert "${OPENROUTER_API_KEY}" in text
    assert "# resolved panel: not resolvable" in text and "OPENROUTER_API_KEY is not set" in text
    local = load_settings(seed_dir, ["local"], environ={})
    panel = list(yaml.safe_load_all(render_settings(local)))[1]
    assert [j["id"] for j in panel["judges"]] == ["local-strict", "local-lenient"]
    assert panel["judges"][0]["local"]["support-threshold"] == 0.6
    opts = ChatOptions(headers={"Authorization": "Bearer t0ken", "X-Title": "ragqa"})
    from ragqa.settings import _render_model  # the helper behind render_settings

    assert _render_model(opts)["headers"] == {"Authorization": MASK, "X-Title": "ragqa"}
