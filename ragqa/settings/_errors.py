"""Error translation: one pydantic ``ValidationError`` -> one ``ConfigError`` naming every dotted key."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from importlib.resources.abc import Traversable

from pydantic import ValidationError

from ragqa.errors import ConfigError
from ragqa.settings._binding import join, kebab
from ragqa.settings._masking import looks_secret, mask_url
from ragqa.settings._spring_source import describe

__all__ = ["config_error", "dotted"]


def dotted(loc: Iterable[int | str]) -> str:
    """A pydantic error location as the documented dotted key.

    ``('spring', 'ai', 'chat_models', 'items', 0)`` -> ``spring.ai.chat-models.list[0]``;
    pydantic's internal validator steps and union branch names are skipped.
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "function-before") or "[" in part:
            continue  # pydantic's internal validator steps and union branch names
        else:
            out = join(out, kebab(part))
    return out


def config_error(exc: ValidationError, files: Sequence[Traversable]) -> ConfigError:
    """Translate pydantic errors into one ``ConfigError`` naming each dotted key.

    The offending input is shown only when it is a short scalar of a key that cannot hold a secret
    (not ``api-key``, a token, a header...), and any URL userinfo in it is masked.

    Args:
        exc: the validation error of the settings tree.
        files: the files the tree was read from (named in the message).

    Returns:
        The error; its ``key`` is the first offending dotted key.
    """
    lines: list[str] = []
    first: str | None = None
    for err in exc.errors(include_url=False):
        key = dotted(err["loc"])
        first = first or key
        text = f"{key or '(top level)'}: {err['msg']}"
        value = err.get("input")
        if (
            isinstance(value, str | int | float | bool)
            and not looks_secret(key)
            and "headers" not in key
            and len(str(value)) <= 80
        ):
            shown = mask_url(value) if isinstance(value, str) else value
            text += f" (got {shown!r})"
        lines.append(text)
    source = f" (from {', '.join(describe(p) for p in files)})" if files else ""
    return ConfigError(f"invalid settings{source}:\n  " + "\n  ".join(lines), key=first)
