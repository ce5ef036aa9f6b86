"""Write a file so that a reader never sees half of it: a hidden temporary sibling, then a rename.

The temporary file is ``.<name>.<pid>.tmp`` beside the target, never ``<name>.partial``: a
``.partial`` file is the run's results kept so far (:mod:`ragqa.run.stream`), which a rendered
output must never overwrite or remove.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ragqa.errors import OutputError

__all__ = ["os_reason", "replace_file", "replace_text", "temporary_path"]


def os_reason(exc: OSError) -> str:
    """The operating system's words for ``exc`` (``No space left on device``), for messages."""
    if exc.strerror:
        return exc.strerror
    return os.strerror(exc.errno) if exc.errno else str(exc)


def temporary_path(path: Path) -> Path:
    """The hidden temporary sibling of ``path`` that an atomic write goes through: ``.<name>.<pid>.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def replace_file(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(temporary)`` and rename the temporary file over ``path``.

    The rename is atomic on one file system, so ``path`` holds either its old content or all of
    the new. On any error the temporary file is removed, and an :class:`OSError` becomes an
    :class:`~ragqa.errors.OutputError` naming ``path``.

    Raises:
        OutputError: when the folder is not writable or the disk is full (``errno`` kept).
    """
    temporary = temporary_path(path)
    try:
        write(temporary)
        temporary.replace(path)
    except BaseException as exc:
        temporary.unlink(missing_ok=True)
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(f"cannot write {path} ({os_reason(exc)})", path=path, errno=exc.errno) from exc
        raise


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, no newline translation) to ``path`` atomically (see :func:`replace_file`).

    Raises:
        OutputError: when the folder is not writable or the disk is full.
    """
    replace_file(path, lambda temporary: temporary.write_text(text, encoding="utf-8", newline=""))
