"""The console view of a run comparison (:class:`ragqa.report.compare.Comparison`): rich tables, one per metric."""

from __future__ import annotations

import math

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ragqa.render.terminal import printable
from ragqa.report.compare import Comparison, MeanDelta

__all__ = ["comparison_html", "comparison_renderable"]


def _num(value: float, *, signed: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _verdict(delta: MeanDelta) -> Text:
    if delta.regression:
        return Text("worse", style="bold red")
    if delta.improvement:
        return Text("better", style="green")
    if delta.n < 2:
        return Text("too few pairs", style="dim")
    if not delta.significant:
        return Text("no significant change", style="dim")
    return Text("within tolerance", style="dim")


def comparison_renderable(comparison: Comparison, *, limit: int = 5) -> RenderableType:
    """The comparison for the console: a table per metric, flips, failure changes, the verdict.

    Per metric, one row for the aggregate and one per judge: pairs, mean in A and B, delta
    ``B - A`` with its confidence interval, and ``worse`` / ``better`` / ``no significant change``
    (the interval contains 0) / ``within tolerance`` (it excludes 0 but not beyond the tolerance).
    Then up to ``limit`` flips, new failures and resolved failures (then a count of the rest),
    and a last line naming the regressed metrics, or saying none regressed.
    """
    pct = f"{comparison.confidence:.0%}"
    parts: list[RenderableType] = [
        Text(f"A {comparison.a}  ->  B {comparison.b}", style="bold"),
    ]
    if comparison.n_only_a or comparison.n_only_b:
        parts.append(
            Text(
                f"{comparison.n_only_a} (sample, metric) pair(s) only in A and {comparison.n_only_b} only in B "
                "are not compared",
                style="yellow",
            )
        )
    arrows = {"higher": "↑ higher is better", "lower": "↓ lower is better"}
    for m in comparison.metrics:
        parts.append(Text(""))
        title = Text()
        title.append(m.metric, style="bold")
        title.append(f"  {arrows[m.direction]}  {m.n_pairs} paired sample(s)", style="dim")
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for column, justify in (("", "left"), ("n", "right"), ("A", "right"), ("B", "right")):
            table.add_column(column, justify=justify, no_wrap=True)  # type: ignore[arg-type]
        table.add_column("B - A", justify="right")
        table.add_column(f"{pct} CI", justify="right", no_wrap=True)
        table.add_column("change")
        for i, d in enumerate([m.aggregate, *m.judges]):
            table.add_row(
                Text(d.subject, style="bold" if i == 0 else ""),
                str(d.n),
                _num(d.mean_a),
                _num(d.mean_b),
                _num(d.delta, signed=True),
                f"[{_num(d.ci_low, signed=True)}, {_num(d.ci_high, signed=True)}]",
                _verdict(d),
            )
        parts.append(table)
        for label, only in (("A", m.judges_only_in_a), ("B", m.judges_only_in_b)):
            if only:
                parts.append(Text(f"judges only in {label}: {', '.join(only)}", style="dim"))
        if m.threshold is not None and m.flips:
            down = [f for f in m.flips if f.regression]
            up = [f for f in m.flips if not f.regression]
            for word, flips, style in (("pass -> fail", down, "red"), ("fail -> pass", up, "green")):
                if flips:
                    shown = ", ".join(f"{printable(f.sample_id)} ({_num(f.a)} -> {_num(f.b)})" for f in flips[:limit])
                    more = f" and {len(flips) - limit} more" if len(flips) > limit else ""
                    parts.append(Text(f"{word} at threshold {m.threshold:g}: {shown}{more}", style=style))
        for word, changes, style in (
            ("new judge failures", m.new_failures, "red"),
            ("resolved judge failures", m.resolved_failures, "green"),
        ):
            if changes:
                shown = "; ".join(
                    printable(f"{c.judge_id} on {c.sample_id} ({c.step or '-'}: {c.error})") for c in changes[:limit]
                )
                more = f" and {len(changes) - limit} more" if len(changes) > limit else ""
                parts.append(Text(f"{word} ({len(changes)}): {shown}{more}", style=style))
    parts.append(Text(""))
    regressed = comparison.regressions
    if regressed:
        names = ", ".join(
            f"{m.metric} {_num(m.aggregate.delta, signed=True)} "
            f"[{_num(m.aggregate.ci_low, signed=True)}, {_num(m.aggregate.ci_high, signed=True)}]"
            for m in regressed
        )
        parts.append(Text(f"regression beyond tolerance {comparison.tolerance:g}: {names}", style="bold red"))
    else:
        parts.append(Text(f"no regression beyond tolerance {comparison.tolerance:g}", style="green"))
    return Group(*parts)


def _plain_verdict(delta: MeanDelta) -> str:
    return _verdict(delta).plain


def comparison_html(comparison: Comparison) -> str:
    """The comparison as one self-contained HTML page (no script, no network; text autoescaped).

    Per metric: the aggregate's and each judge's mean in A and B, the delta B - A with its paired
    bootstrap interval and verdict, pass/fail flips, and new and resolved judge failures.
    """
    from ragqa.render.html import template_environment

    return template_environment().get_template("compare.html.j2").render(
        c=comparison,
        regressed=[m.metric for m in comparison.regressions],
        fmt=_num,
        verdict=_plain_verdict,
    )

