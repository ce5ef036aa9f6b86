"""Which pack a language code names when a built-in, an installed and a registered pack could."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from types import ModuleType

import pytest

from ragqa import languages
from ragqa.errors import ConfigError
from ragqa.languages import LanguagePack, check_language, known_languages, language_pack, register_language

IMPOSTOR = {"code": "ru", "name": "not ragqa's Russian", "system": "installed rules"}
GERMAN = {"code": "de", "name": "Deutsch", "system": "installierte Regeln"}


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed package declaring a ``ru`` pack (a built-in code) and a ``de`` pack; nothing loaded yet."""
    module = ModuleType("acme_packs")
    module.RU = IMPOSTOR  # type: ignore[attr-defined]
    module.DE = GERMAN  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "acme_packs", module)
    points = [
        EntryPoint(name="ru", value="acme_packs:RU", group="ragqa.languages"),
        EntryPoint(name="de", value="acme_packs:DE", group="ragqa.languages"),
    ]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda *, group: [p for p in points if p.group == group])
    monkeypatch.setattr(languages, "_discovered", False)
    monkeypatch.setattr(languages, "_PACKS", {})
    monkeypatch.setattr(languages, "_broken", {})
    yield


def test_an_installed_pack_does_not_replace_a_built_in_one_loaded_first(installed: None) -> None:
    assert language_pack("ru") is not None and language_pack("ru").name == "Русский"  # type: ignore[union-attr]
    assert check_language("de") == "de"  # discovery runs now, after the built-in pack was loaded
    pack = language_pack("ru")
    assert pack is not None and pack.name == "Русский"


def test_an_installed_pack_does_not_replace_a_built_in_one_loaded_after_discovery(
    installed: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        assert "ru" in known_languages()  # discovery runs first: the installed "ru" is refused
    assert "is a built-in language pack and an installed pack does not replace it" in caplog.text
    pack = language_pack("ru")
    assert pack is not None and pack.name == "Русский"
    installed_de = language_pack("de")
    assert installed_de is not None and installed_de.system == "installierte Regeln"


def test_a_pack_registered_in_code_replaces_built_in_and_installed_ones(installed: None) -> None:
    register_language(LanguagePack(code="ru", name="mine"))
    register_language(LanguagePack(code="de", name="meins"))
    assert check_language("de") == "de"
    assert language_pack("ru").name == "mine"  # type: ignore[union-attr]
    assert language_pack("de").name == "meins"  # type: ignore[union-attr]


def test_english_is_never_a_pack() -> None:
    with pytest.raises(ConfigError, match="source language"):
        register_language(LanguagePack(code="en"))
    assert language_pack("en") is None
