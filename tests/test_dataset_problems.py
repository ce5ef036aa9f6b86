"""Every bad record of a dataset is reported at once (m5), each with its line, id, field and fix; nothing is judged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dependency_injector import providers

import ragqa
from ragqa.container import close_container, create_container
from ragqa.datasets import MAX_PROBLEMS_SHOWN, iter_jsonl, load_dataset, samples_from_records
from ragqa.errors import DatasetError, DatasetProblems
from ragqa.testing import FunctionJudge

GOOD = {"user_input": "When does the office open?", "response": "At nine.", "retrieved_contexts": ["At nine."]}


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def test_every_bad_line_is_listed_with_line_id_field_and_fix(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "multi.jsonl",
        [
            {"id": "a", **GOOD, "response": 42},
            {"id": "b", **GOOD},
            {"id": "c", **GOOD, "retrieved_contexts": "one chunk"},
            "{not json",
            [1, 2],
            {"id": "b", **GOOD},
            {"id": "e", "user_inptu": "q", "response": "r"},
        ],
    )
    with pytest.raises(DatasetProblems) as raised:
        load_dataset(path)
    err = raised.value
    assert isinstance(err, DatasetError) and err.n_problems == 6 and len(err.problems) == 6
    assert [(p.sample_id, p.field) for p in err.problems] == [
        ("a", "response"),
        ("c", "retrieved_contexts"),
        ("line 4", None),
        ("line 5", None),
        ("b", "id"),
        ("e", "user_inptu"),
    ]
    assert (err.sample_id, err.field) == ("a", "response")  # the first problem's, for callers of DatasetError
    message = str(err)
    assert message.startswith(f"{path}: 6 bad record(s); nothing was scored")
    for expected in (
        "line 1 (id 'a'), field 'response': expected a string, got a number 42",
        "line 3 (id 'c'), field 'retrieved_contexts': expected a list of strings, got a string; write it as",
        "line 4: not valid JSON",
        "line 5: expected a JSON object, got a list",
        "line 6 (id 'b'), field 'id': id 'b' is also used by line 2",
        "line 7 (id 'e'), field 'user_inptu': unknown field. Did you mean 'user_input'?",
    ):
        assert expected in message


def test_one_bad_line_keeps_its_own_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "one.jsonl", [GOOD, {**GOOD, "response": 42}])
    with pytest.raises(DatasetError) as raised:
        load_dataset(path)
    assert type(raised.value) is DatasetError
    assert str(raised.value) == f"{path} line 2, field 'response': expected a string, got a number 42"


def test_the_list_is_capped_and_the_rest_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "many.jsonl", [{"id": f"s{i}", **GOOD, "response": i} for i in range(MAX_PROBLEMS_SHOWN + 7)]
    )
    with pytest.raises(DatasetProblems) as raised:
        load_dataset(path)
    assert raised.value.n_problems == MAX_PROBLEMS_SHOWN + 7 and len(raised.value.problems) == MAX_PROBLEMS_SHOWN
    message = str(raised.value)
    assert message.count("\n  - ") == MAX_PROBLEMS_SHOWN and message.endswith("\n  ... and 7 more")
    assert f"(id 's{MAX_PROBLEMS_SHOWN - 1}')" in message and f"(id 's{MAX_PROBLEMS_SHOWN}')" not in message


def test_csv_rows_and_in_memory_records_are_checked_whole_too(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        'id,user_input,response,retrieved_contexts\nr1,q,a,"[""ok""]"\nr2,q,a,[not json\nr3,q,a\nr4,q,a,"[""ok""]"\n',
        encoding="utf-8",
    )
    with pytest.raises(DatasetProblems) as raised:
        load_dataset(path)
    assert [(p.sample_id, p.field) for p in raised.value.problems] == [("r2", "retrieved_contexts"), ("row 3", None)]
    assert "row 3: has 3 cells but the header has 4 columns" in str(raised.value)
    with pytest.raises(DatasetProblems) as raised:
        samples_from_records([{**GOOD, "response": 1}, GOOD, {**GOOD, "reference": ["x", 2]}])
    assert [p.sample_id for p in raised.value.problems] == ["index 0", "index 2"]


def test_a_streamed_file_stops_at_the_first_bad_line_and_reports_all_at_its_end(tmp_path: Path) -> None:
    path = _write(tmp_path / "s.jsonl", [GOOD, {**GOOD, "response": 1}, GOOD, {**GOOD, "response": 2}])
    seen = []
    with pytest.raises(DatasetProblems) as raised:
        for sample in iter_jsonl(path):
            seen.append(sample.id)
    assert seen == ["line 1"]  # nothing after a bad line is handed on
    assert raised.value.n_problems == 2


@pytest.mark.parametrize("keep_results", [True, False])
def test_nothing_is_judged_when_the_file_has_bad_lines(tmp_path: Path, keep_results: bool) -> None:
    path = _write(tmp_path / "d.jsonl", [GOOD, {**GOOD, "response": 1}, GOOD, "oops"])
    calls: list[str] = []
    container = create_container(None, [], environ={})
    container.judges.override(providers.Object([FunctionJudge("j", lambda prompt, data: calls.append("x"))]))
    container.embedders.override(providers.Object([]))
    try:
        with pytest.raises(DatasetProblems, match=r"2 bad record\(s\)"):
            ragqa.evaluate(path, ["faithfulness"], container=container, keep_results=keep_results)
    finally:
        ragqa.run.loop.run_sync(close_container(container))
    assert calls == []
