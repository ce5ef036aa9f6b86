r"""The HTML report: one self-contained file (inline CSS and JS, no network) that opens from disk.

Per metric it shows each judge's mean, the aggregate with its strategy and quorum, the mean
spread, the interpretation band (:mod:`ragqa.interpretation`), failures and usage, and the judge
agreement (:attr:`ragqa.report.MetricSummary.agreement`) when the run computed it. Below, a table
with one row per (sample, metric), sortable by spread and filterable (failed, below threshold,
contested), and a drill-down per sample: its inputs (question, response, contexts, reference,
from :attr:`ragqa.report.Report.samples`) and every judge's score, reason, statements and
verdicts side by side, failures with step and cause, usage and cost.

The page is rendered by Jinja2 (``templates/report.html.j2``) with autoescaping on, so untrusted
text (responses, reasons, sample ids) is always text, never markup. The few values the script
needs travel in a ``<script type="application/json">`` block whose ``<``, ``>`` and ``&`` are
written as ``\u003c``, ``\u003e`` and ``\u0026``, so no string can close the block.

It is a renderer of the run layer (registered for ``.html`` and ``.htm``): ``ragqa evaluate
--out report.html`` writes it, and ``ragqa report results.jsonl -o report.html`` rebuilds it from
a results file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragqa.interpretation import interpret
from ragqa.messages import Message
from ragqa.render.atomic import replace_text
from ragqa.render.console_jury import cascade_texts, jury_texts
from ragqa.render.details import details_view
from ragqa.render.labels import LABELS, labels
from ragqa.render.numbers import fmt_cost, fmt_score
from ragqa.render.probe import probe_texts
from ragqa.render.registry import RenderOptions, register
from ragqa.report import Agreement, MetricSummary, Report, finite_json
from ragqa.schema import Interval, JudgeOutcome, Language, Sample, Usage
from ragqa.thresholds import Gate, gate, is_flaky, passes

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = [
    "LABELS",
    "HtmlRenderer",
    "build_view",
    "json_for_script",
    "report_to_html",
    "template_environment",
]


def json_for_script(value: Any) -> str:
    r"""``value`` as JSON that is safe inside an HTML ``<script>`` element.

    NaN and infinities become ``null`` (:func:`ragqa.report.finite_json`); ``<``, ``>`` and ``&``
    are written as ``\u003c``, ``\u003e`` and ``\u0026`` (still the same JSON strings), so no
    value can close the element or open a comment.

    Args:
        value: a JSON-like value.

    Returns:
        The JSON text, without a raw ``<``, ``>`` or ``&``.
    """
    text = json.dumps(finite_json(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


def _usage_view(usage: Usage) -> dict[str, Any]:
    return {
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "tokens": usage.total_tokens,
        "latency": f"{usage.latency_s:.2f} s",
        "cost": fmt_cost(usage.cost),
    }


def _agreement_view(agreement: Agreement | None, index: Mapping[str, int]) -> dict[str, Any] | None:
    if agreement is None:
        return None
    return {
        "alpha": fmt_score(agreement.alpha),
        "n_samples": agreement.n_samples,
        "pairs": [
            {
                "a": p.judge_a,
                "b": p.judge_b,
                "n": p.n,
                "spearman": fmt_score(p.spearman),
                "mad": fmt_score(p.mean_abs_diff),
            }
            for p in agreement.pairs
        ],
        "bias": [{"judge": b.judge_id, "n": b.n, "bias": f"{b.bias:+.3f}"} for b in agreement.bias],
        "contested": [
            {"sample": c.sample_id, "spread": fmt_score(c.spread), "n": index.get(c.sample_id)}
            for c in agreement.contested
        ],
    }


def _errbar(interval: Interval | None, threshold: float | None) -> dict[str, Any] | None:
    """An error bar for a mean: its interval's bounds as text, and positions in % of the [0, 1] scale.

    The scale widens to the interval when it leaves [0, 1] (a metric of another range). ``xt`` is
    the threshold's position, or ``None``. ``None`` without an interval (or with NaN bounds).
    """
    if interval is None or math.isnan(interval.low) or math.isnan(interval.high):
        return None
    low, high = min(0.0, interval.low), max(1.0, interval.high)

    def pct(value: float) -> float:
        return round(100.0 * (min(max(value, low), high) - low) / (high - low), 2)

    return {
        "low": fmt_score(interval.low),
        "high": fmt_score(interval.high),
        "confidence": f"{interval.confidence:.0%}",
        "x1": pct(interval.low),
        "x2": pct(interval.high),
        "xm": pct(interval.estimate),
        "xt": None if threshold is None else pct(threshold),
    }


def _gate(summary: MetricSummary, threshold: float | None) -> Gate | None:
    """The metric's gate (pass, fail or undecided with its interval), or ``None`` without a threshold."""
    if threshold is None:
        return None
    return gate(summary.aggregate_mean, summary.interval, threshold, summary.direction)


