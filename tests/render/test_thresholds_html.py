"""The HTML report shows the intervals as error bars, undecided gates and a filter for flaky samples.

The run is the shipped IT helpdesk dataset scored by the local panel (deterministic): faithfulness
0.607 [0.525, 0.689]; at the threshold 0.8 one sample (it-043) is flaky, at 0.6 the gate is undecided.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.render.html import build_view, report_to_html
from ragqa.render.registry import RenderOptions
from ragqa.report import Report

DATA = Path(__file__).resolve().parents[2] / "examples" / "datasets" / "it_helpdesk.jsonl"


@pytest.fixture(scope="module")
def report() -> Report:
    return ragqa.evaluate(DATA, metrics=["faithfulness"], profile="local", thresholds={"faithfulness": 0.8})


def test_error_bars_on_every_judge_mean_and_the_aggregate(report: Report) -> None:
    html = report_to_html(report, RenderOptions(thresholds={"faithfulness": 0.8}))
    summary = report.summaries[0]
    assert summary.interval is not None and all(j.interval is not None for j in summary.judges)
    assert html.count('<svg class="errbar"') == len(summary.judges) + 1
    low, high = f"{summary.interval.low:.3f}", f"{summary.interval.high:.3f}"
    assert f'<span class="ci agg-interval">[{low}, {high}]</span>' in html
    for judge in summary.judges:
        assert judge.interval is not None and f"[{judge.interval.low:.3f}, {judge.interval.high:.3f}]" in html
    # the bar sits on the [0, 1] scale: the aggregate's ends at its bounds, the threshold's mark at 80 %
    [bar] = [m["errbar"] for m in build_view(report, RenderOptions(thresholds={"faithfulness": 0.8}))["metrics"]]
    assert (bar["x1"], bar["x2"], bar["xt"]) == (
        round(100 * summary.interval.low, 2),
        round(100 * summary.interval.high, 2),
        80.0,
    )
    assert re.search(r'<line class="limit" x1="80.0" x2="80.0"', html)


def test_flaky_samples_are_a_filter_a_tag_and_a_list(report: Report) -> None:
    options = RenderOptions(thresholds={"faithfulness": 0.8})
    view = build_view(report, options)
    flaky_rows = [row["sample_id"] for row in view["rows"] if row["flaky"]]
    assert flaky_rows == ["it-043"] == view["flaky"]["faithfulness"] == report.summaries[0].flaky_samples
    html = report_to_html(report, options)
    assert '<button type="button" data-filter="flaky" aria-pressed="false"' in html
    assert '<span class="tag flaky">it-043</span>' in html
    data = json.loads(re.search(r'<script type="application/json" id="ragqa-data">(.*?)</script>', html, re.S).group(1))  # type: ignore[union-attr]
    assert sum(1 for row in data["rows"] if row["flaky"]) == 1
    # without a threshold nothing is flaky and the filter finds nothing
    assert not any(row["flaky"] for row in build_view(report, RenderOptions())["rows"])


def test_a_threshold_inside_the_interval_reads_undecided(report: Report) -> None:
    html = report_to_html(report, RenderOptions(thresholds={"faithfulness": 0.6}))
    assert '<span class="undecided gate"' in html and ">undecided</span>" in html
    outside = report_to_html(report, RenderOptions(thresholds={"faithfulness": 0.4}))
    assert 'class="undecided gate"' not in outside and '<span class="ok">pass</span>' in outside
    ru = report_to_html(report, RenderOptions(language="ru", thresholds={"faithfulness": 0.6}))
    assert ">не определено</span>" in ru


def test_ragqa_report_rebuilt_from_a_results_file_lists_the_flaky_samples(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    ragqa.evaluate(DATA, metrics=["faithfulness"], profile="local", out=results)
    page = tmp_path / "r.html"
    out = CliRunner().invoke(app, ["report", str(results), "-o", str(page), "--threshold", "faithfulness=0.8"])
    assert out.exit_code == 0, out.output
    html = page.read_text(encoding="utf-8")
    assert '<div class="flaky-samples">' in html and '<span class="tag flaky">it-043</span>' in html
    assert html.count('<svg class="errbar"') == 3  # two judges and the aggregate
