"""Memory flat in dataset size: a bounded window of samples in flight, summaries streamed exactly.

No clock is read: the window is shown by counting scoring tasks created and samples taken from
the input while others are still unfinished.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from _records import exact_summaries, local_with_a_flaky_judge, random_results
from factories import office_jsonl
from pydantic import BaseModel

from ragqa.container import Container, close_container
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.base import Judge
from ragqa.metrics.base import Metric, MetricContext
from ragqa.render.records import read_result_record
from ragqa.report import summarize
from ragqa.run.api import aevaluate
from ragqa.run.stream import partial_path
from ragqa.run.summary import RunSummary
from ragqa.schema import MetricScore, PanelResult, Sample
from ragqa.testing import FunctionJudge, make_sample

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


class _Probe(Metric):
    """A metric that counts its scoring tasks: created in all, and alive at once."""

    name = "probe"
    direction = "higher"
    required_fields = ("user_input",)
    description = "counts scoring tasks"
    calls_per_sample = "0"

    def __init__(self) -> None:
        self.created = 0
        self.live = 0
        self.peak = 0

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        self.created += 1
        self.live += 1
        self.peak = max(self.peak, self.live)
        try:
            for _ in range(5):  # let every other ready task run: whatever can be in flight is
                await asyncio.sleep(0)
        finally:
            self.live -= 1
        return MetricScore(value=(int(sample.label[1:]) % 7) / 7)


def _judges(n: int) -> list[Judge]:
    return [FunctionJudge(f"j{i}", lambda prompt, data: {}) for i in range(n)]


async def test_samples_in_flight_stay_within_the_window_however_many_samples() -> None:
    probe = _Probe()
    window, n_samples, n_judges = 4, 200, 3
    evaluator = PanelEvaluator(_judges(n_judges), [probe], options=PanelOptions(max_concurrent_samples=window))
    taken = finished = 0
    most_open = 0

    def todo() -> Iterator[tuple[int, Sample, tuple[Metric, ...]]]:
        nonlocal taken, most_open
        for i in range(n_samples):
            taken += 1
            most_open = max(most_open, taken - finished)
            yield i, make_sample(id=f"s{i}"), (probe,)

    def on_rows(tag: int, rows: list[PanelResult]) -> None:
        nonlocal finished
        finished += 1
        assert [r.sample_id for r in rows] == [f"s{tag}"]

    await evaluator.score_stream(todo(), on_rows)

    assert finished == taken == n_samples
    assert probe.created == n_samples * n_judges
    assert most_open == window  # a sample is taken only when a slot is free
    assert probe.peak == window * n_judges  # the window fills, and never more scoring tasks than it holds


class _JudgeFreeProbe(_Probe):
    """The probe as a metric that needs no judge (text similarity): scored once per sample."""

    needs_judge = False


async def test_a_judge_free_metric_is_scored_once_and_shown_for_every_judge() -> None:
    probe = _JudgeFreeProbe()
    evaluator = PanelEvaluator(_judges(3), [probe])
    report = await evaluator.evaluate([make_sample(id=f"s{i}") for i in range(10)])
    assert probe.created == 10  # once per sample, not once per judge
    for result in report.results:
        assert [o.judge_id for o in result.judges] == ["j0", "j1", "j2"]
        assert len({o.score.value for o in result.judges if o.score is not None}) == 1
        assert result.aggregate.value == result.judges[0].score.value  # type: ignore[union-attr]


async def test_evaluate_keeps_dataset_order_through_the_window() -> None:
    probe = _Probe()
    evaluator = PanelEvaluator(_judges(2), [probe], options=PanelOptions(max_concurrent_samples=3))
    samples = [make_sample(id=f"s{i}") for i in range(20)]
    report = await evaluator.evaluate(samples)
    assert [r.sample_id for r in report.results] == [s.label for s in samples]
    assert probe.peak <= 3 * 2


# -- streamed summaries equal the summaries of all results, exactly -----------------------------


def test_run_summary_equals_summarize_whatever_order_the_results_arrive_in() -> None:
    judges = ["a", "b", "c"]
    for seed in range(4):
        results = random_results(seed, 60)
        skipped = {3, 17}  # samples without a result for the first metric (skipped as invalid)
        results = [r for r in results if not (r.metric == "m1" and int(r.sample_id[1:]) in skipped)]
        summary = RunSummary(judges, ["m1", "m2(mode=x)"], 60)
        arrived = list(results)
        random.Random(seed).shuffle(arrived)
        for result in arrived:
            summary.add(int(result.sample_id[1:]), result)
        assert exact_summaries(summary.summaries()) == exact_summaries(summarize(results, judges))
        assert summary.failed_results() == [r for r in results if r.failures]


def test_run_summary_orders_metrics_as_first_seen_and_refuses_mixed_rules() -> None:
    results = random_results(7, 3)
    summary = RunSummary(["a", "b", "c"], ["m1", "m2(mode=x)"], 3)
    for result in results:
        if not (result.metric == "m1" and result.sample_id in ("s0", "s1")):
            summary.add(int(result.sample_id[1:]), result)
    assert [s.metric for s in summary.summaries()] == ["m2(mode=x)", "m1"]  # sample 0 has only m2
    other = results[2].model_copy(update={"aggregate": results[2].aggregate.model_copy(update={"strategy": "mean"})})
    summary.add(1, other)
    with pytest.raises(ValueError, match="aggregated in different ways"):
        summary.summaries()


def _dataset(path: Path, n: int) -> Path:
    path.write_text(office_jsonl(n, start=0, moon_every=4, reference=True), encoding="utf-8")
    return path


def _records(path: Path) -> list[PanelResult]:
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [read_result_record(json.loads(line)) for line in lines]


@pytest.fixture
def container() -> Iterator[Container]:
    built = local_with_a_flaky_judge()
    yield built
    asyncio.run(close_container(built))


METRICS = ["faithfulness", "context_recall"]


async def test_summaries_kept_and_streamed_equal_those_of_every_result(tmp_path: Path, container: Container) -> None:
    data = _dataset(tmp_path / "data.jsonl", 24)
    kept = await aevaluate(data, METRICS, container=container, out=tmp_path / "kept.jsonl")
    judges = kept.judge_ids
    assert kept.results_kept and len(kept.results) == 48 and kept.failures
    assert exact_summaries(kept.summaries) == exact_summaries(summarize(kept.results, judges))

    streamed = await aevaluate(data, METRICS, container=container, out=tmp_path / "streamed.jsonl", keep_results=False)
    on_disk = _records(tmp_path / "streamed.jsonl")
    assert not streamed.results_kept and streamed.samples == [] and len(on_disk) == 48
    assert exact_summaries(streamed.summaries) == exact_summaries(summarize(on_disk, judges))
    assert streamed.results == [r for r in on_disk if r.failures]  # what the console and exit code need
    assert streamed.n_samples == kept.n_samples == 24
    assert [(r.sample_id, r.metric, r.aggregate.value) for r in on_disk][:6] == [
        (r.sample_id, r.metric, r.aggregate.value) for r in kept.results
    ][:6]


async def test_a_resumed_run_streams_the_same_summaries_as_its_results_file(
    tmp_path: Path, container: Container
) -> None:
    data = _dataset(tmp_path / "data.jsonl", 20)
    first = tmp_path / "first.jsonl"
    await aevaluate(data, METRICS, container=container, out=first)
    lines = first.read_text(encoding="utf-8").splitlines()
    out = tmp_path / "resumed.jsonl"
    partial_path(out).write_text("\n".join(lines[: 1 + 17]) + "\n", encoding="utf-8")  # header + 17 records

    resumed = await aevaluate(data, METRICS, container=container, out=out, resume=True, keep_results=False)
    on_disk = _records(out)
    assert len(on_disk) == 40 and on_disk[:17] == _records(first)[:17]
    assert exact_summaries(resumed.summaries) == exact_summaries(summarize(on_disk, resumed.judge_ids))
    assert sum(s.n_samples for s in resumed.summaries) == 40


def test_a_jsonl_source_reads_the_same_samples_and_fingerprint_on_every_pass(tmp_path: Path) -> None:
    import hashlib

    from ragqa.datasets import load_dataset
    from ragqa.run.runner import dataset_fingerprint
    from ragqa.run.source import JsonlSamples

    path = _dataset(tmp_path / "data.jsonl", 7)
    with path.open("a", encoding="utf-8") as f:
        f.write('\n{"user_input": "Q \\u2028 with a line separator?", "response": "A."}\n')
    loaded = load_dataset(path)
    source = JsonlSamples(path)
    assert list(source) == list(source) == loaded and loaded[-1].id == "line 9"
    whole = json.dumps([s.model_dump(mode="json") for s in loaded], sort_keys=True, ensure_ascii=False, default=str)
    assert dataset_fingerprint(source) == "sha256:" + hashlib.sha256(whole.encode("utf-8")).hexdigest()
    assert dataset_fingerprint([]) == "sha256:" + hashlib.sha256(b"[]").hexdigest()


def test_a_jsonl_source_raises_the_loaders_errors(tmp_path: Path) -> None:
    from ragqa.errors import DatasetError
    from ragqa.run.source import JsonlSamples

    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "user_input": "Q"}\n{"id": "a", "user_input": "Q"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="id 'a' is also used by line 1"):
        list(JsonlSamples(path))
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="holds no sample"):
        list(JsonlSamples(tmp_path / "empty.jsonl"))
    with pytest.raises(DatasetError, match="no such file"):
        list(JsonlSamples(tmp_path / "missing.jsonl"))
