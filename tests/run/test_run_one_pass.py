"""One pass over a JSON Lines dataset before the first judge call, and per-sample state kept compactly.

The file's reads are counted by wrapping the opener the loader uses (no clock is read): the run
reads it once before the estimate is reported (the last thing before the first judge call) and
once more while scoring. What the single pass computes (ids, estimate, fingerprint, result order)
is compared with what the earlier passes gave.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ragqa.datasets
from ragqa._ids import CompactIds
from ragqa.container import Container, close_container, create_container
from ragqa.errors import ConfigError, DatasetError
from ragqa.metrics import build_metric
from ragqa.run.api import aevaluate
from ragqa.run.estimate import EstimateTally, estimate_pairs
from ragqa.run.plan import make_plan
from ragqa.run.prepared import dataset_fingerprint
from ragqa.run.runner import Runner
from ragqa.run.source import FILE_DIGEST_PREFIX, JsonlSamples
from ragqa.run.stream import ResultsHeader, ResultStream, partial_path, read_results
from ragqa.schema import Sample
from ragqa.testing import make_sample

METRICS = ["faithfulness", "context_recall"]


def _dataset(path: Path, n: int) -> Path:
    lines = [
        json.dumps(
            {
                "id": f"s{i:02d}",
                "user_input": f"When does office {i} open?",
                "response": f"The office opens at nine. Office {i} has a kitchen.",
                "retrieved_contexts": [f"The office opens at nine. Office {i} has a kitchen."] * (1 + i % 3),
                "reference": f"Office {i} opens at nine.",
            }
        )
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def container() -> Iterator[Container]:
    built = create_container(None, ["local"], environ={})
    yield built
    asyncio.run(close_container(built))


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every dataset file the JSON Lines loader opens, in order."""
    seen: list[Path] = []
    real = ragqa.datasets._open_text

    def counting(path: Path, digest: Any) -> Any:
        seen.append(path)
        return real(path, digest)

    monkeypatch.setattr(ragqa.datasets, "_open_text", counting)
    return seen


async def test_the_dataset_is_read_once_before_the_first_judge_call(
    tmp_path: Path, container: Container, opens: list[Path]
) -> None:
    data = _dataset(tmp_path / "data.jsonl", 12)
    plan = make_plan(container.settings(), metrics=METRICS, dataset=str(data), outputs=[], no_cache=True)
    before_first_call: list[int] = []
    at_first_result: list[int] = []

    def on_result(result: object) -> None:
        if not at_first_result:
            at_first_result.append(len(opens))

    runner = Runner(
        plan,
        container,
        on_estimate=lambda estimate: before_first_call.append(len(opens)),
        on_result=on_result,
        keep_results=False,
    )
    result = await runner.arun(JsonlSamples(data))
    assert before_first_call == [1]  # validation, ids, count, estimate and digest: one read
    assert at_first_result == [2] and opens == [data, data]  # the scoring pass is the second and last
    assert result.estimate.pairs == 24
    assert runner.prepared is not None and runner.prepared.fingerprint == dataset_fingerprint(JsonlSamples(data))


