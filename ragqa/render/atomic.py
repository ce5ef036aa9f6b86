"""Write a file so that a reader never sees half of it: a sibling ``.partial`` file, then a rename."""

from __future__ import annotations

from pathlib import Path

__all__ = ["replace_text"]


def replace_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, no newline translation) to ``path`` through ``<path>.partial`` and a rename.

    The rename is atomic on one file system, so ``path`` holds either its old content or all of
    ``text``. On an error the partial file is removed and the error propagates.

    Raises:
        OSError: when the folder is not writable or the disk is full.
    """
    partial = path.with_name(path.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8", newline="")
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
