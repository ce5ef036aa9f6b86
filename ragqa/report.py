"""The report of a run: data only (pydantic, JSON-serialisable). Renderers live elsewhere.

Per metric the summary gives each judge's mean (NaN-ignoring, over the samples it scored), how
many samples each judge failed or left unscored, the mean of the per-sample aggregates, and the
mean spread between judges.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragqa.metrics._math import nan_mean
from ragqa.schema import PanelResult, Usage

__all__ = ["CacheCounts", "JudgeSummary", "MetricSummary", "Report", "SkippedSample", "finite_json", "summarize"]


class JudgeSummary(BaseModel):
    """One judge's results on one metric over the run."""

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    mean: float
    """Mean of the judge's finite scores (NaN when it scored none)."""
    n_scored: int
    """Samples with a finite score."""
    n_nan: int
    """Samples where the metric was undefined for this judge (NaN)."""
    n_failed: int
    """Samples where the judge failed (excluded)."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens, calls and latency this judge spent on this metric."""


class MetricSummary(BaseModel):
    """One metric over the run, per judge and aggregated."""

    model_config = ConfigDict(extra="forbid")

    metric: str
    direction: Literal["higher", "lower"]
    judges: list[JudgeSummary]
    aggregate_mean: float
    """Mean of the per-sample aggregates (NaN-ignoring)."""
    mean_spread: float
    """Mean of the per-sample spreads between judges (NaN-ignoring)."""
    n_samples: int
    """Samples scored with this metric."""
    n_aggregated: int
    """Samples whose aggregate exists (quorum met, finite)."""
    usage: Usage = Field(default_factory=Usage)
    """Sum over judges."""


class SkippedSample(BaseModel):
    """A sample left out because it failed validation (only with ``on_invalid="skip"``)."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    metric: str | None
    field: str | None
    message: str


class CacheCounts(BaseModel):
    """Lookups of the on-disk judge cache during a run (``ragqa.cache.enabled``)."""

    model_config = ConfigDict(extra="forbid")

    hits: int = 0
    """Calls answered from the cache (no provider request, no usage)."""
    misses: int = 0
    """Calls not in the cache (asked of the judge, then stored)."""


class Report(BaseModel):
    """Everything a run produced."""

    model_config = ConfigDict(extra="forbid")

    results: list[PanelResult]
    """One entry per (sample, metric), in sample order then metric order."""
    summaries: list[MetricSummary]
    """One entry per metric, in the order the metrics were given."""
    skipped: list[SkippedSample] = Field(default_factory=list)
    """Samples left out by validation."""
    wall_time_s: float = 0.0
    """Wall time of the run, seconds."""
    cache: CacheCounts | None = None
    """Judge-cache hits and misses of the run; ``None`` when the cache is off."""

    @property
    def usage(self) -> Usage:
        """Total usage of the run."""
        total = Usage()
        for s in self.summaries:
            total = total + s.usage
        return total

    def summary(self, metric: str) -> MetricSummary:
        """The summary of ``metric`` (its key, e.g. ``noise_sensitivity(mode=relevant)``).

        Raises:
            KeyError: when the metric was not part of the run.
        """
        for s in self.summaries:
            if s.metric == metric:
                return s
        raise KeyError(metric)


def summarize(results: Sequence[PanelResult], judge_ids: Sequence[str]) -> list[MetricSummary]:
    """Summarise per metric and judge (pure).

    Args:
        results: panel results of a run.
        judge_ids: the panel, in display order.

    Returns:
        One summary per metric, in first-seen order.
    """
    by_metric: dict[str, list[PanelResult]] = {}
    for r in results:
        by_metric.setdefault(r.metric, []).append(r)
    summaries = []
    for metric, rows in by_metric.items():
        judges = []
        total = Usage()
        for jid in judge_ids:
            scores: list[float] = []
            n_nan = n_failed = 0
            usage = Usage()
            for row in rows:
                for o in row.judges:
                    if o.judge_id != jid:
                        continue
                    usage = usage + o.usage
                    if o.failure is not None or o.score is None:
                        n_failed += 1
                    elif math.isnan(o.score.value):
                        n_nan += 1
                    else:
                        scores.append(o.score.value)
            total = total + usage
            judges.append(
                JudgeSummary(
                    judge_id=jid,
                    mean=nan_mean(scores),
                    n_scored=len(scores),
                    n_nan=n_nan,
                    n_failed=n_failed,
                    usage=usage,
                )
            )
        aggregates = [r.aggregate.value for r in rows]
        summaries.append(
            MetricSummary(
                metric=metric,
                direction=rows[0].direction,
                judges=judges,
                aggregate_mean=nan_mean(aggregates),
                mean_spread=nan_mean([r.aggregate.spread for r in rows]),
                n_samples=len(rows),
                n_aggregated=sum(1 for a in aggregates if not math.isnan(a)),
                usage=total,
            )
        )
    return summaries


def finite_json(value: Any) -> Any:
    """Replace NaN and infinities by ``None``, recursively (strict JSON has no NaN).

    Args:
        value: a JSON-like value (dicts, lists, tuples, floats and other scalars).

    Returns:
        The same structure with every non-finite float replaced by ``None``; tuples become lists.
    """
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value
