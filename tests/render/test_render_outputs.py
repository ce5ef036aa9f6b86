"""Machine outputs of a real run: the result record and its JSON Schema, CSV, JSONL, pandas frames."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from pathlib import Path

import jsonschema
import pytest
from _reports import quorum_run

from ragqa.errors import ConfigError, MissingExtraError
from ragqa.render import RENDERERS, CsvRenderer, RenderOptions, read_result_record, renderer_for, result_record
from ragqa.render.records import (
    AggregateRecord,
    FailureRecord,
    ResultRecord,
    UsageRecord,
    report_record,
    result_record_schema,
)
from ragqa.report import Report
from ragqa.schema import Aggregate, JudgeFailure, Usage
from ragqa.schemas import RESULT_RECORD, SCHEMA_DIR, dump, generate, load, write_all

# Written out, not read from ragqa.render.tables.WIDE_COLUMNS: the CSV header users parse is pinned
# here on purpose, so a change to the columns fails this test.
WIDE_HEAD = [
    "sample_id",
    "metric",
    "direction",
    "aggregate",
    "strategy",
    "spread",
    "n_ok",
    "n_nan",
    "n_failed",
    "quorum",
    "quorum_met",
    "sample_ci_low",
    "sample_ci_high",
    "metric_ci_low",
    "metric_ci_high",
    "ci_confidence",
    "ci_method",
    "score:judge-a",
    "score:judge-b",
    "score:flaky",
    "failure:judge-a",
    "failure:judge-b",
    "failure:flaky",
]


@pytest.fixture(scope="module")
async def report() -> Report:
    return await quorum_run()


# --- the record and its schema -------------------------------------------------------------------


def test_shipped_schema_is_up_to_date_with_the_code() -> None:
    """Fails after a change to the record types: regenerate with ``python -m ragqa.schemas``."""
    assert load(RESULT_RECORD) == generate(RESULT_RECORD) == result_record_schema()
    assert (SCHEMA_DIR / RESULT_RECORD).read_text(encoding="utf-8") == dump(result_record_schema())


def test_regenerating_writes_the_shipped_file(tmp_path: Path) -> None:
    [written] = write_all(tmp_path)
    assert written.name == RESULT_RECORD
    assert written.read_text(encoding="utf-8") == (SCHEMA_DIR / RESULT_RECORD).read_text(encoding="utf-8")


def test_record_types_follow_the_result_models() -> None:
    """A field added to Usage, Aggregate or JudgeFailure must be added to the record types too."""
    assert set(UsageRecord.model_fields) == set(Usage.model_fields)
    assert set(AggregateRecord.model_fields) == set(Aggregate.model_fields)
    assert set(FailureRecord.model_fields) == set(JudgeFailure.model_fields) - {"judge_id", "metric", "sample_id"}


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = load(RESULT_RECORD)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


async def test_records_of_a_real_run_validate_against_the_shipped_schema(report: Report) -> None:
    validator = jsonschema.Draft202012Validator(load(RESULT_RECORD))
    records = [json.loads(json.dumps(result_record(r), allow_nan=False)) for r in report.results]
    for record in records:
        validator.validate(record)
        ResultRecord.model_validate(record)  # the typed view agrees
        assert result_record(read_result_record(record)) == record
    judges = [j for r in records for j in r["judges"]]
    # the run covers every case the schema describes: scores, NaN, failures, usage, missing aggregate
    assert any(isinstance(j["score"], float) for j in judges)
    assert any(j["score"] is None and j["failure"] is None for j in judges)  # NaN
    assert any(j["failure"] is not None and j["failure"]["step"] == "statements" for j in judges)
    assert any(j["usage"]["calls"] > 0 and j["usage"]["cost"] is not None for j in judges)
    assert any(r["aggregate"]["value"] is None and r["aggregate"]["spread"] is None for r in records)


async def test_schema_rejects_records_that_break_the_shape(report: Report) -> None:
    validator = jsonschema.Draft202012Validator(load(RESULT_RECORD))
    record = result_record(report.results[0])
    broken = [
        {**record, "extra": 1},
        {k: v for k, v in record.items() if k != "aggregate"},
        {**record, "direction": "sideways"},
        {**record, "aggregate": {**record["aggregate"], "value": "0.5"}},
        {**record, "aggregate": {**record["aggregate"], "quorum": 0}},
        {**record, "judges": [{**record["judges"][0], "score": "high"}]},
    ]
    failed = {
        **record["judges"][0],
        "failure": {"step": "nli", "error_type": "JudgeTimeout", "message": "m", "raw": None},
    }
    broken.append({**record, "judges": [failed]})  # a failed judge has no score
    for bad in broken:
        assert not validator.is_valid(json.loads(json.dumps(bad))), bad


async def test_json_and_jsonl_renderers_write_records(report: Report, tmp_path: Path) -> None:
    records = [result_record(r) for r in report.results]
    renderer_for("out.jsonl").write(report, tmp_path / "out.jsonl", RenderOptions())
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == records
    renderer_for("out.json").write(report, tmp_path / "out.json", RenderOptions())
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert document == report_record(report) and document["results"] == records
    assert report.to_jsonl(tmp_path / "again.jsonl") == tmp_path / "again.jsonl"
    assert (tmp_path / "again.jsonl").read_text(encoding="utf-8").splitlines() == lines
    assert not list(tmp_path.glob("*.partial"))


# --- CSV -----------------------------------------------------------------------------------------


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


async def test_csv_is_registered_for_its_suffix_and_refuses_nothing_else() -> None:
    assert isinstance(renderer_for("results.CSV"), CsvRenderer)
    assert RENDERERS["csv"].suffixes == (".csv",)
    with pytest.raises(ConfigError, match=r"\.csv"):
        renderer_for("results.tsv")


async def test_csv_has_a_row_per_sample_and_metric_with_every_judge(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    renderer_for(path).write(report, path, RenderOptions())
    with path.open(encoding="utf-8", newline="") as f:
        assert next(csv.reader(f)) == WIDE_HEAD
    rows = _read_csv(path)
    assert [(r["sample_id"], r["metric"]) for r in rows] == [
        (s, m) for s in ("s1", "s2", "s3", "s4") for m in ("faithfulness", "hallucination")
    ]
    by_key = {(r["sample_id"], r["metric"]): r for r in rows}
    s1 = by_key["s1", "faithfulness"]
    assert s1 == {
        "sample_id": "s1",
        "metric": "faithfulness",
        "direction": "higher",
        "aggregate": "0.5",
        "strategy": "mean",
        "spread": "1.0",
        "n_ok": "3",
        "n_nan": "0",
        "n_failed": "0",
        "quorum": "2",
        "quorum_met": "true",
        # 1.0, 0.5, 0.0 across three judges: 0.5 +- t(2) 4.30 x 0.29, clamped to the range [0, 1];
        # the metric's two aggregates 0.5 and 1.0: 0.75 +- t(1) 12.7 x 0.25, clamped too
        "sample_ci_low": "0.0",
        "sample_ci_high": "1.0",
        "metric_ci_low": "0.0",
        "metric_ci_high": "1.0",
        "ci_confidence": "0.95",
        "ci_method": "clustered-se",
        "score:judge-a": "1.0",
        "score:judge-b": "0.5",
        "score:flaky": "0.0",
        "failure:judge-a": "",
        "failure:judge-b": "",
        "failure:flaky": "",
    }
    s2 = by_key["s2", "faithfulness"]  # one score, one NaN, one failure: below quorum, no aggregate
    assert (s2["sample_ci_low"], s2["sample_ci_high"]) == ("", "")  # one finite score: no interval
    assert (s2["aggregate"], s2["spread"], s2["quorum_met"]) == ("", "0.0", "false")
    assert (s2["n_ok"], s2["n_nan"], s2["n_failed"]) == ("1", "1", "1")
    assert (s2["score:judge-a"], s2["score:judge-b"], s2["score:flaky"]) == ("0.5", "", "")
    assert (s2["failure:judge-b"], s2["failure:flaky"]) == ("", "JudgeTimeout")
    s3 = by_key["s3", "hallucination"]
    assert (s3["aggregate"], s3["spread"], s3["n_failed"]) == ("", "", "3")
    assert [s3[f"failure:{j}"] for j in ("judge-a", "judge-b", "flaky")] == [
        "JudgeTimeout",
        "JudgeOutputError",
        "JudgeTimeout",
    ]
    assert by_key["s4", "hallucination"]["aggregate"] == "0.0"
    assert by_key["s4", "hallucination"]["direction"] == "lower"
    assert not list(tmp_path.glob("*.partial"))


async def test_csv_scores_are_exact_and_round_trip_through_floats(report: Report, tmp_path: Path) -> None:
    path = report.to_csv(tmp_path / "results.csv")
    for row, result in zip(_read_csv(path), report.results, strict=True):
        value = result.aggregate.value
        assert (row["aggregate"] == "" and math.isnan(value)) or float(row["aggregate"]) == value
        for outcome in result.judges:
            cell = row[f"score:{outcome.judge_id}"]
            if outcome.score is None or math.isnan(outcome.score.value):
                assert cell == ""
            else:
                assert float(cell) == outcome.score.value


async def test_csv_quotes_cells_that_need_it(report: Report) -> None:
    from ragqa.render import report_to_csv

    first = report.results[0]
    odd = first.model_copy(
        update={"sample_id": 'a "quoted", multi\nline id', "metric": "noise_sensitivity(mode=relevant)"}
    )
    text = report_to_csv(report.model_copy(update={"results": [odd]}))
    [row] = list(csv.DictReader(io.StringIO(text, newline="")))
    assert row["sample_id"] == 'a "quoted", multi\nline id'
    assert row["metric"] == "noise_sensitivity(mode=relevant)"


async def test_report_writers_check_the_path_before_writing(report: Report, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        report.to_csv(tmp_path)
    with pytest.raises(ConfigError, match="does not exist"):
        report.to_jsonl(tmp_path / "missing" / "out.jsonl")


async def test_a_failed_write_leaves_the_old_file_and_no_partial(
    report: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "results.csv"
    path.write_text("old\n", encoding="utf-8")

    def full_disk(self: Path, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        report.to_csv(path)
    assert path.read_text(encoding="utf-8") == "old\n"
    assert not list(tmp_path.glob("*.partial"))


# --- pandas --------------------------------------------------------------------------------------


async def test_to_pandas_wide_has_a_row_per_sample_and_metric_and_keeps_nan(report: Report) -> None:
    pytest.importorskip("pandas")
    frame = report.to_pandas()
    assert list(frame.columns) == WIDE_HEAD
    assert len(frame) == len(report.results) == 8
    indexed = frame.set_index(["sample_id", "metric"])
    s1 = indexed.loc[("s1", "faithfulness")]
    assert (s1["aggregate"], s1["spread"], s1["score:judge-a"], s1["score:judge-b"], s1["score:flaky"]) == (
        0.5,
        1.0,
        1.0,
        0.5,
        0.0,
    )
    assert bool(s1["quorum_met"]) is True and int(s1["n_ok"]) == 3
    s2 = indexed.loc[("s2", "faithfulness")]
    assert math.isnan(s2["aggregate"]) and math.isnan(s2["score:judge-b"]) and math.isnan(s2["score:flaky"])
    assert s2["failure:flaky"] == "JudgeTimeout" and frame["score:judge-a"].dtype.kind == "f"
    assert frame["aggregate"].isna().sum() == 4  # s2 and s3, both metrics
    assert frame["aggregate"].mean() == pytest.approx(
        sum(r.aggregate.value for r in report.results if not math.isnan(r.aggregate.value)) / 4
    )


async def test_to_pandas_long_has_a_row_per_judge(report: Report) -> None:
    pandas = pytest.importorskip("pandas")
    frame = report.to_pandas(form="long")
    assert len(frame) == 8 * 3
    assert list(frame.columns[:6]) == ["sample_id", "metric", "direction", "judge_id", "status", "score"]
    row = frame.set_index(["sample_id", "metric", "judge_id"])
    assert row.loc[("s1", "faithfulness", "judge-b"), "score"] == 0.5
    assert row.loc[("s1", "faithfulness", "judge-b"), "status"] == "scored"
    nan = row.loc[("s2", "faithfulness", "judge-b")]
    assert nan["status"] == "nan" and math.isnan(nan["score"]) and pandas.isna(nan["failure_type"])
    failed = row.loc[("s3", "faithfulness", "judge-b")]
    assert (failed["status"], failed["failure_type"], failed["failure_step"]) == (
        "failed",
        "JudgeOutputError",
        "statements",
    )
    assert math.isnan(failed["score"]) and math.isnan(failed["cost"])
    paid = row.loc[("s1", "faithfulness", "judge-a")]
    assert (int(paid["calls"]), int(paid["prompt_tokens"]), int(paid["completion_tokens"])) == (2, 200, 40)
    assert paid["cost"] == pytest.approx(0.002) and paid["aggregate"] == 0.5 and paid["strategy"] == "mean"
    assert frame.groupby("status").size().to_dict() == {"failed": 10, "nan": 2, "scored": 12}


async def test_to_pandas_refuses_an_unknown_form(report: Report) -> None:
    with pytest.raises(ValueError, match="wide, long"):
        report.to_pandas(form="tall")  # type: ignore[arg-type]


async def test_to_pandas_without_pandas_names_the_extra(report: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` raise ImportError
    with pytest.raises(MissingExtraError, match=r"pip install 'ragqa\[pandas\]'") as caught:
        report.to_pandas()
    assert caught.value.extra == "pandas"
    assert isinstance(caught.value, ImportError)


async def test_an_empty_report_gives_headers_only(tmp_path: Path) -> None:
    empty = Report(results=[], summaries=[])
    assert CsvRenderer is type(renderer_for("x.csv"))
    text = (empty.to_csv(tmp_path / "e.csv")).read_text(encoding="utf-8")
    assert text.splitlines() == [",".join(WIDE_HEAD[:17])]
    pytest.importorskip("pandas")
    assert list(empty.to_pandas().columns) == WIDE_HEAD[:17] and len(empty.to_pandas(form="long")) == 0
