"""The cascade on the real data: tier-2 calls saved against agreement with the full panel and the labels.

Called by ``benchmarks/_jury_real.py`` (``benchmarks/jury.py --real``) with the results of its
plain ``mean`` run of each panel on each dataset (every judge scored every sample: an audit run in
the cascade's words). Tier 2 is the two best judges of the panel by the study's own table
(:data:`TIER2`), tier 1 the other three. The cascade is not run a second time: each result becomes
a :class:`ragqa.calibration.cascade.CascadeItem` (what ``ragqa calibrate --fit-cascade`` reads) and
the escalation is decided by the cascade's own rule, :func:`ragqa.jury.cascade.escalation`, against
the study's gate (faithfulness >= :data:`THRESHOLD`). An item's cascade value is tier 1's mean
where the rule does not escalate and the full panel's mean where it does, as in a cascade run.

The samples are split in two seeded halves: the rule is fitted on half A with the labels
(:func:`ragqa.calibration.cascade.fit_cascade`, its default target: the full panel's agreement
with the labels less 0.01) and every row is reported on half B, so the fitted row is out of sample.

Reported per rule on half B: the share of items escalated; the share of the full panel's tier-2
calls the cascade makes (the calls the local judges count, statements and verdicts steps, as a
cascade run's report counts them; they cost nothing here, so the share stands for an LLM's calls);
how often its pass/fail verdict equals the full panel's; how often it equals the label; and the
paired difference of that from the full panel's agreement with the labels. 95 % percentile
intervals from seeded bootstrap resamples of half B's samples (Efron and Tibshirani 1993).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from _bootstrap import interval_text  # a sibling of this script
from numpy.typing import NDArray

from ragqa.calibration.cascade import CascadeItem, fit_cascade
from ragqa.jury.cascade import CascadeRule, escalation
from ragqa.schema import PanelResult
from ragqa.thresholds import passes

THRESHOLD = 0.5
"""The study's gate: faithfulness >= 0.5 passes."""

TIER2 = {
    False: ("local-strict", "local-strict-binary"),
    True: ("local-strict-binary", "local-0.5-binary"),
}
"""Tier 2 of the graded (False) and binary (True) panels: their two best judges on both datasets."""

RULES: tuple[tuple[str, CascadeRule], ...] = (
    ("default (spread 0.3, margin 0.1, split on)", CascadeRule()),
    ("spread 0.5, margin 0.1, split off (the simulation's)", CascadeRule(spread=0.5, margin=0.1, split=False)),
)
"""The fixed rules reported beside the fitted one."""


@dataclass(frozen=True)
class Columns:
    """Per item of one rule: escalated, the cascade's verdict, the full panel's, the label, tier-2 calls."""

    escalated: NDArray[np.bool_]
    verdict: NDArray[np.bool_]
    full: NDArray[np.bool_]
    label: NDArray[np.bool_]
    calls: NDArray[np.float64]


def items_of(results: Sequence[PanelResult], tier2: Sequence[str], labels: Mapping[str, bool]) -> list[CascadeItem]:
    """The labelled cascade items of a full-panel run (one per sample), as ``ragqa calibrate`` builds them."""
    return [
        CascadeItem.of(r, tier2=tier2, label=labels[r.sample_id], threshold=THRESHOLD)
        for r in results
        if r.sample_id is not None
    ]


def columns(items: Sequence[CascadeItem], rule: CascadeRule | None) -> Columns:
    """Each item under ``rule`` (``None``: tier 1 alone, never escalating), by :func:`escalation`."""
    up = [rule is not None and escalation(i.values, i.tier1, THRESHOLD, i.direction, rule) is not None for i in items]
    return Columns(
        escalated=np.array(up, dtype=bool),
        verdict=np.array(
            [passes(i.full if u else i.tier1, THRESHOLD, i.direction) for i, u in zip(items, up, strict=True)]
        ),
        full=np.array([passes(i.full, THRESHOLD, i.direction) for i in items]),
        label=np.array([bool(i.label) for i in items]),
        calls=np.array([float(i.tier2_calls) for i in items]),
    )


def _figures(c: Columns, pick: NDArray[np.int64]) -> NDArray[np.float64]:
    calls = c.calls[pick]
    total = calls.sum()
    return np.array(
        [
            c.escalated[pick].mean(),
            (calls * c.escalated[pick]).sum() / total if total else math.nan,
            np.mean(c.verdict[pick] == c.full[pick]),
            np.mean(c.verdict[pick] == c.label[pick]),
            np.mean(c.verdict[pick] == c.label[pick]) - np.mean(c.full[pick] == c.label[pick]),
        ]
    )


def _ci(point: float, draws: NDArray[np.float64], signed: bool = False) -> str:
    return interval_text(draws, point, signed=signed, skip_nan=True)


def table(
    name: str,
    results: Sequence[PanelResult],
    labels: Mapping[str, bool],
    tier2: Sequence[str],
    *,
    n_boot: int,
    seed: int,
) -> str:
    """The cascade's table (markdown) of one dataset and panel: rules fitted on half A, reported on half B."""
    items = items_of(results, tier2, labels)
    order = np.random.default_rng(seed).permutation(len(items))
    half_a = [items[i] for i in sorted(order[: len(items) // 2])]
    half_b = [items[i] for i in sorted(order[len(items) // 2 :])]
    fit = fit_cascade(half_a, threshold=THRESHOLD, data=f"{name} half A")
    spread = "off" if fit.rule.spread is None else f"{fit.rule.spread:g}"
    fitted = f"fitted on half A: spread {spread}, margin {fit.rule.margin:g}, split {'on' if fit.rule.split else 'off'}"
    if not fit.reached:
        fitted += " (no rule reached the target: escalates everything)"
    rows: list[tuple[str, CascadeRule | None]] = [
        ("tier 1 alone (never escalates)", None),
        *RULES,
        (fitted, fit.rule),
        ("full panel (escalates everything)", CascadeRule(spread=0.0, margin=math.inf, split=True)),
    ]
    rng = np.random.default_rng(seed + 1)
    picks = [rng.integers(0, len(half_b), size=len(half_b)) for _ in range(n_boot)]
    every = np.arange(len(half_b))
    lines = [
        f"#### cascade on {name}: tier 2 {', '.join(tier2)}; threshold {THRESHOLD}; "
        f"{len(half_a)} samples to fit (half A), {len(half_b)} reported (half B)\n",
        "| rule | escalated | tier-2 calls, share of the full panel's [95% CI] | verdicts as the full panel's "
        "[95% CI] | verdicts as the labels [95% CI] | difference from the full panel's [95% CI] |",
        "|---|---|---|---|---|---|",
    ]
    for shown, rule in rows:
        c = columns(half_b, rule)
        point = _figures(c, every)
        draws = np.array([_figures(c, p) for p in picks])
        lines.append(
            f"| {shown} | {point[0]:.3f} | {_ci(point[1], draws[:, 1])} | {_ci(point[2], draws[:, 2])} "
            f"| {_ci(point[3], draws[:, 3])} | {_ci(point[4], draws[:, 4], signed=True)} |"
        )
    return "\n".join(lines)
