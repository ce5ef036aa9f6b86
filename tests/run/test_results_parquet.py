"""Results as Parquet (``--out results.parquet``, ``--out results/``) hold exactly what the JSON Lines file holds.

The README job (``examples/datasets/it_helpdesk.jsonl --profile local``) is run twice, once per
format, in this process (:func:`run_cli`); the records must be equal field for field (timings
aside: they are wall clocks). The exact round trip (every float to the bit, ``null`` kept, keys
only some records have) is checked on the same records written both ways. Judges of the small
runs are test doubles whose calls are counted, so "only the missing pairs were scored" is a fact.
"""

from __future__ import annotations

import asyncio
import json
import math
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli
from _records import office_records, one_judge_container, untimed

import ragqa
from ragqa.errors import ConfigError, MissingExtraError
from ragqa.prompts.base import Prompt
from ragqa.render.parquet import (
    HEADER_KEY,
    part_files,
    read_parquet_results,
    write_parquet_parts,
    write_parquet_results,
)
from ragqa.run.merge import merge_results
from ragqa.run.plan import plan_output
from ragqa.run.replay import report_from_results
from ragqa.run.stream import read_results
from ragqa.testing import FunctionJudge

pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[2]
JOB = ("evaluate", ROOT / "examples" / "datasets" / "it_helpdesk.jsonl", "--profile", "local")
JOB_CONFIG = ("--config", ROOT / "application.yaml")


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The README job written once as JSON Lines and once as Parquet."""
    folder = tmp_path_factory.mktemp("job")
    out = {"jsonl": folder / "x.jsonl", "parquet": folder / "x.parquet"}
    for path in out.values():
        result = run_cli(*JOB, *JOB_CONFIG, "--out", path, cwd=folder)
        assert result.returncode == 0, result.stderr
    return out


def test_the_job_in_parquet_has_the_jsonl_records_field_for_field(job: dict[str, Path]) -> None:
    jsonl_header, jsonl = read_results(job["jsonl"])
    parquet_header, parquet = read_results(job["parquet"])
    assert len(parquet) == 120 and list(parquet) == list(jsonl)  # every pair, in dataset order
    assert untimed(list(parquet.values())) == untimed(list(jsonl.values()))
    scores = [j["score"] for r in parquet.values() for j in r["judges"]]
    assert len(scores) == 240 and all(isinstance(s, float) for s in scores)
    run_fields = {"run_id", "started_at"}  # the two runs' own; everything else is the same header
    assert {k: v for k, v in parquet_header.to_json().items() if k not in run_fields} == {
        k: v for k, v in jsonl_header.to_json().items() if k not in run_fields
    }
    assert parquet_header.intervals is not None


def _odd_record(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with floats that do not survive a careless round trip, ``null`` scores and an extra key."""
    odd = json.loads(json.dumps(record))
    odd["aggregate"]["value"] = None  # NaN is written as null
    odd["aggregate"]["spread"] = 0.1 + 0.2
    first, *rest = odd["judges"]
    first["score"], first["latency_s"] = 5e-324, 1 / 3
    first["details"]["weights"] = [-0.0, 1e308, 2.220446049250313e-16]
    for judge in rest:
        judge["score"] = None
    odd["dawid_skene"] = None  # a key only some records have, even with a null value
    return odd