def _contested(summary: MetricSummary) -> set[str]:
    """Sample ids marked contested: the agreement's :attr:`~ragqa.report.Agreement.contested`, none without it."""
    return {c.sample_id for c in summary.agreement.contested} if summary.agreement is not None else set()


def _metric_view(
    summary: MetricSummary, threshold: float | None, language: Language, index: Mapping[str, int]
) -> dict[str, Any]:
    band = interpret(summary.metric, summary.aggregate_mean, language, summary.direction)
    verdict = None if threshold is None else passes(summary.aggregate_mean, threshold, summary.direction)
    return {
        "key": summary.metric,
        "direction": summary.direction,
        "strategy": summary.strategy,
        "quorum": summary.quorum,
        "aggregate": fmt_score(summary.aggregate_mean),
        "band": band,
        "spread": fmt_score(summary.mean_spread),
        "n_samples": summary.n_samples,
        "n_scored": summary.n_scored,
        "n_nan": summary.n_nan,
        "n_below_quorum": summary.n_below_quorum,
        "n_unscored": summary.n_unscored,
        "n_few_judges": summary.n_below_quorum - summary.n_unscored,
        "n_all_failed": summary.n_all_failed,
        "threshold": None if threshold is None else f"{threshold:g}",
        "passed": verdict,
        "gate": _gate(summary, threshold),
        "errbar": _errbar(summary.interval, threshold),
        "judge_errbars": [_errbar(j.interval, threshold) for j in summary.judges],
        "judges": [
            {
                "id": j.judge_id,
                "mean": fmt_score(j.mean),
                "n_scored": j.n_scored,
                "n_nan": j.n_nan,
                "n_failed": j.n_failed,
                "usage": _usage_view(j.usage),
            }
            for j in summary.judges
        ],
        "usage": _usage_view(summary.usage),
        "agreement": _agreement_view(summary.agreement, index),
        "jury": [{"text": text, "kind": kind} for text, kind in jury_texts(summary, language=language)],
        "cascade": [{"text": text, "kind": kind} for text, kind in cascade_texts(summary, language=language)],
    }


def _judge_view(outcome: JudgeOutcome) -> dict[str, Any]:
    score = outcome.score
    failure = outcome.failure
    return {
        "id": outcome.judge_id,
        "score": None if score is None else fmt_score(score.value),
        "reason": None if score is None else score.reason,
        "details": details_view(score.details) if score is not None else None,
        "failure": None
        if failure is None
        else {"step": failure.step or "?", "error_type": failure.error_type, "message": failure.message},
        "usage": _usage_view(outcome.usage),
        "latency": f"{outcome.latency_s:.2f} s",
    }


def _message_view(message: Message) -> dict[str, Any]:
    calls = getattr(message, "tool_calls", None) or []
    return {"type": message.type, "content": message.content, "calls": [f"{c.name}: {c.args}" for c in calls]}


def _inputs_view(sample: Sample | None) -> dict[str, Any] | None:
    if sample is None:
        return None
    return {
        "question": sample.question(),  # a multi-turn sample: its last human message
        "conversation": [_message_view(m) for m in sample.messages or []],
        "response": sample.response,
        "contexts": sample.contexts(),
        "reference": sample.reference,
    }


