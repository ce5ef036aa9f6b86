"""The label-free side of a calibration: each judge's pass/fail rates without labels and with them.

Each judge's rates are estimated by Dawid-Skene without the labels, next to the same rates
measured against the labels.

Each judge's per-sample gate verdict (pass when its score is ``>=`` its best-accuracy threshold,
``<=`` for lower-is-better metrics; the ``threshold`` of its calibration row) is one binary verdict
per (sample, judge). :func:`ragqa.jury.fit_dawid_skene` (Dawid and Skene 1979, "Maximum likelihood
estimation of observer error-rates using the EM algorithm", JRSS C 28(1)) estimates each judge's
sensitivity, specificity and accuracy from the panel's agreements alone; the labels then measure
the same rates of the same verdicts. How close the two are says how far the label-free
reliability section of a run without labels (``docs/jury.md``) can be trusted on that data. The
model assumes judges err independently given the truth; variants of one judge break that, and its
estimates are then too good.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from ragqa._math import mean_or_nan
from ragqa.calibration.stats import Direction
from ragqa.schema import PanelResult
from ragqa.thresholds import passes

__all__ = ["LabelFree", "label_free_rates"]


class LabelFree(BaseModel):
    """One judge's pass/fail rates on one metric: estimated without labels, and measured with them.

    All in [0, 1], higher is better; NaN when a class is empty. "Pass" is the positive class:
    sensitivity is the share of passing samples the judge passes, specificity the share of failing
    samples it fails.

    Attributes:
        accuracy: Dawid-Skene's estimate, ``prevalence * sensitivity + (1 - prevalence) * specificity``.
        sensitivity: Dawid-Skene's estimate.
        specificity: Dawid-Skene's estimate.
        measured_sensitivity: the same verdicts against the labels.
        measured_specificity: the same verdicts against the labels.
    """

    model_config = ConfigDict(extra="forbid")

    accuracy: float
    sensitivity: float
    specificity: float
    measured_sensitivity: float
    measured_specificity: float


def label_free_rates(
    results: Sequence[PanelResult],
    judge_ids: Sequence[str],
    thresholds: Sequence[float],
    labels: Mapping[str, float],
    *,
    pass_label: float,
    direction: Direction,
) -> dict[str, LabelFree]:
    """Each judge's Dawid-Skene estimates next to its measured rates (see the module docstring).

    Args:
        results: one metric's results, one per sample.
        judge_ids: the panel's judges, in order (fewer than two: no estimate).
        thresholds: each judge's gate threshold (its calibration row's), same order; NaN: the judge
            gives no verdict.
        labels: ``{sample_id: label}``; a label ``>= pass_label`` passes.
        pass_label: the pass line of the labels.
        direction: the metric's direction (the gate's comparison).

    Returns:
        ``{judge_id: LabelFree}``; empty with fewer than two judges or no sample any judge scored.

    Raises:
        ValueError: when ``results`` is not empty and ``thresholds`` and ``judge_ids`` differ in length.
        KeyError: when a result's sample has no entry in ``labels`` (:func:`ragqa.calibration.calibrate_report`
            reads every sample's label first, :func:`~ragqa.calibration.read_labels`).
    """
    import numpy as np

    from ragqa.jury import fit_dawid_skene

    if len(judge_ids) < 2:
        return {}
    matrix = np.full((len(results), len(judge_ids)), np.nan)
    for i, result in enumerate(results):
        scores = {o.judge_id: o.score.value for o in result.judges if o.score is not None}
        for j, (judge, threshold) in enumerate(zip(judge_ids, thresholds, strict=True)):
            score = scores.get(judge, math.nan)
            if math.isfinite(score) and math.isfinite(threshold):
                matrix[i, j] = float(passes(score, threshold, direction))
    seen = ~np.isnan(matrix).all(axis=1)
    if not seen.any():
        return {}
    fit = fit_dawid_skene(matrix[seen])
    passed = [labels[r.sample_id] >= pass_label for r in results]
    out = {}
    for j, judge in enumerate(judge_ids):
        column = matrix[:, j]
        pos = [float(v) for v, p in zip(column, passed, strict=True) if p and not math.isnan(v)]
        neg = [1.0 - float(v) for v, p in zip(column, passed, strict=True) if not p and not math.isnan(v)]
        out[judge] = LabelFree(
            accuracy=float(fit.accuracy[j]),
            sensitivity=float(fit.sensitivity[j]),
            specificity=float(fit.specificity[j]),
            measured_sensitivity=mean_or_nan(pos),
            measured_specificity=mean_or_nan(neg),
        )
    return out