def _bits(value: Any) -> Any:
    """Every float of a JSON-like value as its 8 bytes, so ``-0.0`` and ``0.0`` differ."""
    if isinstance(value, float):
        return struct.pack("<d", value)
    if isinstance(value, dict):
        return {k: _bits(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_bits(v) for v in value]
    return value


def test_parquet_round_trips_every_record_exactly(job: dict[str, Path], tmp_path: Path) -> None:
    header, records = read_results(job["jsonl"])
    written = [*records.values(), _odd_record(next(iter(records.values())))]
    written[-1]["sample_id"] = "odd \u2028 line\nbreak"
    target = tmp_path / "r.parquet"
    assert write_parquet_results(target, header.to_json(), written) == len(written)
    data, rows = read_parquet_results(target)
    back = list(rows)
    assert data == header.to_json()
    assert _bits(back) == _bits(written)  # latency included: the same file, so the same timings
    assert [list(r) for r in back] == [list(r) for r in written]  # and the keys in the same order
    assert math.copysign(1.0, back[-1]["judges"][0]["details"]["weights"][0]) == -1.0


def test_the_header_is_the_files_metadata_and_values_are_a_column(job: dict[str, Path]) -> None:
    import pyarrow.parquet as pq

    file = pq.ParquetFile(job["parquet"])
    header, records = read_results(job["parquet"])
    assert json.loads(file.schema_arrow.metadata[HEADER_KEY]) == header.to_json()
    values = file.read(columns=["value"]).column("value").to_pylist()
    assert values == [r["aggregate"]["value"] for r in records.values()]


def _report(path: Path, folder: Path) -> tuple[str, bytes]:
    html = folder / f"{path.name}.html"
    result = run_cli("report", path, "-o", html)
    assert result.returncode == 0, result.stderr
    return result.stdout.replace(str(html), "HTML") + result.stderr.replace(str(html), "HTML"), html.read_bytes()


def test_report_of_parquet_and_of_parts_is_the_report_of_jsonl(job: dict[str, Path], tmp_path: Path) -> None:
    header, records = read_results(job["jsonl"])
    single, parts = tmp_path / "same.parquet", tmp_path / "parts"
    write_parquet_results(single, header.to_json(), records.values())
    assert write_parquet_parts(parts, header.to_json(), records.values(), part_records=50) == 120
    assert [p.name for p in part_files(parts)] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    expected = _report(job["jsonl"], tmp_path)
    assert _report(single, tmp_path) == expected
    assert _report(parts, tmp_path) == expected
    # the job written as Parquet by its own run: the same summaries (its run id and timings are its own)
    jsonl_summaries = [
        (s.metric, s.aggregate_mean, s.n_samples) for s in report_from_results(job["jsonl"])[0].summaries
    ]
    parquet_report = report_from_results(job["parquet"])[0]
    assert [(s.metric, s.aggregate_mean, s.n_samples) for s in parquet_report.summaries] == jsonl_summaries
    assert len(parquet_report.samples) == 60  # the dataset was found, as for JSON Lines
    compared = run_cli("compare", job["jsonl"], parts)
    assert compared.returncode == 0, compared.stderr


def _answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
    if prompt.name == "statements":
        return {"statements": [data.answer]}
    return {"verdicts": [{"statement": s, "reason": "stated", "verdict": 1} for s in data.statements]}


def _evaluate(out: str | Path, judge: FunctionJudge, **options: Any) -> ragqa.Report:
    return ragqa.evaluate(
        office_records(6), metrics=["faithfulness"], container=one_judge_container(judge), out=out, **options
    )


def _asked(judge: FunctionJudge) -> list[str]:
    """The responses whose statements the judge was asked for: one per sample scored."""
    return sorted(call.data["answer"] for call in judge.calls_to("statements"))


@pytest.mark.parametrize("layout", ["file", "parts"])
def test_resume_from_parquet_scores_only_the_missing_pairs(tmp_path: Path, layout: str) -> None:
    out = f"{tmp_path / 'r.parquet'}" if layout == "file" else f"{tmp_path / 'parts'}/"
    first = FunctionJudge("j", _answer)
    _evaluate(out, first)
    target = Path(out)
    assert len(_asked(first)) == 6 and (target.is_file() if layout == "file" else len(part_files(target)) == 1)
    header, full = read_results(target)
    kept = {pair: r for pair, r in full.items() if pair[0] not in ("s2", "s5")}
    if layout == "file":  # as if the run had written only these
        write_parquet_results(target, header.to_json(), kept.values())
    else:
        write_parquet_parts(target, header.to_json(), kept.values(), part_records=2)
    assert len(read_results(target)[1]) == 4
    again = FunctionJudge("j", _answer)
    _evaluate(out, again, resume=True)
    assert _asked(again) == ["Office 2 opens at nine.", "Office 5 opens at nine."]  # 2 of 6 samples, no more
    resumed_header, resumed = read_results(target)
    assert list(resumed) == list(full)  # dataset order again
    assert untimed(list(resumed.values())) == untimed(list(full.values()))
    assert {pair: resumed[pair] for pair in kept} == kept  # the kept records, exactly
    assert resumed_header.run_id == header.run_id
    assert not Path(f"{target}.partial").exists()


def test_an_interrupted_parquet_run_keeps_its_results_in_the_jsonl_partial(tmp_path: Path) -> None:
    target = tmp_path / "r.parquet"
    partial = tmp_path / "r.parquet.partial"
    hung = asyncio.Event()

    async def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        if prompt.name == "statements" and int(data.answer.split()[1]) > 2:
            await hung.wait()  # never set: the run is still busy when it is cancelled
        return _answer(prompt, data)

    async def run_then_cancel() -> None:
        judge = FunctionJudge("j", answer)
        run = asyncio.ensure_future(
            ragqa.aevaluate(
                office_records(6), metrics=["faithfulness"], container=one_judge_container(judge), out=target
            )
        )
        while not (partial.exists() and partial.read_text(encoding="utf-8").count("\n") > 2):
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(run_then_cancel())
    assert not target.exists()
    header, kept = read_results(partial)  # JSON Lines: a Parquet file is unreadable before its footer
    assert sorted(kept) == [("s1", "faithfulness"), ("s2", "faithfulness")]
    again = FunctionJudge("j", _answer)
    _evaluate(target, again, resume=True)
    assert _asked(again) == [f"Office {i} opens at nine." for i in range(3, 7)]
    resumed_header, records = read_results(target)
    assert len(records) == 6 and resumed_header.run_id == header.run_id and not partial.exists()


def test_sharded_parts_in_parquet_merge_like_jsonl(tmp_path: Path) -> None:
    outs = {
        "jsonl": [tmp_path / "p1.jsonl", tmp_path / "p2.jsonl"],
        "parquet": [tmp_path / "p1.parquet", Path(f"{tmp_path / 'p2'}/")],
    }
    for paths in outs.values():
        for k, path in enumerate(paths, 1):
            _evaluate(f"{path}/" if path.name == "p2" else path, FunctionJudge("j", _answer), shard=f"{k}/2")
    from_jsonl = merge_results(outs["jsonl"], tmp_path / "all.jsonl")
    from_parquet = merge_results(outs["parquet"], tmp_path / "all.parquet")
    assert from_jsonl.records == from_parquet.records == 6
    jsonl_header, jsonl = read_results(tmp_path / "all.jsonl")
    parquet_header, parquet = read_results(tmp_path / "all.parquet")
    assert list(parquet) == list(jsonl)
    assert untimed(list(parquet.values())) == untimed(list(jsonl.values()))
    assert parquet_header.shard is None and parquet_header.samples == jsonl_header.samples == 6
    merged = run_cli("merge", tmp_path / "p1.parquet", tmp_path / "p2", "--out", tmp_path / "cli.jsonl")
    assert merged.returncode == 0, merged.stderr
    assert list(read_results(tmp_path / "cli.jsonl")[1]) == list(parquet)


def test_an_existing_folder_is_parts_only_with_a_final_slash_or_parts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        plan_output(tmp_path)  # `--out .` never fills a folder with parts by mistake
    fresh = tmp_path / "new"
    assert plan_output(f"{fresh}/").renderer.name == "parquet-parts" and fresh.is_dir()
    write_parquet_parts(fresh, None, [])
    assert [p.name for p in part_files(fresh)] == ["part-00000.parquet"]  # the header's part, with no record
    assert plan_output(fresh).renderer.name == "parquet-parts"  # a folder that holds parts, slash or not


def test_without_pyarrow_parquet_is_a_clear_error_before_any_call(
    tmp_path: Path, job: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.setitem(sys.modules, name, None)  # import pyarrow now raises ImportError
    judge = FunctionJudge("j", _answer)
    for out in (tmp_path / "r.parquet", f"{tmp_path / 'parts'}/"):
        with pytest.raises(MissingExtraError, match=r"pip install 'ragqa\[ray\]'") as err:
            _evaluate(out, judge)
        assert err.value.extra == "ray"
    assert judge.calls == []
    result = run_cli(*JOB, "--out", tmp_path / "x.parquet")
    assert result.returncode == 2 and "pip install 'ragqa[ray]'" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    with pytest.raises(MissingExtraError, match="ragqa"):
        read_results(job["parquet"])
    shown = run_cli("report", job["parquet"], "-o", tmp_path / "r.html")
    assert shown.returncode == 2 and "pip install 'ragqa[ray]'" in shown.stderr, shown.stderr


def test_parquet_that_is_not_a_results_file_is_refused_by_name(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    dataset = tmp_path / "traces.parquet"  # a dataset, not results: no header
    pq.write_table(pa.table({"user_input": ["q"], "response": ["a"]}), dataset)
    with pytest.raises(ConfigError, match=r"traces\.parquet has no ragqa results header"):
        read_results(dataset)
    torn = tmp_path / "torn.parquet"  # what a kill during a write would leave without the rename
    torn.write_bytes(b"PAR1 not a footer")
    with pytest.raises(ConfigError, match=r"torn\.parquet is damaged"):
        read_results(torn)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError, match="holds no part"):
        read_results(empty)
    shown = run_cli("report", dataset, "-o", tmp_path / "r.html")
    assert shown.returncode == 2 and "has no ragqa results header" in shown.stderr, shown.stderr
