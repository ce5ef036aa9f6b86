"""Exit codes that a CI can rely on: each means one thing, for ``ragqa evaluate`` and ``ragqa test``."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    """The process exit code of a run.

    ``OK`` every (sample, metric) has an aggregate and every threshold passed; ``THRESHOLD`` a
    threshold was missed; ``USAGE`` bad command line, configuration or data, found before any
    judge call; ``INCOMPLETE`` some (sample, metric) has no aggregate because judges failed (or
    the run scored nothing); ``INTERRUPTED`` the run was interrupted (Ctrl-C), finished results
    were kept.
    """

    OK = 0
    THRESHOLD = 1
    USAGE = 2
    INCOMPLETE = 3
    INTERRUPTED = 130
