"""A report rebuilt from a cascade run's results file (``ragqa report``) has the live run's cascade section."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import CASCADE_PANEL_YAML

import ragqa as api
from ragqa.render.console import cascade_texts
from ragqa.run.replay import report_from_results
from ragqa.run.stream import read_results

ROOT = Path(__file__).resolve().parents[2]
IT = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"

CONFIG = CASCADE_PANEL_YAML  # cheap-a, the first judge, extracts in the claim-vote runs


def _live_and_rebuilt(tmp_path: Path, **options: Any) -> tuple[api.Report, api.Report]:
    config = tmp_path / "application.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    out = tmp_path / "results.jsonl"
    live = api.evaluate(IT, metrics=["faithfulness", "context_recall"], config=config, out=out, **options)
    rebuilt, _ = report_from_results(out)
    return live, rebuilt


@pytest.mark.parametrize(
    "options",
    [{}, {"cascade_audit": True}, {"aggregation": "claim-vote"}, {"aggregation": "claim-vote", "cascade_audit": True}],
    ids=["cascade", "audit", "claim-vote", "claim-vote-audit"],
)
@pytest.mark.slow
def test_rebuilt_cascade_section_equals_the_live_runs(tmp_path: Path, options: dict[str, Any]) -> None:
    live, rebuilt = _live_and_rebuilt(tmp_path, **options)
    for metric in ("faithfulness", "context_recall"):
        made, again = live.summary(metric).cascade, rebuilt.summary(metric).cascade
        assert made is not None and again is not None
        assert again == made
        assert cascade_texts(rebuilt.summary(metric)) == cascade_texts(live.summary(metric))
    c = live.summary("faithfulness").cascade
    assert c is not None and c.n_items == 60 and c.threshold == 0.7
    assert c.audit == bool(options.get("cascade_audit"))
    if c.audit:  # the audit's numbers come back too, not only the counts
        assert c.n_compared == 60 and 0 < c.tier2_share <= 1
    else:
        assert 0 < c.n_escalated < c.n_items


def test_the_header_keeps_the_thresholds_and_an_older_file_without_them_still_rebuilds(tmp_path: Path) -> None:
    live, _ = _live_and_rebuilt(tmp_path)
    out = tmp_path / "results.jsonl"
    header, _ = read_results(out)
    assert header.cascade is not None and header.cascade["thresholds"] == {"faithfulness": 0.7}
    lines = out.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    del first["cascade"]["thresholds"]  # as written before the header kept them
    out.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    rebuilt, _ = report_from_results(out)
    again, made = rebuilt.summary("faithfulness").cascade, live.summary("faithfulness").cascade
    assert again is not None and made is not None
    # not an audit run: which samples escalated is read from the records, so the counts stand
    assert (again.n_items, again.n_escalated, again.tier2_judgements) == (
        made.n_items,
        made.n_escalated,
        made.tier2_judgements,
    )
    assert again.threshold is None


def test_a_run_without_a_cascade_rebuilds_without_a_cascade_section(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    api.evaluate(IT, metrics=["faithfulness"], profile="local", out=out)
    rebuilt, _ = report_from_results(out)
    assert rebuilt.summary("faithfulness").cascade is None


def test_shards_joined_by_merge_rebuild_the_whole_runs_cascade_section(tmp_path: Path) -> None:
    from ragqa.run.merge import merge_results

    config, parts = tmp_path / "application.yaml", [tmp_path / f"part-{k}.jsonl" for k in (1, 2)]
    config.write_text(CONFIG, encoding="utf-8")
    live = api.evaluate(IT, metrics=["faithfulness"], config=config, cascade_audit=True)
    for k, part in enumerate(parts, 1):
        api.evaluate(IT, metrics=["faithfulness"], config=config, out=part, cascade_audit=True, shard=f"{k}/2")
    merged = tmp_path / "all.jsonl"
    merge_results(parts, merged)
    header, _ = read_results(merged)
    assert header.cascade is not None and header.extractor is None  # a mean run has no extractor
    rebuilt, _ = report_from_results(merged)
    again, made = rebuilt.summary("faithfulness").cascade, live.summary("faithfulness").cascade
    assert again is not None and made is not None
    assert _without_latency(again) == _without_latency(made)  # two runs: only the measured latency differs


def _without_latency(summary: Any) -> dict[str, Any]:
    data: dict[str, Any] = summary.model_dump()
    for key in ("tier1_usage", "tier2_usage", "full_tier2_usage"):
        if data[key] is not None:
            data[key].pop("latency_s")
    return data
