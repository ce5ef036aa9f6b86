"""The HTML drill-down laid out for every metric of the catalogue, measured in headless Chromium.

Every metric of :data:`ragqa.metrics.METRICS` scores a few shipped samples with the offline
local panel; each sample's drill-down is opened and, in every judge's card, the page is measured:
no column of a details table is narrower than the longest word of its header, and no text reaches
outside its card (context recall's statement column used to be one letter wide, its reasons
running across the neighbouring card). Needs Playwright and a Chromium (see ``tests/conftest.py``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import local_profile_hashing

import ragqa
from ragqa.metrics import METRICS
from ragqa.render import RenderOptions
from ragqa.render.details import details_view
from ragqa.render.html import HtmlRenderer
from ragqa.report import Report

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ROOT / "examples" / "datasets"

SINGLE_TURN = [name for name, cls in METRICS.items() if "messages" not in cls.required_fields]
MULTI_TURN = [name for name, cls in METRICS.items() if "messages" in cls.required_fields]

LONG_TOKEN = "https://intranet.example.com/kb/" + "x" * 180
"""An unbreakable word longer than any card is wide."""

MEASURE = """
() => {
  const problems = [];
  const canvas = document.createElement("canvas").getContext("2d");
  for (const card of document.querySelectorAll("section.drill:not([hidden]) .judge")) {
    const where = card.closest("section.drill").dataset.sample + " / " + card.dataset.judge + " / "
      + card.parentElement.previousElementSibling.textContent.split(":")[0];
    const box = card.getBoundingClientRect();
    if (card.scrollWidth > card.clientWidth + 1) {
      problems.push(where + ": the card scrolls (" + card.scrollWidth + " > " + card.clientWidth + ")");
    }
    const walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.textContent.trim()) { continue; }
      const range = document.createRange();
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5) {
        problems.push(where + ": text outside its card: " + node.textContent.slice(0, 40));
      }
    }
    for (const th of card.querySelectorAll(".details-table th")) {
      const style = getComputedStyle(th);
      canvas.font = style.font;
      const word = th.textContent.split(/\\s+/).reduce((a, b) => (b.length > a.length ? b : a), "");
      const inner = th.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      if (inner + 0.5 < canvas.measureText(word).width) {
        problems.push(where + ": column '" + th.textContent + "' is " + inner.toFixed(1) + "px, under '" + word + "'");
      }
    }
  }
  return problems;
}
"""


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> list[Report]:
    """The catalogue scored offline: single-turn metrics on 3 helpdesk samples, agent metrics on 3 conversations."""
    # the layout does not depend on which local embedder made a similarity; MiniLM's start costs seconds
    config = local_profile_hashing(tmp_path_factory.mktemp("settings"))
    helpdesk = (DATASETS / "it_helpdesk.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    records = [json.loads(line) for line in helpdesk]
    records[2]["reference"] = f"{records[2]['reference']} See {LONG_TOKEN} for the details."
    single = ragqa.evaluate(records, SINGLE_TURN, config=config, profile="local", no_cache=True)
    agents = [json.loads(line) for line in (DATASETS / "agent_conversations.jsonl").read_text().splitlines()[:3]]
    multi = ragqa.evaluate(agents, MULTI_TURN, config=config, profile="local", no_cache=True)
    return [single, multi]


def test_the_reports_cover_every_metric_of_the_catalogue(reports: list[Report]) -> None:
    names = {r.metric.split("(", 1)[0] for report in reports for r in report.results}
    assert names == set(METRICS)


def test_every_detail_is_shown_once(reports: list[Report]) -> None:
    for report in reports:
        for result in report.results:
            for outcome in result.judges:
                assert outcome.score is not None, (result.metric, outcome.failure)
                view = details_view(outcome.score.details)
                shown = [c for t in view.tables for c in t.columns if c != "#"] + [k for k, _ in view.rest]
                assert sorted(shown) == sorted(outcome.score.details), result.metric


def test_context_recall_shows_statements_with_their_attribution_and_reasons(reports: list[Report]) -> None:
    result = next(r for r in reports[0].results if r.metric == "context_recall")
    assert result.judges[0].score is not None
    view = details_view(result.judges[0].score.details)
    assert [t.columns for t in view.tables] == [["statements", "attributed", "reasons"]]
    assert view.tables[0].kinds == ["text", "number", "text"]
    assert view.rest == []


def open_every_drill_down(browser: Any, path: Path, width: int) -> int:
    """Open each sample's drill-down of the report at ``path`` and measure it (:data:`MEASURE`); the number opened.

    Every row of the results table has a button that opens its sample's drill-down, and a drill-down
    depends on its sample only (``openSample(n)`` in the template): the first button of each sample
    is clicked. A screenshot is written beside the report only when a drill-down has a problem.
    """
    page = browser.new_page(viewport={"width": width, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri())
    buttons = page.locator("#results button.open-sample")
    samples = buttons.evaluate_all("(bs) => bs.map((b) => b.dataset.sample)")
    assert len(samples) == len(page.locator("#results tbody tr").all())  # one button per row
    opened = 0
    for sample in dict.fromkeys(samples):
        buttons.and_(page.locator(f'[data-sample="{sample}"]')).first.click()
        assert page.locator("section.drill:not([hidden])").evaluate_all("(s) => s.map((d) => d.dataset.sample)") == [
            sample
        ]
        problems = page.evaluate(MEASURE)
        if problems:
            page.screenshot(path=str(path.with_suffix(f".{width}.png")), full_page=True)
        assert problems == [], "\n".join(problems)
        opened += 1
    assert page.locator("section.drill .judge").count() > 0
    assert errors == []
    page.close()
    return opened


@pytest.mark.parametrize("width", [1280, 760])
def test_no_detail_column_is_narrower_than_its_header_and_no_text_leaves_its_card(
    browser: Any, reports: list[Report], tmp_path: Path, width: int
) -> None:
    for n, report in enumerate(reports):
        path = tmp_path / f"report-{n}.html"
        HtmlRenderer().write(report, path, RenderOptions())
        assert open_every_drill_down(browser, path, width) == len({r.sample_id for r in report.results}) >= 3
