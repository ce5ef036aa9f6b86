"""``--probe order`` through the run layer: the CLI on the shipped dataset, sharded parts, a rebuilt report.

The offline local judge judges each context on its own and a statement against its best-matching
context sentence, so reversing the contexts changes none of its verdicts: it must show 1.0 and no
flag. The order probe's figures travel in the results header, add up over ``--shard`` parts joined
by ``ragqa merge``, and come back in a report rebuilt from the results file.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.container import create_container
from ragqa.errors import ConfigError
from ragqa.jury.probe import is_flagged, merge_probe_results
from ragqa.run.merge import dataset_ids, merge_results
from ragqa.run.plan import make_plan
from ragqa.run.replay import report_from_results
from ragqa.run.runner import Runner
from ragqa.run.stream import read_results
from ragqa.schema import JudgeOrderConsistency, OrderConsistency, OrderProbeResult, Usage

DATASET = Path(__file__).resolve().parents[2] / "examples" / "datasets" / "it_helpdesk.jsonl"
METRICS = "faithfulness,context_precision"


def _header(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8").splitlines()[0]))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("probe")
    out = {
        "one": folder / "one.jsonl",
        "html": folder / "one.html",
        "1": folder / "part-1.jsonl",
        "2": folder / "part-2.jsonl",
    }
    ragqa.evaluate(
        DATASET, metrics=METRICS, profile="local", out=[out["one"], out["html"]], probe="order", progress=False
    )
    for k in ("1", "2"):
        ragqa.evaluate(
            DATASET, metrics=METRICS, profile="local", out=out[k], shard=f"{k}/2", probe="order", progress=False
        )
    return out


@pytest.mark.slow
def test_the_cli_reports_the_local_judges_as_order_invariant(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    result = CliRunner().invoke(
        app,
        ["evaluate", str(DATASET), "--profile", "local", "-m", METRICS, "--probe", "order", "--out", str(out)],
        env={"COLUMNS": "200", "NO_COLOR": "1"},
    )
    assert result.exit_code == 0, result.output
    assert "(incl. 52 order-probe call(s))" in result.output  # 13 samples x 2 metrics x 2 judges
    assert "Order bias probe: 13 of 13 selected sample(s)" in result.output
    assert "local-strict: consistency 1.00 (0 of 74 verdicts changed)" in result.output
    assert "local-lenient: consistency 1.00" in result.output
    assert "! " not in result.output.split("Order bias probe")[1]  # no judge flagged
    probe = _header(out)["probe"]
    assert [j["consistency"] for j in probe["judges"]] == [1.0, 1.0]
    assert not any(j["flagged"] for j in probe["judges"])
    assert probe["usage"]["calls"] == 52


def test_an_unknown_probe_exits_2_before_any_call() -> None:
    result = CliRunner().invoke(app, ["evaluate", str(DATASET), "--profile", "local", "--probe", "position"])
    assert result.exit_code == 2
    assert "--probe" in result.output and "unknown probe 'position'; the probes are: order" in result.output


def test_sharded_parts_merge_into_the_unsharded_runs_probe(runs: dict[str, Path], tmp_path: Path) -> None:
    merged = tmp_path / "all.jsonl"
    merge_results([runs["1"], runs["2"]], merged, dataset_ids=dataset_ids(DATASET, [runs["1"]]))
    whole, joined = _header(runs["one"])["probe"], _header(merged)["probe"]
    for probe in (whole, joined):
        for judge in probe["judges"]:
            judge.pop("usage")
        probe.pop("usage")
    assert joined == whole  # the selection is by sample id, so the parts probe the same samples
    header, _ = read_results(merged)
    assert header.probe is not None


def test_a_report_rebuilt_from_results_shows_the_probe(runs: dict[str, Path]) -> None:
    report, _ = report_from_results(runs["one"])
    assert report.order_probe is not None and report.order_probe.n_samples == 13
    assert report.usage.calls == 360 + 52  # the metrics' calls (read from the records) and the probe's
    assert "Order bias probe" in ragqa.render.console.report_to_text(report)


def test_merge_recomputes_consistency_and_flags_from_the_sums() -> None:
    def part(changed: int, items: int) -> OrderProbeResult:
        row = OrderConsistency(metric="faithfulness", n_samples=1, n_items=items, n_changed=changed)
        judge = JudgeOrderConsistency(
            judge_id="j", n_items=items, n_changed=changed, metrics=[row], usage=Usage(calls=1)
        )
        return OrderProbeResult(
            share=0.5, seed=0, max_change_rate=0.1, n_selected=1, n_samples=1, metrics=["faithfulness"], judges=[judge]
        )

    joined = merge_probe_results([part(0, 10), part(3, 10)])
    assert joined is not None
    judge = joined.judges[0]
    assert (judge.n_items, judge.n_changed, judge.consistency, judge.flagged) == (20, 3, 0.85, True)
    assert judge.usage.calls == 2 and joined.n_samples == 2
    assert merge_probe_results([]) is None
    assert OrderConsistency.model_validate({"metric": "m", "consistency": None}).consistency != 0.0  # NaN


def test_a_judge_is_flagged_strictly_above_the_rate_in_a_run_and_in_a_merge_alike() -> None:
    assert not is_flagged(1, 10, 0.1) and is_flagged(2, 10, 0.1)  # exactly the rate is not flagged
    assert not is_flagged(0, 0, 0.0)  # nothing compared: never flagged
    row = OrderConsistency(metric="faithfulness", n_samples=1, n_items=10, n_changed=1)
    judge = JudgeOrderConsistency(judge_id="j", n_items=10, n_changed=1, metrics=[row])
    part = OrderProbeResult(share=1.0, seed=0, max_change_rate=0.1, metrics=["faithfulness"], judges=[judge])
    joined = merge_probe_results([part, part])
    assert joined is not None and not joined.judges[0].flagged  # 2 of 20 = the rate
    strict = merge_probe_results([part.model_copy(update={"max_change_rate": 0.05}), part])
    assert strict is not None and strict.judges[0].flagged  # the first part's rate applies


def test_the_ray_engine_refuses_the_probe_before_any_call() -> None:
    container = create_container(None, ["local"])
    plan = make_plan(container.settings(), metrics=["faithfulness"], panel={"probes": ("order",)})

    class Elsewhere:
        async def score(self, *args: Any) -> dict[str, int]:
            raise AssertionError("never reached")

    with pytest.raises(ConfigError, match="--engine ray") as caught:
        asyncio.run(Runner(plan, container, engine=Elsewhere()).arun([]))
    assert caught.value.key == "--probe"


def test_the_html_report_has_the_probe_section(runs: dict[str, Path]) -> None:
    html = runs["html"].read_text(encoding="utf-8")
    assert '<div class="jury probe">' in html
    assert "Order bias probe: 13 of 13 selected sample(s)" in html
    assert "local-strict: consistency 1.00 (0 of 74 verdicts changed)" in html
