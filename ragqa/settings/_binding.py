"""Spring relaxed binding, guided by the schema: key names, unknown keys, ``${VAR}`` placeholders.

``max-attempts``, ``max_attempts`` and ``maxAttempts`` all name the field ``max_attempts``; the
YAML key ``list`` is the field ``items``. Keys of maps (``ragqa.providers``, ``ragqa.prices``,
``ragqa.thresholds``, ``headers``) are kept verbatim. An unknown key is a ``ConfigError`` naming
the dotted key, the file and the closest valid key.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr

from ragqa.errors import ConfigError
from ragqa.settings._schema import UnresolvedPlaceholder

__all__ = [
    "Expander",
    "container_in",
    "field_for",
    "is_text",
    "join",
    "kebab",
    "model_in",
    "normalise",
    "snake",
    "unknown_key",
]

_PLACEHOLDER = re.compile(r"\$\{([^}:]+)(?::([^}]*))?\}")
_LAZY_FIELDS = frozenset({"api_key", "base_url"})
"""Fields whose unset placeholder fails only when a panel model inherits it."""
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(key: str) -> str:
    """Spring relaxed binding: ``max-attempts`` / ``maxAttempts`` / ``MAX_ATTEMPTS`` -> ``max_attempts``."""
    return _CAMEL.sub("_", key).replace("-", "_").lower()


def kebab(name: str) -> str:
    """A field name as the documented key: ``max_attempts`` -> ``max-attempts``, ``items`` -> ``list``."""
    return "list" if name == "items" else name.replace("_", "-")


def join(path: str, key: str) -> str:
    """``path.key`` (just ``key`` at the top level)."""
    return f"{path}.{key}" if path else key


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of ``annotation`` with ``Annotated`` and ``None`` stripped."""
    if get_origin(annotation) is Annotated:
        return _unwrap(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        out: list[Any] = []
        for arg in get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    if annotation is type(None):
        return []
    return [annotation]


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The settings model among the alternatives of ``annotation`` (placeholders excluded), if any."""
    for alt in _unwrap(annotation):
        if isinstance(alt, type) and issubclass(alt, BaseModel) and alt is not UnresolvedPlaceholder:
            return alt
    return None


def container_in(annotation: Any, origin: type) -> Any | None:
    """The ``origin[...]`` alternative (``list[...]``, ``dict[...]``) of ``annotation``, if any."""
    for alt in _unwrap(annotation):
        if get_origin(alt) is origin:
            return alt
    return None


def is_text(annotation: Any) -> bool:
    """Whether values of ``annotation`` are text (taken verbatim, numbers turned into strings)."""
    alts = _unwrap(annotation)
    return bool(alts) and any(a in (str, SecretStr) for a in alts) and not any(a in (int, float, bool) for a in alts)


def field_for(model: type[BaseModel], key: str) -> str | None:
    """The field of ``model`` that ``key`` binds to (relaxed), or ``None`` for an unknown key."""
    name = snake(key)
    if name == "list" and "items" in model.model_fields:
        return "items"
    return name if name in model.model_fields else None


def unknown_key(model: type[BaseModel], key: str, path: str, where: str) -> ConfigError:
    """The error for ``key`` unknown at ``path`` of ``model``: the closest valid key and all valid keys."""
    valid = [kebab(n) for n in model.model_fields]
    close = difflib.get_close_matches(key.replace("_", "-").lower(), valid, n=1, cutoff=0.6)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    dotted = join(path, key)
    return ConfigError(
        f"unknown key {dotted!r} in {where}.{hint} Valid keys at {path or 'the top level'}: {', '.join(valid)}",
        key=dotted,
    )


class Expander:
    """Expands ``${VAR}`` / ``${VAR:default}`` against one environment.

    Args:
        environ: the variables.
        where: the file the values come from (for messages).
    """

    def __init__(self, environ: Mapping[str, str], where: str) -> None:
        self.environ = environ
        self.where = where

    def __call__(self, text: str, path: str, lazy: bool) -> str | UnresolvedPlaceholder:
        """Expand ``text`` found at dotted ``path``.

        Returns:
            The expanded text; with ``lazy`` and an unset variable without default, an
            :class:`UnresolvedPlaceholder` that fails when a panel model uses it.

        Raises:
            ConfigError: an unset variable without default, when not ``lazy``.
        """
        missing: list[str] = []

        def repl(match: re.Match[str]) -> str:
            name, default = match[1].strip(), match[2]
            value = self.environ.get(name)
            if value is not None:
                return value
            if default is not None:
                return default
            missing.append(name)
            return ""

        expanded = _PLACEHOLDER.sub(repl, text)
        if not missing:
            return expanded
        if lazy:
            return UnresolvedPlaceholder(variable=missing[0], key=path, text=text, source=self.where)
        raise ConfigError(
            f"environment variable {missing[0]} is not set; it is required by {path} in {self.where}. "
            f"Set it or give a default: ${{{missing[0]}:default}}.",
            key=path,
        )


def normalise(value: Any, annotation: Any, path: str, where: str, expand: Expander | None, field: str = "") -> Any:
    """Rename keys to field names, check unknown keys and expand placeholders, guided by the schema.

    Args:
        value: parsed YAML (or an env override value).
        annotation: the type this value will be validated as.
        path: dotted kebab key of ``value`` for messages.
        where: the file (or environment variable) the value comes from.
        expand: placeholder expander, or ``None`` to leave strings as they are.
        field: the field name holding ``value`` (decides lazy placeholders).

    Raises:
        ConfigError: unknown key (with a hint), or a required placeholder variable is unset.
    """
    model = model_in(annotation)
    if isinstance(value, dict) and model is not None:
        out: dict[str, Any] = {}
        for raw_key, item in value.items():
            key = str(raw_key)
            name = field_for(model, key)
            if name is None:
                raise unknown_key(model, key, path, where)
            if name in out:
                raise ConfigError(f"key {join(path, key)!r} is given twice in {where}", key=join(path, key))
            sub = model.model_fields[name].annotation
            out[name] = normalise(item, sub, join(path, kebab(name)), where, expand, name)
        return out
    dict_type = container_in(annotation, dict)
    if isinstance(value, dict) and dict_type is not None:
        _, value_type = get_args(dict_type)
        snake_keys = value_type is Any  # metric options are keyword names: relaxed binding
        return {
            (snake(str(k)) if snake_keys else str(k)): normalise(v, value_type, join(path, str(k)), where, expand)
            for k, v in value.items()
        }
    list_type = container_in(annotation, list)
    if isinstance(value, list) and list_type is not None:
        (item_type,) = get_args(list_type)
        return [normalise(v, item_type, f"{path}[{i}]", where, expand) for i, v in enumerate(value)]
    if isinstance(value, str) and expand is not None and "${" in value:
        value = expand(value, path, field in _LAZY_FIELDS)
    if isinstance(value, int | float) and not isinstance(value, bool) and is_text(annotation):
        return str(value)  # api-key: 12345 is text, not a number
    if isinstance(value, dict | list):
        return _expand_any(value, path, expand)
    return value


def _expand_any(value: Any, path: str, expand: Expander | None) -> Any:
    """Expand placeholders inside free-form values (``Any``), keeping keys."""
    if isinstance(value, dict):
        return {k: _expand_any(v, join(path, str(k)), expand) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_any(v, f"{path}[{i}]", expand) for i, v in enumerate(value)]
    if isinstance(value, str) and expand is not None and "${" in value:
        return expand(value, path, False)
    return value
