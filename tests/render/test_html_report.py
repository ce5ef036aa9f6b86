"""The HTML report: rendered from real runs and hand-built reports, and opened in headless Chromium.

The browser checks need Playwright's Python package and a Chromium on this machine (Debian's
``chromium``; never downloaded at test time). Without a browser they skip and say why; every other
check here runs anyway.
"""

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from _cli import CliResult, run_cli

from ragqa.render import RenderOptions, renderer_for
from ragqa.render.html import HtmlRenderer, json_for_script, report_to_html
from ragqa.report import Agreement, ContestedSample, JudgeBias, PairAgreement, Report, summarize
from ragqa.schema import Aggregate, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Sample, Usage

ROOT = Path(__file__).resolve().parents[2]
IT_HELPDESK = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"
INJECTED = "<script>window.__ragqa_pwned = 1; alert(1)</script>"
EVIL_ID = "evil</script><script>window.__ragqa_pwned = 2</script>"
JUDGES = ("strict", "lenient")


def ragqa(*args: str, cwd: Path) -> CliResult:
    return run_cli(*args, cwd=cwd)


def outcome(judge: str, value: float | None, *, reason: str = "", failure: str | None = None) -> JudgeOutcome:
    if failure is not None:
        return JudgeOutcome(
            judge_id=judge,
            failure=JudgeFailure(
                judge_id=judge,
                metric="faithfulness",
                sample_id="q3",
                step="verdicts",
                error_type=failure,
                message="boom",
            ),
            usage=Usage(calls=1, prompt_tokens=10),
        )
    assert value is not None
    details = {"statements": ["Paris is in France.", "It has 3 million people."], "verdicts": [1, 0]}
    return JudgeOutcome(
        judge_id=judge,
        score=MetricScore(value=value, reason=reason, details=details),
        usage=Usage(calls=2, prompt_tokens=120, completion_tokens=30, cost=0.0012),
        latency_s=0.5,
    )


def panel(sample_id: str, outcomes: list[JudgeOutcome], value: float, spread: float) -> PanelResult:
    n_failed = sum(o.failure is not None for o in outcomes)
    return PanelResult(
        sample_id=sample_id,
        metric="faithfulness",
        direction="higher",
        judges=outcomes,
        aggregate=Aggregate(
            value=value,
            strategy="mean",
            spread=spread,
            n_ok=len(outcomes) - n_failed,
            n_nan=0,
            n_failed=n_failed,
            quorum=1,
            quorum_met=not math.isnan(value),
        ),
    )


def hand_built(*, with_samples: bool = True, agreement: bool = True) -> Report:
    """Three samples: one agreed, one contested with an injected response, one where a judge failed."""
    results = [
        panel("q1", [outcome("strict", 0.9, reason="all supported"), outcome("lenient", 1.0)], 0.95, 0.1),
        panel(EVIL_ID, [outcome("strict", 0.0, reason=INJECTED), outcome("lenient", 1.0)], 0.5, 1.0),
        panel("q3", [outcome("strict", None, failure="JudgeTimeout"), outcome("lenient", 0.4)], 0.4, 0.0),
    ]
    summaries = summarize(results, JUDGES)
    if not agreement:
        summaries[0].agreement = None  # summarize computes it; a report rebuilt by other means may lack it
    else:
        summaries[0].agreement = Agreement(
            alpha=0.123,
            n_samples=2,
            pairs=[PairAgreement(judge_a="strict", judge_b="lenient", n=2, spearman=-0.5, mean_abs_diff=0.55)],
            bias=[JudgeBias(judge_id="strict", n=2, bias=-0.55), JudgeBias(judge_id="lenient", n=2, bias=0.55)],
            contested=[ContestedSample(sample_id=EVIL_ID, spread=1.0)],
        )
    samples = [
        Sample(id="q1", user_input="Where is Paris?", response="In France.", retrieved_contexts=["Paris, France"]),
        Sample(id=EVIL_ID, user_input="Say hi", response=INJECTED, retrieved_contexts=[INJECTED], reference="hi"),
        Sample(id="q3", user_input="Third?", response="Third.", retrieved_contexts=[]),
    ]
    return Report(results=results, summaries=summaries, samples=samples if with_samples else [])


def test_html_renderer_is_registered_for_html() -> None:
    assert isinstance(renderer_for("out/report.html"), HtmlRenderer)
    assert isinstance(renderer_for("REPORT.HTM"), HtmlRenderer)


def test_json_for_script_cannot_close_the_script_element() -> None:
    text = json_for_script({"id": "</script><!-- & -->", "x": math.nan})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"id": "</script><!-- & -->", "x": None}


def test_untrusted_text_is_escaped_in_the_markup() -> None:
    html = report_to_html(hand_built())
    assert INJECTED not in html
    assert "&lt;script&gt;window.__ragqa_pwned = 1; alert(1)&lt;/script&gt;" in html
    # the only script elements are the report's own two
    assert len(re.findall(r"<script\b", html)) == 2


