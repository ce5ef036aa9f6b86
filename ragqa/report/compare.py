"""Compare two runs' results files (``ragqa compare A.jsonl B.jsonl``): what changed from A to B.

The two files are read with :func:`ragqa.run.stream.read_results` and paired by (sample id,
metric key): only pairs present in both are compared. Per metric, for the aggregate and for each
judge present in both runs:

- the mean delta ``B - A`` over the pairs where both runs have a finite score, with a paired
  bootstrap confidence interval: the per-pair differences are resampled
  (``scipy.stats.bootstrap``, percentile method, a fixed seed, so the same files give the same
  interval). When either run judged with repeats, the bootstrap is two-stage
  (:func:`paired_cluster_bootstrap_ci`): the samples are resampled as clusters, and inside each
  chosen sample its repeat values in A and in B, so the interval carries the judges' own noise too;
- whether the change is **significant**: the interval of the difference excludes 0. When it
  contains 0 the console says "no significant change";
- whether the change is a **regression**: the whole confidence interval lies beyond the tolerance
  in the metric's bad direction, i.e. ``ci_high < -tolerance`` for a higher-is-better metric and
  ``ci_low > tolerance`` for a lower-is-better one (with the default tolerance 0, B is worse with
  95% confidence). An undefined interval (fewer than 2 pairs) is never a regression;
- the samples whose aggregate flipped pass/fail against the metric's threshold (``--threshold``,
  else the metric's default threshold; none when it has neither), the judge failures that are new
  in B and those that B resolved.

The exit code of the command (see :func:`exit_code`) is 1 when any metric's *aggregate* regressed;
per-judge regressions and flips are shown but do not change it. The console view is
:func:`ragqa.render.comparison.comparison_renderable`; :meth:`Comparison.to_json` is the JSON one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ragqa.errors import ConfigError
from ragqa.report import finite_json
from ragqa.schema import PanelResult
from ragqa.thresholds import passes
from ragqa.uncertainty import bootstrap_interval

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

BOOTSTRAP_SEED = 20240611
"""Seed of the bootstrap's random generator: the same two files always give the same interval."""

BOOTSTRAP_RESAMPLES = 9999
"""Bootstrap resamples per interval."""

Direction = Literal["higher", "lower"]


class MeanDelta(BaseModel):
    """The mean change ``B - A`` of one score (a judge's, or the aggregate) over the paired samples.

    Attributes:
        subject: ``aggregate`` or the judge id.
        n: pairs where both runs have a finite score.
        mean_a: mean score in A over those pairs (NaN when ``n == 0``), in the metric's units.
        mean_b: mean score in B over those pairs.
        delta: mean of the per-pair differences ``B - A`` (= ``mean_b - mean_a``); NaN when ``n == 0``.
        ci_low: lower bound of the paired bootstrap confidence interval of ``delta`` (NaN when ``n < 2``).
        ci_high: upper bound.
        regression: the interval lies beyond the tolerance in the metric's bad direction.
        improvement: the interval lies beyond the tolerance in the good direction.
        significant: the interval excludes 0 (False when it contains 0 or is undefined): a
            change at the interval's confidence level, whether or not beyond the tolerance.
        repeats: the most repeats behind one score of these pairs (1: no repeats; then the
            interval is the plain paired bootstrap, else the two-stage one).
    """

    model_config = ConfigDict(extra="forbid")

    subject: str
    n: int
    mean_a: float
    mean_b: float
    delta: float
    ci_low: float
    ci_high: float
    regression: bool
    improvement: bool
    significant: bool = False
    repeats: int = 1


class Flip(BaseModel):
    """A sample whose aggregate passed its threshold in one run and failed it in the other.

    Attributes:
        sample_id: the sample.
        a: its aggregate in A (NaN = no aggregate, which fails).
        b: its aggregate in B.
        regression: True for pass -> fail, False for fail -> pass.
    """

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    a: float
    b: float
    regression: bool


class FailureChange(BaseModel):
    """A judge failure on a paired (sample, metric) that is in one run and not in the other.

    Attributes:
        sample_id: the sample.
        judge_id: the judge.
        step: the step that failed (``statements``, ``nli``...), or ``None``.
        error: ``<error type>: <message>`` of the failure (from the run that has it).
    """

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    judge_id: str
    step: str | None
    error: str


