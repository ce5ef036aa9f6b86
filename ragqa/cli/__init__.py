"""The ``ragqa`` command line: evaluate, metrics, config show, report, compare, test and ``--version``.

A thin adapter over the run layer (:mod:`ragqa.run`): options become a
:class:`~ragqa.run.plan.RunPlan`, one :class:`~ragqa.run.runner.Runner` validates, estimates,
streams, resumes and decides the exit code, and :mod:`ragqa.run.loop` drives the event loop.

Exit codes (:class:`ragqa.run.exit_codes.ExitCode`), for ``ragqa evaluate``:

- ``0``: every (sample, metric) was scored and every threshold passed;
- ``1``: a metric's aggregate missed its threshold (``--threshold`` / ``ragqa.thresholds``);
- ``2``: bad usage, settings or data, found before any judge call (one message, no traceback);
- ``3``: the run is incomplete: judges failed so some (sample, metric) has no aggregate, or
  nothing was scored (``--allow-incomplete`` makes the first a warning);
- ``4``: undecided: the run's only problem is a threshold inside its metric's confidence interval
  (``--on-undecided pass|warn`` accepts it); ``3`` and ``1`` take precedence over it;
- ``130``: interrupted (Ctrl-C or SIGTERM); finished results were kept and the resume command is printed.
"""

from __future__ import annotations

import gc
import importlib

from ragqa.cli._common import app, parse_thresholds
from ragqa.promptfoo import register as _register_test  # `ragqa test` lives with its runner

__all__ = ["app", "main", "parse_thresholds"]

# Each module registers its commands on import, in the order ``ragqa --help`` lists them:
# evaluate; metrics and config show; report, compare and calibrate; then test.
for _module in ("evaluate", "info", "analysis"):
    importlib.import_module(f"ragqa.cli.{_module}")
_register_test(app)


def main() -> None:
    """Run the CLI (the ``ragqa`` console script and ``python -m ragqa``); exits with the exit code.

    The process is one command long: what start-up imported (modules, classes, schemas) lives
    until it exits, so it is moved out of the garbage collector's sight (``gc.freeze``) and the
    collector only walks what the command itself allocates. ``python -m ragqa`` also imports with
    the collector off (:mod:`ragqa.__main__`); it is turned back on here.
    """
    gc.freeze()
    gc.enable()
    app()
