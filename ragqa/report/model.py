"""The report of a run as data (pydantic, JSON-serialisable): the report and its per-metric summaries.

Per metric the summary gives each judge's mean (NaN-ignoring, over the samples it scored), how
many samples each judge failed or left unscored, the aggregation strategy and quorum, the mean of
the per-sample aggregates, the mean spread between judges, how many samples have no aggregate and
why (below quorum, every judge failed), the usage, and, with two or more judges, how far the
judges agree (:class:`Agreement`, computed by :mod:`ragqa.agreement`). It also says how sure each
mean is (:mod:`ragqa.uncertainty`): a confidence interval on the aggregate and on each judge's mean
(samples as clusters), and where the aggregate's variance comes from (samples, judges, their
interaction, repeats) with what would halve its interval. Renderers read these fields; none of them
recomputes anything from the raw results. The summaries are computed by :mod:`ragqa.report.summary`.

Output helpers (:meth:`Report.to_jsonl`, :meth:`Report.to_csv`, :meth:`Report.to_pandas`) call
the writers registered in :mod:`ragqa.report.formats` by the renderers of :mod:`ragqa.render`, so
this module imports no renderer. The jury shapes (:class:`JuryReliability`, :class:`JudgeReliability`,
:class:`CascadeSummary`) live in :mod:`ragqa.report.jury_model`; this module re-exports them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragqa.report.formats import writer_for
from ragqa.report.jury_model import CascadeSummary, JudgeReliability, JuryReliability
from ragqa.schema import (
    Agreement,
    ContestedSample,
    Decomposition,
    Interval,
    JudgeBias,
    JudgeFailure,
    OrderProbeResult,
    PairAgreement,
    PanelResult,
    Sample,
    Usage,
)

__all__ = [
    "Agreement",
    "CacheStats",
    "CascadeSummary",
    "ContestedSample",
    "JudgeBias",
    "JudgeReliability",
    "JudgeSummary",
    "JuryReliability",
    "MetricSummary",
    "PairAgreement",
    "Report",
    "SkippedSample",
    "with_uncertainty",
]


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
    interval: Interval | None = None
    """Confidence interval of :attr:`mean` with the samples as clusters (:mod:`ragqa.uncertainty`);
    ``None`` when not computed or with fewer than two scored samples."""


class MetricSummary(BaseModel):
    """One metric over the run, per judge and aggregated: everything a renderer shows.

    The sample counts partition the metric's samples: ``n_scored + n_nan == n_samples``; the
    samples without an aggregate (``n_nan``) include those below quorum (``n_below_quorum``), and
    those where every judge failed (``n_all_failed``) are among them.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str
    """The metric's result key (``faithfulness``, ``noise_sensitivity(mode=relevant)``)."""
    direction: Literal["higher", "lower"]
    """Whether higher or lower scores are better."""
    strategy: str
    """How the judges' scores of a sample were combined (``mean``, ``median``, ``min``, ``max``, ``majority``), or voted
    per statement (``claim-vote``, ``dawid-skene``; metrics without statements then say ``mean`` per sample)."""
    quorum: int
    """Minimum judges with a finite score for a sample's aggregate to exist (>= 1)."""
    judges: list[JudgeSummary]
    """One entry per judge, in panel order."""
    aggregate_mean: float
    """Mean of the per-sample aggregates, NaN-ignoring (NaN when no sample has one); in the metric's range."""
    mean_spread: float
    """Mean of the per-sample spreads (max - min between judges' finite scores), NaN-ignoring."""
    n_samples: int
    """Samples scored with this metric."""
    n_scored: int
    """Samples whose aggregate exists (quorum met, finite)."""
    n_nan: int
    """Samples without an aggregate (below quorum, or every judge NaN or failed): ``n_samples - n_scored``."""
    n_below_quorum: int
    """Samples with fewer than ``quorum`` judges holding a finite score (their aggregate is NaN)."""
    n_all_failed: int
    """Samples where every judge failed (none scored, none returned NaN)."""
    n_unscored: int = 0
    """Samples where no judge has a finite score (each NaN or failed), whatever the quorum; among ``n_below_quorum``."""
    usage: Usage = Field(default_factory=Usage)
    """Sum over judges."""
    agreement: Agreement | None = None
    """Judge agreement (:func:`ragqa.agreement.metric_agreement`, computed by :func:`summarize` when the
    panel has two or more judges; ``None`` otherwise or when not computed)."""
    interval: Interval | None = None
    """Confidence interval of :attr:`aggregate_mean` with the samples as clusters
    (:mod:`ragqa.uncertainty`); ``None`` when not computed or with fewer than two scored samples."""
    flaky_samples: list[str] = Field(default_factory=list)
    """Samples whose judges or repeats fall on both sides of the run's threshold for this metric
    (:func:`ragqa.thresholds.is_flaky`), in dataset order; empty without a threshold."""
    decomposition: Decomposition | None = None
    """Where the aggregate's variance comes from (samples, judges, sample x judge, repeats) and how
    many more samples, judges or repeats would halve :attr:`interval`
    (:func:`ragqa.uncertainty.decompose`); ``None`` when not computed or with fewer than two
    samples scored by every judge that scored."""
    jury: JuryReliability | None = None
    """The judges' reliability estimated without labels, in a ``claim-vote`` or ``dawid-skene`` run
    of a statement-based metric with two or more judges; ``None`` otherwise."""
    item_jury: JuryReliability | None = None
    """The judges' reliability per item (``unit`` ``item``): Dawid-Skene on each judge's pass/fail
    verdict per sample at the metric's threshold, in a run of two or more judges whose aggregate of
    this metric is not a vote (:func:`ragqa.jury.reliability.item_reliability`); with
    ``threshold`` ``None`` when the metric has no threshold in the run; ``None`` otherwise."""
    cascade: CascadeSummary | None = None
    """The cascade's calls per tier, escalation rate and (audit) agreement with the full panel, in a run
    with ``ragqa.jury.cascade`` enabled; ``None`` otherwise."""

    @property
    def n_aggregated(self) -> int:
        """Former name of :attr:`n_scored` (samples whose aggregate exists)."""
        return self.n_scored


