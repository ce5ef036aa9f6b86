"""The run layer: between the entry points (CLI, pytest plugin, promptfoo files, Python API) and the panel.

- :mod:`ragqa.run.spec`: metric specs as data (one parser, one formatter) and threshold resolution;
- :mod:`ragqa.run.loop`: the one place that drives an event loop;
- :mod:`ragqa.run.exit_codes`: what each exit code means;
- :mod:`ragqa.run.outputs`: output paths checked before the first judge call.
"""

from __future__ import annotations

from ragqa.run.exit_codes import ExitCode
from ragqa.run.loop import LoopThread, default_loop, run_sync
from ragqa.run.outputs import check_output_path
from ragqa.run.spec import MetricSpec, parse_metric_specs, resolve_thresholds, spec_of

__all__ = [
    "ExitCode",
    "LoopThread",
    "MetricSpec",
    "check_output_path",
    "default_loop",
    "parse_metric_specs",
    "resolve_thresholds",
    "run_sync",
    "spec_of",
]
