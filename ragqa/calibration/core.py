"""Calibration results and how they are computed from a finished run and the human labels."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ragqa.calibration.label_free import LabelFree, label_free_rates
from ragqa.calibration.stats import (
    Direction,
    Interval,
    LabelKind,
    as_floats,
    auroc_along,
    auroc_groups,
    best_threshold,
    bootstrap_ci,
    label_kind,
    spearman,
)
from ragqa.errors import DatasetError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from ragqa.report import Report
    from ragqa.schema import Sample

__all__ = ["PANEL", "Calibration", "JudgeCalibration", "MetricCalibration", "calibrate_report", "read_labels"]

PANEL = "panel"
"""The ``judge_id`` of the panel aggregate's row."""


class JudgeCalibration(BaseModel):
    """Agreement of one judge (or of the panel aggregate) with the human labels on one metric.

    Attributes:
        judge_id: the judge, or :data:`PANEL` for the aggregate.
        n: samples with both a finite score and a label.
        n_excluded: samples left out: NaN score, judge failure or no aggregate.
        auroc: AUROC in [0, 1] (binary labels; ``None`` for graded), 0.5 = chance, higher = better.
        auroc_ci: its bootstrap interval.
        spearman: Spearman's rho in [-1, 1] (graded labels; ``None`` for binary), higher = better;
            ``nan`` when the scores or labels are constant.
        spearman_ci: its bootstrap interval.
        accuracy: share in [0, 1] of samples where the gate at :attr:`threshold` agrees with
            "label >= pass_label".
        accuracy_ci: its bootstrap interval (the threshold re-chosen in each resample).
        threshold: the best gate threshold, on the metric's scale; a sample passes when its score
            is ``>= threshold`` (``<=`` for lower-is-better metrics).
        label_free: a judge of a panel of two or more: its gate's rates as Dawid-Skene estimates
            them without the labels, next to the rates measured with them
            (:mod:`ragqa.calibration.label_free`); ``None`` for the panel row and a lone judge.
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    n: int
    n_excluded: int
    auroc: float | None = None
    auroc_ci: Interval | None = None
    spearman: float | None = None
    spearman_ci: Interval | None = None
    accuracy: float
    accuracy_ci: Interval
    threshold: float
    label_free: LabelFree | None = None


class MetricCalibration(BaseModel):
    """Calibration of one metric: a row per judge, then the panel aggregate.

    Attributes:
        metric: the metric name.
        direction: the metric's direction (``higher`` or ``lower`` is better).
        strategy: the panel's aggregation strategy.
        judges: one row per judge, in panel order.
        panel: the aggregate's row; its ``threshold`` is the one a CI gate should use.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str
    direction: Direction
    strategy: str
    judges: list[JudgeCalibration]
    panel: JudgeCalibration


class Calibration(BaseModel):
    """The result of :func:`calibrate`.

    Attributes:
        label_field: the ``metadata`` key the labels came from.
        label_kind: ``binary`` (labels 0 and 1 only) or ``graded``.
        pass_label: labels ``>=`` this count as "pass" for accuracy.
        n_samples: labelled samples scored.
        confidence: the confidence level of the intervals (0.95).
        n_resamples: bootstrap resamples per interval.
        seed: the bootstrap's seed.
        metrics: one entry per metric, in run order.
    """

    model_config = ConfigDict(extra="forbid")

    label_field: str
    label_kind: LabelKind
    pass_label: float
    n_samples: int
    confidence: float
    n_resamples: int
    seed: int
    metrics: list[MetricCalibration]
    cascade_fit: dict[str, Any] | None = None
    """The cascade rule fitted on the run (``--fit-cascade``), as written to its file; ``None`` without a fit."""


