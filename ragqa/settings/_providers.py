"""The provider registry: who serves a judge or embedder named by ``provider:`` in ``application.yaml``.

A provider turns one resolved chat model into a :class:`~ragqa.judges.base.Judge` (and, when it
has one, one resolved embedding model into an embedder); the protocol it implements is
:class:`ragqa.judges.providers.JudgeProvider`. Settings validate every ``provider:`` against this
registry when they are loaded, so an unknown name stops the run before any judge call; the factory
builds every judge through it. Three ways in, one registry:

- ragqa's own providers (``openai``: any OpenAI-compatible server; ``local``: the offline judge)
  register themselves with :func:`register_provider` in their modules; their names are listed
  here with the module that registers them, so validating a name imports nothing;
- :func:`register_provider` (a class decorator too) in code imported before the settings load;
- an installed package's entry point in the group ``ragqa.providers`` (``name = "module:Class"``
  under ``[project.entry-points."ragqa.providers"]``; the class is built with no argument), loaded
  the first time a name is not found among the others, so runs of built-in providers never pay
  for the look-up. A package whose provider cannot be loaded does not stop runs that do not use it.
"""

from __future__ import annotations

import importlib
from typing import Any, TypeVar

from ragqa._plugins import load_entry_points
from ragqa.errors import ConfigError

__all__ = [
    "BUILTIN_PROVIDERS",
    "ENTRY_POINT_GROUP",
    "check_provider",
    "known_providers",
    "provider",
    "register_provider",
]

ENTRY_POINT_GROUP = "ragqa.providers"
"""The entry-point group installed packages declare their judge providers in."""

BUILTIN_PROVIDERS: dict[str, str] = {"openai": "ragqa.judges.providers", "local": "ragqa.judges.providers"}
"""ragqa's own providers: name -> the module whose :func:`register_provider` registers it (imported on first use)."""

P = TypeVar("P")

_PROVIDERS: dict[str, Any] = {}
"""Registered provider instances by name."""
_broken: dict[str, str] = {}
"""Installed providers that could not be loaded: entry-point name -> the error."""
_installed_loaded = False


def register_provider(provider: P) -> P:
    """Make ``provider`` usable as ``provider: <its name>``; returns it, so this works as a class decorator.

    On a class the class is built with no argument and the instance registered. A later provider
    with the same name replaces the earlier one, except that a built-in name is only ever taken
    by its own module.

    Raises:
        TypeError: when the provider has no ``name`` or no callable ``judge`` (see
            :class:`ragqa.judges.providers.JudgeProvider`).
        ConfigError: (key ``spring.ai.chat-models.list``) when another module claims a built-in name.
    """
    instance: Any = provider() if isinstance(provider, type) else provider
    name = getattr(instance, "name", None)
    if not isinstance(name, str) or not name or not callable(getattr(instance, "judge", None)):
        raise TypeError(f"{provider!r} is not a judge provider: give it a name and judge(model, context)")
    home = BUILTIN_PROVIDERS.get(name)
    if home is not None and type(instance).__module__ != home:
        raise ConfigError(
            f"provider name {name!r} of {type(instance).__module__} is ragqa's own; give the provider another name",
            key="spring.ai.chat-models.list",
        )
    _PROVIDERS[name] = instance
    return provider


def _load_installed() -> None:
    global _installed_loaded
    if _installed_loaded:
        return
    _installed_loaded = True
    skip = set(_PROVIDERS) | set(BUILTIN_PROVIDERS)
    _broken.update(
        load_entry_points(
            ENTRY_POINT_GROUP, lambda _n, loaded: register_provider(loaded), what="judge provider", skip=skip
        )
    )


def known_providers() -> list[str]:
    """Every provider name usable now, sorted: built-ins, registered ones and installed packages' (looked up)."""
    _load_installed()
    return sorted(set(BUILTIN_PROVIDERS) | set(_PROVIDERS))


def check_provider(name: str, user: str = "a model") -> str:
    """``name`` when a provider of that name exists; installed packages are looked up for an unknown one.

    Args:
        name: the ``provider:`` of a chat or embedding model entry.
        user: the model for the message (``chat model 'gpt'``).

    Raises:
        ConfigError: naming ``user``, the unknown name, every known provider and the fix (or the
            error of an installed provider that could not be loaded).
    """
    if name in BUILTIN_PROVIDERS or name in _PROVIDERS:
        return name
    _load_installed()
    if name in _PROVIDERS:
        return name
    if name in _broken:
        raise ConfigError(f"{user}: {_broken[name]}", key="provider")
    raise ConfigError(
        f"{user} has an unknown provider {name!r}; known providers: {', '.join(known_providers())}. "
        "Fix the entry's provider:, or install the package that declares it "
        f"(entry-point group {ENTRY_POINT_GROUP!r}) or register it with ragqa.settings.register_provider",
        key="provider",
    )


def provider(name: str, user: str = "a model") -> Any:
    """The registered provider ``name`` (a :class:`ragqa.judges.providers.JudgeProvider`).

    A built-in provider's module is imported here, the first time one of its models is built.

    Raises:
        ConfigError: as :func:`check_provider`.
    """
    check_provider(name, user)
    if name not in _PROVIDERS:
        importlib.import_module(BUILTIN_PROVIDERS[name])
    return _PROVIDERS[name]