async def test_a_streamed_run_writes_the_samples_fingerprint_and_its_partial_the_files_digest(
    tmp_path: Path, container: Container
) -> None:
    data = _dataset(tmp_path / "data.jsonl", 10)
    out = tmp_path / "r.jsonl"
    await aevaluate(data, METRICS, container=container, out=out, keep_results=False)
    header, records = read_results(out)
    assert header.dataset_fingerprint == dataset_fingerprint(ragqa.datasets.load_dataset(data))
    order = [(json.loads(line)["sample_id"], json.loads(line)["metric"]) for line in out.read_text().splitlines()[1:]]
    assert order == [(f"s{i:02d}", key) for i in range(10) for key in METRICS] and len(records) == 20

    # a run stopped before its scoring pass reached the end keeps the file's digest in its partial header
    lines = out.read_text(encoding="utf-8").splitlines()
    stopped = {**json.loads(lines[0]), "intervals": None}
    source = JsonlSamples(data)
    for _ in source.read(digest=True):
        pass
    assert source.digest is not None and source.digest.startswith(FILE_DIGEST_PREFIX)
    stopped["dataset_fingerprint"] = source.digest
    partial_path(out).write_text("\n".join([json.dumps(stopped), *lines[1:9]]) + "\n", encoding="utf-8")
    out.unlink()
    resumed = await aevaluate(data, METRICS, container=container, out=out, resume=True, keep_results=False)
    assert sum(s.n_samples for s in resumed.summaries) == 20
    assert read_results(out)[0].dataset_fingerprint == header.dataset_fingerprint

    def scores(text: list[str]) -> list[tuple[Any, ...]]:
        rows = [json.loads(line) for line in text]
        return [(r["sample_id"], r["metric"], r["aggregate"], [j.get("score") for j in r["judges"]]) for r in rows]

    assert scores(out.read_text().splitlines()[1:]) == scores(lines[1:])

    # ... and a resumed run on a changed file is refused by that digest
    partial_path(out).write_text("\n".join([json.dumps(stopped), *lines[1:9]]) + "\n", encoding="utf-8")
    out.unlink()
    with data.open("a", encoding="utf-8") as f:
        f.write(
            json.dumps(
                {"id": "new", "user_input": "Q?", "response": "A.", "retrieved_contexts": ["c"], "reference": "r"}
            )
            + "\n"
        )
    with pytest.raises(ConfigError, match="made on other samples"):
        await aevaluate(data, METRICS, container=container, out=out, resume=True, keep_results=False)


async def test_a_file_changed_between_the_passes_stops_the_run(tmp_path: Path, container: Container) -> None:
    data = _dataset(tmp_path / "data.jsonl", 6)
    plan = make_plan(container.settings(), metrics=METRICS, dataset=str(data), outputs=[], no_cache=True)

    def change(estimate: object) -> None:  # after the checking pass, before the scoring pass
        _dataset(data, 5)

    runner = Runner(plan, container, on_estimate=change, keep_results=False)
    with pytest.raises(DatasetError, match="changed while the run read it"):
        await runner.arun(JsonlSamples(data))


def test_the_estimate_tallied_sample_by_sample_equals_the_estimate_of_the_pairs() -> None:
    metrics = [build_metric(name) for name in ("faithfulness", "hallucination", "context_recall", "answer_accuracy")]
    samples = [
        make_sample(
            id=f"s{i}",
            retrieved_contexts=[f"c{k} " * (i + 1) for k in range(1 + i % 4)],
            reference="r" * i,
        )
        for i in range(9)
    ]
    for plan in ("batched", "ragas"):
        for claim_vote in (False, True):
            tally = EstimateTally(plan=plan, claim_vote=claim_vote)
            pairs = []
            for i, sample in enumerate(samples):
                chosen = metrics[: 1 + i % len(metrics)]
                tally.add(sample, chosen)
                pairs += [(sample, m) for m in chosen]
            for judges, token_judges, repeats in ((0, None, 1), (1, 0, 1), (3, None, 2), (4, 2, 3)):
                expected = estimate_pairs(
                    pairs, judges, plan=plan, repeats=repeats, token_judges=token_judges, claim_vote=claim_vote
                )
                assert tally.estimate(judges, repeats=repeats, token_judges=token_judges) == expected


def test_compact_ids_read_back_and_find_every_id() -> None:
    ids = CompactIds()
    values = [f"id-{i}" for i in range(1000)] + ["ünïcode ✓", "", "id-7"]
    for value in values:
        ids.append(value)
    assert len(ids) == len(values) and list(ids) == values and ids[-1] == "id-7" and ids[1:3] == values[1:3]
    assert all(ids.position(v) == i for i, v in enumerate(values[:-1]))
    assert ids.position("id-7") == 7  # a repeated id is found at its first position
    assert ids.position("missing") is None and "ünïcode ✓" in ids and "missing" not in ids
    with pytest.raises(IndexError):
        ids[len(values)]
    bare = CompactIds(indexed=False)
    bare.append("a")
    assert bare[0] == "a" and "a" in bare
    with pytest.raises(ValueError, match="without an index"):
        bare.position("a")