def _judge_row(
    judge_id: str,
    scores: Sequence[float],
    labels: Sequence[float],
    *,
    n_excluded: int,
    direction: Direction,
    kind: LabelKind,
    pass_label: float,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> JudgeCalibration:
    """One row of the calibration table: the figures of one judge's finite scores against the labels."""
    import numpy as np

    s, y = as_floats(scores), as_floats(labels)
    sign = 1.0 if direction == "higher" else -1.0
    oriented = sign * s
    passed = y >= pass_label
    nan = Interval(low=math.nan, high=math.nan)
    row: dict[str, Any] = {"judge_id": judge_id, "n": int(s.size), "n_excluded": n_excluded}
    pos, neg = s[passed], s[~passed]
    if s.size == 0:
        return JudgeCalibration(**row, accuracy=math.nan, accuracy_ci=nan, threshold=math.nan)
    if kind == "binary":
        if pos.size and neg.size:
            row["auroc"] = auroc_groups(sign * pos, sign * neg)
            row["auroc_ci"] = bootstrap_ci(
                lambda p, q, axis: auroc_along(sign * p, sign * q, axis=axis),
                [pos, neg],
                paired=False,
                vectorized=True,
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
            )
        else:
            row["auroc"], row["auroc_ci"] = math.nan, nan
    else:
        row["spearman"] = spearman(oriented, y)
        row["spearman_ci"] = bootstrap_ci(
            spearman, [oriented, y], paired=True, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
    threshold, accuracy = best_threshold(s, passed, direction)

    def resampled_accuracy(p: npt.NDArray[np.float64], q: npt.NDArray[np.float64]) -> float:
        both = np.concatenate([p, q])
        verdicts = np.concatenate([np.ones(p.size, dtype=bool), np.zeros(q.size, dtype=bool)])
        return best_threshold(both, verdicts, direction)[1]

    if pos.size and neg.size:
        accuracy_ci = bootstrap_ci(
            resampled_accuracy, [pos, neg], paired=False, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
    else:  # one class only: accuracy is 1 at the most lenient (all pass) or strictest threshold
        accuracy_ci = Interval(low=accuracy, high=accuracy)
    return JudgeCalibration(**row, accuracy=accuracy, accuracy_ci=accuracy_ci, threshold=threshold)


# ---- labels and reports --------------------------------------------------------------------------


def read_labels(samples: Sequence[Sample], label_field: str) -> dict[str, float]:
    """Each sample's human label, from ``sample.metadata[label_field]``.

    Args:
        samples: the samples (with ids).
        label_field: the ``metadata`` key; a leading ``metadata.`` is accepted and dropped.

    Returns:
        ``{sample_id: label}``; ``bool`` labels become 0.0 / 1.0.

    Raises:
        DatasetError: for a sample without the label, or a label that is not a finite number,
            naming the sample, the field and the fix; raised before any judge call.
    """
    key = label_field.removeprefix("metadata.")
    labels: dict[str, float] = {}
    for i, sample in enumerate(samples):
        sample_id = sample.id if sample.id is not None else f"item {i + 1}"
        value = sample.metadata.get(key)
        if value is None:
            raise DatasetError(
                f'no label: put the human label under metadata.{key} (e.g. "metadata": {{"{key}": 1}}) '
                "or choose another field with --label-field",
                sample_id=sample_id,
                field=f"metadata.{key}",
            )
        if not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            raise DatasetError(
                f"the label {value!r} is not a finite number; use 0/1 for binary labels or a grade such as 1-5",
                sample_id=sample_id,
                field=f"metadata.{key}",
            )
        labels[sample_id] = float(value)
    return labels


def calibrate_report(
    report: Report,
    labels: Mapping[str, float],
    *,
    label_field: str = "human_score",
    pass_label: float | None = None,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> Calibration:
    """Compare a finished run's scores with human labels (pure: no judge call).

    Args:
        report: the run's report (its ``results``: a :class:`~ragqa.schema.PanelResult` per
            sample and metric).
        labels: ``{sample_id: label}`` for every scored sample, higher = better.
        label_field: recorded in the result.
        pass_label: labels ``>=`` this pass, for accuracy and the threshold; default 1 for binary
            labels, else the midpoint of the lowest and highest label.
        confidence: the confidence level of the intervals.
        n_resamples: bootstrap resamples per interval.
        seed: the bootstrap's seed.

    Returns:
        The :class:`Calibration`. NaN scores, judge failures and samples without an aggregate are
        left out of each row and counted in its ``n_excluded``.

    Raises:
        DatasetError: when a scored sample has no label.
        ValueError: when ``labels`` is empty.
    """
    if not labels:
        raise ValueError("no labels to calibrate against")
    values = list(labels.values())
    kind = label_kind(values)
    if pass_label is None:
        pass_label = 1.0 if kind == "binary" else (min(values) + max(values)) / 2
    metrics: list[MetricCalibration] = []
    for summary in report.summaries:
        results = [r for r in report.results if r.metric == summary.metric]
        for result in results:
            if result.sample_id not in labels:
                raise DatasetError("scored but has no label", sample_id=result.sample_id, field=label_field)
        options = {
            "direction": summary.direction,
            "kind": kind,
            "pass_label": pass_label,
            "confidence": confidence,
            "n_resamples": n_resamples,
            "seed": seed,
        }

        def row(
            judge_id: str, pairs: list[tuple[float | None, float]], options: dict[str, Any] = options
        ) -> JudgeCalibration:
            kept = [(s, y) for s, y in pairs if s is not None and math.isfinite(s)]
            return _judge_row(
                judge_id,
                [s for s, _ in kept],
                [y for _, y in kept],
                n_excluded=len(pairs) - len(kept),
                **options,
            )

        judge_rows = []
        for judge in summary.judges:
            pairs: list[tuple[float | None, float]] = []
            for result in results:
                outcome = next((o for o in result.judges if o.judge_id == judge.judge_id), None)
                score = outcome.score.value if outcome is not None and outcome.score is not None else None
                pairs.append((score, labels[result.sample_id]))
            judge_rows.append(row(judge.judge_id, pairs))
        rates = label_free_rates(
            results,
            [r.judge_id for r in judge_rows],
            [r.threshold for r in judge_rows],
            labels,
            pass_label=pass_label,
            direction=summary.direction,
        )
        judge_rows = [r.model_copy(update={"label_free": rates.get(r.judge_id)}) for r in judge_rows]
        panel = row(
            PANEL,
            [(r.aggregate.value if r.aggregate.quorum_met else None, labels[r.sample_id]) for r in results],
        )
        metrics.append(
            MetricCalibration(
                metric=summary.metric,
                direction=summary.direction,
                strategy=summary.strategy,
                judges=judge_rows,
                panel=panel,
            )
        )
    return Calibration(
        label_field=label_field,
        label_kind=kind,
        pass_label=pass_label,
        n_samples=len({r.sample_id for r in report.results}),
        confidence=confidence,
        n_resamples=n_resamples,
        seed=seed,
        metrics=metrics,
    )
