"""The run layer: between the entry points (CLI, pytest plugin, promptfoo files, Python API) and the panel.

- :mod:`ragqa.run.spec`: metric specs as data (one parser, one formatter) and threshold resolution;
- :mod:`ragqa.run.loop`: the one place that drives an event loop;
- :mod:`ragqa.run.exit_codes`: what each exit code means, and the one decision of a run's code;
- :mod:`ragqa.run.outputs`: output paths checked before the first judge call;
- :mod:`ragqa.run.plan`: the run plan (metrics, thresholds, policies, outputs) built and checked once;
- :mod:`ragqa.run.validate`: samples validated once per run, with the size limits of ``ragqa.limits``
  (the one validator, :mod:`ragqa.metrics.validation`, re-exported);
- :mod:`ragqa.run.estimate`: judge calls and tokens estimated before the first call;
- :mod:`ragqa.run.results_file`: the results file's header and lines, and reading it back;
- :mod:`ragqa.run.stream`: the results file streamed while a run goes, resumable after;
- :mod:`ragqa.run.identity`: a run's configuration fingerprint and header, and the checks of ``resume``;
- :mod:`ragqa.run.runner`: the one runner of a dataset run (the CLI, ``ragqa.evaluate``);
- :mod:`ragqa.run.check`: the same steps one sample at a time (assertions, the pytest plugin,
  ``ragqa test``): plan, validate, score, verdict, exit code;
- :mod:`ragqa.run.outcome`: threshold verdicts and the exit code of a finished run;
- :mod:`ragqa.run.api`: ``ragqa.evaluate`` and ``ragqa.aevaluate``.

The light names (specs, loop, exit codes, outputs) are imported here; the rest on first use, so
that importing :mod:`ragqa.run.spec` (the pytest plugin does) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragqa.run.exit_codes import ExitCode
from ragqa.run.loop import LoopThread, default_loop, run_sync
from ragqa.run.outputs import check_output_path
from ragqa.run.spec import MetricSpec, parse_metric_specs, resolve_thresholds, spec_of

if TYPE_CHECKING:
    from ragqa.run.api import aevaluate, evaluate
    from ragqa.run.estimate import RunEstimate, TooManyCalls, estimate_pairs
    from ragqa.run.outcome import RunResult, ThresholdVerdict, exit_code_for, threshold_verdicts
    from ragqa.run.plan import Output, RunPlan, make_plan, plan_output
    from ragqa.run.results_file import ResultsHeader, read_results
    from ragqa.run.runner import Runner
    from ragqa.run.stream import ResultStream
    from ragqa.run.validate import Limits, Validation, validate_run

_LAZY = {
    "aevaluate": "api",
    "evaluate": "api",
    "RunEstimate": "estimate",
    "estimate_pairs": "estimate",
    "RunResult": "outcome",
    "ThresholdVerdict": "outcome",
    "exit_code_for": "outcome",
    "threshold_verdicts": "outcome",
    "Output": "plan",
    "RunPlan": "plan",
    "make_plan": "plan",
    "plan_output": "plan",
    "Runner": "runner",
    "TooManyCalls": "estimate",
    "ResultStream": "stream",
    "ResultsHeader": "results_file",
    "read_results": "results_file",
    "Limits": "validate",
    "Validation": "validate",
    "validate_run": "validate",
}

__all__ = [
    "ExitCode",
    "Limits",
    "LoopThread",
    "MetricSpec",
    "Output",
    "ResultStream",
    "ResultsHeader",
    "RunEstimate",
    "RunPlan",
    "RunResult",
    "Runner",
    "ThresholdVerdict",
    "TooManyCalls",
    "Validation",
    "aevaluate",
    "check_output_path",
    "default_loop",
    "estimate_pairs",
    "evaluate",
    "exit_code_for",
    "make_plan",
    "parse_metric_specs",
    "plan_output",
    "read_results",
    "resolve_thresholds",
    "run_sync",
    "spec_of",
    "threshold_verdicts",
    "validate_run",
]


def __getattr__(name: str) -> Any:
    """Import the heavier run-layer names on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragqa.run' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"ragqa.run.{module}"), name)
    globals()[name] = value
    return value
