"""The console form of a calibration: one rich table per metric."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragqa.calibration.core import PANEL, Calibration
from ragqa.calibration.stats import Interval

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["calibration_table"]


def _figure(value: float | None, interval: Interval | None) -> str:
    if value is None:
        return "-"
    if math.isnan(value):
        return "n/a"
    text = f"{value:.3f}"
    if interval is not None and not math.isnan(interval.low):
        text += f" [{interval.low:.3f}, {interval.high:.3f}]"
    return text


def calibration_table(calibration: Calibration) -> list[Table]:
    """Rich tables of a :class:`Calibration`: one per metric, a row per judge, then the panel.

    Columns: judge, n (excluded), AUROC or Spearman with its interval, accuracy with its interval,
    and the best threshold with the gate's comparison (``>=`` or ``<=``). With two or more judges
    the caption adds a line per judge: its gate's accuracy, sensitivity and specificity as
    Dawid-Skene estimates them without the labels, each beside the value measured with them
    (:mod:`ragqa.calibration.label_free`).
    """
    from rich.table import Table

    tables = []
    level = f"{calibration.confidence:.0%} CI"
    for metric in calibration.metrics:
        comparison = ">=" if metric.direction == "higher" else "<="
        caption = (
            f"CI gate: a sample passes when the {metric.strategy} aggregate is {comparison} "
            f"{metric.panel.threshold:.4g} (the panel's best-accuracy threshold)"
        )
        free = [(row, row.label_free) for row in metric.judges if row.label_free is not None]
        if free:
            caption += "\nno labels (Dawid-Skene on each judge's pass/fail at its threshold) vs labels:"
        for row, rates in free:
            caption += (
                f"\n  {row.judge_id}: accuracy {_figure(rates.accuracy, None)} vs {_figure(row.accuracy, None)}"
                f", sensitivity {_figure(rates.sensitivity, None)} vs {_figure(rates.measured_sensitivity, None)}"
                f", specificity {_figure(rates.specificity, None)} vs {_figure(rates.measured_specificity, None)}"
            )
        table = Table(
            title=f"{metric.metric}: agreement with metadata.{calibration.label_field.removeprefix('metadata.')} "
            f"({calibration.label_kind}, pass = label >= {calibration.pass_label:g}, {calibration.n_samples} samples)",
            title_justify="left",
            caption=caption,
            caption_justify="left",
        )
        table.add_column("judge", style="bold", no_wrap=True)
        table.add_column("n (excluded)", justify="right")
        statistic = "AUROC" if calibration.label_kind == "binary" else "Spearman"
        table.add_column(f"{statistic} [{level}]", justify="right")
        table.add_column(f"accuracy [{level}]", justify="right")
        table.add_column("threshold", justify="right")
        for row in [*metric.judges, metric.panel]:
            name = f"panel ({metric.strategy})" if row.judge_id == PANEL else row.judge_id
            if calibration.label_kind == "binary":
                agreement = _figure(row.auroc, row.auroc_ci)
            else:
                agreement = _figure(row.spearman, row.spearman_ci)
            table.add_row(
                name,
                f"{row.n} ({row.n_excluded})",
                agreement,
                _figure(row.accuracy, row.accuracy_ci),
                "n/a" if math.isnan(row.threshold) else f"{comparison} {row.threshold:.4g}",
            )
        tables.append(table)
    return tables
