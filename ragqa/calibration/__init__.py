"""Calibration: how well each judge, and the panel aggregate, agree with human labels.

A labelled dataset carries a human judgement per sample in ``metadata`` (``metadata.human_score``
by default). :func:`calibrate` scores the dataset through the run layer (the same
:class:`~ragqa.run.runner.Runner` as ``ragqa evaluate``) and :func:`calibrate_report` compares
every judge's scores and the panel aggregate with the labels:

- binary labels (only 0 and 1): AUROC, the probability that a sample labelled 1 scores better than
  one labelled 0 (ties count one half); the Mann-Whitney U statistic over ``n_pos * n_neg``;
- graded labels (more than two values): Spearman's rank correlation;
- both: accuracy of the per-sample gate "pass when the score is at least (at most, for
  lower-is-better metrics) ``t``" at the best ``t``, against "the label passes"
  (label ``>= pass_label``), and that ``t``: the threshold a CI gate should use.

Labels are read as "higher is better" (1 = a good answer). Scores are oriented by the metric's
direction first, so AUROC and Spearman are above 0.5 / 0 when a judge agrees with the labels,
whatever the metric's direction. Each figure has a bootstrap confidence interval
(``scipy.stats.bootstrap``, percentile method, fixed seed); for binary pass/fail the two classes are
resampled separately (a stratified bootstrap), so no resample lacks a class.

The statistics are pure functions (:func:`auroc`, :func:`spearman`, :func:`best_threshold`,
:func:`bootstrap_ci`) tested against hand-computed values.
"""

from ragqa.calibration.api import acalibrate, calibrate
from ragqa.calibration.core import (
    PANEL,
    Calibration,
    JudgeCalibration,
    MetricCalibration,
    calibrate_report,
    read_labels,
)
from ragqa.calibration.stats import Interval, auroc, best_threshold, bootstrap_ci, label_kind, spearman
from ragqa.calibration.table import calibration_table

__all__ = [
    "PANEL",
    "Calibration",
    "Interval",
    "JudgeCalibration",
    "MetricCalibration",
    "acalibrate",
    "auroc",
    "best_threshold",
    "bootstrap_ci",
    "calibrate",
    "calibrate_report",
    "calibration_table",
    "label_kind",
    "read_labels",
    "spearman",
]
