"""Compare two runs' results (pure; ``ragqa compare A.jsonl B.jsonl``): what changed from A to B.

The results are paired by (sample id, metric key): only pairs present in both are compared (the
files are read by :func:`ragqa.compare.compare_files`). Per metric, for the aggregate and for each
judge present in both runs:

- the mean delta ``B - A`` over the pairs where both runs have a finite score, with a paired
  bootstrap confidence interval: the per-pair differences are resampled
  (``scipy.stats.bootstrap``, percentile method, a fixed seed, so the same files give the same
  interval). When either run judged with repeats, the bootstrap is two-stage
  (:func:`~ragqa.report.bootstrap.paired_cluster_bootstrap_ci`): the samples are resampled as clusters, and inside each
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
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ragqa._math import finite_mean
from ragqa.errors import ConfigError
from ragqa.report.bootstrap import BOOTSTRAP_SEED, paired_bootstrap_ci, paired_cluster_bootstrap_ci
from ragqa.report.formats import finite_json
from ragqa.schema import PanelResult
from ragqa.thresholds import passes

__all__ = [
    "Comparison",
    "FailureChange",
    "Flip",
    "MeanDelta",
    "MetricComparison",
    "compare_results",
    "exit_code",
]

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
        out.append(finite_mean([row[r] for row in rows if r < len(row)]))
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
