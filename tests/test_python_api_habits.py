"""Habits a RAGAS user brings to the Python API: a dict of columns, a short report echo, grouped data errors.

Before: ``ragqa.evaluate({"question": [...], ...})`` raised ``TypeError``; ``repr(report)`` was a
pydantic dump of every result (47,884 characters for 20 samples); a dataset whose 10 records all
had the same unknown field gave 10 identical lines of about 500 characters.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragqa
from ragqa.datasets import MAX_PROBLEMS_SHOWN, load_dataset, samples_from_columns, samples_from_records
from ragqa.errors import DatasetError, DatasetProblems

ROOT = Path(__file__).resolve().parents[1]
IT_HELPDESK = ROOT / "examples/datasets/it_helpdesk.jsonl"

COLUMNS = {
    "question": ["When does the office open?", "Where is the printer?"],
    "answer": ["It opens at nine.", "On the second floor."],
    "contexts": [["The office opens at 9:00."], ["The printer is on floor 2."]],
}


def test_a_dict_of_columns_is_the_samples_of_its_rows() -> None:
    from_columns = samples_from_columns(COLUMNS)
    from_records = samples_from_records(
        [{name: values[i] for name, values in COLUMNS.items()} for i in range(2)]  # type: ignore[index]
    )
    assert from_columns == from_records
    assert [s.id for s in from_columns] == ["index 0", "index 1"]
    assert from_columns[0].user_input == "When does the office open?"
    assert from_columns[1].retrieved_contexts == ["The printer is on floor 2."]


def test_evaluate_takes_a_dict_of_columns_and_scores_as_the_list_form() -> None:
    as_dict = ragqa.evaluate(COLUMNS, ["faithfulness"], profile="local", progress=False)
    rows = [{name: values[i] for name, values in COLUMNS.items()} for i in range(2)]  # type: ignore[index]
    as_list = ragqa.evaluate(rows, ["faithfulness"], profile="local", progress=False)
    assert [r.aggregate.value for r in as_dict.results] == [r.aggregate.value for r in as_list.results]
    assert len(as_dict.results) == 2


def test_ragged_columns_are_refused_naming_each_length() -> None:
    ragged = {**COLUMNS, "contexts": [["only one"]]}
    with pytest.raises(DatasetError) as caught:
        ragqa.evaluate(ragged, ["faithfulness"], profile="local", progress=False)
    message = str(caught.value)
    assert "different lengths" in message and "question 2" in message and "contexts 1" in message


def test_a_column_that_is_not_a_list_is_refused_with_the_shape_to_use() -> None:
    with pytest.raises(DatasetError, match=r"column 'question' of the dict is a string, not a list"):
        samples_from_columns({"question": "one question", "answer": "one answer"})


def test_repr_of_a_report_is_short_and_html_is_escaped() -> None:
    report = ragqa.evaluate(IT_HELPDESK, ["faithfulness", "hallucination"], profile="local", progress=False)
    text = repr(report)
    assert text == str(report)
    lines = text.splitlines()
    assert lines[0].startswith("Report(60 sample(s) x 2 metric(s) x 2 judge(s), ")
    assert lines[1].startswith("  faithfulness ↑ 0.607 (mean), 60/60 scored; local-strict 0.605, local-lenient 0.609")
    assert lines[2].startswith("  hallucination ↓ 0.393 (mean), 60/60 scored")
    assert len(text) < 400
    html = report._repr_html_()
    assert html.startswith("<table>") and "<th>local-strict</th>" in html and "0.607" in html


def test_the_html_repr_escapes_what_it_shows() -> None:
    rows = [{"id": "a", "response": "x", "reference": "x"}]
    report = ragqa.evaluate(rows, ["exact_match"], profile="local", progress=False)
    evil = report.model_copy(
        update={"summaries": [s.model_copy(update={"metric": "<script>alert(1)</script>"}) for s in report.summaries]}
    )
    assert "<script>" not in evil._repr_html_() and "&lt;script&gt;" in evil._repr_html_()


def test_the_same_problem_in_many_records_is_one_line_listing_them(tmp_path: Path) -> None:
    path = tmp_path / "ragas_shape.json"
    records = [{"id": f"q{i}", "question": "q", "answers": ["right", "wrong"]} for i in range(12)]
    records.append({"id": "odd", "question": "q", "response": 3})
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(DatasetProblems) as caught:
        load_dataset(path)
    err = caught.value
    assert err.n_problems == 13
    body = str(err).splitlines()[1:]
    assert len(body) == 2  # one line for the 12 repeats, one for the odd record
    assert body[0].startswith("  - field 'answers', 12 records (item 1 (id 'q0'), item 2 (id 'q1'), ")
    assert ", and 2 more): unknown field." in body[0]
    assert body[1].startswith(f"  - {path} item 13 (id 'odd'), field 'response': expected a string")


def test_grouped_lines_count_against_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    good = {"user_input": "q", "response": "a"}
    lines = [{"id": f"d{i}", **good, "response": i} for i in range(MAX_PROBLEMS_SHOWN + 2)]  # all different
    lines += [{"id": f"s{i}", **good, "extra_field": 1} for i in range(5)]  # the same problem, after the cap
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(DatasetProblems) as caught:
        load_dataset(path)
    message = str(caught.value)
    assert message.count("\n  - ") == MAX_PROBLEMS_SHOWN
    assert message.endswith(f"\n  ... and {2 + 5} more")
