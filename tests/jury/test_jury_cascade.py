"""The cascade (``ragqa.jury.cascade``): tier 2 is asked only where tier 1 is unsure, and nothing else changes."""

from __future__ import annotations

import asyncio
import json
import math
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from factories import CASCADE_PANEL_YAML

import ragqa as api
from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.jury.cascade import Cascade, CascadeRule, escalation, read_fit
from ragqa.metrics.base import Metric
from ragqa.metrics.faithfulness import Faithfulness
from ragqa.metrics.hallucination import Hallucination
from ragqa.metrics.text.bleu import BleuScore
from ragqa.prompts.base import Prompt
from ragqa.render.console import report_to_text
from ragqa.render.html import report_to_html
from ragqa.report import Report
from ragqa.run.stream import read_results
from ragqa.schema import Sample
from ragqa.testing import FunctionJudge, make_sample

ROOT = Path(__file__).resolve().parents[2]
ragqa = partial(run_cli, cwd=ROOT)  # the CLI in process, in the repository root unless told
IT = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"

STATEMENTS = ["a", "b", "c", "d"]


def _judge(judge_id: str, supported: dict[str, int]) -> FunctionJudge:
    """A judge that extracts four statements and calls the first ``supported[sample]`` of them supported."""

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": STATEMENTS}
        if prompt.name == "nli":
            n = supported[data.context.strip()]
            return {
                "verdicts": [
                    {"statement": s, "reason": "scripted", "verdict": int(i < n)} for i, s in enumerate(data.statements)
                ]
            }
        raise AssertionError(f"unexpected prompt {prompt.name}")

    return FunctionJudge(judge_id, answer)


def _samples(*ids: str) -> list[Sample]:
    return [make_sample(id=i, user_input="q", response="r", reference="r", retrieved_contexts=[i]) for i in ids]


# faithfulness = n / 4. Tier 1 (t1a, t1b): "sure" both 1.0 (far above 0.5), "split" 0.75 / 0.25,
# "near" both 0.5 (within the margin), "low" both 0.0. Tier 2 (t2a, t2b) says 0.25 everywhere.
TIER1 = {
    "t1a": {"sure": 4, "split": 3, "near": 2, "low": 0},
    "t1b": {"sure": 4, "split": 1, "near": 2, "low": 0},
}
TIER2 = {j: {"sure": 1, "split": 1, "near": 1, "low": 1} for j in ("t2a", "t2b")}


def _panel() -> list[FunctionJudge]:
    return [_judge("t2a", TIER2["t2a"]), *(_judge(j, v) for j, v in TIER1.items()), _judge("t2b", TIER2["t2b"])]


def _cascade(**rule: Any) -> Cascade:
    return Cascade(
        tier2=("t2a", "t2b"),
        rule=CascadeRule(**{"spread": 0.3, "margin": 0.1, "split": True, **rule}),
        thresholds={"faithfulness": 0.5, "hallucination": 0.5},
    )


def _run(judges: list[FunctionJudge], samples: list[Sample], metrics: list[Metric], **options: Any) -> Report:
    evaluator = PanelEvaluator(judges, metrics, options=PanelOptions(**options))
    return asyncio.run(evaluator.evaluate(samples))


# -- the rule -------------------------------------------------------------------------------------


def test_rule_checks_in_order_and_a_metric_without_threshold_escalates_by_spread_only() -> None:
    rule = CascadeRule(spread=0.3, margin=0.1, split=True)
    assert escalation([[0.9], [0.95]], 0.925, 0.5, "higher", rule) is None
    assert escalation([[0.9], [0.4]], 0.65, 0.5, "higher", rule) == "split"
    assert escalation([[0.9], [0.55]], 0.725, 0.5, "higher", rule) == "spread"
    assert escalation([[0.58], [0.6]], 0.59, 0.5, "higher", rule) == "margin"
    assert escalation([[math.nan]], math.nan, 0.5, "higher", rule) == "unscored"
    # no threshold: only the spread counts, however close to anything the aggregate is
    assert escalation([[0.5], [0.45]], 0.475, None, "higher", rule) is None
    assert escalation([[0.9], [0.2]], 0.55, None, "higher", rule) == "spread"
    # checks switched off
    off = CascadeRule(spread=None, margin=0.0, split=False, interval=False)
    assert escalation([[1.0], [0.0]], 0.5 + 1e-9, 0.5, "higher", off) is None


