"""The built-in offline profile: ``--profile local`` works in any folder, not only in a clone."""

import os
import textwrap
import tomllib
from pathlib import Path

import pytest
from _cli import run_cli

from ragqa.container import create_container
from ragqa.errors import ConfigError
from ragqa.settings import builtin_profiles, load_settings

ROOT = Path(__file__).resolve().parents[2]
BUILTIN = ROOT / "ragqa" / "settings" / "profiles" / "application-local.yaml"
IT_HELPDESK = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"


def test_local_profile_loads_from_an_empty_folder(tmp_path: Path) -> None:
    assert "local" in builtin_profiles()
    settings = load_settings(tmp_path, ["local"], environ={})
    judges = settings.judges()
    assert [j.id for j in judges] == ["local-strict", "local-lenient"]
    assert all(j.provider == "local" and j.provider_key == "local" for j in judges)
    assert judges[0].local.support_threshold == 0.6 and judges[1].local.number_check is False
    assert [(e.id, e.method) for e in settings.embedders()] == [("local-minilm", "auto")]
    # the same through RAGQA_PROFILES_ACTIVE and through the container with no config named
    assert [j.id for j in load_settings(tmp_path, environ={"RAGQA_PROFILES_ACTIVE": "local"}).judges()] == [
        "local-strict",
        "local-lenient",
    ]
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        container = create_container(None, ["local"], environ={})
        assert [j.id for j in container.settings().judges()] == ["local-strict", "local-lenient"]
    finally:
        os.chdir(cwd)


def test_cli_evaluate_with_local_profile_outside_the_repository(tmp_path: Path) -> None:
    result = run_cli("evaluate", str(IT_HELPDESK), "--profile", "local", "--metrics", "faithfulness", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "local-strict" in result.stdout and "local-lenient" in result.stdout
    shown = run_cli("config", "show", "--profile", "local", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "local-strict" in shown.stdout


def test_cli_still_refuses_an_explicit_config_file_that_does_not_exist(tmp_path: Path) -> None:
    result = run_cli("config", "show", "--config", str(tmp_path / "nope.yaml"), "--profile", "local", cwd=tmp_path)
    assert result.returncode == 2
    assert "does not exist" in result.stdout + result.stderr
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config_file=tmp_path / "nope.yaml", profiles=["local"], environ={})
    with pytest.raises(ConfigError, match="does not exist"):
        create_container(tmp_path / "nope.yaml", ["local"], environ={}).settings()


def test_a_profile_file_beside_the_config_wins_over_the_built_in_one(tmp_path: Path) -> None:
    (tmp_path / "application-local.yaml").write_text(
        "spring: {ai: {chat-models: {list: [{id: mine, provider: local}]}}}\n", encoding="utf-8"
    )
    assert [j.id for j in load_settings(tmp_path, ["local"], environ={}).judges()] == ["mine"]
    # for a base file ci.yaml, ci-local.yaml is tried first, then application-local.yaml, then the built-in
    conf = tmp_path / "sub" / "ci.yaml"
    conf.parent.mkdir()
    conf.write_text("ragqa: {language: ru}\n", encoding="utf-8")
    settings = load_settings(config_file=conf, profiles=["local"], environ={})
    assert settings.ragqa.language == "ru" and [j.id for j in settings.judges()] == ["local-strict", "local-lenient"]


def test_unknown_profile_names_the_places_looked_and_the_built_in_profiles(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, ["prod"], environ={})
    message = str(info.value)
    assert "application-prod.yaml, application-prod.yml" in message and str(tmp_path) in message
    assert "built-in profiles: local" in message and info.value.key == "profiles"


def test_validation_errors_name_the_built_in_profile_as_such(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text("spring: {ai: {retry: {max-attempts: 0}}}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, ["local"], environ={})
    assert "(from application.yaml, application-local.yaml (built-in))" in str(info.value)
    assert "spring.ai.retry.max-attempts" in str(info.value)


def test_the_repository_file_is_the_built_in_profile() -> None:
    # one source of truth: the repository's application-local.yaml resolves to the packaged file
    assert (ROOT / "application-local.yaml").resolve() == BUILTIN.resolve()
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "settings/profiles/*.yaml" in package_data["package-data"]["ragqa"]


def test_readme_command_works_from_the_clone() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "ragqa evaluate examples/datasets/it_helpdesk.jsonl --profile local" in readme
    result = run_cli("evaluate", "examples/datasets/it_helpdesk.jsonl", "--profile", "local", cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_profile_file_errors_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "application-x.yaml").write_text(textwrap.dedent("ragqa: {languag: ru}\n"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown key 'ragqa.languag' in application-x\.yaml"):
        load_settings(tmp_path, ["x"], environ={})
