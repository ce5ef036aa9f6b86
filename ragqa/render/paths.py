"""Output paths are checked before the first judge call, so no paid-for result is lost to a typo."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ragqa.errors import ConfigError

__all__ = ["check_output_path"]

_EXAMPLES = {"--junit-xml": "junit.xml", "--html": "report.html", "-o": "report.html", "--json": "comparison.json"}
"""A file name to suggest, by the option that names an output (``--out`` and others: ``results.jsonl``)."""


def check_output_path(path: str | Path, *, option: str) -> Path:
    """Check that ``path`` can be written as a file; nothing is left behind.

    Besides the permission bits, the folder is tried for real: an empty hidden file is created in
    it and removed at once, so a folder that refuses files whatever its mode says (``/proc``, a
    read-only mount, a quota) is found here, before any judge call.

    Args:
        path: the output file the user asked for.
        option: the option or key that named it (``--out``, ``--junit-xml``), used in the message;
            it also picks the file name suggested for a directory (``junit.xml`` for
            ``--junit-xml``).

    Returns:
        The path, unchanged.

    Raises:
        ConfigError: when the path is a directory, its parent folder does not exist or is not a
            folder, or the file or its folder is not writable (key ``option``).
    """
    out = Path(path)
    if out.is_dir():
        example = out / _EXAMPLES.get(option, "results.jsonl")
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
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise ConfigError(
            f"{option} {out}: cannot create a file in folder {parent} ({exc.strerror or exc}); choose another folder",
            key=option,
        ) from None
    os.close(handle)
    os.unlink(probe)
    return out