def test_repeated_ids_are_still_refused_naming_the_first_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    rows = [{"id": f"x{i}", "user_input": "Q"} for i in range(300)] + [{"id": "x123", "user_input": "Q"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"line 301.*id 'x123' is also used by line 124"):
        list(JsonlSamples(path))
    assert len(list(JsonlSamples(path).read(unique_ids=False))) == 301


def _header() -> ResultsHeader:
    fields = {"run_id": "r", "ragqa_version": "0", "config_fingerprint": "sha256:c", "dataset": "d"}
    fields.update(dataset_fingerprint="sha256:d", started_at="2026-01-01T00:00:00+00:00")
    return ResultsHeader.from_json({**fields, "samples": 3, "metrics": ["m1", "m2"], "judges": ["j"]})


def test_a_stream_with_a_layout_writes_the_same_file_as_one_given_the_order(tmp_path: Path) -> None:
    from ragqa.render.records import read_result_record

    header, records = _header(), []
    for label in ("a", "b", "c"):
        for key in ("m1", "m2"):
            records.append(
                {
                    "sample_id": label,
                    "metric": key,
                    "direction": "higher",
                    "aggregate": {
                        "value": 0.5,
                        "strategy": "mean",
                        "quorum": 1,
                        "quorum_met": False,
                        "n_ok": 0,
                        "n_nan": 0,
                        "n_failed": 0,
                    },
                    "judges": [],
                }
            )
    results = [read_result_record(r) for r in records]
    arrival = [5, 0, 3, 1, 4]  # (c, m2) first; (b, m1) is missing (invalid)
    kept = {("b", "m2"): json.loads(json.dumps(records[3]))}
    by_order = ResultStream(tmp_path / "order.jsonl", header, kept)
    by_layout = ResultStream(tmp_path / "layout.jsonl", header, kept, layout=(["a", "b", "c"], ["m1", "m2"]))
    for stream in (by_order, by_layout):
        stream.open()
        for i in arrival:
            stream.write(results[i], position=i // 2)
        assert stream.count == 5
    order = [(label, key) for label in "abc" for key in ("m1", "m2")]
    assert by_order.finish(order) == by_layout.finish() == 5
    assert (tmp_path / "order.jsonl").read_bytes() == (tmp_path / "layout.jsonl").read_bytes()


def test_the_offsets_take_4_bytes_a_pair_until_the_partial_file_passes_4_gib() -> None:
    from ragqa.run.stream import _Offsets

    offsets = _Offsets(4)
    offsets[1], offsets[2] = 0, 2**32 - 2
    assert [offsets[i] for i in range(4)] == [-1, 0, 2**32 - 2, -1]
    offsets[3] = 2**32 + 5  # a record past 4 GiB: every slot is widened to 8 bytes, none is lost
    assert [offsets[i] for i in range(4)] == [-1, 0, 2**32 - 2, 2**32 + 5]


def _listed(n: int) -> list[Sample]:
    return [
        Sample(
            id=f"s{i}",
            user_input="Q?",
            response="A. Ünïcode “quotes”\tand \\ tabs",
            retrieved_contexts=["c", "ж"],
            reference="r",
        )
        for i in range(n)
    ]


def test_a_sequence_run_with_a_results_file_still_takes_its_fingerprint_before_scoring(
    container: Container, tmp_path: Path
) -> None:
    from ragqa.render import renderer_for
    from ragqa.run.plan import Output

    out = tmp_path / "out.jsonl"
    plan = make_plan(container.settings(), metrics=METRICS, dataset="list", outputs=[Output(out, renderer_for(out))])
    samples = _listed(4)
    prepared = Runner(plan, container).prepare(samples)
    assert prepared.pending is None and prepared.fingerprint == dataset_fingerprint(samples)  # the .partial header's
    assert list(prepared.labels) == ["s0", "s1", "s2", "s3"] and prepared.tally is not None


def test_a_sequence_run_without_a_results_file_takes_the_same_fingerprint_on_the_scoring_pass(
    container: Container,
) -> None:
    """Nothing reads it before the run ends: the checking pass leaves it to the scoring pass, the same bytes hashed."""
    plan = make_plan(container.settings(), metrics=METRICS, dataset="list", outputs=[], no_cache=True)
    samples = _listed(4)
    prepared = Runner(plan, container).prepare(samples)
    assert prepared.pending is not None and prepared.fingerprint == ""
    assert list(prepared.labels) == ["s0", "s1", "s2", "s3"] and prepared.tally is not None
    todo = list(prepared.todo(plan.metrics))
    assert [position for position, _, _ in todo] == [0, 1, 2, 3]
    assert prepared.pending is None and prepared.fingerprint == dataset_fingerprint(samples)


async def test_a_whole_sequence_run_without_a_results_file_ends_with_the_fingerprint(container: Container) -> None:
    plan = make_plan(container.settings(), metrics=METRICS, dataset="list", outputs=[], no_cache=True)
    samples = _listed(5)
    runner = Runner(plan, container, keep_results=False)
    result = await runner.arun(samples)
    assert result.report.summaries and runner.prepared is not None
    assert runner.prepared.pending is None and runner.prepared.fingerprint == dataset_fingerprint(samples)


def test_a_sequence_fingerprint_left_unread_is_finished_on_demand(container: Container) -> None:
    plan = make_plan(container.settings(), metrics=METRICS, dataset="list", outputs=[], no_cache=True)
    samples = _listed(3)
    prepared = Runner(plan, container).prepare(samples)
    next(prepared.todo(plan.metrics))  # a run stopped after its first sample
    assert prepared.finish_fingerprint() == dataset_fingerprint(samples) == prepared.fingerprint


def test_a_sharded_sequence_run_takes_its_fingerprint_before_scoring(container: Container) -> None:
    samples = _listed(6)
    sharded = make_plan(container.settings(), metrics=METRICS, dataset="list", outputs=[], shard="1/2")
    prepared = Runner(sharded, container).prepare(samples)
    assert prepared.pending is None and prepared.fingerprint == dataset_fingerprint(samples)  # of every shard


async def test_a_resumed_run_reads_the_dataset_once_before_scoring_and_estimates_only_the_missing_pairs(
    tmp_path: Path, container: Container, opens: list[Path]
) -> None:
    from ragqa.render import renderer_for
    from ragqa.run.plan import Output

    data = _dataset(tmp_path / "data.jsonl", 12)
    out = tmp_path / "out.jsonl"
    first = make_plan(
        container.settings(), metrics=METRICS, dataset=str(data), outputs=[Output(out, renderer_for(out))]
    )
    await Runner(first, container, keep_results=False).arun(JsonlSamples(data))
    lines = out.read_text(encoding="utf-8").splitlines()
    out.unlink()
    partial_path(out).write_text("\n".join(lines[: 1 + 7]) + "\n", encoding="utf-8")  # header and 7 results
    opens.clear()
    plan = make_plan(
        container.settings(), metrics=METRICS, dataset=str(data), outputs=[Output(out, renderer_for(out))], resume=True
    )
    before_first_call: list[int] = []
    runner = Runner(plan, container, on_estimate=lambda e: before_first_call.append(len(opens)), keep_results=False)
    result = await runner.arun(JsonlSamples(data))
    assert before_first_call == [1]  # before: a second read for the estimate of the missing pairs
    assert result.estimate.pairs == 24 - 7 and result.resumed == 7
    assert opens == [data, data]


async def test_an_order_probe_run_reads_the_dataset_once_before_scoring(
    tmp_path: Path, container: Container, opens: list[Path]
) -> None:
    from ragqa.jury.probe import OrderProbeOptions, probe_calls

    data = tmp_path / "data.jsonl"
    rows = [
        {
            "id": f"s{i}",
            "user_input": f"When does office {i} open?",
            "response": "At nine. It has a kitchen.",
            "reference": "At nine.",
        }
        for i in range(8)
    ]
    for i, row in enumerate(rows):  # two or three contexts in an order that reversing changes
        row["retrieved_contexts"] = [f"Office {i} opens at nine.", "It has a kitchen.", "It is red."][: 2 + i % 2]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    probing = {"probes": ("order",), "order_probe": OrderProbeOptions(share=1.0)}
    plan = make_plan(container.settings(), metrics=METRICS, dataset=str(data), outputs=[], no_cache=True, panel=probing)
    before_first_call: list[int] = []
    runner = Runner(plan, container, on_estimate=lambda e: before_first_call.append(len(opens)), keep_results=False)
    result = await runner.arun(JsonlSamples(data))
    assert before_first_call == [1] and opens == [data, data]
    plan_name = container.panel_options().call_plan
    probed = sum(probe_calls(s, plan.metrics, plan_name, OrderProbeOptions(share=1.0)) for s in JsonlSamples(data))
    assert probed > 0 and result.estimate.probe_calls == probed * 2  # two local judges