class MetricComparison(BaseModel):
    """What changed for one metric between A and B.

    Attributes:
        metric: the metric key.
        direction: ``higher`` or ``lower`` is better.
        threshold: the pass threshold used for flips (``None``: the metric has none, no flips).
        n_pairs: samples of this metric present in both runs.
        aggregate: the change of the per-sample aggregate.
        judges: the change of each judge present in both runs, in B's panel order.
        judges_only_in_a: judges that scored this metric in A only.
        judges_only_in_b: judges that scored this metric in B only.
        flips: samples that flipped pass/fail, in sample order.
        new_failures: judge failures in B that A did not have.
        resolved_failures: judge failures of A that B did not have.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str
    direction: Direction
    threshold: float | None
    n_pairs: int
    aggregate: MeanDelta
    judges: list[MeanDelta] = Field(default_factory=list)
    judges_only_in_a: list[str] = Field(default_factory=list)
    judges_only_in_b: list[str] = Field(default_factory=list)
    flips: list[Flip] = Field(default_factory=list)
    new_failures: list[FailureChange] = Field(default_factory=list)
    resolved_failures: list[FailureChange] = Field(default_factory=list)


class Comparison(BaseModel):
    """Two runs compared (see the module docstring for every rule).

    Attributes:
        a: the baseline file, as given.
        b: the candidate file, as given.
        tolerance: how far (in the metric's units) the interval must lie beyond 0 in the bad
            direction to count as a regression (>= 0).
        confidence: the interval's confidence level (0.95).
        seed: the bootstrap seed.
        n_only_a: (sample, metric) pairs in A only (not compared).
        n_only_b: pairs in B only (not compared).
        metrics: one entry per metric, in B's metric order.
    """

    model_config = ConfigDict(extra="forbid")

    a: str
    b: str
    tolerance: float
    confidence: float
    seed: int
    n_only_a: int
    n_only_b: int
    metrics: list[MetricComparison]

    @property
    def regressions(self) -> list[MetricComparison]:
        """The metrics whose aggregate regressed beyond the tolerance."""
        return [m for m in self.metrics if m.aggregate.regression]

    def to_json(self) -> dict[str, Any]:
        """The comparison as strict JSON data (NaN as ``null``), with ``regressed`` (metric keys)."""
        data: dict[str, Any] = finite_json(self.model_dump(mode="json"))
        data["regressed"] = [m.metric for m in self.regressions]
        return data


def exit_code(comparison: Comparison) -> int:
    """The exit code of ``ragqa compare``: 1 when any metric's aggregate regressed, else 0."""
    return 1 if comparison.regressions else 0


def paired_bootstrap_ci(
    differences: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Bootstrap confidence interval of the mean of paired differences (``scipy.stats.bootstrap``).

    Resamples the differences with replacement (percentile method, Efron & Tibshirani, *An
    Introduction to the Bootstrap*, ch. 13), with a generator seeded by ``seed``.

    Args:
        differences: per-pair ``B - A``, finite.
        confidence: confidence level, in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed.

    Returns:
        ``(low, high)``; ``(NaN, NaN)`` for fewer than 2 differences; ``(d, d)`` when every
        difference equals ``d`` (every resample has that mean).
    """
    return bootstrap_interval(differences, confidence=confidence, n_resamples=n_resamples, seed=seed)


def paired_cluster_bootstrap_ci(
    differences: Sequence[float],
    repeats_a: Sequence[Sequence[float]],
    repeats_b: Sequence[Sequence[float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Two-stage (cluster) bootstrap interval of the mean paired difference, with repeats inside each sample.

    Stage 1 resamples the samples (the clusters) with replacement; stage 2 resamples, inside each
    chosen sample, its repeat values in A and in B with replacement, and moves that sample's
    difference by how far the resampled repeat means fall from the observed ones:
    ``d_i* = d_i + (mean(b_i*) - mean(b_i)) - (mean(a_i*) - mean(a_i))``. The interval is the
    percentile interval of the resampled means. This is the two-stage bootstrap of hierarchical
    data (Davison & Hinkley, *Bootstrap Methods and their Application*, 1997, section 3.8; Field &
    Welsh, "Bootstrapping clustered data", JRSS B 69(3), 2007). Resampling both stages counts the
    repeat noise twice over (it is already in the spread of the ``d_i``), so the interval is
    somewhat conservative: it says "no significant change" a little more often than the nominal
    level, never less.

    Args:
        differences: per-sample ``B - A`` of the observed scores, finite, shape (n,).
        repeats_a: per sample, A's finite repeat values (one value without repeats).
        repeats_b: per sample, B's finite repeat values.
        confidence: confidence level, in (0, 1).
        n_resamples: bootstrap resamples.
        seed: random seed (the same inputs give the same interval).

    Returns:
        ``(low, high)``; ``(NaN, NaN)`` for fewer than 2 samples.

    Raises:
        ValueError: when the three sequences differ in length or a sample has no repeat value.
    """
    d = np.asarray(differences, dtype=float)
    n = d.size
    if not len(repeats_a) == len(repeats_b) == n:
        raise ValueError(f"{n} differences but {len(repeats_a)} and {len(repeats_b)} samples of repeats")
    if n < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    shifted = np.empty((n_resamples, n))
    for i in range(n):
        shift = np.zeros(n_resamples)
        for values, sign in ((repeats_b[i], 1.0), (repeats_a[i], -1.0)):
            reps = np.asarray(values, dtype=float)
            if reps.size == 0:
                raise ValueError(f"sample {i} has no repeat value")
            if reps.size > 1:
                drawn = reps[rng.integers(0, reps.size, size=(n_resamples, reps.size))].mean(axis=1)
                shift += sign * (drawn - reps.mean())
        shifted[:, i] = d[i] + shift
    means = np.empty(n_resamples)
    step = max(1, 2_000_000 // n)  # resamples per batch: about 16 MB of indices at a time
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        picks = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = np.take_along_axis(shifted[start:stop], picks, axis=1).mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _finite_values(values: Sequence[float]) -> list[float]:
    return [v for v in values if math.isfinite(v)]


def _mean_delta(
    subject: str,
    pairs: Sequence[tuple[float, float]],
    direction: Direction,
    tolerance: float,
    confidence: float,
    repeats: Sequence[tuple[Sequence[float], Sequence[float]]] | None = None,
) -> MeanDelta:
    """The change of one score over the pairs; ``repeats`` (per pair, A's and B's repeat values) makes it two-stage."""
    keep = [i for i, (a, b) in enumerate(pairs) if math.isfinite(a) and math.isfinite(b)]
    finite = [pairs[i] for i in keep]
    if not finite:
        nan = math.nan
        return MeanDelta(
            subject=subject,
            n=0,
            mean_a=nan,
            mean_b=nan,
            delta=nan,
            ci_low=nan,
            ci_high=nan,
            regression=False,
            improvement=False,
        )
    a = np.array([p[0] for p in finite])
    b = np.array([p[1] for p in finite])
    reps_a = [_finite_values(repeats[i][0]) or [pairs[i][0]] for i in keep] if repeats is not None else []
    reps_b = [_finite_values(repeats[i][1]) or [pairs[i][1]] for i in keep] if repeats is not None else []
    most = max((len(r) for r in (*reps_a, *reps_b)), default=1)
    if most > 1:
        low, high = paired_cluster_bootstrap_ci(list(b - a), reps_a, reps_b, confidence=confidence)
    else:
        low, high = paired_bootstrap_ci(list(b - a), confidence=confidence)
    worse = high < -tolerance if direction == "higher" else low > tolerance
    better = low > tolerance if direction == "higher" else high < -tolerance
    return MeanDelta(
        subject=subject,
        n=len(finite),
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        delta=float((b - a).mean()),
        ci_low=low,
        ci_high=high,
        regression=bool(worse),
        improvement=bool(better),
        significant=bool(low > 0 or high < 0),
        repeats=most,
    )


def _aggregate_repeats(result: PanelResult) -> list[float]:
    """The panel's value per repeat index: the mean of the judges' finite scores of that repeat (NaN when none)."""
    rows = [o.repeat_values() for o in result.judges if o.ok]
    out = []
    for r in range(max((len(row) for row in rows), default=0)):
        values = [row[r] for row in rows if r < len(row) and math.isfinite(row[r])]
        out.append(math.fsum(values) / len(values) if values else math.nan)
    return out


def _judge_repeats(result: PanelResult) -> dict[str, list[float]]:
    """Each judge's repeat values on one result (``[NaN]`` when it failed)."""
    return {o.judge_id: o.repeat_values() if o.ok else [math.nan] for o in result.judges}


def _judge_scores(result: PanelResult) -> dict[str, float]:
    """Each judge's score on one result; NaN when it failed or the metric was undefined."""
    scores = {}
    for o in result.judges:
        ok = o.failure is None and o.score is not None
        scores[o.judge_id] = o.score.value if ok and o.score is not None else math.nan
    return scores


def _failures(result: PanelResult) -> dict[str, FailureChange]:
    return {
        f.judge_id: FailureChange(
            sample_id=result.sample_id, judge_id=f.judge_id, step=f.step, error=f"{f.error_type}: {f.message}"
        )
        for f in result.failures
    }


def compare_results(
    a: Mapping[tuple[str, str], PanelResult],
    b: Mapping[tuple[str, str], PanelResult],
    *,
    metrics: Sequence[str],
    thresholds: Mapping[str, float | None],
    tolerance: float = 0.0,
    confidence: float = 0.95,
    a_name: str = "A",
    b_name: str = "B",
) -> Comparison:
    """Compare two runs' results, paired by (sample id, metric key) (pure).

    Args:
        a: the baseline's results by (sample id, metric key), in its order.
        b: the candidate's results by (sample id, metric key), in its order.
        metrics: metric keys to compare, in display order.
        thresholds: pass threshold per metric key (``None``: no flips for that metric).
        tolerance: regression tolerance in the metric's units (>= 0).
        confidence: confidence level of the intervals.
        a_name: how A is named in the comparison (its path).
        b_name: how B is named.

    Returns:
        The :class:`Comparison`.

    Raises:
        ConfigError: when no (sample, metric) pair is in both runs, or ``tolerance`` is negative
            or not finite (key ``--tolerance``).
    """
    if not math.isfinite(tolerance) or tolerance < 0:
        raise ConfigError(f"--tolerance must be a finite number >= 0, got {tolerance!r}", key="--tolerance")
    common = [pair for pair in b if pair in a]
    if not common:
        raise ConfigError(
            f"{a_name} and {b_name} have no (sample, metric) pair in common: compare two runs of the same dataset",
            key="files",
        )
    compared = []
    for metric in metrics:
        pairs = [p for p in common if p[1] == metric]
        rows_a = [a[p] for p in pairs]
        rows_b = [b[p] for p in pairs]
        direction: Direction = rows_b[0].direction if rows_b else "higher"
        scores_a = [_judge_scores(r) for r in rows_a]
        scores_b = [_judge_scores(r) for r in rows_b]
        judges_a = list(dict.fromkeys(j for s in scores_a for j in s))
        judges_b = list(dict.fromkeys(j for s in scores_b for j in s))
        reps_a = [_judge_repeats(r) for r in rows_a]
        reps_b = [_judge_repeats(r) for r in rows_b]
        judges = [
            _mean_delta(
                jid,
                [(sa.get(jid, math.nan), sb.get(jid, math.nan)) for sa, sb in zip(scores_a, scores_b, strict=True)],
                direction,
                tolerance,
                confidence,
                [(ra.get(jid, [math.nan]), rb.get(jid, [math.nan])) for ra, rb in zip(reps_a, reps_b, strict=True)],
            )
            for jid in judges_b
            if jid in judges_a
        ]
        aggregate = _mean_delta(
            "aggregate",
            [(ra.aggregate.value, rb.aggregate.value) for ra, rb in zip(rows_a, rows_b, strict=True)],
            direction,
            tolerance,
            confidence,
            [(_aggregate_repeats(ra), _aggregate_repeats(rb)) for ra, rb in zip(rows_a, rows_b, strict=True)],
        )
        threshold = thresholds.get(metric)
        flips = []
        new, resolved = [], []
        for ra, rb in zip(rows_a, rows_b, strict=True):
            if threshold is not None:
                pass_a = passes(ra.aggregate.value, threshold, direction)
                pass_b = passes(rb.aggregate.value, threshold, direction)
                if pass_a != pass_b:
                    flips.append(
                        Flip(sample_id=rb.sample_id, a=ra.aggregate.value, b=rb.aggregate.value, regression=pass_a)
                    )
            fa, fb = _failures(ra), _failures(rb)
            new += [f for jid, f in fb.items() if jid not in fa]
            resolved += [f for jid, f in fa.items() if jid not in fb]
        compared.append(
            MetricComparison(
                metric=metric,
                direction=direction,
                threshold=threshold,
                n_pairs=len(pairs),
                aggregate=aggregate,
                judges=judges,
                judges_only_in_a=[j for j in judges_a if j not in judges_b],
                judges_only_in_b=[j for j in judges_b if j not in judges_a],
                flips=flips,
                new_failures=new,
                resolved_failures=resolved,
            )
        )
    return Comparison(
        a=a_name,
        b=b_name,
        tolerance=tolerance,
        confidence=confidence,
        seed=BOOTSTRAP_SEED,
        n_only_a=sum(1 for p in a if p not in b),
        n_only_b=len(b) - len(common),
        metrics=compared,
    )


def _read(path: Path) -> tuple[tuple[str, ...], dict[tuple[str, str], PanelResult]]:
    """The metric keys and results of a results file; ConfigError naming the file when it is not one."""
    from ragqa.render.records import read_result_record
    from ragqa.run.stream import read_results

    if not path.is_file():
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
    from ragqa.run.spec import MetricSpec, resolve_thresholds

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