def test_header_names_the_dataset_start_and_run_id_as_text() -> None:
    report = hand_built()
    assert 'class="run-id"' not in report_to_html(report)  # a hand-built report records none of them
    report.dataset, report.started_at, report.run_id = INJECTED, "2026-11-24T18:40:00+00:00", "a1b2c3"
    html = report_to_html(report)
    assert INJECTED not in html and '<b class="run-dataset">&lt;script&gt;' in html
    assert '<time class="run-started" datetime="2026-11-24T18:40:00+00:00">' in html
    assert '<code class="run-id">a1b2c3</code>' in html


def test_contested_chips_open_the_drill_down_of_their_sample() -> None:
    html = report_to_html(hand_built())
    chip = re.search(r'<button type="button" class="tag contested open-sample" data-sample="(\d+)"', html)
    assert chip is not None and chip.group(1) == "1"  # EVIL_ID is the second sample
    assert f'<section class="drill" id="sample-{chip.group(1)}"' in html


def test_report_shows_agreement_when_present_and_omits_it_otherwise() -> None:
    with_agreement = report_to_html(hand_built())
    assert "Krippendorff" in with_agreement and "0.123" in with_agreement and "+0.550" in with_agreement
    assert "Krippendorff" not in report_to_html(hand_built(agreement=False))


def test_every_label_exists_in_both_languages() -> None:
    from ragqa.render.html import LABELS

    assert set(LABELS["en"]) == set(LABELS["ru"])


def test_labels_follow_the_language() -> None:
    ru = report_to_html(hand_built(), RenderOptions(language="ru"))
    assert 'lang="ru"' in ru and "Согласие судей" in ru and "ниже порога" in ru
    assert "Judge agreement" not in ru


def test_report_without_samples_says_inputs_are_not_available() -> None:
    html = report_to_html(hand_built(with_samples=False))
    assert html.count("inputs of this sample are not available") == 3


def test_below_threshold_marks_rows_from_the_run_thresholds() -> None:
    data_of = re.compile(r'<script type="application/json" id="ragqa-data">(.*?)</script>', re.S)
    match = data_of.search(report_to_html(hand_built(), RenderOptions(thresholds={"faithfulness": 0.6})))
    assert match is not None
    rows = json.loads(match.group(1))["rows"]
    assert [r["below"] for r in rows] == [False, True, True]
    assert [r["failed"] for r in rows] == [False, False, True]
    assert [r["contested"] for r in rows] == [False, True, False]


