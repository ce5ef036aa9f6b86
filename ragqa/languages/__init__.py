"""Prompt languages as packs: one data file per language holds everything ragqa says in it.

English is the source language: its texts live next to the code that uses them (each prompt's
instruction and examples in its module, the report labels in ``render/templates/labels.json``,
the band texts in :mod:`ragqa.interpretation`), and every other language falls back to it. Any
other language is one :class:`LanguagePack`, selected by the ``language`` setting
(``ragqa.language`` in ``application.yaml``, ``--language``):

- ``system`` and ``headers``: the judge's rules and the words of the prompt frame
  (:mod:`ragqa.prompts.base`);
- ``instructions`` and ``examples``: per prompt name, the instruction and the few-shot examples
  (each example an ``{"input": {...}, "output": {...}}`` object of that prompt's models);
- ``labels``: the report's labels (console, HTML), by the keys of the English ones;
- ``bands``: the interpretation texts by their English text (:mod:`ragqa.interpretation`);
- ``local_judge``: the offline local judge's word lists (stop words, stemmer, negations, number
  words...; :mod:`ragqa.judges.local.lexicon`), so that it reads texts in this language.

What a pack leaves out falls back to English. ragqa's own packs are the ``<code>.json`` files of
this package; an installed package adds one with an entry point in the group ``ragqa.languages``
(``de = "acme_german:PACK"``, a mapping of the fields above), found the first time a code is not
a built-in one. Prompt texts are part of cache keys, so a pack changes no English text.

Which pack a code names, when several could (the rule, in order):

1. a pack given to :func:`register_language` in code (a later call replaces an earlier one: that
   is how a program overrides a pack on purpose);
2. ragqa's built-in pack of that code;
3. the installed pack of that code.

An installed pack never replaces a built-in one: an entry point with a built-in code is refused
with a logged warning, whatever was loaded first, and the built-in pack is used; to change a
built-in pack, register one in code. An installed pack of a code registered in code is not loaded.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ragqa._plugins import load_entry_points
from ragqa.errors import ConfigError
from ragqa.languages.lexicon import Lexicon

__all__ = [
    "ENTRY_POINT_GROUP",
    "SOURCE_LANGUAGE",
    "LanguagePack",
    "builtin_languages",
    "check_language",
    "known_languages",
    "language_pack",
    "register_language",
]

ENTRY_POINT_GROUP = "ragqa.languages"
"""The entry-point group installed packages declare their language packs in."""

SOURCE_LANGUAGE = "en"
"""The language ragqa's texts are written in, the fallback of every pack."""


@dataclass(frozen=True)
class LanguagePack:
    """Everything ragqa says in one language other than English (see the module docstring).

    Attributes:
        code: the language's code as the ``language`` setting gives it (``ru``, ``de``...).
        name: the language's name, for listings.
        system: the judge's rules, the system message of every prompt (``{open}`` and ``{close}``
            stand for the data-block markers); empty: the English rules.
        headers: the words of the prompt frame (``schema``, ``quotes``, ``examples``,
            ``example``, ``now``, ``input``, ``output``); a missing one is English.
        instructions: prompt name -> instruction.
        examples: prompt name -> few-shot examples, each ``{"input": {...}, "output": {...}}``.
        labels: report label key -> text.
        bands: English band text -> its text in this language.
        local_judge: the local judge's word lists, by the keys of
            :data:`ragqa.judges.local.lexicon.PACK_KEYS`; empty: the local judge reads the
            language with the English lists.
    """

    code: str
    name: str = ""
    system: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    instructions: Mapping[str, str] = field(default_factory=dict)
    examples: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    bands: Mapping[str, str] = field(default_factory=dict)
    local_judge: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, where: str) -> LanguagePack:
        """Build a pack from its JSON-like form.

        Raises:
            ConfigError: naming ``where`` when a field is unknown or the code is missing, or naming
                the pack when its ``local_judge`` lists are not valid
                (:meth:`ragqa.languages.lexicon.Lexicon.from_mapping`).
        """
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown or not isinstance(data.get("code"), str) or not data.get("code"):
            problem = f"unknown field(s) {', '.join(unknown)}" if unknown else "no code"
            raise ConfigError(f"language pack {where}: {problem}; a pack has {', '.join(sorted(known))}")
        if data.get("local_judge"):
            Lexicon.from_mapping(data["code"], data["local_judge"])  # a bad list stops at the settings
        return cls(**data)


_PACKS: dict[str, LanguagePack] = {}
_broken: dict[str, str] = {}
_discovered = False


def register_language(pack: LanguagePack) -> LanguagePack:
    """Make ``pack`` the one of its code (a later one replaces it); returns it.

    Raises:
        ConfigError: for the code of the source language (English is not a pack).
    """
    if pack.code == SOURCE_LANGUAGE:
        raise ConfigError(f"{SOURCE_LANGUAGE!r} is ragqa's source language, not a pack; give the pack another code")
    _PACKS[pack.code] = pack
    return pack


@functools.cache
def builtin_languages() -> tuple[str, ...]:
    """The codes of ragqa's own packs (the ``<code>.json`` files of this package), sorted."""
    return tuple(
        sorted(e.name.removesuffix(".json") for e in resources.files(__name__).iterdir() if e.name.endswith(".json"))
    )


def _load_builtin(code: str) -> LanguagePack | None:
    entry = resources.files(__name__).joinpath(f"{code}.json")
    if not entry.is_file():
        return None
    data = json.loads(entry.read_text(encoding="utf-8"))
    return register_language(LanguagePack.from_mapping(data, where=f"ragqa/languages/{code}.json"))


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True

    builtin = set(builtin_languages())

    def accept(name: str, loaded: Any) -> None:
        if name in builtin:
            raise ConfigError(
                f"{name!r} is a built-in language pack and an installed pack does not replace it; "
                "give the pack another code, or register_language() it in code to replace the built-in one"
            )
        pack = loaded if isinstance(loaded, LanguagePack) else LanguagePack.from_mapping(loaded, where=name)
        if pack.code != name:
            raise ConfigError(f"the pack's code is {pack.code!r}, not {name!r}")
        register_language(pack)

    registered = {code for code in _PACKS if code not in builtin}  # a built-in code is refused, never skipped
    _broken.update(load_entry_points(ENTRY_POINT_GROUP, accept, what="language pack", skip=registered))


def language_pack(code: str) -> LanguagePack | None:
    """The pack of ``code``: registered, else built in, else installed (the rule of the module docstring).

    Returns ``None`` for English or an unknown code.
    """
    if code == SOURCE_LANGUAGE:
        return None
    pack = _PACKS.get(code) or _load_builtin(code)
    if pack is None:
        _discover()
        pack = _PACKS.get(code)
    return pack


def known_languages() -> list[str]:
    """Every language code ragqa speaks: English, the built-in packs, registered and installed ones."""
    _discover()
    return sorted({SOURCE_LANGUAGE, *builtin_languages(), *_PACKS})


def check_language(code: str) -> str:
    """``code`` when ragqa speaks it (see :func:`known_languages`).

    Raises:
        ConfigError: (key ``ragqa.language``) naming the known codes, or the error of an
            installed pack of that code that could not be loaded.
    """
    if code == SOURCE_LANGUAGE or language_pack(code) is not None:
        return code
    if code in _broken:
        raise ConfigError(_broken[code], key="ragqa.language")
    raise ConfigError(
        f"language {code!r} has no language pack; use one of: {', '.join(known_languages())}", key="ragqa.language"
    )
