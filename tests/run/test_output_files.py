"""Nothing paid for is lost to an output file: a full disk, an unwritable folder, an HTML-only run, a re-run.

A full disk is simulated by opening the file of interest through a wrapper whose writes fail
with ``ENOSPC`` after a given number (the disk takes the bytes that fit, then refuses); every
other file operation is real. Judges are test doubles whose calls are counted, so "no judge was
asked again" is a fact.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _records import office_records, one_judge_container, untimed
from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.errors import ConfigError, OutputError
from ragqa.prompts.base import Prompt
from ragqa.run.exit_codes import ExitCode
from ragqa.run.outputs import check_output_path
from ragqa.run.stream import read_results
from ragqa.testing import FunctionJudge

RECORDS = office_records(6)


def _answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
    if prompt.name == "statements":
        return {"statements": [data.answer]}
    return {"verdicts": [{"statement": s, "reason": "stated", "verdict": 1} for s in data.statements]}


def _evaluate(out: Path | list[Path], judge: FunctionJudge | None = None, **options: Any) -> ragqa.Report:
    judge = judge or FunctionJudge("j", _answer)
    return ragqa.evaluate(RECORDS, metrics=["faithfulness"], container=one_judge_container(judge), out=out, **options)


def _asked(judge: FunctionJudge) -> set[str]:
    """The responses whose statements the judge was asked for: one per sample scored."""
    return {call.data["answer"] for call in judge.calls_to("statements")}


class _FullDisk:
    """A file whose writes fail with ENOSPC after ``writes`` of them; the failing one is half written."""

    def __init__(self, file: Any, writes: int) -> None:
        self._file, self._left = file, writes

    def write(self, data: Any) -> int:
        if self._left <= 0:
            self._file.write(data[: len(data) // 2])
            self._file.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._left -= 1
        return int(self._file.write(data))

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fill_disk(monkeypatch: pytest.MonkeyPatch, matches: Callable[[Path], bool], writes: int = 0) -> None:
    """From now on, files whose path ``matches`` and that are opened for writing fill the disk."""
    real_open = Path.open

    def open_(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        file = real_open(self, mode, *args, **kwargs)
        return _FullDisk(file, writes) if "r" not in mode and matches(self) else file

    monkeypatch.setattr(Path, "open", open_)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((".tmp", ".probe")))


# ---- a full disk ------------------------------------------------------------------------------------


def test_a_full_disk_mid_run_stops_with_an_output_error_and_resume_completes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, partial = tmp_path / "r.jsonl", tmp_path / "r.jsonl.partial"
    _fill_disk(monkeypatch, lambda path: path == partial, writes=2)  # room for two results
    with pytest.raises(OutputError) as raised:
        _evaluate(out)
    error = raised.value
    assert isinstance(error, OSError) and error.errno == errno.ENOSPC
    assert (error.path, error.partial, error.kept) == (partial, partial, 2)
    assert f"2 result(s) are kept in {partial}" in str(error) and "--resume" in str(error)
    assert "No space left on device" in str(error)
    _, kept = read_results(partial)  # the half-written third record is a cut last line, ignored
    assert len(kept) == 2

    monkeypatch.undo()  # space was freed
    judge = FunctionJudge("j", _answer)
    _evaluate(out, judge, resume=True)
    assert len(_asked(judge)) == len(RECORDS) - 2  # only the pairs the partial lacked
    full = tmp_path / "full.jsonl"
    _evaluate(full)
    assert untimed(read_results(out)[1]) == untimed(read_results(full)[1])
    assert not partial.exists() and _leftovers(tmp_path) == []


def test_a_full_disk_at_the_final_write_removes_its_temporary_file_and_exits_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    _fill_disk(monkeypatch, lambda path: re.fullmatch(r"\.r\.jsonl\.\d+\.tmp", path.name) is not None)
    command = ["evaluate", "data.jsonl", "--profile", "local", "-m", "faithfulness", "--out", "r.jsonl"]
    result = CliRunner().invoke(app, command)
    assert result.exit_code == ExitCode.OUTPUT == 5, result.output
    assert "cannot write r.jsonl (No space left on device)" in result.output
    assert f"{len(RECORDS)} result(s) are kept in r.jsonl.partial" in result.output
    assert "Traceback" not in result.output
    assert _leftovers(tmp_path) == [] and not (tmp_path / "r.jsonl").exists()
    assert len(read_results(tmp_path / "r.jsonl.partial")[1]) == len(RECORDS)

    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    resumed = CliRunner().invoke(app, [*command, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    assert (
        f"resuming: {len(RECORDS)} result(s) kept" in resumed.output and "0 (sample, metric) pair(s)" in resumed.output
    )
    assert len(read_results(tmp_path / "r.jsonl")[1]) == len(RECORDS)
    assert not (tmp_path / "r.jsonl.partial").exists()


def test_a_full_disk_writing_the_html_report_names_the_partial_that_keeps_every_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = tmp_path / "report.html"
    _fill_disk(monkeypatch, lambda path: re.fullmatch(r"\.report\.html\.\d+\.tmp", path.name) is not None)
    with pytest.raises(OutputError) as raised:
        _evaluate(html)
    partial = tmp_path / "report.html.partial"
    assert (raised.value.path, raised.value.partial, raised.value.kept) == (html, partial, len(RECORDS))
    assert _leftovers(tmp_path) == [] and not html.exists()

    monkeypatch.undo()
    judge = FunctionJudge("j", _answer)
    report = _evaluate(html, judge, resume=True)  # writes the report from the kept results
    assert _asked(judge) == set() and len(report.results) == len(RECORDS)
    assert html.is_file() and not partial.exists()


def test_a_partial_file_that_cannot_be_started_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "r.jsonl"
    _fill_disk(monkeypatch, lambda path: path.suffix == ".tmp")
    judge = FunctionJudge("j", _answer)
    with pytest.raises(OutputError, match="no judge was called and no earlier file was changed") as raised:
        _evaluate(out, judge)
    assert raised.value.partial is None and raised.value.kept == 0
    assert _asked(judge) == set() and list(tmp_path.iterdir()) == []


# ---- an unwritable path -----------------------------------------------------------------------------


def test_an_out_folder_that_refuses_files_is_a_usage_error_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr("tempfile.mkstemp", refused)  # what a read-only mount or /proc does, whatever the mode says
    with pytest.raises(ConfigError, match=r"--out .*r\.jsonl: cannot create a file in folder .*Permission denied"):
        check_output_path(tmp_path / "r.jsonl", option="--out")
    monkeypatch.undo()

    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["evaluate", str(data), "--profile", "local", "--out", "/proc/r.jsonl"])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "/proc" in result.output and "Traceback" not in result.output and "estimate" not in result.output
    assert _leftovers(tmp_path) == []


def test_a_directory_given_to_junit_xml_suggests_an_xml_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=rf"give a file path such as {tmp_path / 'junit.xml'}$"):
        check_output_path(tmp_path, option="--junit-xml")
    with pytest.raises(ConfigError, match=rf"such as {tmp_path / 'results.jsonl'}$"):
        check_output_path(tmp_path, option="--out")


# ---- an interrupted run, a re-run -----------------------------------------------------------------


def _interrupted(out: Path, answered: int) -> None:
    """Run until ``answered`` samples are in the partial file, then cancel the run (Ctrl-C from Python)."""
    partial = out.with_name(out.name + ".partial")
    hung = asyncio.Event()

    async def answer(prompt: Prompt[Any, Any], data: Any) -> dict[str, Any]:
        if prompt.name == "statements" and int(data.answer.split()[1]) > answered:
            await hung.wait()  # never set: the run is still busy when it is cancelled
        return _answer(prompt, data)

    async def run_then_cancel() -> None:
        judge = FunctionJudge("j", answer)
        run = asyncio.ensure_future(
            ragqa.aevaluate(RECORDS, metrics=["faithfulness"], container=one_judge_container(judge), out=out)
        )
        while not (partial.exists() and partial.read_text(encoding="utf-8").count("\n") > answered):
            await asyncio.sleep(0.01)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(run_then_cancel())


def test_an_interrupted_html_only_run_keeps_its_results_and_resume_completes_it(tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    _interrupted(html, answered=2)
    partial = tmp_path / "report.html.partial"
    header, kept = read_results(partial)  # JSON Lines, whatever the output's format
    assert header.samples == len(RECORDS) and sorted(kept) == [("s1", "faithfulness"), ("s2", "faithfulness")]
    assert not html.exists()

    judge = FunctionJudge("j", _answer)
    report = _evaluate(html, judge, resume=True)
    assert _asked(judge) == {r["response"] for r in RECORDS[2:]}
    assert [r.sample_id for r in report.results] == [r["id"] for r in RECORDS]
    assert html.is_file() and not partial.exists()


def test_a_re_run_without_resume_never_deletes_a_partial_file(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    _interrupted(out, answered=2)
    partial = tmp_path / "r.jsonl.partial"
    before = partial.read_bytes()
    judge = FunctionJudge("j", _answer)
    with pytest.raises(
        ConfigError, match=r"holds 2 result\(s\) of an earlier run .* --resume .* --overwrite"
    ) as raised:
        _evaluate(out, judge)
    assert raised.value.key == "--overwrite"
    assert partial.read_bytes() == before and _asked(judge) == set()

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    result = CliRunner().invoke(app, ["evaluate", str(data), "--profile", "local", "--out", str(out)])
    assert result.exit_code == ExitCode.USAGE and "--resume" in result.output and "--overwrite" in result.output
    assert partial.read_bytes() == before

    with pytest.raises(ConfigError, match="give one"):
        _evaluate(out, judge, resume=True, overwrite=True)
    _evaluate(out, judge, overwrite=True)  # starts over: every sample asked
    assert _asked(judge) == {r["response"] for r in RECORDS}
    assert not partial.exists() and len(read_results(out)[1]) == len(RECORDS)


@pytest.mark.parametrize("content", ["", '{"ragqa_results": 1, "run_id": "cut sh'])
def test_an_empty_partial_file_means_nothing_yet(tmp_path: Path, content: str) -> None:
    out, partial = tmp_path / "r.jsonl", tmp_path / "r.jsonl.partial"
    partial.write_text(content, encoding="utf-8")  # a disk that filled, or a kill, before the header was whole
    judge = FunctionJudge("j", _answer)
    _evaluate(out, judge, resume=True)
    assert len(_asked(judge)) == len(RECORDS) and len(read_results(out)[1]) == len(RECORDS)
    partial.write_text(content, encoding="utf-8")
    _evaluate(out, FunctionJudge("j", _answer))  # holds no result: nothing to protect without --resume
    assert not partial.exists()
