"""A bare-number duration under 1000 keeps Spring's meaning (milliseconds) but gets a note (m18)."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.settings import Settings, load_settings
from ragqa.settings import _notes as notes_module

EVERY_DURATION = """
spring:
  ai:
    retry:
      backoff: {initial-interval: 500, max-interval: "900"}
    chat-models:
      default-options: {timeout: 60}
      list:
        - {id: a, options: {timeout: 60}}
        - {id: b, options: {timeout: 60s}}
        - {id: c, options: {timeout: 60ms}}
        - {id: d, options: {timeout: 1000}}
        - {id: e, options: {timeout: PT2S}}
    embedding-models:
      list:
        - {id: m, options: {timeout: 7.5}}
ragqa:
  default-limits: {timeout: 30}
  providers: {openrouter.ai: {timeout: 20}}
  circuit-breaker: {cool-down: 300}
  run: {deadline: 600}
"""


@pytest.fixture(autouse=True)
def fresh_log(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notes_module, "_logged", set())


def _note(key: str, number: str) -> str:
    return f"{key}: {number} means {number} ms; write {number}s for seconds (or {number}ms to keep milliseconds)"


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "application.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def test_every_duration_setting_written_as_a_bare_number_under_1000_gets_a_note(tmp_path: Path) -> None:
    settings = load_settings(_write(tmp_path, EVERY_DURATION), environ={})
    assert settings.notes == tuple(
        _note(key, number)
        for key, number in [
            ("spring.ai.retry.backoff.initial-interval", "500"),
            ("spring.ai.retry.backoff.max-interval", "900"),
            ("spring.ai.chat-models.default-options.timeout", "60"),
            ("spring.ai.chat-models.list[0].options.timeout", "60"),
            ("spring.ai.embedding-models.list[0].options.timeout", "7.5"),
            ("ragqa.default-limits.timeout", "30"),
            ("ragqa.providers.openrouter.ai.timeout", "20"),
            ("ragqa.circuit-breaker.cool-down", "300"),
            ("ragqa.run.deadline", "600"),
        ]
    )
    # the Spring semantics are kept: the note changes no value
    a, b, c, d, e = settings.spring.ai.chat_models.items
    assert a.options.timeout == c.options.timeout == timedelta(milliseconds=60)
    assert b.options.timeout == timedelta(seconds=60) and d.options.timeout == timedelta(seconds=1)
    assert e.options.timeout == timedelta(seconds=2)
    assert Settings().notes == ()


def test_the_note_is_about_the_merged_value_profiles_and_environment_included(tmp_path: Path) -> None:
    _write(tmp_path, "spring: {ai: {chat-models: {default-options: {timeout: 60}}}}\n")
    (tmp_path / "application-fix.yaml").write_text(
        "spring: {ai: {chat-models: {default-options: {timeout: 60s}}}}\n", encoding="utf-8"
    )
    assert load_settings(tmp_path, ["fix"], environ={}).notes == ()
    env = {"RAGQA__RAGQA__RUN__DEADLINE": "90"}
    assert load_settings(tmp_path, ["fix"], environ=env).notes == (
        "ragqa.run.deadline: 90 means 90 ms; write 90s for seconds (or 90ms to keep milliseconds)",
    )


def test_each_note_is_logged_once_as_a_warning_of_ragqa_settings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _write(tmp_path, "spring: {ai: {chat-models: {default-options: {timeout: 60}}}}\n")
    with caplog.at_level(logging.WARNING, logger="ragqa.settings"):
        load_settings(tmp_path, environ={})
        load_settings(tmp_path, environ={})
    records = [r for r in caplog.records if r.name == "ragqa.settings"]
    assert [r.getMessage() for r in records] == [
        "spring.ai.chat-models.default-options.timeout: 60 means 60 ms; write 60s for seconds "
        "(or 60ms to keep milliseconds)"
    ]
    assert records[0].levelno == logging.WARNING


def test_config_show_prints_the_notes_first(tmp_path: Path) -> None:
    config = _write(tmp_path, "spring: {ai: {chat-models: {list: [{id: a, options: {timeout: 60}}]}}}\n")
    result = CliRunner().invoke(app, ["config", "show", "-c", str(config / "application.yaml")])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first == (
        "# note: spring.ai.chat-models.list[0].options.timeout: 60 means 60 ms; write 60s for seconds "
        "(or 60ms to keep milliseconds)"
    )
    assert "timeout: 60ms" in result.stdout
