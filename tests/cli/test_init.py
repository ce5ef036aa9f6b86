"""A new user with a key gets real judges in any folder: ``ragqa init``, the built-in settings, hosted keys.

Before, a folder with no ``application.yaml`` got Spring's default client (``gpt-4o-mini`` at
``api.openai.com``) with no key: ``OPENROUTER_API_KEY`` and ``OPENAI_API_KEY`` were not read,
every call was sent and failed, and there was no ``ragqa init``. Now such a folder uses the
built-in settings (the seed's OpenRouter panel, what ``ragqa init`` writes), a hosted provider's
model reads its key from the provider's variable, and a judge with no key stops the run before
any call (exit 2) naming the judge, the variable and ``ragqa init``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.errors import ConfigError
from ragqa.settings import RagqaSettings, builtin_base, load_settings, render_settings
from ragqa.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
SEED_PANEL = ["anthropic/claude-4.5-sonnet", "google/gemini-2.5-flash", "openai/gpt-4o-mini", "deepseek/deepseek-v3.2"]
KEYS_UNSET = {"OPENROUTER_API_KEY": None, "OPENAI_API_KEY": None, "RAGQA_PROFILES_ACTIVE": None}
ROW = {
    "id": "a",
    "user_input": "When does the office open?",
    "response": "It opens at nine.",
    "retrieved_contexts": ["The office opens at 9:00."],
}


def _invoke(*args: str, **env: str | None) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={**KEYS_UNSET, "NO_COLOR": "1", "COLUMNS": "300", **env})
    return result.exit_code, result.output


@pytest.fixture
def empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder (but for a dataset) as the current folder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.jsonl").write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    return tmp_path


def test_evaluate_in_an_empty_folder_without_the_key_exits_2_before_any_call(empty: Path) -> None:
    with FakeOpenAIServer() as server:
        # the built-in panel, pointed at a counting server: the run must stop before asking it
        code, output = _invoke(
            "evaluate", "data.jsonl", "--no-progress", RAGQA__SPRING__AI__OPENAI__BASE_URL=server.base_url
        )
        assert server.requests == []
    assert code == 2, output
    text = " ".join(output.split())
    assert "OPENROUTER_API_KEY" in text and "ragqa init" in text and "--profile local" in text
    assert "chat model 'anthropic/claude-4.5-sonnet'" in text
    assert "Traceback" not in output


def test_after_init_with_the_key_set_config_show_shows_the_seed_panel(empty: Path) -> None:
    code, output = _invoke("init")
    assert code == 0, output
    assert "wrote application.yaml" in output and "OPENROUTER_API_KEY" in output
    assert (empty / "application.yaml").read_text(encoding="utf-8") == builtin_base().read_text(encoding="utf-8")
    code, shown = _invoke("config", "show", OPENROUTER_API_KEY="sk-or-test-123")
    assert code == 0, shown
    assert "sk-or-test-123" not in shown
    _settings, panel_doc = shown.split("---\n# resolved panel\n")
    judges = yaml.safe_load(panel_doc)["judges"]
    assert [j["id"] for j in judges] == SEED_PANEL
    assert {(j["base-url"], j["api-key"]) for j in judges} == {("https://openrouter.ai/api", "**********")}
    assert [e["id"] for e in yaml.safe_load(panel_doc)["embedders"]] == [
        "openai/text-embedding-3-large",
        "qwen/qwen3-embedding-8b",
    ]


def test_the_built_in_settings_are_what_init_writes(empty: Path) -> None:
    with_file = load_settings(empty, environ={"OPENROUTER_API_KEY": "k"})  # no file yet: the built-in one
    _invoke("init")
    assert load_settings(empty, environ={"OPENROUTER_API_KEY": "k"}) == with_file
    assert [j.id for j in with_file.judges()] == SEED_PANEL
    assert {j.api_key.get_secret_value() for j in with_file.judges() if j.api_key is not None} == {"k"}


def test_init_keeps_an_existing_file_unless_forced(empty: Path) -> None:
    mine = "ragqa: {language: ru}\n"
    (empty / "application.yaml").write_text(mine, encoding="utf-8")
    code, output = _invoke("init")
    assert code == 2 and "already exists" in output and "--force" in output
    assert (empty / "application.yaml").read_text(encoding="utf-8") == mine
    code, output = _invoke("init", "--force")
    assert code == 0, output
    assert (empty / "application.yaml").read_text(encoding="utf-8") == builtin_base().read_text(encoding="utf-8")


def test_the_repository_application_yaml_is_the_built_in_one() -> None:
    assert (ROOT / "application.yaml").read_text(encoding="utf-8") == builtin_base().read_text(encoding="utf-8")


def test_the_commented_ragqa_block_of_the_file_shows_the_defaults() -> None:
    text = builtin_base().read_text(encoding="utf-8")
    block = text[text.index("# ragqa:") :]
    uncommented = "\n".join(re.sub(r"^# ?", "", line) for line in block.splitlines())
    shown = yaml.safe_load(uncommented)["ragqa"]
    assert shown, "the file documents ragqa's own keys"
    defaults = yaml.safe_load(render_settings(load_settings(ROOT, ["local"], environ={}), panel=False))["ragqa"]
    assert RagqaSettings() == load_settings(ROOT, ["local"], environ={}).ragqa
    for key, value in shown.items():
        if isinstance(value, dict) and isinstance(defaults[key], dict) and defaults[key]:
            assert {k: defaults[key][k] for k in value} == value, key
        else:
            assert defaults[key] == value, key


# ---- hosted providers read their key from the environment ---------------------------------------

OPENAI_DIRECT = """
spring:
  ai:
    openai: {base-url: https://api.openai.com}
    chat-models: {list: [{id: gpt-4o-mini}]}
"""


def test_a_hosted_openai_model_with_no_api_key_reads_openai_api_key(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text(OPENAI_DIRECT, encoding="utf-8")
    [judge] = load_settings(tmp_path, environ={"OPENAI_API_KEY": "sk-openai"}).judges()
    assert judge.api_key is not None and judge.api_key.get_secret_value() == "sk-openai"
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, environ={"OPENROUTER_API_KEY": "sk-or"}).judges()
    message = str(caught.value)
    assert "chat model 'gpt-4o-mini'" in message and "OPENAI_API_KEY" in message and "ragqa init" in message


def test_spring_s_default_client_reads_openai_api_key(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text("spring: {ai: {chat-models: {}}}\n", encoding="utf-8")
    [judge] = load_settings(tmp_path, environ={"OPENAI_API_KEY": "sk-openai"}).judges()
    assert (judge.id, judge.base_url) == ("gpt-4o-mini", "https://api.openai.com")
    assert judge.api_key is not None and judge.api_key.get_secret_value() == "sk-openai"


def test_an_openrouter_model_with_no_api_key_reads_openrouter_api_key(tmp_path: Path) -> None:
    config = "spring: {ai: {openai: {base-url: 'https://openrouter.ai/api'}, chat-models: {list: [{id: m}]}}}\n"
    (tmp_path / "application.yaml").write_text(config, encoding="utf-8")
    [judge] = load_settings(tmp_path, environ={"OPENROUTER_API_KEY": "sk-or"}).judges()
    assert judge.api_key is not None and judge.api_key.get_secret_value() == "sk-or"


def test_a_configured_key_wins_and_a_server_of_ones_own_needs_none(tmp_path: Path) -> None:
    config = """
spring:
  ai:
    openai: {base-url: https://api.openai.com, api-key: written}
    chat-models:
      list:
        - {id: hosted}
        - {id: vllm, base-url: 'http://127.0.0.1:8000'}
"""
    (tmp_path / "application.yaml").write_text(config, encoding="utf-8")
    hosted, vllm = load_settings(tmp_path, environ={"OPENAI_API_KEY": "from-env"}).judges()
    assert hosted.api_key is not None and hosted.api_key.get_secret_value() == "written"
    assert vllm.api_key is not None and vllm.api_key.get_secret_value() == "written"  # inherited as before
    (tmp_path / "application.yaml").write_text(
        "spring: {ai: {chat-models: {list: [{id: vllm, base-url: 'http://127.0.0.1:8000'}]}}}\n", encoding="utf-8"
    )
    [own] = load_settings(tmp_path, environ={}).judges()
    assert own.api_key is None  # a local server may need no key: nothing refused


def test_the_cli_refuses_a_hosted_judge_with_no_key_before_any_call(tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(OPENAI_DIRECT, encoding="utf-8")
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
    code, output = _invoke("evaluate", str(data), "-c", str(config), "--no-progress")
    assert code == 2, output
    text = " ".join(output.split())
    assert "gpt-4o-mini" in text and "OPENAI_API_KEY" in text and "ragqa init" in text
