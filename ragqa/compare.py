"""Compare two runs' results files (``ragqa compare A.jsonl B.jsonl``): read them, then compare (pure).

The files are read with :func:`ragqa.run.results_file.read_results`; the comparison itself, its models
and its bootstrap intervals are data and pure functions of :mod:`ragqa.report.compare` and
:mod:`ragqa.report.bootstrap`, re-exported here (the public path of ``ragqa.compare``). The
console view is :func:`ragqa.render.comparison.comparison_renderable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ragqa.errors import ConfigError
from ragqa.render.parquet import is_parquet_results
from ragqa.render.records import read_result_record
from ragqa.report.bootstrap import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    paired_bootstrap_ci,
    paired_cluster_bootstrap_ci,
)
from ragqa.report.compare import (
    Comparison,
    FailureChange,
    Flip,
    MeanDelta,
    MetricComparison,
    compare_results,
    exit_code,
)
from ragqa.run.results_file import read_results
from ragqa.run.spec import MetricSpec, resolve_thresholds
from ragqa.schema import PanelResult

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "Comparison",
    "FailureChange",
    "Flip",
    "MeanDelta",
    "MetricComparison",
    "compare_files",
    "compare_results",
    "exit_code",
    "paired_bootstrap_ci",
    "paired_cluster_bootstrap_ci",
]


def _read(path: Path) -> tuple[tuple[str, ...], dict[tuple[str, str], PanelResult]]:
    """The metric keys and results of a results file; ConfigError naming the file when it is not one."""
    if not path.is_file() and not is_parquet_results(path):  # a directory of Parquet parts is one too
        raise ConfigError(f"{path} does not exist or is not a file; pass a results file of `ragqa evaluate --out`")
    try:
        header, records = read_results(path)
        results = {pair: read_result_record(record) for pair, record in records.items()}
    except ConfigError as exc:
        reason = str(exc).removeprefix("--resume: ").replace("; run without --resume", "")
        raise ConfigError(f"{reason} (compare reads results files of `ragqa evaluate --out`)", key="files") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path} holds a record that is not a ragqa result ({exc!r})", key="files") from None
    return header.metrics, results


def compare_files(
    a: Path, b: Path, *, thresholds: Mapping[str, float] | None = None, tolerance: float = 0.0
) -> Comparison:
    """Read two results files and compare them (:func:`compare_results`).

    Args:
        a: the baseline results file (``ragqa evaluate --out a.jsonl``).
        b: the candidate results file.
        thresholds: ``{metric spec: value}`` as ``--threshold`` gives them; metrics without one use
            their default threshold.
        tolerance: regression tolerance in the metric's units.

    Returns:
        The comparison.

    Raises:
        ConfigError: a file missing, unreadable or not a ragqa results file; the two runs having
            different metrics; no (sample, metric) pair in common; a bad threshold or tolerance.
    """
    metrics_a, results_a = _read(a)
    metrics_b, results_b = _read(b)
    if set(metrics_a) != set(metrics_b):
        only_a = ", ".join(m for m in metrics_a if m not in metrics_b) or "none"
        only_b = ", ".join(m for m in metrics_b if m not in metrics_a) or "none"
        raise ConfigError(
            f"{a} and {b} scored different metrics (only in {a}: {only_a}; only in {b}: {only_b}); "
            "compare runs of the same metrics",
            key="files",
        )
    built = []
    for key in metrics_b:
        try:
            built.append(MetricSpec.parse(key).build())
        except ConfigError:  # a metric this ragqa does not know: compared, without a threshold
            continue
    chosen = resolve_thresholds(thresholds or {}, built)
    resolved: dict[str, float | None] = {m.key: chosen.get(m.key, m.default_threshold) for m in built}
    return compare_results(
        results_a,
        results_b,
        metrics=list(metrics_b),
        thresholds=resolved,
        tolerance=tolerance,
        a_name=str(a),
        b_name=str(b),
    )
