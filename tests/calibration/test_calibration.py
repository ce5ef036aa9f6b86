"""Calibration against human labels: statistics against hand-computed values, exclusions, early errors.

The panel in these tests (two scripted judges, faithfulness = supported / total statements):

=======  =====  =========  =========  ==============================
sample   label  judge-a    judge-b    panel mean
=======  =====  =========  =========  ==============================
s1       0      1/5 = 0.2  0/5 = 0.0  0.1
s2       0      3/5 = 0.6  NaN        0.6 (NaN left out)
s3       1      2/5 = 0.4  failed     0.4 (failure left out)
s4       1      9/10= 0.9  5/5 = 1.0  0.95
s5       1      3/5 = 0.6  4/5 = 0.8  0.7
=======  =====  =========  =========  ==============================
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from typer.testing import CliRunner

from ragqa.calibration import (
    PANEL,
    Calibration,
    auroc,
    best_threshold,
    bootstrap_ci,
    calibrate,
    calibrate_report,
    calibration_table,
    label_kind,
    read_labels,
    spearman,
)
from ragqa.calibration.stats import as_floats, auroc_along, auroc_groups
from ragqa.cli import app
from ragqa.container import create_container
from ragqa.errors import DatasetError, JudgeTimeout
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.run.loop import run_sync
from ragqa.testing import FunctionJudge, make_sample

ROOT = Path(__file__).resolve().parents[2]
BEGIN = ROOT / "examples" / "datasets" / "begin_wow_labelled.jsonl"

LABELS = {"s1": 0.0, "s2": 0.0, "s3": 1.0, "s4": 1.0, "s5": 1.0}
PLAN: dict[str, dict[str, Any]] = {
    "judge-a": {"s1": (1, 5), "s2": (3, 5), "s3": (2, 5), "s4": (9, 10), "s5": (3, 5)},
    "judge-b": {"s1": (0, 5), "s2": "nan", "s3": JudgeTimeout("no answer", step="nli"), "s4": (5, 5), "s5": (4, 5)},
}


def planned(judge_id: str, calls: list[str] | None = None) -> FunctionJudge:
    """A judge whose faithfulness on sample ``sid`` is ``k / n`` from :data:`PLAN`."""
    plan = PLAN[judge_id]

    def answer(prompt: Any, data: Any) -> Any:
        if calls is not None:
            calls.append(judge_id)
        if prompt.name == "statements":
            sid = data.answer.split()[0]
            step = plan[sid]
            if isinstance(step, Exception):
                return {"statements": [f"{sid} claim"]}  # fails at the next step
            return {"statements": [] if step == "nan" else [f"{sid} claim {i}" for i in range(step[1])]}
        sid = data.statements[0].split()[0]
        step = plan[sid]
        if isinstance(step, Exception):
            raise step
        k = step[0]
        return {
            "verdicts": [{"statement": s, "reason": "r", "verdict": int(i < k)} for i, s in enumerate(data.statements)]
        }

    return FunctionJudge(judge_id, answer)


def samples(labels: dict[str, Any] | None = None) -> list[Any]:
    labels = LABELS if labels is None else labels
    out = []
    for sid in PLAN["judge-a"]:
        metadata = {"human_score": labels[sid]} if sid in labels else {}
        out.append(make_sample(id=sid, response=f"{sid} says something", metadata=metadata))
    return out


def panel_report(metrics: list[Any] | None = None) -> Any:
    evaluator = PanelEvaluator([planned("judge-a"), planned("judge-b")], metrics or [Faithfulness()])
    return run_sync(evaluator.evaluate(samples()))


# ---- the statistics, by hand -------------------------------------------------------------------


def test_auroc_of_a_tiny_set_counts_ties_as_half() -> None:
    # positives 0.4, 0.9, 0.6 against negatives 0.2, 0.6: 1+0 + 1+1 + 1+0.5 = 4.5 of 6 pairs
    assert auroc([0.2, 0.6, 0.4, 0.9, 0.6], [0, 0, 1, 1, 1]) == pytest.approx(0.75)
    assert auroc([0.1, 0.2, 0.8, 0.9], [0, 0, 1, 1]) == 1.0
    assert auroc([0.8, 0.9, 0.1, 0.2], [0, 0, 1, 1]) == 0.0
    with pytest.raises(ValueError, match="both classes"):
        auroc([0.1, 0.2], [1, 1])


def test_spearman_by_hand_with_and_without_ties() -> None:
    # ranks 1,3,2,4 against 1,2,3,4: sum d^2 = 2, rho = 1 - 6*2 / (4 * 15) = 0.8
    assert spearman([0.1, 0.4, 0.3, 0.9], [1, 2, 3, 4]) == pytest.approx(0.8)
    # tied labels: Pearson of ranks (1.5, 1.5, 3, 4) and (1, 2, 3, 4) = 4.5 / sqrt(4.5 * 5) = sqrt(0.9)
    assert spearman([0.1, 0.2, 0.3, 0.4], [1, 1, 2, 3]) == pytest.approx(math.sqrt(0.9))
    assert math.isnan(spearman([0.5, 0.5, 0.5], [1, 2, 3]))
    assert math.isnan(spearman([0.5], [1]))


def test_best_threshold_for_both_directions_and_the_lenient_tie_break() -> None:
    passed = [False, False, True, True, True]
    # >= 0.2: 3/5; >= 0.4: 4/5; >= 0.6: 3/5; >= 0.9: 3/5
    assert best_threshold([0.2, 0.6, 0.4, 0.9, 0.6], passed) == (pytest.approx(0.4), pytest.approx(0.8))
    # lower is better: <= 0.8: 3/5; <= 0.6: 4/5; <= 0.4: 3/5; <= 0.1: 3/5
    assert best_threshold([0.8, 0.4, 0.6, 0.1, 0.4], passed, "lower") == (pytest.approx(0.6), pytest.approx(0.8))
    # >= 0.2 and >= 0.4 both reach 3/4: the more lenient 0.2 wins
    assert best_threshold([0.1, 0.2, 0.3, 0.4], [False, True, False, True]) == (pytest.approx(0.2), 0.75)
    with pytest.raises(ValueError):
        best_threshold([], [])


def test_bootstrap_interval_is_reproducible_and_brackets_the_estimate() -> None:
    pos = as_floats([0.4, 0.9, 0.6, 0.7, 0.8, 0.55])
    neg = as_floats([0.2, 0.6, 0.3, 0.5, 0.1])

    def statistic(p: Any, q: Any) -> float:
        return auroc([*p, *q], [1] * len(p) + [0] * len(q))

    first = bootstrap_ci(statistic, [pos, neg], paired=False, n_resamples=500, seed=7)
    again = bootstrap_ci(statistic, [pos, neg], paired=False, n_resamples=500, seed=7)
    estimate = statistic(pos, neg)
    assert first == again
    assert 0.0 <= first.low <= estimate <= first.high <= 1.0
    assert first.low < first.high
    # perfectly separated classes stay separated in every stratified resample
    perfect = bootstrap_ci(statistic, [pos + 1, neg], paired=False, n_resamples=200, seed=0)
    assert (perfect.low, perfect.high) == (1.0, 1.0)
    too_small = bootstrap_ci(statistic, [as_floats([0.5]), neg], paired=False)
    assert math.isnan(too_small.low) and math.isnan(too_small.high)


def test_the_vectorised_auroc_bootstrap_gives_the_per_resample_interval_bit_for_bit() -> None:
    """The calibration table's AUROC interval ranks all resamples in one ``mannwhitneyu`` call;
    it must be exactly the interval of one call per resample (random scores, heavy ties, both
    orientations, groups of 2 to 60)."""
    import numpy as np

    rng = np.random.default_rng(20261127)
    for case in range(24):
        n_pos, n_neg = (int(n) for n in rng.integers(2, 61, 2))
        if case % 3 == 0:  # a 5-point scale: many ties
            pos, neg = rng.integers(0, 5, n_pos) / 4, rng.integers(0, 5, n_neg) / 4
        else:
            pos, neg = rng.random(n_pos), rng.random(n_neg)
        sign = -1.0 if case % 2 else 1.0
        one_by_one = bootstrap_ci(
            lambda p, q, s=sign: auroc_groups(s * p, s * q), [pos, neg], paired=False, n_resamples=100, seed=case
        )
        together = bootstrap_ci(
            lambda p, q, axis, s=sign: auroc_along(s * p, s * q, axis=axis),
            [pos, neg],
            paired=False,
            n_resamples=100,
            seed=case,
            vectorized=True,
        )
        assert together == one_by_one, case
        assert float(auroc_along(pos, neg)) == auroc_groups(pos, neg)


def test_label_kind() -> None:
    assert label_kind([0, 1, 1.0, 0.0]) == "binary"
    assert label_kind([1, 2, 3]) == "graded"
    assert label_kind([0, 0.5, 1]) == "graded"


# ---- from a run: per judge and for the panel -------------------------------------------------


def test_each_judge_and_the_panel_against_hand_computed_figures() -> None:
    result = calibrate_report(panel_report(), LABELS, n_resamples=200)
    assert result.label_kind == "binary" and result.pass_label == 1.0 and result.n_samples == 5
    (metric,) = result.metrics
    a, b = metric.judges
    assert (a.judge_id, a.n, a.n_excluded) == ("judge-a", 5, 0)
    assert a.auroc == pytest.approx(0.75)
    assert (a.threshold, a.accuracy) == (pytest.approx(0.4), pytest.approx(0.8))
    # judge-b: NaN (s2) and failure (s3) left out; 1.0 and 0.8 (label 1) over 0.0 (label 0)
    assert (b.judge_id, b.n, b.n_excluded) == ("judge-b", 3, 2)
    assert b.auroc == 1.0
    assert (b.threshold, b.accuracy) == (pytest.approx(0.8), 1.0)
    # panel means 0.1, 0.6, 0.4, 0.95, 0.7: 0.4 > 0.1; 0.95 and 0.7 > both -> 5 of 6 pairs
    panel = metric.panel
    assert (panel.judge_id, panel.n, panel.n_excluded) == (PANEL, 5, 0)
    assert panel.auroc == pytest.approx(5 / 6)
    assert (panel.threshold, panel.accuracy) == (pytest.approx(0.4), pytest.approx(0.8))
    # one negative only for judge-b: no interval can be drawn from a single sample
    assert b.auroc_ci is not None and math.isnan(b.auroc_ci.low) and math.isnan(b.accuracy_ci.high)
    for row in (a, panel):
        assert row.spearman is None
        assert row.auroc_ci is not None and row.auroc_ci.low <= row.auroc <= row.auroc_ci.high  # type: ignore[operator]
        assert row.accuracy_ci.low <= row.accuracy_ci.high


def test_a_lower_is_better_metric_is_oriented_so_figures_match_its_mirror() -> None:
    result = calibrate_report(panel_report([Faithfulness(), Hallucination()]), LABELS, n_resamples=200)
    faithfulness, hallucination = result.metrics
    assert hallucination.direction == "lower"
    for f, h in zip(
        [*faithfulness.judges, faithfulness.panel], [*hallucination.judges, hallucination.panel], strict=True
    ):
        assert h.auroc == pytest.approx(f.auroc)
        assert h.accuracy == pytest.approx(f.accuracy)
        assert h.threshold == pytest.approx(1 - f.threshold)  # gate: hallucination <= 1 - t
        assert h.auroc_ci is not None and f.auroc_ci is not None
        assert (h.auroc_ci.low, h.auroc_ci.high) == pytest.approx((f.auroc_ci.low, f.auroc_ci.high), nan_ok=True)


def test_graded_labels_give_spearman_and_a_midpoint_pass_label() -> None:
    graded = {"s1": 1.0, "s2": 2.0, "s3": 3.0, "s4": 5.0, "s5": 4.0}
    result = calibrate_report(panel_report(), graded, n_resamples=200)
    assert result.label_kind == "graded" and result.pass_label == 3.0
    a = result.metrics[0].judges[0]
    # judge-a 0.2, 0.6, 0.4, 0.9, 0.6 (ranks 1, 3.5, 2, 5, 3.5) against 1, 2, 3, 5, 4
    assert a.spearman == pytest.approx(spearman([0.2, 0.6, 0.4, 0.9, 0.6], [1, 2, 3, 5, 4]))
    # centred ranks (-2, .5, -1, 2, .5) and (-2, -1, 0, 2, 1): 8 / sqrt(9.5 * 10)
    assert a.spearman == pytest.approx(8 / math.sqrt(95))
    assert a.auroc is None and a.spearman_ci is not None
    # pass = label >= 3 -> s3, s4, s5, the binary case's verdicts
    assert (a.threshold, a.accuracy) == (pytest.approx(0.4), pytest.approx(0.8))
    assert calibrate_report(panel_report(), graded, pass_label=5, n_resamples=50).pass_label == 5


def test_a_scored_sample_without_a_label_is_an_error() -> None:
    with pytest.raises(DatasetError, match="s5"):
        calibrate_report(panel_report(), {k: v for k, v in LABELS.items() if k != "s5"}, n_resamples=50)


# ---- labels are checked before any judge call ----------------------------------------------------


def test_read_labels_from_metadata() -> None:
    assert read_labels(samples(), "human_score") == LABELS
    assert read_labels(samples(), "metadata.human_score") == LABELS
    with_bool = [make_sample(id="x", metadata={"ok": True}), make_sample(id="y", metadata={"ok": False})]
    assert read_labels(with_bool, "ok") == {"x": 1.0, "y": 0.0}


@pytest.fixture
def container() -> Any:
    c = create_container(ROOT / "application.yaml", ["local"])
    yield c
    from ragqa.container import close_container

    run_sync(close_container(c))


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({k: v for k, v in LABELS.items() if k != "s4"}, r"sample s4, field 'metadata.human_score': no label"),
        ({**LABELS, "s2": "bad"}, r"sample s2, field 'metadata.human_score': the label 'bad' is not a finite number"),
        ({**LABELS, "s2": float("nan")}, r"sample s2.*not a finite number"),
    ],
)
def test_a_missing_or_bad_label_fails_before_any_judge_call(container: Any, labels: Any, message: str) -> None:
    calls: list[str] = []
    container.judges.override(providers.Object([planned("judge-a", calls), planned("judge-b", calls)]))
    with pytest.raises(DatasetError, match=message):
        calibrate(samples(labels), "faithfulness", container=container)
    assert calls == []


def test_calibrate_through_the_run_layer_gives_the_plain_figures(container: Any, tmp_path: Path) -> None:
    container.judges.override(providers.Object([planned("judge-a"), planned("judge-b")]))
    out = tmp_path / "run.jsonl"
    through_run = calibrate(samples(), "faithfulness", container=container, n_resamples=200, out=out, no_cache=True)
    plain = calibrate_report(panel_report(), LABELS, n_resamples=200)
    assert through_run.model_dump() == plain.model_dump()
    assert out.is_file()
    assert calibrate(samples(), "faithfulness", container=container, limit=3, n_resamples=50).n_samples == 3


def test_the_table_names_every_judge_the_panel_and_the_gate() -> None:
    from rich.console import Console

    console = Console(width=140, record=True)
    for table in calibration_table(calibrate_report(panel_report(), LABELS, n_resamples=50)):
        console.print(table)
    text = console.export_text()
    for expected in ("judge-a", "judge-b", "panel (mean)", "AUROC [95% CI]", "0.750", "5 (0)", "3 (2)", ">= 0.4"):
        assert expected in text
    assert "aggregate is >= 0.4" in text


# ---- the command, offline -----------------------------------------------------------------------


def test_the_command_on_the_shipped_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "calibration.json"
    args = ["calibrate", str(BEGIN), "--profile", "local", "-m", "faithfulness", "--limit", "30"]
    result = CliRunner().invoke(app, [*args, "--resamples", "100", "--json", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "local-strict" in result.output and "panel (mean)" in result.output
    calibration = Calibration.model_validate_json(out.read_text(encoding="utf-8"))
    assert calibration.n_samples == 30 and calibration.label_kind == "binary"
    panel = calibration.metrics[0].panel
    assert panel.auroc is not None and panel.auroc > 0.5  # the local judges agree with people better than chance
    assert json.loads(out.read_text(encoding="utf-8"))["label_field"] == "human_score"


def test_the_worked_example_in_the_docs_is_what_the_command_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/calibration.md's table and JSON figures, from its own command (the whole 200 samples)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "200")
    docs = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    section = docs.split("## A worked example: BEGIN, offline", 1)[1]
    command = section.split("```bash\n", 1)[1].split("\n", 1)[0]
    assert command.startswith("ragqa calibrate ") and "--limit" not in command
    out = tmp_path / "calibration.json"
    result = CliRunner().invoke(app, [*command.split()[1:], "--json", str(out), "--no-cache"])
    assert result.exit_code == 0, result.output
    table = section.split("```text\n", 1)[1].split("```", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("│")]
    assert len(rows) == 3
    printed = [line.strip() for line in result.output.splitlines()]
    for row in rows:
        assert row in printed
    judges = json.loads(out.read_text(encoding="utf-8"))["metrics"][0]["judges"]
    strict, lenient = (f"{j['auroc']:.4f}" for j in judges)
    assert f"(AUROC {strict} against {lenient} in the JSON" in " ".join(section.split())


def test_the_command_names_a_missing_label_and_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    data = tmp_path / "unlabelled.jsonl"
    data.write_text(BEGIN.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["calibrate", str(data), "--profile", "local", "--label-field", "grade"])
    assert result.exit_code == 2
    assert "begin-wow" in result.output and "metadata.grade" in result.output and "no label" in result.output


def test_the_begin_converter_draws_a_balanced_seeded_labelled_sample(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("convert_begin", ROOT / "scripts" / "convert_begin.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = [
        {
            "model_name": "t5",
            "knowledge": f" snippet {i} ",
            "message": f"turn {i}",
            "response": f"reply {i}",
            "begin_label": "Fully attributable" if i % 3 == 0 else "Not fully attributable",
        }
        for i in range(12)
    ]
    converted = module.convert(rows, per_class=3, seed=0)
    assert converted == module.convert(rows, per_class=3, seed=0)
    assert [s["metadata"]["human_score"] for s in converted].count(1) == 3 and len(converted) == 6
    assert [s["id"] for s in converted] == sorted(s["id"] for s in converted)
    first = converted[0]
    i = int(first["id"].removeprefix("begin-wow-")) - 1
    assert first["retrieved_contexts"] == [f"snippet {i}"] and first["response"] == f"reply {i}"
    assert first["metadata"]["begin_label"] == rows[i]["begin_label"]
    assert read_labels(
        [make_sample(id=s["id"], response=s["response"], metadata=s["metadata"]) for s in converted], "human_score"
    )
    shipped = [json.loads(line) for line in BEGIN.read_text(encoding="utf-8").splitlines()]
    assert len(shipped) == 200
    assert sorted(s["metadata"]["human_score"] for s in shipped) == [0] * 100 + [1] * 100


def test_the_command_checks_its_json_path_before_scoring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "missing" / "calibration.json"
    result = CliRunner().invoke(app, ["calibrate", str(BEGIN), "--profile", "local", "--json", str(out)])
    assert result.exit_code == 2
    assert "--json" in result.output and "does not exist" in result.output
