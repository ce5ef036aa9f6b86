"""Rendering for ``ragqa config show``: the settings as YAML, kebab-case keys, every secret masked."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, SecretStr

from ragqa.errors import ConfigError
from ragqa.settings._binding import kebab
from ragqa.settings._masking import MASK, looks_secret, mask_url
from ragqa.settings._schema import (
    DEFAULT_EMBEDDING_BATCH,
    DEFAULT_STRUCTURED_OUTPUT,
    DEFAULT_TIMEOUT,
    ResolvedChatModel,
    ResolvedEmbeddingModel,
    UnresolvedPlaceholder,
)

if TYPE_CHECKING:
    from ragqa.settings._settings import Settings

__all__ = ["render_duration", "render_model", "render_resolved", "render_settings"]

_LOCAL_ONLY = frozenset({"local", "method"})
"""Fields that only mean something for ``provider: local`` (hidden for other providers)."""


def _render_value(value: Any, key: str = "") -> Any:
    if isinstance(value, SecretStr):
        return MASK
    if isinstance(value, UnresolvedPlaceholder):
        return mask_url(value.text)
    if isinstance(value, BaseModel):
        return render_model(value)
    if isinstance(value, timedelta):
        return render_duration(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str):
        return mask_url(value)
    if isinstance(value, dict):
        if key == "headers":
            return {k: MASK if looks_secret(k) else v for k, v in value.items()}
        return {k: _render_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_render_value(v) for v in value]
    return value


def render_model(model: BaseModel) -> dict[str, Any]:
    """One settings model as a plain mapping: kebab-case keys, secrets and URL userinfo masked.

    Fields that only apply to ``provider: local`` (``local``, ``method``) are left out for other
    providers.
    """
    hide = _LOCAL_ONLY if getattr(model, "provider", "local") != "local" else frozenset()
    return {
        kebab(name): _render_value(getattr(model, name), name) for name in type(model).model_fields if name not in hide
    }


def render_duration(value: timedelta) -> str:
    """A duration in the largest whole Spring unit: ``2s``, ``1500ms``, ``3m``, ``1d``."""
    ms = round(value.total_seconds() * 1000)
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


_REMOTE_ONLY = ("base-url", "api-key", "retry", "limits", "price")
"""Resolved-model keys that mean nothing for ``provider: local`` (no HTTP, no tokens)."""


def render_resolved(model: ResolvedChatModel | ResolvedEmbeddingModel) -> dict[str, Any]:
    """One resolved judge or embedder as ``config show`` prints it: the values in effect.

    Unset options that have a default show the default (``timeout: 60s``,
    ``structured-output: json_schema``, ``batch-size: 64``); a local model shows only what
    applies to it (no URL, key, retry, limits or price, and of its options only ``model``).
    """
    data = render_model(model)
    options: dict[str, Any] = data.get("options", {})
    if model.provider == "local":
        for key in _REMOTE_ONLY:
            data.pop(key, None)
        data["options"] = {"model": options.get("model")}
        return data
    if options.get("timeout") is None:
        options["timeout"] = render_duration(DEFAULT_TIMEOUT)
    if isinstance(model, ResolvedChatModel):
        if options.get("structured-output") is None:
            options["structured-output"] = DEFAULT_STRUCTURED_OUTPUT
    elif options.get("batch-size") is None:
        options["batch-size"] = DEFAULT_EMBEDDING_BATCH
    return data


def render_settings(settings: Settings, *, panel: bool = True) -> str:
    """The settings as YAML with kebab-case keys and every secret masked (``ragqa config show``).

    Args:
        settings: loaded settings.
        panel: append a second YAML document with the resolved judges and embedders (what each
            model inherits, with the defaults in effect: see :func:`render_resolved`). When the
            panel cannot be resolved, the document is replaced by a
            comment with the error (which names no secret).

    Returns:
        YAML text. API keys and secret-looking headers read ``**********``; so does the userinfo
        of a URL (``https://**********@host``); unset placeholders show as written
        (``${OPENROUTER_API_KEY}``); durations as ``2s`` / ``1500ms``. Each of
        :attr:`Settings.notes <ragqa.settings.Settings.notes>` comes first, as a ``# note:`` comment.
    """

    def dump(data: Any) -> str:
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)

    text = "".join(f"# note: {note}\n" for note in settings.notes) + dump(render_model(settings))
    if not panel:
        return text
    try:
        resolved = {
            "judges": [render_resolved(m) for m in settings.judges()],
            "embedders": [render_resolved(m) for m in settings.embedders()],
        }
    except ConfigError as exc:
        return text + "---\n# resolved panel: not resolvable\n" + "".join(f"# {ln}\n" for ln in str(exc).splitlines())
    return text + "---\n# resolved panel\n" + dump(resolved)
