"""The Spring-style settings source: ``application.yaml`` + profiles + ``${VAR}`` + ``RAGQA__`` overrides.

Order (later wins): the base file (the built-in one, :func:`builtin_base`, when an implicit
``application.yaml`` is absent), then ``<stem>-<profile>.yaml`` for each active profile (looked
up beside the base file, then among the profiles built into ragqa; dicts merge, lists replace),
then ``RAGQA__A__B=value`` environment variables, one key each. Keys are normalised to field names
here (:mod:`ragqa.settings._binding`), so the models use plain snake_case fields with
``extra="forbid"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, cast, get_args

import yaml
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from ragqa.errors import ConfigError
from ragqa.settings._binding import (
    Expander,
    container_in,
    field_for,
    is_text,
    join,
    kebab,
    model_in,
    normalise,
    unknown_key,
)
from ragqa.settings._notes import duration_notes

__all__ = [
    "ENV_PREFIX",
    "SpringYamlSource",
    "builtin_base",
    "builtin_profiles",
    "deep_merge",
    "describe",
    "profile_file",
]

ENV_PREFIX = "RAGQA__"
"""Prefix of environment variables that override single keys (``RAGQA__RAGQA__LANGUAGE=ru``)."""

_EXTENSIONS = (".yaml", ".yml")


def _builtin_dir() -> Traversable:
    return resources.files("ragqa.settings").joinpath("profiles")


def builtin_base() -> Traversable:
    """The settings ragqa uses where no ``application.yaml`` exists: the seed's OpenRouter panel, commented.

    ``ragqa init`` writes this file into the current folder (package data
    ``ragqa/settings/profiles/application.yaml``).
    """
    return _builtin_dir().joinpath("application.yaml")


def describe(path: Traversable) -> str:
    """How messages name a settings file: its name, with `` (built-in)`` for a profile shipped in ragqa."""
    builtin = not isinstance(path, Path) or str(path).startswith(str(_builtin_dir()))
    return f"{path.name} (built-in)" if builtin else path.name


def builtin_profiles() -> list[str]:
    """Names of the profiles shipped inside ragqa (``application-<name>.yaml`` package data), sorted."""
    names = {
        entry.name[len("application-") : -len(ext)]
        for entry in _builtin_dir().iterdir()
        for ext in _EXTENSIONS
        if entry.name.startswith("application-") and entry.name.endswith(ext)
    }
    return sorted(names)


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Spring profile overlay: dicts merge recursively, everything else (lists too) replaces."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that rejects duplicate keys in one mapping (PyYAML keeps the last silently)."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in mapping:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        mapping[key] = loader.construct_object(value_node, deep=deep)
    return mapping


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _read_yaml(path: Traversable) -> dict[str, Any]:
    """Parse one settings file; errors name the file and position, never the line's text (it may hold a key)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc.strerror}") from None
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"invalid YAML in {path}{where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError:
        raise ConfigError(f"invalid YAML in {path}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must contain a mapping at the top level, not {type(data).__name__}")
    return data


def profile_file(base: Path, profile: str) -> Traversable:
    """The file of ``profile``: beside the base file first, else the built-in one.

    Beside ``base`` it tries ``<stem>-<profile>.yaml`` (and ``.yml``), then, for a base not named
    ``application``, ``application-<profile>.yaml``; then ragqa's built-in
    ``application-<profile>.yaml`` (package data, e.g. ``local``).

    Raises:
        ConfigError: no such file beside the base file and no such built-in profile.
    """
    stems = [base.stem] if base.stem == "application" else [base.stem, "application"]
    candidates = [base.parent / f"{stem}-{profile}{ext}" for stem in stems for ext in _EXTENSIONS]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    for ext in _EXTENSIONS:
        builtin = _builtin_dir().joinpath(f"application-{profile}{ext}")
        if builtin.is_file():
            return builtin
    raise ConfigError(
        f"profile {profile!r} is active but no profile file exists: looked for "
        f"{', '.join(c.name for c in candidates)} in {base.parent}; "
        f"built-in profiles: {', '.join(builtin_profiles()) or 'none'}",
        key="profiles",
    )


def _parse_scalar(text: str) -> Any:
    """An environment value as a YAML scalar (``3`` -> 3, ``true`` -> True, ``[a, b]`` -> list)."""
    try:
        return yaml.safe_load(text) if text.strip() else text
    except yaml.YAMLError:
        return text


