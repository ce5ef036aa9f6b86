"""Why a sample has no aggregate is said truly: "no judge scored" is not "below quorum" (console and HTML)."""

from __future__ import annotations

import re
from typing import Any

from _reports import quorum_run

from ragqa.errors import JudgeTimeout
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness
from ragqa.render import report_to_text
from ragqa.render.console import no_aggregate_caption
from ragqa.render.html import report_to_html
from ragqa.render.registry import RenderOptions
from ragqa.report import Report
from ragqa.run.summary import RunSummary
from ragqa.testing import FunctionJudge, make_sample


def _judge(judge_id: str, *, fail_on: str = "") -> FunctionJudge:
    """Sample ``empty`` has no statements (faithfulness NaN); ``fail_on`` fails; others score 1.0."""

    def answer(prompt: Any, data: Any) -> Any:
        if prompt.name == "statements":
            if fail_on and fail_on in data.answer:
                raise JudgeTimeout("no answer in 30 s", judge_id=judge_id, step="statements")
            return {"statements": [] if "empty" in data.answer else ["a"]}
        return {"verdicts": [{"statement": s, "reason": "ok", "verdict": 1} for s in data.statements]}

    return FunctionJudge(judge_id, answer)


async def _run(*judges: FunctionJudge, quorum: int = 1) -> Report:
    from ragqa.evaluation import PanelOptions

    evaluator = PanelEvaluator(list(judges), [Faithfulness()], options=PanelOptions(quorum=quorum))
    samples = [
        make_sample(id="ok", response="fine"),
        make_sample(id="nan", response="empty"),
        make_sample(id="mixed", response="empty but down"),
    ]
    return await evaluator.evaluate(samples)


def _streamed(report: Report) -> list[Any]:
    """The summaries as the run layer computes them (column store), not :func:`ragqa.report.summarize`."""
    summary = RunSummary(["a", "b"], ["faithfulness"], len(report.results))
    for position, result in enumerate(report.results):
        summary.add(position, result)
    return summary.summaries()


async def test_samples_where_every_judge_is_nan_are_not_called_below_quorum() -> None:
    report = await _run(_judge("a"), _judge("b", fail_on="down"))
    [summary] = report.summaries
    assert (summary.n_unscored, summary.n_all_failed, summary.n_below_quorum) == (2, 0, 2)
    caption = no_aggregate_caption(summary)
    assert caption == "no judge scored 2 sample(s) (NaN: metric undefined): no aggregate"
    text = report_to_text(report, width=200)
    assert caption in text and "below quorum" not in text
    [streamed] = _streamed(report)
    assert streamed.n_unscored == summary.n_unscored == 2


async def test_every_judge_failing_and_a_real_quorum_miss_get_their_own_lines() -> None:
    report = await quorum_run()  # s2: one judge scored (below quorum 2); s3: every judge failed
    summary = report.summaries[0]
    assert (summary.n_unscored, summary.n_all_failed, summary.n_below_quorum) == (1, 1, 2)
    assert no_aggregate_caption(summary) == (
        "no judge scored 1 sample(s) (every judge failed): no aggregate\n"
        "quorum 2: 1 sample(s) below quorum have no aggregate"
    )


async def test_a_mix_of_failed_and_nan_samples_is_counted_apart() -> None:
    report = await _run(_judge("a", fail_on="fine"), _judge("b", fail_on="fine"))
    [summary] = report.summaries  # ok: both failed; nan and mixed: both NaN
    assert (
        no_aggregate_caption(summary) == "no judge scored 3 sample(s) (every judge failed on 1, NaN on 2): no aggregate"
    )


async def test_nothing_to_say_when_every_sample_has_an_aggregate() -> None:
    report = await _run(_judge("a"))
    ok = report.model_copy(update={"results": report.results[:1]})
    from ragqa.report import summarize

    assert no_aggregate_caption(summarize(ok.results, ["a"])[0]) is None


async def test_the_html_report_says_no_judge_scored_in_both_languages() -> None:
    report = await _run(_judge("a"), _judge("b", fail_on="down"))
    html = report_to_html(report)
    assert re.search(r'class="muted no-judge-scored">no judge scored \(no aggregate\): 2<', html)
    assert "below-quorum" not in html
    ru = report_to_html(report, RenderOptions(language="ru"))
    assert "ни один судья не поставил оценку (нет агрегата): 2" in ru
    quorum = report_to_html(await quorum_run())
    assert 'class="muted below-quorum">below quorum (2): 1<' in quorum
    assert "no judge scored (no aggregate): 1<" in quorum
