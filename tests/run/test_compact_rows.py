"""Compact rows (:mod:`ragqa.run.rows`): what a Ray worker sends its driver gives one process's files and figures.

A worker sends, per result without a judge failure, the result's summary row and its results-file
line; the driver adds the numbers and appends the bytes. These tests prove, in this process (no
cluster), that nothing changes: a summary built from rows equals one built from the results bit
for bit (summaries, ``scores(metric)``, failed results; repeats, NaN scores, judge failures and a
lower-is-better metric included), the flaky samples are the same, the stream's bytes are the same,
and a whole run through an engine that sends compact rows writes the one-process results file byte
for byte. ``tests/run/test_ray_engine.py`` runs the same comparison on a cluster.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _records import exact_summaries, local_with_a_flaky_judge, random_results
from factories import office_jsonl

from ragqa.container import Container, close_container
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics.base import Metric
from ragqa.run.loop import run_sync
from ragqa.run.outcome import FlakySamples
from ragqa.run.plan import make_plan, plan_output
from ragqa.run.results_file import ResultsHeader, result_bytes
from ragqa.run.rows import CompactMode, CompactResult, compact_result, summary_row
from ragqa.run.runner import Runner
from ragqa.run.source import JsonlSamples
from ragqa.run.stream import ResultStream
from ragqa.run.summary import RunSummary
from ragqa.schema import PanelResult, Sample

JUDGES = ["a", "b", "c"]
METRICS = ["m1", "m2(mode=x)"]


def _sent(results: Iterable[PanelResult], mode: CompactMode) -> list[PanelResult | CompactResult]:
    """What a worker sends for ``results``, through a pickle as Ray carries it."""
    sent: list[PanelResult | CompactResult] = pickle.loads(
        pickle.dumps([compact_result(r, mode) for r in results], protocol=pickle.HIGHEST_PROTOCOL)
    )
    return sent


def _position(result: PanelResult) -> int:
    return int(result.sample_id[1:])


@pytest.mark.parametrize("repeats", [1, 3])
@pytest.mark.slow
def test_a_summary_of_compact_rows_equals_the_summary_of_the_results_bit_for_bit(repeats: int) -> None:
    for seed in range(3):
        results = random_results(seed, 50, repeats)
        results = [r for r in results if not (r.metric == "m1" and _position(r) in (4, 9))]  # skipped pairs
        arrived = list(results)
        random.Random(seed).shuffle(arrived)
        whole = RunSummary(JUDGES, METRICS, 50)
        compact = RunSummary(JUDGES, METRICS, 50)
        for result, item in zip(arrived, _sent(arrived, "rows"), strict=True):
            whole.add(_position(result), result)
            if isinstance(item, PanelResult):  # a judge failed: sent whole
                assert item.failures and repr(item) == repr(result)  # repr: NaN scores compare equal
                compact.add(_position(item), item)
            else:
                line, row = item
                assert line is None and not result.failures
                compact.add_row(_position(result), row)
        assert any(isinstance(item, PanelResult) for item in _sent(results, "rows"))  # failures were sent whole
        assert exact_summaries(compact.summaries()) == exact_summaries(whole.summaries())
        for metric in METRICS:
            assert compact.scores(metric).tobytes() == whole.scores(metric).tobytes()
            assert np.isnan(whole.scores(metric)).any()  # NaN scores and failures are in the matrices
        failed = repr([r for r in results if r.failures])
        assert repr(compact.failed_results()) == repr(whole.failed_results()) == failed
        assert compact.count == whole.count == len(results)


def test_a_row_with_a_judge_failure_needs_its_result() -> None:
    failed = next(r for r in random_results(0, 10, 1) if r.failures)
    summary = RunSummary(JUDGES, METRICS, 10)
    with pytest.raises(ValueError, match="kept whole; add the result"):
        summary.add_row(_position(failed), summary_row(failed))
    assert summary.count == 0
    summary.add_row(_position(failed), summary_row(failed), failed)
    assert summary.failed_results() == [failed]


def test_flaky_samples_from_rows_are_those_from_the_results() -> None:
    results = random_results(5, 80, 3)
    thresholds = {"m1": 0.5, "m2(mode=x)": 0.4}
    whole, compact = FlakySamples(thresholds), FlakySamples(thresholds)
    for result in results:
        whole.add(_position(result), result)
        compact.add_row(_position(result), summary_row(result))
    assert compact.positions == whole.positions
    assert all(whole.positions[m] for m in METRICS)  # both metrics (both directions) have flaky samples


def test_the_stream_appends_a_workers_line_byte_for_byte_as_it_writes_the_result(tmp_path: Path) -> None:
    results = [r for r in random_results(2, 30, 3) if not r.failures]
    labels = [f"s{i}" for i in range(30)]
    header = ResultsHeader("run", "0", "sha256:x", "d", "sha256:y", 30, tuple(METRICS), tuple(JUDGES), "now")
    files = []
    for name, write in (
        ("whole", lambda s, r: s.write(r, position=_position(r))),
        ("lines", lambda s, r: s.write_line(result_bytes(r), (r.sample_id, r.metric), position=_position(r))),
    ):
        stream = ResultStream(tmp_path / f"{name}.jsonl", header, layout=(labels, METRICS))
        stream.open()
        for result in reversed(results):
            write(stream, result)
        assert stream.count == len(results)
        partial = stream.partial.read_bytes()
        assert stream.finish() == len(results)
        files.append((partial, (tmp_path / f"{name}.jsonl").read_bytes()))
    assert files[1] == files[0]  # the partial file and the final file


Todo = Iterable[tuple[int, Sample, Sequence[Metric]]]
OnRows = Callable[[int, list[PanelResult | CompactResult]], None]
Counts = dict[str, int]


class _SendsCompact:
    """An engine that scores in this process and hands the runner what a Ray worker sends (through a pickle)."""

    def __init__(self) -> None:
        self.modes: list[CompactMode | None] = []

    async def score(self, _: Runner, evaluator: PanelEvaluator, todo: Todo, on_rows: OnRows, **asked: Any) -> Counts:
        """:meth:`Engine.score <ragqa.run.runner.Engine.score>`; ``asked`` holds the ``compact`` mode."""
        compact: CompactMode | None = asked.get("compact")
        self.modes.append(compact)
        made: list[tuple[int, list[PanelResult]]] = []
        await evaluator.score_stream(todo, lambda position, rows: made.append((position, rows)))
        for position, rows in reversed(made):  # in another order than one process's
            on_rows(position, _sent(rows, compact) if compact is not None else rows)
        return {}


@pytest.fixture
def container() -> Iterator[Container]:
    built = local_with_a_flaky_judge()  # a judge that fails on some samples
    yield built
    asyncio.run(close_container(built))


@pytest.mark.parametrize("repeats", [1, 2])
def test_a_run_sent_compact_rows_writes_the_one_process_results_file_byte_for_byte(
    repeats: int, container: Container, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(time, "perf_counter", lambda: 0.0)  # every latency 0: the runs' files may be equal
    data = tmp_path / "data.jsonl"
    nothing = {"id": "dots", "user_input": "When?", "response": "...", "retrieved_contexts": ["It opens at nine."]}
    data.write_text(office_jsonl(24, start=0, moon_every=4) + json.dumps(nothing) + "\n", encoding="utf-8")
    metrics = ["faithfulness", "hallucination"]  # higher and lower is better
    runs: dict[str, Any] = {}
    for name, engine in (("one", None), ("compact", _SendsCompact())):
        out = tmp_path / f"{name}.jsonl"
        plan = make_plan(
            container.settings(),
            metrics=metrics,
            outputs=[plan_output(out)],
            dataset="offices",
            panel={"repeats": repeats},
            thresholds={"faithfulness": 0.6},
        )
        counted: list[None] = []
        runner = Runner(
            plan, container, keep_results=False, engine=engine, on_progress=lambda c=counted: c.append(None)
        )
        result = run_sync(runner.arun(JsonlSamples(data)))
        header, *lines = out.read_bytes().splitlines(keepends=True)
        runs[name] = (result, json.loads(header), lines, len(counted), engine)
    (one, head1, lines1, counted1, _), (sent, head2, lines2, counted2, engine) = runs["one"], runs["compact"]
    assert engine.modes == ["lines"]
    assert lines2 == lines1 and len(lines1) == 50  # byte for byte, in dataset order
    for key in ("run_id", "started_at"):
        head1.pop(key), head2.pop(key)
    assert head2 == head1
    assert counted2 == counted1 == 50  # the progress bar's count
    assert exact_summaries(sent.report.summaries) == exact_summaries(one.report.summaries)
    assert one.report.results and repr(sent.report.results) == repr(one.report.results)  # those with a failure
    assert sent.exit_code == one.exit_code
    assert [json.loads(line)["aggregate"]["value"] for line in lines1[-2:]] == [None, None]  # NaN: no statement


def test_the_runner_asks_for_compact_rows_only_when_nothing_else_reads_the_results(
    container: Container, tmp_path: Path
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(office_jsonl(4, start=0), encoding="utf-8")

    def mode(**options: Any) -> CompactMode | None:
        out = options.pop("out", None)
        plan = make_plan(container.settings(), metrics=["faithfulness"], outputs=[plan_output(out)] if out else [])
        engine = _SendsCompact()
        run_sync(Runner(plan, container, engine=engine, **options).arun(JsonlSamples(data)))
        [asked] = engine.modes
        return asked

    assert mode(keep_results=False, out=tmp_path / "r.jsonl") == "lines"
    assert mode(keep_results=False) == "rows"  # no results file: no line is made
    assert mode(keep_results=True) is None  # the report keeps every result
    assert mode(keep_results=False, on_result=lambda result: None) is None  # a callback reads each result
    assert mode(keep_results=False, out=tmp_path / "r.html") is None  # an HTML report renders every result