def _apply_env_override(root: type[BaseSettings], data: dict[str, Any], name: str, raw: str) -> dict[str, Any]:
    """Set the single key ``RAGQA__A__B__C`` names (case-insensitive; numeric segments index lists)."""
    segments = [s for s in name[len(ENV_PREFIX) :].split("__")]
    if not segments or any(not s for s in segments):
        raise ConfigError(f"environment variable {name}: empty path segment", key=name)
    annotation: Any = root
    path = ""
    data = dict(data)
    node: Any = data
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        model = model_in(annotation)
        list_type = container_in(annotation, list)
        dict_type = container_in(annotation, dict)
        key: Any
        if model is not None:
            field = field_for(model, segment)
            if field is None:
                raise unknown_key(model, segment.lower().replace("_", "-"), path, f"environment variable {name}")
            key, annotation = field, model.model_fields[field].annotation
            path = join(path, kebab(field))
        elif list_type is not None:
            if not segment.isdigit():
                raise ConfigError(f"environment variable {name}: {path} is a list; use an index, not {segment!r}")
            key, annotation = int(segment), get_args(list_type)[0]
            path = f"{path}[{key}]"
        elif dict_type is not None:
            key, annotation = segment.lower(), get_args(dict_type)[1]
            path = join(path, key)
        else:
            raise ConfigError(f"environment variable {name}: {path} has no sub-keys", key=path)
        if isinstance(node, list):
            if not isinstance(key, int) or key >= len(node):
                raise ConfigError(
                    f"environment variable {name}: {path} does not exist (the list has {len(node)} entries)",
                    key=path,
                )
        elif not isinstance(node, dict):
            raise ConfigError(f"environment variable {name}: cannot set {path} inside a non-mapping value", key=path)
        if last:
            value = raw if is_text(annotation) else _parse_scalar(raw)
            node[key] = normalise(value, annotation, path, f"environment variable {name}", None, str(key))
            break
        child = node[key] if isinstance(node, list) else node.get(key)
        if isinstance(child, dict):
            child = dict(child)
        elif isinstance(child, list):
            child = list(child)
        elif child is None:
            if isinstance(key, int):
                raise ConfigError(f"environment variable {name}: {path} does not exist", key=path)
            child = {}
        node[key] = child
        node = child
    return data


class SpringYamlSource(PydanticBaseSettingsSource):
    """pydantic-settings source: ``application.yaml`` + profiles + placeholders + ``RAGQA__`` overrides.

    Keys are normalised to field names inside the source (Spring relaxed binding), so the models
    use plain snake_case fields with ``extra="forbid"``.

    Args:
        settings_cls: the settings class (:class:`~ragqa.settings.Settings`).
        base: the base file; a missing implicit ``application.yaml`` means the built-in one
            (:func:`builtin_base`, what ``ragqa init`` writes).
        profiles: active profiles, overlaid in order; each file is looked up beside ``base``,
            then among the built-in profiles.
        environ: variables for placeholders and overrides.
        base_required: whether a missing ``base`` is an error (an explicit ``config_file``).
    """

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        base: Path,
        profiles: Sequence[str],
        environ: Mapping[str, str],
        *,
        base_required: bool = False,
    ) -> None:
        super().__init__(settings_cls)
        self.base = base
        self.profiles = list(profiles)
        self.environ = environ
        self.base_required = base_required
        self.files: list[Traversable] = []
        """The files read, in order (filled by :meth:`__call__`); built-in profiles are package data."""
        self.notes: list[str] = []
        """Notes on the merged tree (:func:`ragqa.settings._notes.duration_notes`), filled by :meth:`__call__`."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Unused: this source returns the whole tree from :meth:`__call__`."""
        return None, field_name, False

    def _load(self, path: Traversable) -> dict[str, Any]:
        self.files.append(path)
        where = describe(path)
        data = normalise(_read_yaml(path), self.settings_cls, "", where, Expander(self.environ, where))
        return cast(dict[str, Any], data)

    def __call__(self) -> dict[str, Any]:
        """The merged, normalised tree.

        Raises:
            ConfigError: a file is missing/invalid, a key is unknown, a required variable is unset.
        """
        self.files = []
        data: dict[str, Any] = {}
        if self.base.is_file():
            data = self._load(self.base)
        elif self.base_required:
            raise ConfigError(f"settings file {self.base} does not exist", key="config")
        else:  # no application.yaml here: the built-in one (what `ragqa init` writes)
            data = self._load(builtin_base())
        for profile in self.profiles:
            data = deep_merge(data, self._load(profile_file(self.base, profile)))
        for name in sorted(self.environ):
            if name.upper().startswith(ENV_PREFIX):
                data = _apply_env_override(self.settings_cls, data, name.upper(), self.environ[name])
        self.notes = duration_notes(data, self.settings_cls)
        return data
