"""The console's jury sections of one metric: the judges' reliability (Dawid-Skene) and the cascade.

Shared by the console and the HTML report: :func:`jury_texts` and :func:`cascade_texts` give the
lines as ``(text, kind)`` pairs, :func:`jury_lines` and :func:`cascade_lines` style them for the
console (:mod:`ragqa.render.console` prints them under each metric's table). The figures are those
of :class:`~ragqa.report.JuryReliability` and :class:`~ragqa.report.CascadeSummary`; nothing is
recomputed here.
"""

from __future__ import annotations

import math

from rich.text import Text

from ragqa.render.labels import labels
from ragqa.render.numbers import fmt_cost, fmt_two
from ragqa.report import JuryReliability, MetricSummary
from ragqa.schema import Interval, Language
from ragqa.thresholds import comparator

__all__ = ["cascade_lines", "cascade_texts", "jury_lines", "jury_texts"]


def jury_texts(summary: MetricSummary, *, language: Language = "en") -> list[tuple[str, str]]:
    """The metric's reliability sections (:attr:`MetricSummary.jury`, ``item_jury``) as ``(text, kind)`` lines.

    ``kind`` is ``title``, ``note``, ``judge``, ``aggregate``, ``correlation`` or ``warning``. One line on the
    fit (statements and samples; per item, the threshold and the items), one per judge with its
    estimated accuracy, sensitivity and specificity, each ``E [LOW, HIGH]`` (cluster-bootstrap 95 %
    intervals), the Dawid-Skene aggregate next to the majority vote's (per item, the pass rates),
    the judges' residual correlations, and each warning (judges that err together). Two decimals;
    the JSON report has every figure. A per-item section without a threshold is one ``note`` line
    saying so. Empty when the summary has no reliability section.
    """
    out = _reliability_texts(summary.jury, summary, language) if summary.jury is not None else []
    if summary.item_jury is not None:
        out += _reliability_texts(summary.item_jury, summary, language)
    return out


def _reliability_texts(jury: JuryReliability, summary: MetricSummary, language: Language) -> list[tuple[str, str]]:
    t = labels(language)

    def span(interval: Interval) -> str:
        return f"{fmt_two(interval.estimate)} [{fmt_two(interval.low)}, {fmt_two(interval.high)}]"

    per_item = jury.unit == "item"
    if per_item and jury.threshold is None:
        return [(t["console_item_reliability_none"].format(metric=summary.metric), "note")]
    if per_item:
        cmp = comparator(summary.direction)
        title = t["console_item_reliability"].format(gate=f"{cmp} {jury.threshold:g}", n=jury.n_statements)
    else:
        title = t["console_reliability"].format(n=jury.n_statements, samples=jury.n_samples)
    out = [(title, "title")]
    out += [
        (
            t["console_reliability_judge"].format(
                judge=j.judge_id, acc=span(j.accuracy), sens=span(j.sensitivity), spec=span(j.specificity)
            ),
            "judge",
        )
        for j in jury.judges
    ]
    voted = t["console_ds_pass_rate" if per_item else "console_ds_aggregate"].format(
        voted=fmt_two(jury.voted_mean), majority=fmt_two(jury.majority_mean), n=jury.n_changed
    )
    out.append((voted, "aggregate"))
    pairs = " · ".join(f"{a}/{b} {fmt_two(r)}" for a, b, r in jury.correlations)
    out.append((f"{t['console_residual']}: {pairs}", "correlation"))
    out += [(w, "warning") for w in jury.warnings]
    return out


_JURY_STYLE = {"title": ("", "bold"), "note": ("", "dim"), "correlation": ("  ", "dim"), "warning": ("  ! ", "yellow")}


def jury_lines(summary: MetricSummary, *, language: Language = "en") -> list[Text]:
    """:func:`jury_texts` as console lines: the title bold, the rest indented, warnings in yellow."""
    return [
        Text(_JURY_STYLE.get(kind, ("  ", ""))[0] + text, style=_JURY_STYLE.get(kind, ("  ", ""))[1])
        for text, kind in jury_texts(summary, language=language)
    ]


def cascade_texts(summary: MetricSummary, *, language: Language = "en") -> list[tuple[str, str]]:
    """The cascade section of a metric (:attr:`MetricSummary.cascade`) as ``(text, kind)`` lines.

    ``kind`` is ``title`` (tiers, samples, escalation rate and reasons), ``rule``, ``calls`` (calls and
    cost per tier), ``absent`` (samples where tier 2 was not asked, so its scores are absent, not
    failed) or ``audit`` (agreement of the cascade's verdicts with the full panel's and the share of
    tier-2 calls it would have made). Empty without a cascade.
    """
    c = summary.cascade
    if c is None:
        return []
    t = labels(language)
    reasons = ": " + ", ".join(f"{k} {v}" for k, v in c.reasons.items()) if c.reasons else ""
    out = [
        (
            t["console_cascade"].format(
                source=c.source,
                tier1=", ".join(c.tier1),
                tier2=", ".join(c.tier2),
                n=c.n_items,
                escalated=c.n_escalated,
                rate=_pct(c.escalation_rate),
                reasons=reasons,
            ),
            "title",
        ),
        (
            t["console_cascade_rule"].format(
                split="on" if c.split else "off",
                spread="-" if c.spread is None else f"{c.spread:g}",
                margin=f"{c.margin:g}",
                threshold="-" if c.threshold is None else f"{c.threshold:g}",
            ),
            "rule",
        ),
        (
            t["console_cascade_calls"].format(
                j1=c.tier1_judgements,
                j2=c.tier2_judgements,
                calls1=c.tier1_usage.calls,
                cost1=fmt_cost(c.tier1_usage.cost),
                calls2=c.tier2_usage.calls,
                cost2=fmt_cost(c.tier2_usage.cost),
            ),
            "calls",
        ),
    ]
    if not c.audit and c.n_items > c.n_escalated:
        out.append((t["console_cascade_absent"].format(n=c.n_items - c.n_escalated), "absent"))
    if c.audit:
        share, basis = _pct(c.tier2_share), c.tier2_share_basis
        if c.n_compared:
            text = t["console_cascade_audit"].format(
                agreement=_pct(c.agreement), n=c.n_compared, share=share, basis=basis
            )
        else:
            text = t["console_cascade_no_threshold"].format(diff=fmt_two(c.mean_abs_diff), share=share, basis=basis)
        out.append((text, "audit"))
    return out


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f} %"


def cascade_lines(summary: MetricSummary, *, language: Language = "en") -> list[Text]:
    """:func:`cascade_texts` as console lines: the title bold, the rest indented."""
    return [
        Text(("" if kind == "title" else "  ") + text, style="bold" if kind == "title" else "")
        for text, kind in cascade_texts(summary, language=language)
    ]
