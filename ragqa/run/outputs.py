"""Output paths are checked before the first judge call, so no paid-for result is lost to a typo."""

from __future__ import annotations

import os
from pathlib import Path

from ragqa.errors import ConfigError

__all__ = ["check_output_path"]


def check_output_path(path: str | Path, *, option: str) -> Path:
    """Check that ``path`` can be written as a file, without creating or changing anything.

    Args:
        path: the output file the user asked for.
        option: the option or key that named it (``--out``, ``--junit-xml``), used in the message.

    Returns:
        The path, unchanged.

    Raises:
        ConfigError: when the path is a directory, its parent folder does not exist or is not a
            folder, or the file or its folder is not writable (key ``option``).
    """
    out = Path(path)
    if out.is_dir():
        example = out / "results.jsonl"
        raise ConfigError(f"{option} {out} is a directory; give a file path such as {example}", key=option)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.exists():
        raise ConfigError(f"{option} {out}: folder {parent} does not exist; create it first", key=option)
    if not parent.is_dir():
        raise ConfigError(f"{option} {out}: {parent} is not a folder", key=option)
    if out.exists() and not os.access(out, os.W_OK):
        raise ConfigError(f"{option} {out}: the file is not writable", key=option)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {out}: folder {parent} is not writable", key=option)
    return out
