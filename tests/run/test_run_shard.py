"""``--shard K/N`` and ``ragqa merge``: a stable split by sample id, and parts joined into one run's file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.errors import ConfigError
from ragqa.run.merge import dataset_ids, merge_results
from ragqa.run.shard import Shard, parse_shard, shard_of
from ragqa.run.stream import read_results

DATASET = Path(__file__).resolve().parents[2] / "examples" / "datasets" / "it_helpdesk.jsonl"


def test_shard_of_is_pinned_so_every_machine_and_python_agrees() -> None:
    # SHA-256 of the id's UTF-8 bytes, first 8 bytes big-endian, mod N, plus 1: fixed forever
    assert [shard_of(i, 7) for i in ("it-001", "a", "ü-日本")] == [1, 5, 3]
    assert all(shard_of(str(i), 1) == 1 for i in range(50))


def test_every_sample_is_in_exactly_one_shard() -> None:
    ids = [f"s{i}" for i in range(1000)]
    parts = [[i for i in ids if Shard(k, 4).holds(i)] for k in range(1, 5)]
    assert sorted(i for part in parts for i in part) == sorted(ids)
    assert min(len(p) for p in parts) > 200  # and they are about even


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0"])
def test_a_bad_shard_names_the_option_and_the_form(text: str) -> None:
    with pytest.raises(ConfigError, match="--shard"):
        parse_shard(text)


def _strip_latency(record: dict[str, Any]) -> dict[str, Any]:
    record = json.loads(json.dumps(record))
    for judge in record["judges"]:
        judge.pop("latency_s", None)
        judge.get("usage", {}).pop("latency_s", None)
    return record


@pytest.fixture(scope="module")
def parts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("shards")
    out = {"one": folder / "one.jsonl", "1": folder / "part-1.jsonl", "2": folder / "part-2.jsonl"}
    ragqa.evaluate(DATASET, metrics=["faithfulness"], profile="local", out=out["one"])
    for k in ("1", "2"):
        ragqa.evaluate(DATASET, metrics=["faithfulness"], profile="local", out=out[k], shard=f"{k}/2")
    return out


def test_parts_merged_equal_one_run(parts: dict[str, Path], tmp_path: Path) -> None:
    merged = tmp_path / "all.jsonl"
    result = merge_results([parts["2"], parts["1"]], merged, dataset_ids=dataset_ids(DATASET, [parts["1"]]))
    one_header, one = read_results(parts["one"])
    header, records = read_results(merged)
    assert result.records == len(one) == 60 and result.dataset_order
    assert list(records) == list(one)  # dataset order
    assert [_strip_latency(r) for r in records.values()] == [_strip_latency(r) for r in one.values()]
    assert header.shard is None and header.samples == one_header.samples == 60
    # the whole run's confidence intervals, as the unsharded run's header has them
    assert header.confidence == one_header.confidence == 0.95
    assert header.intervals == one_header.intervals and header.intervals is not None
    assert (header.config_fingerprint, header.dataset_fingerprint) == (
        one_header.config_fingerprint,
        one_header.dataset_fingerprint,
    )
    part_headers = [read_results(parts[k])[0] for k in ("1", "2")]
    assert [h.shard for h in part_headers] == ["1/2", "2/2"]
    assert sum(h.samples for h in part_headers) == 60 and {h.dataset_samples for h in part_headers} == {60}


def test_the_merged_file_resumes_as_a_finished_run(parts: dict[str, Path], tmp_path: Path) -> None:
    merged = tmp_path / "all.jsonl"
    merge_results([parts["1"], parts["2"]], merged)
    report = ragqa.evaluate(DATASET, metrics=["faithfulness"], profile="local", out=merged, resume=True)
    assert report.summary("faithfulness").n_scored == 60
    assert len(read_results(merged)[1]) == 60


def test_a_part_resumes_only_as_the_same_shard(parts: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "part-1.jsonl"
    copy.write_bytes(parts["1"].read_bytes())
    with pytest.raises(ConfigError, match="shard 1/2, this run is shard 2/2"):
        ragqa.evaluate(DATASET, metrics=["faithfulness"], profile="local", out=copy, resume=True, shard="2/2")


def _merge(*args: object) -> Any:
    return CliRunner().invoke(app, ["merge", *map(str, args)])


def test_cli_merge_writes_and_says_what(parts: dict[str, Path], tmp_path: Path) -> None:
    result = _merge(parts["1"], parts["2"], "--out", tmp_path / "all.jsonl", "--dataset", DATASET)
    assert result.exit_code == 0, result.output
    assert "merged 2 part(s): 60 result(s) of 60 sample(s), dataset order" in result.output


def test_gaps_overlaps_and_strangers_are_refused_with_exit_2(parts: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    gap = _merge(parts["1"], "--out", out)
    assert gap.exit_code == 2 and "a gap: shard(s) 2/2 missing" in gap.output
    overlap = _merge(parts["1"], parts["1"], "--out", out)
    assert overlap.exit_code == 2 and "given twice" in overlap.output
    unsharded = _merge(parts["one"], parts["2"], "--out", out)
    assert unsharded.exit_code == 2 and "not part of a sharded run" in unsharded.output
    partial = tmp_path / "part-2.jsonl.partial"
    partial.write_bytes(parts["2"].read_bytes())
    unfinished = _merge(parts["1"], partial, "--out", out)
    assert unfinished.exit_code == 2 and "unfinished part" in unfinished.output
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(json.dumps({"id": "x", "user_input": "q", "response": "r"}) for _ in range(1)) + "\n")
    wrong = _merge(parts["1"], parts["2"], "--out", out, "--dataset", other)
    assert wrong.exit_code == 2 and "not the dataset the parts were made from" in wrong.output
    assert not out.exists()


def test_parts_of_different_runs_are_refused(parts: dict[str, Path], tmp_path: Path) -> None:
    stranger = tmp_path / "part-2.jsonl"
    lines = parts["2"].read_text(encoding="utf-8").splitlines(keepends=True)
    header = json.loads(lines[0])
    header["metrics"] = ["hallucination"]
    stranger.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    with pytest.raises(ConfigError, match="another metrics"):
        merge_results([parts["1"], stranger], tmp_path / "all.jsonl")