def test_interval_check_uses_the_repeats_of_tier_one() -> None:
    rule = CascadeRule(spread=None, margin=0.0, split=False, interval=True)
    wobbly = [[0.3, 0.9, 0.6], [0.4, 0.95, 0.7]]  # its interval across judges x repeats holds 0.6
    steady = [[0.9, 0.9, 0.91], [0.92, 0.9, 0.9]]
    assert escalation(wobbly, 0.64, 0.6, "higher", rule) == "interval"
    assert escalation(steady, 0.905, 0.6, "higher", rule) is None
    assert (
        escalation(wobbly, 0.64, 0.6, "higher", CascadeRule(spread=None, margin=0, split=False, interval=False)) is None
    )


def test_a_negative_spread_or_margin_is_refused() -> None:
    with pytest.raises(ValueError, match="margin"):
        CascadeRule(margin=-0.1)
    with pytest.raises(ValueError, match="spread"):
        CascadeRule(spread=-1)


# -- scheduling -----------------------------------------------------------------------------------


def test_tier_two_is_asked_only_on_escalated_items_and_absent_elsewhere() -> None:
    judges = _panel()
    report = _run(judges, _samples("sure", "split", "near", "low"), [Faithfulness()], cascade=_cascade())
    by_id = {r.sample_id: r for r in report.results}
    # tier 1: two calls (statements, verdicts) per sample; tier 2: only on "split" and "near"
    calls = {j.id: sorted({c.data["context"].strip() for c in j.calls if c.prompt == "nli"}) for j in judges}
    assert calls["t1a"] == calls["t1b"] == ["low", "near", "split", "sure"]
    assert calls["t2a"] == calls["t2b"] == ["near", "split"]
    assert sum(len(j.calls) for j in judges if j.id.startswith("t2")) == 2 * 2 * 2
    # non-escalated: tier 2 absent (neither a score nor a failure), the aggregate is tier 1's
    assert [o.judge_id for o in by_id["sure"].judges] == ["t1a", "t1b"]
    assert by_id["sure"].aggregate.value == 1.0 and by_id["sure"].aggregate.n_failed == 0
    assert by_id["low"].aggregate.value == 0.0
    # escalated: every judge, in panel order, and the aggregate over all of them
    assert [o.judge_id for o in by_id["split"].judges] == ["t2a", "t1a", "t1b", "t2b"]
    assert by_id["split"].aggregate.value == pytest.approx((0.25 + 0.75 + 0.25 + 0.25) / 4)
    summary = report.summary("faithfulness")
    scored = {j.judge_id: (j.n_scored, j.n_failed) for j in summary.judges}
    assert scored == {"t2a": (2, 0), "t1a": (4, 0), "t1b": (4, 0), "t2b": (2, 0)}
    cascade = summary.cascade
    assert cascade is not None
    assert (cascade.n_items, cascade.n_escalated, cascade.escalation_rate) == (4, 2, 0.5)
    assert cascade.reasons == {"split": 1, "margin": 1}
    assert (cascade.tier1_judgements, cascade.tier2_judgements) == (8, 4)
    text = report_to_text(report)
    assert "tier 2 t2a, t2b asked on 2 (50.0 %)" in text
    assert "not asked, not failed" in text
    assert "not asked, not failed" in report_to_html(report)


def test_shared_statement_steps_are_made_once_per_judge_across_escalated_metrics() -> None:
    judges = _panel()
    _run(judges, _samples("split"), [Faithfulness(), Hallucination()], cascade=_cascade())
    for judge in judges:  # faithfulness and hallucination share both steps: one call each
        assert sorted(c.prompt for c in judge.calls) == ["nli", "statements"]


