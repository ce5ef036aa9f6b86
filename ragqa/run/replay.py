"""Rebuilding a run's report from its results file, and writing a report where the user asked (``ragqa report``).

Run-layer work: it reads results files (:mod:`ragqa.run.results_file`), loads and fingerprints the dataset
(:mod:`ragqa.run.runner`) and resolves thresholds, then hands the report to a renderer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragqa.aggregate import PANEL_STRATEGIES, PanelStrategy, aggregate
from ragqa.datasets import load_dataset
from ragqa.errors import ConfigError, RagqaError
from ragqa.jury.cascade import Cascade, CascadeTally
from ragqa.jury.panel import jury_collector, voted_aggregate
from ragqa.jury.reliability import attach_item_reliability
from ragqa.metrics import Metric, build_metric, value_ranges
from ragqa.render.paths import check_output_path
from ragqa.render.records import read_result_record
from ragqa.render.registry import RenderOptions, renderer_for
from ragqa.report import MetricSummary, Report, summarize
from ragqa.run.results_file import ResultsHeader, read_results
from ragqa.run.runner import dataset_fingerprint
from ragqa.schema import DEFAULT_CONFIDENCE, Aggregate, JudgeOutcome, Language, OrderProbeResult, PanelResult, Sample

__all__ = [
    "cascade_summaries",
    "item_summaries",
    "jury_summaries",
    "report_from_results",
    "resolve_report_thresholds",
    "write_report",
]


def report_from_results(path: Path, *, thresholds: Mapping[str, float] | None = None) -> tuple[Report, str | None]:
    """Rebuild the :class:`~ragqa.report.Report` of a finished (or partial) run from its results file.

    The results are read with :func:`ragqa.run.results_file.read_results` and summarised with
    :func:`ragqa.report.summarize` (panel order and the intervals' confidence level from the
    header); a voting run's (``claim-vote``, ``dawid-skene``) reliability section is fitted again
    from the judges' verdicts in the records (:func:`jury_summaries`), any other multi-judge run's
    per-item section fitted again from the judges' scores and the header's thresholds
    (:func:`item_summaries`), and a cascade run's section
    (calls per tier, escalations, an audit's agreement) counted again from the records and the
    header's ``cascade`` (:func:`cascade_summaries`). The samples (the
    drill-down's inputs) are loaded from the header's dataset path when
    that file is readable and still holds the samples that were scored (its
    :func:`ragqa.run.runner.dataset_fingerprint` matches); otherwise ``report.samples`` stays empty
    and the note says why.

    Args:
        path: a results file written by ``ragqa evaluate --out results.jsonl`` (or its ``.partial``).
        thresholds: ``{metric name or key: value}`` as the user wrote them (``ragqa report
            --threshold``); they replace the header's for the per-item reliability section, as
            they replace the run's for the report's gate (:func:`resolve_report_thresholds`).

    Returns:
        ``(report, note)``: ``note`` is ``None`` when the inputs were loaded, else one sentence for the user.

    Raises:
        ConfigError: when ``path`` is not a readable ragqa results file, or has no result, or a
            threshold names no metric of the run (key ``--threshold``).
    """
    try:
        header, records = read_results(path)
    except ConfigError as exc:
        raise ConfigError(
            re.sub(r"[;,] run without --resume$", "", str(exc).replace("--resume", "ragqa report", 1)), key="results"
        ) from None
    if not records:
        raise ConfigError(f"ragqa report: {path} holds no result yet", key="results")
    results = [read_result_record(r) for r in records.values()]
    chosen = resolve_report_thresholds(header.metrics, thresholds)
    if chosen:  # the user's thresholds over the run's (or the metrics' defaults) kept in the header
        header = replace(header, thresholds={**(header.thresholds or {}), **chosen})
    level = header.confidence if header.confidence is not None else DEFAULT_CONFIDENCE  # older files lack it
    summaries = summarize(results, header.judges, confidence=level, ranges=value_ranges(header.metrics))
    report = Report(
        results=results,
        summaries=cascade_summaries(
            header, results, item_summaries(header, results, jury_summaries(header, results, summaries))
        ),
        run_id=header.run_id,
        dataset=header.dataset,
        started_at=header.started_at,
        order_probe=OrderProbeResult.model_validate(header.probe) if header.probe is not None else None,
    )
    samples, note = _dataset_samples(header.dataset, header.dataset_fingerprint)
    if samples is not None:
        scored = set(report.sample_ids)
        report.samples = [s for s in samples if s.label in scored]
    return report, note


def _metric_of(key: str) -> Metric | None:
    """The metric whose result key is ``key`` (``name`` or ``name(option=value, ...)``), or ``None``."""
    name, _, rest = key.partition("(")
    options: dict[str, object] = {}
    for part in filter(None, (p.strip() for p in rest.rstrip(")").split(","))):
        option, _, text = part.partition("=")
        try:
            options[option.strip()] = float(text)
        except ValueError:
            options[option.strip()] = text.strip()
    try:
        metric = build_metric(name.strip(), options)
    except (RagqaError, TypeError, ValueError):
        return None
    return metric if metric.key == key else None


def jury_summaries(
    header: ResultsHeader, results: list[PanelResult], summaries: list[MetricSummary]
) -> list[MetricSummary]:
    """``summaries`` with the reliability section of a voting run, fitted from its records' verdicts.

    The same fit as the run's own (:class:`ragqa.jury.reliability.JuryCollector`, same seed): the
    metrics are rebuilt from their keys, the tie-breaking judge is the header's ``extractor`` (the
    first judge in files that lack it). Results not aggregated by ``claim-vote`` or ``dawid-skene``,
    or a panel of one judge, give the summaries unchanged.
    """
    voted = {r.metric for r in results if r.aggregate.strategy in ("claim-vote", "dawid-skene")}
    if len(header.judges) < 2 or not voted:
        return summaries
    metrics = [m for key in header.metrics if key in voted and (m := _metric_of(key)) is not None]
    tie = header.judges.index(header.extractor) if header.extractor in header.judges else 0
    collector = jury_collector(metrics, header.judges, tie_breaker=tie)
    return collector.attach(summaries, [r for r in results if r.metric in voted])


def item_summaries(
    header: ResultsHeader, results: Sequence[PanelResult], summaries: list[MetricSummary]
) -> list[MetricSummary]:
    """``summaries`` with the per-item reliability section, fitted from the records' scores as the run fits it.

    The same fit as the run's own (:func:`ragqa.jury.reliability.attach_item_reliability`, same
    seed) on each judge's score per record, in the file's order (dataset order), at the header's
    ``thresholds``; a file written before headers kept them has none, so its metrics get the
    "no threshold" line.
    """
    judges = {judge: j for j, judge in enumerate(header.judges)}

    def scores(metric: str) -> NDArray[np.float64]:
        rows = [r for r in results if r.metric == metric]
        matrix = np.full((len(header.judges), len(rows)), np.nan)
        for i, result in enumerate(rows):
            for outcome in result.judges:
                j = judges.get(outcome.judge_id)
                if j is not None and outcome.ok and outcome.score is not None and math.isfinite(outcome.score.value):
                    matrix[j, i] = outcome.score.value
        return matrix

    return attach_item_reliability(summaries, header.judges, header.thresholds or {}, scores)


def cascade_summaries(
    header: ResultsHeader, results: list[PanelResult], summaries: list[MetricSummary]
) -> list[MetricSummary]:
    """``summaries`` with a cascade run's section, counted again from its records (as the live run counts it).

    The cascade (tier 2, rule, thresholds, ``source``, ``audit``) is the header's ``cascade``
    (:meth:`ragqa.jury.cascade.Cascade.from_header`); the records are fed to the run's own
    :class:`ragqa.jury.cascade.CascadeTally`, with tier 1's aggregate recomputed by each metric's
    recorded strategy and quorum (a voting run's tie-breaking judge: the header's ``extractor``). A
    file without a cascade, or whose header's ``cascade`` cannot be read, gives the summaries unchanged.
    Files written before the header kept the thresholds recount an audit's escalations by
    ``spread`` alone. Calls and cost per tier are the records' usage, so a resumed run's counts
    include the calls of its first part.
    """
    if header.cascade is None:
        return summaries
    try:
        cascade = Cascade.from_header(header.cascade)
    except (KeyError, TypeError, ValueError):
        return summaries
    metrics = [m for key in header.metrics if (m := _metric_of(key)) is not None]
    recorded = {r.metric: r.aggregate for r in results}

    def combine(metric: Metric, outcomes: Sequence[JudgeOutcome]) -> Aggregate:
        kept = recorded[metric.key]
        strategy = _strategy(kept.strategy)
        if strategy == "claim-vote" or strategy == "dawid-skene":
            ids = [o.judge_id for o in outcomes]
            tie = ids.index(header.extractor) if header.extractor in ids else 0
            return voted_aggregate(metric, outcomes, strategy=strategy, quorum=kept.quorum, tie_breaker=tie)
        scores = [o.score.value for o in outcomes if o.score is not None]
        n_failed = sum(1 for o in outcomes if not o.ok)
        return aggregate(scores, n_failed=n_failed, strategy=strategy, quorum=kept.quorum)

    tally = CascadeTally(cascade, metrics, header.judges, combine)
    for result in results:
        tally.add(result)
    return tally.attach(summaries)


def _strategy(name: str) -> PanelStrategy:
    for strategy in PANEL_STRATEGIES:
        if strategy == name:
            return strategy
    return "mean"


def _dataset_samples(dataset: str, fingerprint: str) -> tuple[list[Sample] | None, str | None]:
    """The run's samples from its dataset file, or ``None`` and why not."""
    source = Path(dataset)
    if not source.is_file():
        return None, f"the dataset {dataset} is not readable here, so the drill-down shows no inputs"
    try:
        samples = load_dataset(source)
    except (RagqaError, OSError) as exc:
        return None, f"the dataset {dataset} could not be loaded ({exc}), so the drill-down shows no inputs"
    if dataset_fingerprint(samples) != fingerprint:
        return None, f"the dataset {dataset} changed since the run, so the drill-down shows no inputs"
    return samples, None


