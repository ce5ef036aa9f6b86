"""Any text a judge returns round-trips through the run's own results file: resume, report and compare read it.

U+2028, U+2029 and U+0085 are legal inside a JSON string, and ``str.splitlines`` reads each as a
line end; the results reader once did, and refused its own file as damaged. A judge here puts
all three into its statements and reasons (a real model copies a response's text verbatim).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _records import office_records, one_judge_container, untimed
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.prompts.base import Prompt
from ragqa.run.stream import read_results
from ragqa.testing import FunctionJudge

SEPARATORS = "\u2028\u2029\u0085"
RECORDS = office_records(6)


def _echo(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
    """A judge that copies text with every line separator into its statements and reasons."""
    if prompt.name == "statements":
        return {"statements": [f"{data.answer[:-1]}\u2028(line){SEPARATORS[1]}(paragraph)\u0085(next line)."]}
    return {"verdicts": [{"statement": s, "reason": f"said{SEPARATORS}so", "verdict": 1} for s in data.statements]}


def _run(out: Path, **options: Any) -> FunctionJudge:
    judge = FunctionJudge("echo", _echo)
    ragqa.evaluate(RECORDS, metrics=["faithfulness"], container=one_judge_container(judge), out=out, **options)
    return judge


def test_separators_are_escaped_in_the_file_and_read_back_as_they_were(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    _run(out)
    raw = out.read_text(encoding="utf-8")
    assert not any(ch in raw for ch in SEPARATORS)  # escaped: no tool reads them as line ends
    assert "\\u2028" in raw and "\\u2029" in raw and "\\u0085" in raw
    header, records = read_results(out)
    assert len(records) == len(RECORDS) == header.samples
    statement = records[("s1", "faithfulness")]["judges"][0]["details"]["statements"][0]
    assert statement == "Office 1 opens at nine\u2028(line)\u2029(paragraph)\u0085(next line)."


def test_resume_continues_a_partial_file_with_separators_escaped_or_raw(tmp_path: Path) -> None:
    full = tmp_path / "full.jsonl"
    _run(full)
    lines = full.read_text(encoding="utf-8").split("\n")
    for how in ("escaped", "raw"):  # raw: a file written by a ragqa that did not escape them
        out = tmp_path / f"{how}.jsonl"
        kept = lines[:3]  # the header and two results, as an interrupted run leaves them
        if how == "raw":
            kept = [json.dumps(json.loads(line), ensure_ascii=False) for line in kept]
            assert any(ch in "".join(kept) for ch in SEPARATORS)
        (tmp_path / f"{how}.jsonl.partial").write_text("\n".join(kept) + "\n", encoding="utf-8")
        judge = _run(out, resume=True)
        assert {c.data["answer"] for c in judge.calls_to("statements")} == {r["response"] for r in RECORDS[2:]}
        assert untimed(read_results(out)[1]) == untimed(read_results(full)[1])


def test_report_and_compare_read_results_with_separators(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _run(a)
    _run(b)
    report = CliRunner().invoke(app, ["report", str(a), "-o", str(tmp_path / "a.html")])
    assert report.exit_code == 0, report.output
    assert "said" in (tmp_path / "a.html").read_text(encoding="utf-8")
    compared = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert compared.exit_code == 0, compared.output
    assert "damaged" not in compared.output