def test_with_everything_escalated_the_cascade_gives_exactly_the_full_panels_scores() -> None:
    samples = _samples("sure", "split", "near", "low")
    metrics: list[Metric] = [Faithfulness(), Hallucination(), BleuScore()]
    for options in ({}, {"strategy": "claim-vote", "extractor": "t1a"}, {"strategy": "median"}, {"repeats": 2}):
        plain = _run(_panel(), samples, metrics, **options)
        everything = _run(_panel(), samples, metrics, cascade=_cascade(margin=1.0), **options)
        assert len(plain.results) == len(everything.results)
        for a, b in zip(plain.results, everything.results, strict=True):
            assert (a.sample_id, a.metric) == (b.sample_id, b.metric)
            assert a.aggregate == b.aggregate, options
            assert [(o.judge_id, o.score) for o in a.judges] == [(o.judge_id, o.score) for o in b.judges]
        for a, b in zip(plain.summaries, everything.summaries, strict=True):
            assert [j.mean for j in a.judges] == [j.mean for j in b.judges]
            assert a.aggregate_mean == b.aggregate_mean


def test_claim_vote_under_a_cascade_keeps_one_extraction_by_the_tier_one_extractor() -> None:
    judges = _panel()
    report = _run(
        judges, _samples("sure", "split"), [Faithfulness()], cascade=_cascade(), strategy="claim-vote", extractor="t1a"
    )
    assert [len(j.calls_to("statements")) for j in judges] == [0, 2, 0, 0]
    by_id = {r.sample_id: r for r in report.results}
    assert by_id["sure"].aggregate.value == 1.0  # tier 1's vote
    # escalated: votes per statement among 4 judges: a yes(t1a) b no c no d no -> 0.25... ties go to t1a
    assert by_id["split"].aggregate.strategy == "claim-vote"
    with pytest.raises(ConfigError, match="tier-2 judge"):
        PanelEvaluator(judges, options=PanelOptions(cascade=_cascade(), strategy="claim-vote"))  # t2a extracts


def test_bad_cascades_are_refused_before_any_call() -> None:
    judges = _panel()
    with pytest.raises(ConfigError, match="not a judge of the panel"):
        PanelEvaluator(judges, options=PanelOptions(cascade=Cascade(tier2=("gpt-5",))))
    with pytest.raises(ConfigError, match="leave at least one judge in tier 1"):
        PanelEvaluator(judges, options=PanelOptions(cascade=Cascade(tier2=("t2a", "t1a", "t1b", "t2b"))))
    with pytest.raises(ConfigError, match="--cascade-audit needs a cascade"):
        PanelEvaluator(judges, options=PanelOptions(cascade_audit=True))
    assert all(not j.calls for j in judges)


def test_audit_asks_every_judge_and_compares_the_cascades_verdicts_with_the_full_panels() -> None:
    judges = _panel()
    samples = _samples("sure", "split", "near", "low")
    plain = _run(_panel(), samples, [Faithfulness()])
    audit = _run(judges, samples, [Faithfulness()], cascade=_cascade(), cascade_audit=True)
    assert [r.aggregate for r in audit.results] == [r.aggregate for r in plain.results]
    assert all(len(j.calls) == 2 * 4 for j in judges)
    c = audit.summary("faithfulness").cascade
    assert c is not None and c.audit
    # full panel: sure (0.25+1+1+0.25)/4 = 0.625 pass; split 0.375 fail; near 0.375 fail; low 0.125 fail.
    # cascade: sure -> tier 1 (1.0, pass), split/near -> full, low -> tier 1 (0.0, fail): all four agree
    assert (c.n_escalated, c.n_compared, c.agreement) == (2, 4, 1.0)
    assert c.tier2_share == 0.5 and c.tier2_share_basis == "judgements"
    assert c.tier2_judgements == 4 and c.full_tier2_usage is not None
    assert "agree with the full panel's on 100.0 % of 4 sample(s)" in report_to_text(audit)
    assert "50.0 % of the full panel's tier-2 judgements" in report_to_text(audit)


def test_the_tally_reads_results_back_the_same_as_made(tmp_path: Path) -> None:
    from ragqa.jury.cascade import CascadeTally

    judges = _panel()
    evaluator = PanelEvaluator(judges, [Faithfulness()], options=PanelOptions(cascade=_cascade()))
    report = asyncio.run(evaluator.evaluate(_samples("sure", "split", "near", "low")))
    tally = evaluator.cascade([Faithfulness()])
    assert isinstance(tally, CascadeTally)
    for result in report.results:
        tally.add(result)
    assert tally.summary("faithfulness") == report.summary("faithfulness").cascade