def write_report(
    report: Report, path: Path, *, language: Language = "en", thresholds: Mapping[str, float] | None = None
) -> Path:
    """Write ``report`` to ``path`` with the renderer its suffix selects (``.html`` here; any registered one).

    Thresholds are given as the user wrote them (``faithfulness``, or a full key such as
    ``noise_sensitivity(mode=relevant)``); a full key wins over a bare metric name.

    Args:
        report: the report (e.g. from :func:`report_from_results`).
        path: the file to write; its parent folder must exist.
        language: labels and interpretation bands.
        thresholds: ``{metric name or key: value}``.

    Returns:
        The path written.

    Raises:
        ConfigError: for an unknown suffix or a path that cannot be written (key ``-o``), or a
            threshold naming no metric of the report (key ``--threshold``).
    """
    renderer = renderer_for(path, option="-o")
    target = check_output_path(path, option="-o")
    resolved = resolve_report_thresholds([s.metric for s in report.summaries], thresholds)
    renderer.write(report, target, RenderOptions(language=language, thresholds=resolved))
    return target


def resolve_report_thresholds(keys: Sequence[str], thresholds: Mapping[str, float] | None) -> dict[str, float]:
    """``{metric key: threshold}`` of a rebuilt report from the thresholds as the user wrote them.

    A bare metric name (``faithfulness``) applies to every key of that metric; a full key
    (``noise_sensitivity(mode=relevant)``) wins over a bare name.

    Args:
        keys: the report's metric keys, in order.
        thresholds: ``{metric name or key: value}``; ``None`` or empty gives ``{}``.

    Raises:
        ConfigError: for a threshold naming no metric of ``keys`` (key ``--threshold``).
    """
    resolved: dict[str, float] = {}
    for name, value in (thresholds or {}).items():
        matched = [k for k in keys if k == name or k.split("(", 1)[0] == name]
        if not matched:
            raise ConfigError(
                f"--threshold {name}: no metric of this run is called so; the run has {', '.join(keys)}",
                key="--threshold",
            )
        for key in matched:
            if key not in resolved or key == name:
                resolved[key] = value
    return resolved
