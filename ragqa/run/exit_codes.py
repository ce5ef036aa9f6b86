"""Exit codes that a CI can rely on: each means one thing, for ``ragqa evaluate`` and ``ragqa test``."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    """The process exit code of a run.

    ``OK`` every (sample, metric) has an aggregate and every threshold passed; ``THRESHOLD`` a
    threshold was missed; ``USAGE`` bad command line, configuration or data, found before any
    judge call; ``INCOMPLETE`` some (sample, metric) has no aggregate because judges failed (or
    the run scored nothing); ``UNDECIDED`` the run's only problem is a gate whose confidence
    interval contains its threshold (neither pass nor fail, see ``--on-undecided``);
    ``OUTPUT`` an output could not be written (full disk, unwritable path), what was kept is in
    the ``.partial`` file the message names; ``INTERRUPTED`` the run was interrupted (Ctrl-C),
    finished results were kept.
    """

    OK = 0
    THRESHOLD = 1
    USAGE = 2
    INCOMPLETE = 3
    UNDECIDED = 4
    OUTPUT = 5
    INTERRUPTED = 130