def build_view(report: Report, options: RenderOptions) -> dict[str, Any]:
    """Everything the template shows, as plain values (strings already formatted).

    Args:
        report: the finished report.
        options: language (labels, bands) and thresholds (``{metric key: value}``: pass/fail per
            metric and the "below threshold" filter).

    Returns:
        ``{"t": labels, "lang", "run", "metrics", "rows", "samples", "failures", "skipped", "data"}``;
        ``data`` is the JSON text for the page's script (:func:`json_for_script`).
    """
    language = options.language
    thresholds = dict(options.thresholds)
    contested = {s.metric: _contested(s) for s in report.summaries}
    judge_ids = report.judge_ids
    sample_ids = report.sample_ids
    index = {sid: i for i, sid in enumerate(sample_ids)}
    inputs = {s.label: s for s in report.samples}

    rows: list[dict[str, Any]] = []
    for n, r in enumerate(report.results):
        limit = thresholds.get(r.metric)
        value = r.aggregate.value
        scores = {o.judge_id: o for o in r.judges}
        rows.append(
            {
                "n": n,
                "sample": index[r.sample_id],
                "sample_id": r.sample_id,
                "metric": r.metric,
                "scores": [_cell_score(scores.get(j)) for j in judge_ids],
                "aggregate": fmt_score(value),
                "spread": _num(r.aggregate.spread),
                "spread_text": fmt_score(r.aggregate.spread),
                "failed": bool(r.failures) or math.isnan(value),
                "below": limit is not None and not math.isnan(value) and not passes(value, limit, r.direction),
                "contested": r.sample_id in contested.get(r.metric, set()),
                "flaky": limit is not None and is_flaky(r, limit),
            }
        )
    samples = []
    for sid in sample_ids:
        sample_results = [r for r in report.results if r.sample_id == sid]
        samples.append(
            {
                "n": index[sid],
                "id": sid,
                "inputs": _inputs_view(inputs.get(sid)),
                "metrics": [
                    {
                        "key": r.metric,
                        "aggregate": fmt_score(r.aggregate.value),
                        "band": interpret(r.metric, r.aggregate.value, language, r.direction),
                        "spread": fmt_score(r.aggregate.spread),
                        "strategy": r.aggregate.strategy,
                        "judges": [_judge_view(o) for o in r.judges],
                    }
                    for r in sample_results
                ],
            }
        )
    total = report.usage
    data = {
        "rows": [
            {k: row[k] for k in ("n", "sample", "spread", "failed", "below", "contested", "flaky")} for row in rows
        ],
        "samples": sample_ids,
    }
    return {
        "t": labels(language),
        "lang": language,
        "run": {
            "n_samples": len(sample_ids),
            "dataset": report.dataset,
            "started_at": report.started_at,
            "run_id": report.run_id,
            "judges": judge_ids,
            "wall_time": f"{report.wall_time_s:.1f} s",
            "cache": None if report.cache is None else f"{report.cache.hits} / {report.cache.misses}",
            "usage": _usage_view(total),
        },
        "metrics": [_metric_view(s, thresholds.get(s.metric), language, index) for s in report.summaries],
        "probe": [{"text": text, "kind": kind} for text, kind in probe_texts(report.order_probe, language=language)],
        "judge_ids": judge_ids,
        "rows": rows,
        "samples": samples,
        "flaky": {m: [row["sample_id"] for row in rows if row["flaky"] and row["metric"] == m] for m in thresholds},
        "failures": [
            {
                "judge": f.judge_id,
                "metric": f.metric,
                "sample": f.sample_id,
                "n": index.get(f.sample_id),
                "step": f.step or "?",
                "error_type": f.error_type,
                "message": f.message,
            }
            for f in report.failures
        ],
        "skipped": [s.model_dump() for s in report.skipped],
        "data": json_for_script(data),
    }


def _cell_score(outcome: JudgeOutcome | None) -> dict[str, str]:
    if outcome is None:
        return {"text": "", "kind": "none"}
    if outcome.failure is not None:
        return {"text": "", "kind": "failed"}
    if outcome.score is None:
        return {"text": "n/a", "kind": "nan"}
    return {"text": fmt_score(outcome.score.value), "kind": "nan" if math.isnan(outcome.score.value) else "ok"}


def template_environment() -> Environment:
    """The Jinja2 environment of ragqa's HTML pages: package templates, autoescaping on, strict undefined."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=PackageLoader("ragqa.render", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def report_to_html(report: Report, options: RenderOptions | None = None) -> str:
    """The report as one self-contained HTML page (see the module docstring).

    Args:
        report: the finished report (its ``samples`` feed the drill-down's inputs; when empty the
            drill-down says the inputs are not available).
        options: language and thresholds; defaults to English and no thresholds.

    Returns:
        The HTML text (UTF-8 when written); it references no external resource.
    """
    view = build_view(report, options or RenderOptions())
    return template_environment().get_template("report.html.j2").render(**view)


class HtmlRenderer:
    """The HTML report (:func:`report_to_html`), for ``.html`` and ``.htm``."""

    name = "html"
    suffixes = (".html", ".htm")

    def write(self, report: Report, path: Path, options: RenderOptions) -> None:
        """Write the HTML report to ``path`` (atomically)."""
        replace_text(path, report_to_html(report, options))


register(HtmlRenderer())
