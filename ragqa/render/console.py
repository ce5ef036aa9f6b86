"""Render a :class:`~ragqa.report.Report` for people: rich tables on the console, or plain text.

The console view has, per metric, one table with a row per judge (mean with its confidence
interval as ``0.645 ± 0.038``, samples scored, NaN, failed, tokens, cost) and an ``aggregate
(<strategy>)`` row with the mean of the per-sample aggregates (with its interval) and the mean
spread between judges; the title shows the direction (``↑ higher is better`` / ``↓ lower is
better``) and, where the metric has an interpretation scale (:mod:`ragqa.interpretation`), the
band of the aggregate. Then the judge failures (judge, metric, sample, step, cause: the first
few, then a count), samples skipped by validation, and a usage line (calls, tokens, cost, wall
time). Under each metric's table, with two or more judges, one agreement line
(:func:`agreement_line`), and one line on where the aggregate's variance comes from and what would
halve its interval (:func:`uncertainty_line`); then the jury sections, the judges' reliability
and the cascade (:mod:`ragqa.render.console_jury`, whose functions this module re-exports, as it
does the number formats of :mod:`ragqa.render.numbers`).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ragqa._math import nan_mean
from ragqa.metrics.base import Direction
from ragqa.render.console_jury import cascade_lines, cascade_texts, jury_lines, jury_texts
from ragqa.render.labels import labels
from ragqa.render.numbers import fmt_cost, fmt_mean, fmt_score, fmt_tokens, fmt_two, plus_minus
from ragqa.render.probe import probe_lines
from ragqa.render.terminal import printable
from ragqa.report import MetricSummary, Report
from ragqa.schema import AdviceOption, JudgeFailure, Language

__all__ = [
    "DIRECTION_LABELS",
    "agreement_line",
    "cascade_lines",
    "cascade_texts",
    "direction_label",
    "fmt_cost",
    "fmt_mean",
    "fmt_score",
    "fmt_tokens",
    "jury_lines",
    "jury_texts",
    "no_aggregate_caption",
    "plus_minus",
    "render_report",
    "report_renderable",
    "report_to_text",
    "uncertainty_line",
]

DIRECTION_LABELS = {"higher": "↑ higher is better", "lower": "↓ lower is better"}
"""How the direction of a metric is shown (in English; :func:`direction_label` for another language)."""


def direction_label(direction: str, language: Language = "en") -> str:
    """``↑ higher is better`` / ``↓ lower is better`` in ``language`` (labels ``higher``, ``lower``)."""
    return f"{'↑' if direction == 'higher' else '↓'} {labels(language)[direction]}"


_Interpret = Callable[[str, float, Language, Direction], "str | None"]


def _interpreter() -> _Interpret | None:
    """:func:`ragqa.interpretation.interpret`, or ``None`` where that module is absent."""
    try:
        from ragqa.interpretation import interpret
    except ImportError:  # pragma: no cover - the module ships with ragqa; kept optional for partial installs
        return None
    return interpret


def metric_title(summary: MetricSummary, *, language: Language = "en") -> Text:
    """One metric's heading: ``<metric>  <direction>[  aggregate: <band>]``.

    Printed as its own line above :func:`metric_table` (a rich table title would wrap at the
    table's width, about 75 columns, however wide the terminal is).

    Args:
        summary: the metric's summary from ``report.summaries``.
        language: language of the interpretation band.
    """
    title = Text()
    title.append(summary.metric, style="bold")
    title.append(f"  {direction_label(summary.direction, language)}", style="dim")
    interpret = _interpreter()
    band = interpret(summary.metric, summary.aggregate_mean, language, summary.direction) if interpret else None
    if band:
        title.append(f"  {labels(language)['aggregate']}: {band}", style="italic")
    return title


def metric_table(summary: MetricSummary, *, language: Language = "en") -> Table:
    """One metric's table: a row per judge plus the aggregate row, read from the summary alone.

    Judge rows: the judge's mean over its finite scores with its interval (:func:`fmt_mean`),
    samples scored, NaN (metric undefined), failed (excluded). Aggregate row: the mean of
    per-sample aggregates with its interval, samples with an
    aggregate / all, samples without one (NaN: unscored or below quorum), samples where every
    judge failed, and the mean spread (max - min between judges). A caption says why samples have
    no aggregate (:func:`no_aggregate_caption`). The heading is :func:`metric_title`.

    Args:
        summary: the metric's summary from ``report.summaries``.
        language: language of the column heads and the caption (``templates/labels.json``).

    Returns:
        A rich table (untitled).
    """
    t = labels(language)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column(t["judge"], no_wrap=True)
    for key in ("mean", "scored", "nan", "failed", "spread", "tokens", "cost"):
        table.add_column(t[key], justify="right")
    for judge in summary.judges:
        table.add_row(
            judge.judge_id,
            fmt_mean(judge.mean, judge.interval),
            str(judge.n_scored),
            str(judge.n_nan),
            Text(str(judge.n_failed), style="red" if judge.n_failed else ""),
            "",
            fmt_tokens(judge.usage),
            fmt_cost(judge.usage.cost),
        )
    n_all_failed = summary.n_all_failed
    table.add_row(
        Text(f"{t['aggregate']} ({summary.strategy})", style="bold"),
        Text(fmt_mean(summary.aggregate_mean, summary.interval), style="bold"),
        f"{summary.n_scored}/{summary.n_samples}",
        str(summary.n_nan),
        Text(str(n_all_failed), style="red" if n_all_failed else ""),
        fmt_score(summary.mean_spread),
        fmt_tokens(summary.usage),
        fmt_cost(summary.usage.cost),
        end_section=True,
    )
    caption = no_aggregate_caption(summary, language=language)
    if caption:
        table.caption = caption
        table.caption_justify = "left"
    return table


def no_aggregate_caption(summary: MetricSummary, *, language: Language = "en") -> str | None:
    """Why samples of one metric have no aggregate, one line per cause, or ``None`` when nothing to say.

    Two causes, never confused: no judge scored the sample (every judge NaN, the metric being
    undefined there, or failed), whatever the quorum: ``no judge scored 2 sample(s) (every judge
    failed): no aggregate``, or ``(NaN: metric undefined)`` when a judge found the metric
    undefined and none scored; or some judges scored it, but fewer than the quorum: ``quorum 2: 1
    sample(s) below quorum have no aggregate`` (shown whenever the quorum is above 1).

    Args:
        summary: the metric's summary (:attr:`~ragqa.report.MetricSummary.n_unscored`,
            ``n_all_failed``, ``n_below_quorum``, ``quorum``).
        language: language of the caption.
    """
    t = labels(language)
    lines = []
    unscored, failed = summary.n_unscored, summary.n_all_failed
    if unscored:
        if failed == unscored:
            why = t["console_why_failed"]
        elif failed == 0:
            why = t["console_why_nan"]
        else:
            why = t["console_why_mixed"].format(failed=failed, nan=unscored - failed)
        lines.append(t["console_unscored"].format(n=unscored, why=why))
    below = summary.n_below_quorum - unscored
    if summary.quorum > 1 or below > 0:
        lines.append(t["console_quorum"].format(quorum=summary.quorum, n=below))
    return "\n".join(lines) or None


def agreement_line(summary: MetricSummary, *, language: Language = "en") -> Text | None:
    """The judges' agreement on one metric in one line, or ``None`` when it was not computed (one judge).

    ``agreement: alpha A · spearman S · |diff| D[ (means of N pairs)] · most contested ID (SPREAD)``:
    Krippendorff's interval alpha across judges; Spearman's rho and the mean absolute difference
    of a judge pair (with more than two judges, their means over the pairs, NaN-ignoring); the
    sample with the largest spread between judges (left out when no sample has a spread). NaN
    shows as ``n/a``. Two decimals: the line is a glance; the JSON report has every figure. The
    words follow ``language``.
    """
    agreement = summary.agreement
    if agreement is None:
        return None
    t = labels(language)
    spearman = nan_mean([p.spearman for p in agreement.pairs])
    diff = nan_mean([p.mean_abs_diff for p in agreement.pairs])
    parts = [
        f"{t['console_alpha']} {fmt_two(agreement.alpha)}",
        f"{t['console_spearman']} {fmt_two(spearman)}",
        f"|diff| {fmt_two(diff)}",
    ]
    if len(agreement.pairs) > 1:
        parts[-1] += f" ({t['console_pairs_mean'].format(n=len(agreement.pairs))})"
    if agreement.contested:
        top = agreement.contested[0]
        parts.append(f"{t['console_most_contested']} {printable(top.sample_id)} ({fmt_two(top.spread)})")
    return Text(f"{t['console_agreement']}: " + " · ".join(parts), style="dim")


def uncertainty_line(summary: MetricSummary, *, language: Language = "en") -> Text | None:
    """Where the aggregate's variance comes from and what would halve its interval, in one line.

    ``variance: samples S% · judges J% · repeats R% · to halve ±H: N samples (+C calls) · M judges
    (+C calls) · K repeats (+C calls)``: each component's share of the per-sample aggregate's
    variance (:attr:`ragqa.schema.Decomposition.share`; ``judges`` is the sample x judge
    interaction, the judges' disagreement about samples; with one repeat it is ``judges+repeats``,
    with one judge ``samples+judges``), then for each lever the number that halves the ``±``
    (:func:`ragqa.uncertainty.halving_advice`) and the extra judge calls (judgements when the run
    made no provider call), ``judges: no`` where a lever cannot halve it, ``repeats: ?`` where the
    run cannot tell (one repeat). ``None`` without a decomposition. The words follow ``language``.
    """
    decomposition = summary.decomposition
    if decomposition is None:
        return None
    t = labels(language)
    confounded = decomposition.components.confounded
    names = {
        "samples": t[
            "console_share_samples_judges" if "samples+interaction" in confounded else "console_share_samples"
        ],
        "interaction": t[
            "console_share_judges_repeats" if "interaction+repeats" in confounded else "console_share_judges"
        ],
        "repeats": t["console_share_repeats"],
    }
    shares = " · ".join(f"{names[key]} {100 * value:.0f}%" for key, value in decomposition.share.items())
    line = f"{t['console_variance']}: {shares or '0'}"
    interval = summary.interval
    if interval is not None and decomposition.advice:
        if not decomposition.share:
            line += f" · {t['console_halve_none']}"
        else:
            options = " · ".join(_advice(option, t) for option in decomposition.advice)
            line += f" · {t['console_halve'].format(half=f'{plus_minus(interval):.3f}')}: {options}"
    return Text(line, style="dim")


def _advice(option: AdviceOption, t: Mapping[str, str]) -> str:
    lever = t[f"console_share_{option.lever}"]
    if option.possible is None:
        return t["console_halve_unknown"].format(lever=lever)
    if not option.possible or option.target is None:
        return t["console_halve_cannot"].format(lever=lever)
    if option.extra_calls is not None:
        extra = t["console_halve_calls"].format(n=f"{option.extra_calls:,}")
    else:
        extra = t["console_halve_judgements"].format(n=f"{option.extra_judgements or 0:,}")
    return t[f"console_halve_{option.lever}"].format(n=f"{option.target:,}", extra=extra)


def failures_table(failures: Sequence[JudgeFailure], *, limit: int = 5, language: Language = "en") -> RenderableType:
    """The first ``limit`` distinct judge failures (judge, metrics, sample, step, cause), then a count of the rest.

    A failure of a step that several metrics share (the response's statements, asked once for
    faithfulness and hallucination) is one row naming every metric it cost, not one row per
    metric; the title counts both (``judge failures (18 in 9 calls)``). Titles and column heads
    follow ``language``; the causes are the errors' own messages.
    """
    t = labels(language)
    groups: dict[tuple[str, str, str | None, str, str], list[str]] = {}
    for f in failures:
        groups.setdefault((f.judge_id, f.sample_id, f.step, f.error_type, f.message), []).append(f.metric)
    count = (
        f"{len(failures)}"
        if len(groups) == len(failures)
        else t["console_failures_calls"].format(n=len(failures), calls=len(groups))
    )
    table = Table(
        title=Text(t["console_failures"].format(count=count), style="bold red"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
    )
    for column in ("judge", "metric", "sample", "step"):
        table.add_column(t[column], no_wrap=True)
    table.add_column(t["cause"], overflow="fold")
    rows = list(groups.items())
    for (judge_id, sample_id, step, error_type, message), metrics in rows[:limit]:
        table.add_row(
            printable(judge_id),
            ", ".join(metrics),
            printable(sample_id),
            printable(step or "-"),
            _clip(f"{error_type}: {message}", 200),
        )
    if len(rows) > limit:
        return Group(table, Text(t["console_more_failures"].format(n=len(rows) - limit)))
    return table


def usage_line(report: Report, *, language: Language = "en") -> Text:
    """The run's usage in one line.

    ``calls N · tokens T (prompt P, completion C) · cost X · [cache: H hit(s), M miss(es) ·
    [embeddings: E hit(s), F miss(es) · ]]wall time W s[ · call plan P]``; the cache part appears
    when the report has :attr:`~ragqa.report.Report.cache`, its embeddings part when the run
    embedded texts, the call plan when the report has :attr:`~ragqa.report.Report.call_plan`.
    Calls count provider requests only (cache hits excluded); cost is in the price table's
    currency; wall time is in seconds with one decimal. The words follow ``language``.
    """
    t = labels(language)
    usage = report.usage
    parts = [
        f"{t['console_calls']} {usage.calls:,}",
        t["console_tokens"].format(
            total=f"{usage.total_tokens:,}",
            prompt=f"{usage.prompt_tokens:,}",
            completion=f"{usage.completion_tokens:,}",
        ),
        f"{t['console_cost']} {fmt_cost(usage.cost)}",
    ]
    if report.cache is not None:
        cache = report.cache
        parts.append(t["console_cache"].format(hits=f"{cache.hits:,}", misses=f"{cache.misses:,}"))
        if cache.embedding_hits or cache.embedding_misses:
            parts.append(
                t["console_embeddings"].format(hits=f"{cache.embedding_hits:,}", misses=f"{cache.embedding_misses:,}")
            )
    parts.append(t["console_wall_time"].format(seconds=f"{report.wall_time_s:.1f}"))
    if report.call_plan is not None:
        parts.append(f"{t['console_call_plan']} {report.call_plan}")
    return Text(" · ".join(parts), style="dim")


def report_renderable(report: Report, *, language: Language = "en", max_failures: int = 5) -> RenderableType:
    """Everything :func:`render_report` prints, as one rich renderable; ragqa's words in ``language``."""
    t = labels(language)
    parts: list[RenderableType] = []
    n_samples = report.n_samples
    n_judges = max((len(s.judges) for s in report.summaries), default=0)
    header = t["console_header"].format(samples=n_samples, metrics=len(report.summaries), judges=n_judges)
    parts.append(Text(header, style="bold"))
    for summary in report.summaries:
        parts.append(Text(""))
        parts.append(metric_title(summary, language=language))
        parts.append(metric_table(summary, language=language))
        for line in (agreement_line(summary, language=language), uncertainty_line(summary, language=language)):
            if line is not None:
                parts.append(line)
        parts += jury_lines(summary, language=language)
        parts += cascade_lines(summary, language=language)
    if report.order_probe is not None:
        parts.append(Text(""))
        parts += probe_lines(report.order_probe, language=language)
    failures = report.failures
    if failures:
        parts.append(Text(""))
        parts.append(failures_table(failures, limit=max_failures, language=language))
    if report.skipped:
        parts.append(Text(""))
        parts.append(Text(t["console_skipped"].format(n=len(report.skipped)), style="bold yellow"))
        for s in report.skipped[:max_failures]:
            parts.append(Text(f"  {printable(s.message)}"))
        if len(report.skipped) > max_failures:
            parts.append(Text(f"  {t['console_more'].format(n=len(report.skipped) - max_failures)}"))
    parts.append(Text(""))
    parts.append(usage_line(report, language=language))
    return Group(*parts)


def render_report(
    report: Report, console: Console | None = None, *, language: Language = "en", max_failures: int = 5
) -> None:
    """Print the report's tables, failures and usage to ``console`` (default: a new stdout console).

    Args:
        report: the run.
        console: where to print.
        language: language of ragqa's own words (column heads, captions, bands, the usage line;
            ``templates/labels.json``); judges' reasons and error messages stay as they were written.
        max_failures: failures and skipped samples listed before a count of the rest.
    """
    (console or Console()).print(report_renderable(report, language=language, max_failures=max_failures))


def report_to_text(report: Report, *, width: int = 120, language: Language = "en", max_failures: int = 5) -> str:
    """The console view as plain text (no colours), e.g. for logs, tests and pytest summaries."""
    console = Console(width=width, record=True, color_system=None, force_terminal=False, file=io.StringIO())
    console.print(report_renderable(report, language=language, max_failures=max_failures))
    return console.export_text()


def _clip(text: str, limit: int) -> str:
    """``text`` on one line (whitespace runs as one space), control characters shown, cut at ``limit``."""
    text = printable(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."
