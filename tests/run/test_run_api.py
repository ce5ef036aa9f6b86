"""``ragqa.evaluate`` / ``ragqa.aevaluate``: one call, on a path, a list of dicts or Samples, a DataFrame."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _cli import cli_env

import ragqa
from ragqa.errors import InvalidSamples

ROOT = Path(__file__).resolve().parents[2]
IT_HELPDESK = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"

RECORDS = [
    {
        "id": "paris",
        "question": "Where is the Eiffel Tower?",
        "answer": "The Eiffel Tower is in Paris. It was built in 1889.",
        "contexts": ["The Eiffel Tower is a wrought-iron tower in Paris, built in 1889."],
    },
    {
        "id": "moon",
        "user_input": "When did people land on the Moon?",
        "response": "People landed on the Moon in 1969. They played golf on Mars.",
        "retrieved_contexts": ["Apollo 11 landed people on the Moon in July 1969."],
    },
]


def _scores(report: ragqa.Report) -> dict[tuple[str, str], float]:
    return {(r.sample_id, r.metric): r.aggregate.value for r in report.results}


@pytest.mark.slow
def test_evaluate_a_list_of_dicts_a_dataframe_and_samples_alike() -> None:
    pd = pytest.importorskip("pandas")
    from_dicts = ragqa.evaluate(RECORDS, metrics=["faithfulness", "hallucination"], profile="local")
    assert [(r.sample_id, r.metric) for r in from_dicts.results] == [
        ("paris", "faithfulness"),
        ("paris", "hallucination"),
        ("moon", "faithfulness"),
        ("moon", "hallucination"),
    ]
    assert [s.metric for s in from_dicts.summaries] == ["faithfulness", "hallucination"]
    from_frame = ragqa.evaluate(pd.DataFrame(RECORDS), metrics="faithfulness,hallucination", profile="local")
    assert _scores(from_frame) == _scores(from_dicts)
    samples = ragqa.load_dataset(IT_HELPDESK)[:2]
    from_samples = ragqa.evaluate(samples, metrics=[ragqa.Faithfulness()], profile="local")
    assert [r.sample_id for r in from_samples.results] == ["it-001", "it-002"]


def test_evaluate_a_path_writes_streamed_outputs_and_junit(tmp_path: Path) -> None:
    out, junit = tmp_path / "r.jsonl", tmp_path / "r.xml"
    report = ragqa.evaluate(
        IT_HELPDESK, metrics=["faithfulness"], profile="local", out=[out, junit], thresholds={"faithfulness": 0.5}
    )
    assert len(report.results) == 60 and report.cache is None
    header, *rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert header["dataset"] == str(IT_HELPDESK) and len(rows) == 60
    assert "<testsuite" in junit.read_text(encoding="utf-8")


def test_evaluate_refuses_bad_input_before_any_call() -> None:
    with pytest.raises(InvalidSamples) as raised:
        ragqa.evaluate([{"id": "a", "user_input": "Q"}, {"id": "b", "response": "R"}], metrics=["faithfulness"])
    # every sample's problem at once
    assert [(p.sample_id, p.field) for p in raised.value.problems] == [("a", "response"), ("b", "user_input")]
    with pytest.raises(ragqa.ConfigError, match="Did you mean faithfulness"):
        ragqa.evaluate(RECORDS, metrics=["faithfulness"], thresholds={"faithfullness": 0.5}, profile="local")
    with pytest.raises(ragqa.ConfigError, match="Did you mean faithfulness"):
        ragqa.evaluate(RECORDS, metrics=["faithfullness"], profile="local")
    with pytest.raises(TypeError, match="give a path"):
        ragqa.evaluate(42, metrics=["faithfulness"])
    with pytest.raises(ragqa.ConfigError, match="deadline 0"):
        ragqa.evaluate(RECORDS, metrics=["faithfulness"], profile="local", deadline_s=0)


def test_a_generous_deadline_changes_no_score() -> None:
    plain = ragqa.evaluate(RECORDS, metrics=["faithfulness"], profile="local")
    bounded = ragqa.evaluate(RECORDS, metrics=["faithfulness"], profile="local", deadline_s=3600)
    assert _scores(bounded) == _scores(plain)


async def test_evaluate_works_inside_a_running_event_loop() -> None:
    sync = ragqa.evaluate(RECORDS, metrics=["faithfulness"], profile="local")  # a notebook cell: a loop is running
    awaited = await ragqa.aevaluate(RECORDS, metrics=["faithfulness"], profile="local")
    assert _scores(sync) == _scores(awaited)


def test_on_invalid_skip_leaves_out_only_the_invalid_pairs() -> None:
    records = [dict(RECORDS[0]), {**RECORDS[1], "reference": "In 1969."}]
    report = ragqa.evaluate(records, metrics=["faithfulness", "context_recall"], profile="local", on_invalid="skip")
    assert [(r.sample_id, r.metric) for r in report.results] == [
        ("paris", "faithfulness"),
        ("moon", "faithfulness"),
        ("moon", "context_recall"),
    ]
    assert [(s.sample_id, s.metric, s.field) for s in report.skipped] == [("paris", "context_recall", "reference")]


def test_evaluate_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in cli_env().items():  # no ragqa variable of the developer's (the remote-call block stays)
        if value is None:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no application.yaml here: the built-in settings and profile
    r = ragqa.evaluate(str(IT_HELPDESK), metrics=["faithfulness"], profile="local")
    assert (len(r.results), r.summary("faithfulness").n_aggregated) == (60, 60)


@pytest.mark.slow
def test_the_run_layer_returns_exactly_the_plain_panel_scores(tmp_path: Path) -> None:
    """ragqa.evaluate (validation, estimate, streaming to a results file, grouping, resume bookkeeping)
    gives every judge the score the bare PanelEvaluator gives, graded local verdicts included."""
    from ragqa.container import close_container, create_container
    from ragqa.datasets import load_dataset
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics import build_metric
    from ragqa.run.loop import run_sync

    samples = load_dataset(IT_HELPDESK)[:6]
    names = ["faithfulness", "hallucination", "context_recall", "noise_sensitivity"]
    container = create_container(None, ["local"])

    async def plain() -> ragqa.Report:
        try:
            evaluator = PanelEvaluator(container.judges(), [build_metric(n) for n in names])
            return await evaluator.evaluate(samples)
        finally:
            await close_container(container)

    def judge_scores(report: ragqa.Report) -> dict[tuple[str, str, str], tuple[float, str | None]]:
        return {
            (r.sample_id, r.metric, o.judge_id): (o.score.value, o.score.reason)
            for r in report.results
            for o in r.judges
            if o.score is not None
        }

    expected = run_sync(plain())
    through_runner = ragqa.evaluate(samples, metrics=names, profile="local", out=tmp_path / "r.jsonl")
    assert judge_scores(through_runner) == judge_scores(expected)
    assert len(judge_scores(expected)) == 6 * 4 * 2
    assert any(0 < v < 1 and v not in (0.5, 0.25, 0.75) for v, _ in judge_scores(expected).values())  # graded
    assert _scores(through_runner) == _scores(expected)
    # the file it streamed reads back to the same scores (what --resume keeps)
    from ragqa.run.stream import read_results

    _, kept = read_results(tmp_path / "r.jsonl")
    assert {pair: rec["aggregate"]["value"] for pair, rec in kept.items()} == {
        pair: (None if math.isnan(v) else v) for pair, v in _scores(expected).items()
    }


def test_a_python_run_that_scores_nothing_warns_as_the_cli_exits_3() -> None:
    with pytest.warns(ragqa.IncompleteRunWarning, match="nothing was scored"):
        report = ragqa.evaluate([RECORDS[0]], metrics=["context_recall"], profile="local", on_invalid="skip")
    assert report.results == [] and [s.field for s in report.skipped] == ["reference"]


def test_a_fully_scored_python_run_does_not_warn() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", ragqa.IncompleteRunWarning)
        report = ragqa.evaluate(RECORDS, metrics=["faithfulness"], profile="local")
    assert len(report.results) == 2


def test_evaluate_and_aevaluate_take_the_same_parameters() -> None:
    # both hand dict(locals()) to one mapping (_evaluation), so their parameters must stay the same
    import inspect

    from ragqa.run.api import aevaluate, evaluate

    assert inspect.signature(evaluate).parameters == inspect.signature(aevaluate).parameters