@pytest.fixture(scope="module")
def helpdesk_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ragqa evaluate it_helpdesk --profile local --out report.html --out results.jsonl`` in a temp folder."""
    folder = tmp_path_factory.mktemp("helpdesk")
    run = ragqa(
        "evaluate", str(IT_HELPDESK), "--profile", "local", "--no-cache", "--no-progress",
        "--out", "report.html", "--out", "results.jsonl", cwd=folder,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return folder


def test_evaluate_writes_a_self_contained_report_under_2_mb(helpdesk_run: Path) -> None:
    report = helpdesk_run / "report.html"
    size = report.stat().st_size
    assert 0 < size < 2 * 1024 * 1024
    html = report.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "the report must load nothing"
    assert "it-001" in html and "local-strict" in html and "local-lenient" in html
    header = json.loads((helpdesk_run / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert f'<code class="run-id">{header["run_id"]}</code>' in html
    assert f'datetime="{header["started_at"]}"' in html and f'<b class="run-dataset">{IT_HELPDESK}</b>' in html


def test_report_command_rebuilds_the_report_with_inputs(helpdesk_run: Path) -> None:
    result = ragqa("report", "results.jsonl", "-o", "rebuilt.html", "--threshold", "faithfulness=0.5", cwd=helpdesk_run)
    assert result.returncode == 0, result.stderr
    html = (helpdesk_run / "rebuilt.html").read_text(encoding="utf-8")
    assert "not available" not in html
    first = json.loads(IT_HELPDESK.read_text(encoding="utf-8").splitlines()[0])
    assert first["user_input"].replace("'", "&#39;").replace('"', "&#34;") in html
    assert "threshold: 0.5" in html
    header = json.loads((helpdesk_run / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert f'<code class="run-id">{header["run_id"]}</code>' in html


def test_report_command_without_the_dataset_says_the_inputs_are_missing(helpdesk_run: Path) -> None:
    lines = (helpdesk_run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0]) | {"dataset": "moved-away.jsonl"}
    (helpdesk_run / "moved.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    result = ragqa("report", "moved.jsonl", "-o", "moved.html", cwd=helpdesk_run)
    assert result.returncode == 0, result.stderr
    assert "not readable here" in result.stderr
    assert "inputs of this sample are not available" in (helpdesk_run / "moved.html").read_text(encoding="utf-8")


def test_report_command_refuses_a_file_that_is_not_results(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text("hello\nworld\n", encoding="utf-8")
    result = ragqa("report", "notes.jsonl", "-o", "r.html", cwd=tmp_path)
    assert result.returncode == 2
    assert "ragqa report" in result.stderr and "--resume" not in result.stderr
    assert not (tmp_path / "r.html").exists()


# --- the real browser -----------------------------------------------------------------------------------------------


def test_browser_filters_drills_down_and_runs_no_injected_script(browser: Any, tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    HtmlRenderer().write(hand_built(), path, RenderOptions(thresholds={"faithfulness": 0.6}))
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    dialogs: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())

    rows = page.locator("#results tbody tr")
    assert rows.count() == 3
    page.click("#filters [data-filter=failed]")
    assert [r.is_visible() for r in rows.all()] == [False, False, True]
    assert page.text_content("#shown-count") == "1"
    page.click("#filters [data-filter=contested]")
    assert [r.is_visible() for r in rows.all()] == [False, True, False]
    page.click("#filters [data-filter=below]")
    assert [r.is_visible() for r in rows.all()] == [False, True, True]
    page.click("#filters [data-filter=all]")
    page.click("#sort-spread")
    assert page.locator("#results tbody tr td:first-child").all_text_contents() == [EVIL_ID, "q1", "q3"]

    page.locator("#results").get_by_role("button", name=EVIL_ID).click()
    drill = page.locator("section.drill:visible")
    assert drill.count() == 1
    assert drill.locator(".response").text_content() == INJECTED
    assert drill.locator(".judge").count() == 2
    assert "0.000" in drill.locator(".judge[data-judge=strict] .score").text_content()
    assert INJECTED in drill.locator(".judge[data-judge=strict] .reason").text_content()
    assert "Paris is in France." in drill.locator(".judge[data-judge=lenient] .statements").text_content()

    page.locator("#results").get_by_role("button", name="q3").click()
    failure = page.locator("section.drill:visible .judge[data-judge=strict] .failure")
    assert "verdicts" in failure.text_content() and "JudgeTimeout" in failure.text_content()
    page.screenshot(path=str(tmp_path / "report-failure.png"), full_page=True)

    # a contested chip opens its sample's drill-down
    page.locator("#metric-0 .contested button.open-sample").click()
    assert page.locator("section.drill:visible .response").text_content() == INJECTED

    # the search keeps the rows whose sample id, metric, inputs or judges' text hold the words
    shown = page.locator("#shown-count")
    page.fill("#search", "THIRD?")  # q3's question, case-insensitive
    assert [r.is_visible() for r in rows.all()] == [False, False, True] and shown.text_content() == "1"
    page.fill("#search", "__ragqa_pwned = 1")  # the injected response and reason, as text
    assert [r.is_visible() for r in rows.all()] == [True, False, False]  # sorted by spread: evil, q1, q3
    page.fill("#search", "all supported")  # a judge's reason
    assert [r.is_visible() for r in rows.all()] == [False, True, False]
    page.click("#filters [data-filter=failed]")  # search and filter both apply
    assert [r.is_visible() for r in rows.all()] == [False, False, False] and shown.text_content() == "0"
    page.fill("#search", "")
    assert [r.is_visible() for r in rows.all()] == [False, False, True]

    assert page.evaluate("typeof window.__ragqa_pwned") == "undefined"
    assert dialogs == [] and errors == []
    assert requests == [path.as_uri()]
    page.close()


def test_browser_screenshot_of_a_real_run(browser: Any, helpdesk_run: Path, tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 1500})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((helpdesk_run / "report.html").as_uri())
    assert page.locator("#metric-0 .judges-table").is_visible()
    assert "local-strict" in page.locator("#metric-0 .judges-table").text_content()
    page.click("#sort-spread")
    page.locator("#results tbody tr").first.locator("button.open-sample").click()
    drill = page.locator("section.drill:visible")
    assert drill.locator(".question").is_visible()
    assert drill.locator(".judge").count() == 4  # two judges x two metrics
    page.evaluate("window.scrollTo(0, 0)")
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert errors == []
    page.close()


def test_write_report_refuses_a_threshold_for_a_metric_not_in_the_run(tmp_path: Path) -> None:
    from ragqa.errors import ConfigError
    from ragqa.run.replay import write_report

    with pytest.raises(ConfigError, match="hallucination: no metric of this run"):
        write_report(hand_built(), tmp_path / "r.html", thresholds={"hallucination": 0.2})
    assert not (tmp_path / "r.html").exists()
    written = write_report(hand_built(), tmp_path / "r.html", language="ru", thresholds={"faithfulness": 0.99})
    # three samples: the interval [0, 1] contains 0.99, so the gate is undecided, not failed
    assert "не определено" in written.read_text(encoding="utf-8")