class SkippedSample(BaseModel):
    """A sample left out because it failed validation (only with ``on_invalid="skip"``)."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    metric: str | None
    field: str | None
    message: str


class CacheStats(BaseModel):
    """Judge-cache lookups of a run (see :class:`ragqa.cache.JudgeCache`).

    Attributes:
        hits: judge-call lookups answered from the cache (no provider call made).
        misses: judge-call lookups with no usable entry (the judge was asked).
        embedding_hits: texts whose embedding came from the cache (no embedding request made).
        embedding_misses: texts with no cached embedding (the embedding model was asked).
    """

    model_config = ConfigDict(extra="forbid")

    hits: int = Field(default=0, ge=0)
    misses: int = Field(default=0, ge=0)
    embedding_hits: int = Field(default=0, ge=0)
    embedding_misses: int = Field(default=0, ge=0)


class Report(BaseModel):
    """Everything a run produced."""

    model_config = ConfigDict(extra="forbid")

    results: list[PanelResult]
    """One entry per (sample, metric), in sample order then metric order; when
    :attr:`results_kept` is False, only the results with a judge failure."""
    summaries: list[MetricSummary]
    """One entry per metric, in the order the metrics were given."""
    skipped: list[SkippedSample] = Field(default_factory=list)
    """Samples left out by validation."""
    wall_time_s: float = 0.0
    """Wall time of the run, seconds."""
    cache: CacheStats | None = None
    """Judge-cache hits and misses of the run; ``None`` when no cache was used."""
    call_plan: Literal["batched", "ragas"] | None = None
    """How the metrics asked the judges (``ragqa.call-plan``); ``None`` when not recorded (a rebuilt report)."""
    samples: list[Sample] = Field(default_factory=list)
    """The scored samples (inputs: question, response, contexts, reference), in dataset order, when
    the run kept them (the run layer does; reports rebuilt from a results file may not)."""
    results_kept: bool = True
    """False when the run kept only summaries to keep memory flat (``keep_results=False``, the CLI
    with only ``.jsonl`` outputs): :attr:`results` then holds only the results with a judge failure,
    :attr:`samples` is empty, and every result is in the run's ``.jsonl`` output. The summaries are
    the same either way."""
    run_id: str | None = None
    """The run's random id (the results file's header ``run_id``, kept by ``--resume``); ``None``
    when not recorded (a report built by hand)."""
    dataset: str | None = None
    """The dataset's path as given, or a description (``3 record(s) from Python``); ``None`` when not recorded."""
    started_at: str | None = None
    """When the run first started, ISO 8601 UTC (``2026-11-24T18:40:00+00:00``); ``None`` when not recorded."""
    order_probe: OrderProbeResult | None = None
    """Each judge's position consistency with the contexts reversed (``--probe order``, :mod:`ragqa.jury.probe`);
    ``None`` when the run made no order probe. Its calls are in :attr:`usage`, in no metric's."""

    @property
    def n_samples(self) -> int:
        """Samples scored (the console's first line).

        The distinct sample ids of the results; when the results were not kept, the most samples
        any metric summarised.
        """
        if self.results_kept:
            return len(self.sample_ids)
        return max((s.n_samples for s in self.summaries), default=0)

    @property
    def usage(self) -> Usage:
        """Total usage of the run: every metric's, and the order probe's (:attr:`order_probe`)."""
        total = Usage()
        for s in self.summaries:
            total = total + s.usage
        if self.order_probe is not None:  # the probe's calls are the run's too
            total = total + self.order_probe.usage
        return total

    @property
    def sample_ids(self) -> list[str]:
        """The ids of the samples scored, in report order, each once."""
        return list(dict.fromkeys(r.sample_id for r in self.results))

    @property
    def judge_ids(self) -> list[str]:
        """The panel's judge ids in panel order (from the summaries, then any other judge in the results)."""
        ids = [j.judge_id for s in self.summaries for j in s.judges]
        ids += [o.judge_id for r in self.results for o in r.judges]
        return list(dict.fromkeys(ids))

    @property
    def failures(self) -> list[JudgeFailure]:
        """Every judge failure of the run, in result order."""
        return [f for r in self.results for f in r.failures]

    def summary(self, metric: str) -> MetricSummary:
        """The summary of ``metric`` (its key, e.g. ``noise_sensitivity(mode=relevant)``).

        Raises:
            KeyError: when the metric was not part of the run.
        """
        for s in self.summaries:
            if s.metric == metric:
                return s
        raise KeyError(metric)

    def __repr__(self) -> str:
        """A short summary, a few lines whatever the run's size (a notebook's echo of a report).

        ``Report(20 sample(s) x 1 metric(s) x 2 judge(s), 0.6 s)`` then one line per metric:
        direction, aggregate mean and strategy, samples with an aggregate, each judge's mean;
        then judge failures and skipped pairs when there are any. The full data is in the
        fields; :func:`ragqa.render.report_to_text` gives the console tables.
        """
        n_judges = len(self.judge_ids)
        lines = [
            f"Report({self.n_samples} sample(s) x {len(self.summaries)} metric(s) x {n_judges} judge(s), "
            f"{self.wall_time_s:.1f} s)"
        ]
        for s in self.summaries:
            arrow = "↑" if s.direction == "higher" else "↓"
            judges = ", ".join(f"{j.judge_id} {_short(j.mean)}" for j in s.judges)
            lines.append(
                f"  {s.metric} {arrow} {_short(s.aggregate_mean)} ({s.strategy}), "
                f"{s.n_scored}/{s.n_samples} scored" + (f"; {judges}" if judges else "")
            )
        failed = sum(j.n_failed for s in self.summaries for j in s.judges)
        if failed:
            lines.append(f"  {failed} judge failure(s): see report.failures")
        if self.skipped:
            lines.append(f"  {len(self.skipped)} skipped (sample, metric) pair(s): see report.skipped")
        return "\n".join(lines)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """The summary as a small HTML table for notebooks (every value escaped).

        One row per metric: direction, aggregate mean (strategy), samples scored, each judge's
        mean, judge failures. The run's size and wall time head the table.
        """
        judge_ids = self.judge_ids
        head = "".join(f"<th>{escape(j)}</th>" for j in judge_ids)
        rows = []
        for s in self.summaries:
            means = {j.judge_id: j.mean for j in s.judges}
            cells = "".join(f"<td>{_short(means[j]) if j in means else '-'}</td>" for j in judge_ids)
            arrow = "&uarr; higher is better" if s.direction == "higher" else "&darr; lower is better"
            failed = sum(j.n_failed for j in s.judges)
            rows.append(
                f"<tr><td><b>{escape(s.metric)}</b></td><td>{arrow}</td>"
                f"<td><b>{_short(s.aggregate_mean)}</b> ({escape(s.strategy)})</td>"
                f"<td>{s.n_scored}/{s.n_samples}</td>{cells}<td>{failed}</td></tr>"
            )
        caption = (
            f"ragqa report: {self.n_samples} sample(s) x {len(self.summaries)} metric(s) x "
            f"{len(judge_ids)} judge(s), {self.wall_time_s:.1f} s"
        )
        return (
            f"<table><caption style='text-align:left'>{escape(caption)}</caption>"
            f"<thead><tr><th>metric</th><th>direction</th><th>aggregate</th><th>scored</th>{head}"
            f"<th>failed</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def to_jsonl(self, path: str | Path) -> Path:
        """Write one :func:`~ragqa.render.records.result_record` per line to ``path`` (UTF-8, atomically).

        Returns:
            The path written.

        Raises:
            ConfigError: when ``path`` cannot be written (a directory, a missing folder, no permission).
        """
        written: Path = writer_for("jsonl")(self, path)
        return written

    def to_csv(self, path: str | Path) -> Path:
        """Write the CSV view (one row per sample x metric, a column per judge) to ``path``, atomically.

        See :mod:`ragqa.render.csvfile` for the columns.

        Returns:
            The path written.

        Raises:
            ConfigError: when ``path`` cannot be written (a directory, a missing folder, no permission).
        """
        written: Path = writer_for("csv")(self, path)
        return written

    def to_pandas(self, form: Literal["wide", "long"] = "wide") -> Any:
        """The results as a :class:`pandas.DataFrame` (needs the ``pandas`` extra).

        ``wide``: one row per (sample, metric) with the aggregate, its strategy, spread and counts,
        and a ``score:<judge>`` and ``failure:<judge>`` column per judge. ``long``: one row per
        (sample, metric, judge) with the judge's score, status, reason, failure and usage. NaN
        stays NaN. See :mod:`ragqa.render.frames` for every column.

        Raises:
            MissingExtraError: when pandas is not installed (``pip install 'ragqa[pandas]'``).
            ValueError: for a ``form`` other than ``wide`` or ``long``.
        """
        return writer_for("pandas")(self, form)


def _short(value: float) -> str:
    """A score with 3 decimals, ``n/a`` for NaN (the console's format)."""
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def with_uncertainty(
    summary: MetricSummary, found: tuple[Interval | None, Sequence[Interval | None], Decomposition | None]
) -> MetricSummary:
    """``summary`` with the intervals and variance split :func:`ragqa.uncertainty.metric_intervals` found.

    Args:
        summary: the metric's summary, without intervals.
        found: ``(aggregate interval, judge intervals in the order of summary.judges, decomposition)``.
    """
    interval, judge_intervals, decomposition = found
    judges = [j.model_copy(update={"interval": i}) for j, i in zip(summary.judges, judge_intervals, strict=True)]
    return summary.model_copy(update={"judges": judges, "interval": interval, "decomposition": decomposition})
