"""Exit codes that a CI can rely on: each means one thing, for ``ragqa evaluate``, ``ragqa test`` and pytest.

:func:`decide_exit_code` is the one decision of a finished run's code, with one precedence for every
entry point: ``INCOMPLETE`` (3) > ``THRESHOLD`` (1) > ``UNDECIDED`` (4) > ``OK`` (0). An incomplete
run outranks a missed threshold because what the judges that failed would have said is unknown:
the run must be made again before its failures (or passes) mean anything. ``USAGE`` (2),
``OUTPUT`` (5) and ``INTERRUPTED`` (130) stop a run before or outside this decision.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode", "decide_exit_code"]


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


def decide_exit_code(*, incomplete: bool, failed: bool, undecided: bool) -> ExitCode:
    """The exit code of a run that scored, in the one precedence of the module docstring.

    Args:
        incomplete: something could not be decided because judges failed (a pair without an
            aggregate, an assertion only the failed judges could have passed), or nothing was scored.
        failed: a threshold (or an assertion) failed outright.
        undecided: a gate is undecided (its interval contains its threshold) and counts as failed
            (``on_undecided="fail"``).

    Returns:
        ``INCOMPLETE`` (3), else ``THRESHOLD`` (1), else ``UNDECIDED`` (4), else ``OK`` (0).
    """
    if incomplete:
        return ExitCode.INCOMPLETE
    if failed:
        return ExitCode.THRESHOLD
    if undecided:
        return ExitCode.UNDECIDED
    return ExitCode.OK