# -- settings, header, CLI ----------------------------------------------------------------------------

CONFIG = CASCADE_PANEL_YAML


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "application.yaml"
    path.write_text(CONFIG + extra, encoding="utf-8")
    return path


def test_settings_make_a_cascade_and_the_header_names_its_rule(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    report = api.evaluate(IT, metrics=["faithfulness"], config=_config(tmp_path), out=[out, tmp_path / "report.json"])
    [written] = json.loads((tmp_path / "report.json").read_text())["summaries"]
    assert written["cascade"]["tier2"] == ["dear"] and written["cascade"]["n_items"] == 60
    c = report.summary("faithfulness").cascade
    assert c is not None and (c.tier1, c.tier2, c.threshold) == (["cheap-a", "cheap-b"], ["dear"], 0.7)
    asked = sum(1 for r in report.results if any(o.judge_id == "dear" for o in r.judges))
    assert asked == c.n_escalated < c.n_items == 60
    header, _ = read_results(out)
    assert header.cascade is not None
    assert header.cascade["tier2"] == ["dear"] and header.cascade["source"] == "settings"
    assert (header.cascade["spread"], header.cascade["margin"]) == (0.2, 0.05)


def test_cli_cascade_audit_prints_agreement_and_tier_two_share(tmp_path: Path) -> None:
    config = _config(tmp_path)
    result = ragqa("evaluate", str(IT), "-m", "faithfulness", "--config", str(config), "--cascade-audit")
    assert result.returncode in (0, 1), result.stderr
    assert "audit (every tier scored every sample)" in result.stdout
    assert "the cascade would have made" in result.stdout
    plain = ragqa("evaluate", str(IT), "-m", "faithfulness", "--cascade-audit", "--profile", "local")
    assert plain.returncode == 2 and "--cascade-audit needs a cascade" in plain.stderr


def test_a_fitted_rule_replaces_the_settings_and_names_its_data(tmp_path: Path) -> None:
    fit = tmp_path / "fit.json"
    fit.write_text(
        json.dumps(
            {"format": "ragqa-cascade-fit/1", "spread": None, "margin": 0.2, "split": False, "data": "labels.jsonl"}
        ),
        encoding="utf-8",
    )
    rule, source = read_fit(fit)
    assert rule == CascadeRule(spread=None, margin=0.2, split=False, interval=True)
    assert source == "fitted on labels.jsonl (fit.json)"
    config = _config(tmp_path)
    config.write_text(config.read_text().replace("split: true}", f"split: true, fit: '{fit}'}}"))
    report = api.evaluate(IT, metrics=["faithfulness"], config=config, cascade_audit=True)
    c = report.summary("faithfulness").cascade
    assert c is not None and (c.spread, c.margin, c.split) == (None, 0.2, False) and c.source == source
    assert c.audit and all(len(r.judges) == 3 for r in report.results)  # the audit asked every judge
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigError, match="ragqa calibrate --fit-cascade"):
        read_fit(tmp_path / "bad.json")


def test_order_probe_under_a_cascade_probes_only_the_judges_that_scored() -> None:
    from ragqa.jury.probe import OrderProbeOptions

    judges = _panel()
    samples = [
        make_sample(id=i, user_input="q", response="r", retrieved_contexts=[i, "other"]) for i in ("sure", "split")
    ]
    for judge in judges:  # the sample's key is its first context, in either order
        judge._fn = _keyed(judge._fn)  # type: ignore[attr-defined]
    report = _run(
        judges,
        samples,
        [Faithfulness()],
        cascade=_cascade(),
        probes=("order",),
        order_probe=OrderProbeOptions(share=1.0),
    )
    assert report.order_probe is not None
    probed = {j.judge_id: j.n_items for j in report.order_probe.judges}
    assert probed["t1a"] > 0 and probed["t2a"] > 0  # tier 2 probed on the escalated sample only
    assert probed["t2a"] < probed["t1a"]


def _keyed(fn: Any) -> Any:
    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "nli":
            key = next(part for part in data.context.split() if part in ("sure", "split"))
            data = data.model_copy(update={"context": key})
        return fn(prompt, data)

    return answer
