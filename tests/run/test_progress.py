"""Progress everywhere, with rate and ETA: the CLI bar and lines, ``ragqa.evaluate`` and ``ragqa calibrate``.

Before, ``ragqa.evaluate`` showed nothing even on a terminal or in a notebook, the CLI bar showed
only the elapsed time, and ``ragqa calibrate`` was silent for the whole scoring and rejected
``--no-progress``. Clocks are injected: no test here depends on how fast the machine is.
"""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.progress import Progress
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.judges.local import LocalJudge
from ragqa.metrics import Faithfulness
from ragqa.run.estimate import RunEstimate, estimate_pairs, sends_prompts
from ragqa.run.progress import RunProgress, _rate_column, choose_mode, format_duration, rate_and_eta
from ragqa.schema import Sample
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import FunctionJudge

ROOT = Path(__file__).resolve().parents[2]
IT_HELPDESK = ROOT / "examples/datasets/it_helpdesk.jsonl"
BEGIN = ROOT / "examples/datasets/begin_wow_labelled.jsonl"


class Clock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _estimate(pairs: int) -> RunEstimate:
    return RunEstimate(pairs=pairs, judges=2, calls=pairs * 2, tokens=0)


# ---- the text ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("done", "total", "elapsed", "text"),
    [
        (0, 100, 0.0, "-/s · ETA -:--:--"),
        (0, 100, 5.0, "-/s · ETA -:--:--"),
        (50, 100, 10.0, "5.0/s · ETA 0:00:10"),
        (300, 1000, 10.0, "30/s · ETA 0:00:23"),
        (1664, 4000, 10.4, "160/s · ETA 0:00:15"),
        (1, 7200, 1.0, "1.0/s · ETA 1:59:59"),
        (100, 100, 4.0, "25/s · ETA 0:00:00"),
    ],
)
def test_rate_and_eta(done: int, total: int, elapsed: float, text: str) -> None:
    assert rate_and_eta(done, total, elapsed) == text


def test_format_duration() -> None:
    assert format_duration(0) == "0:00:00"
    assert format_duration(3725.4) == "1:02:05"
    assert format_duration(float("inf")) == "-:--:--"


# ---- the displays ------------------------------------------------------------------------------


def _plain_lines(total: int, pairs: int, step_s: float) -> list[str]:
    """The lines of a ``lines`` display over ``pairs`` pairs of a ``total``, one every ``step_s`` seconds."""
    clock, out = Clock(), io.StringIO()
    progress = RunProgress("lines", stream=out, clock=clock)
    progress.start(_estimate(total))
    for _ in range(pairs):
        clock.now += step_s
        progress.advance()
    return out.getvalue().splitlines()


def test_plain_lines_carry_rate_and_eta_every_tenth_and_at_the_end() -> None:
    lines = _plain_lines(20, 20, 0.5)
    assert lines[0] == "scored 1/20 (sample x metric) in 0.5 s · 2.0/s · ETA 0:00:10"
    assert lines[1] == "scored 3/20 (sample x metric) in 1.5 s · 2.0/s · ETA 0:00:08"
    assert lines[-1] == "scored 20/20 (sample x metric) in 10.0 s · 2.0/s · ETA 0:00:00"
    assert len(lines) == 11


def test_plain_lines_also_come_every_30_seconds_on_a_slow_run() -> None:
    shown = [line.split(" (")[0] for line in _plain_lines(1000, 5, 20.0)]
    assert shown == ["scored 1/1000", "scored 3/1000", "scored 5/1000"]


def test_the_bar_shows_rate_and_eta_from_the_progress_clock() -> None:
    clock = Clock()
    bar = Progress(_rate_column(), get_time=clock, disable=True)
    task_id = bar.add_task("scoring", total=400)
    clock.now += 8.0
    bar.update(task_id, completed=100)
    [task] = bar.tasks
    assert _rate_column().render(task).plain == "12/s · ETA 0:00:24"


def test_the_estimate_line_and_off_mode() -> None:
    out = io.StringIO()
    progress = RunProgress("off", stream=out, show_estimate=True)
    progress.start(RunEstimate(pairs=3, judges=1, calls=3, tokens=0, token_judges=0))
    progress.advance()
    progress.stop()
    assert out.getvalue().startswith("estimate: 3 (sample, metric) pair(s) x 1 judge(s)")
    assert "scored" not in out.getvalue()


def test_a_notebook_gets_one_line_updated_in_place() -> None:
    shown: list[str] = []

    class Handle:
        def update(self, obj: Any) -> None:
            shown.append(repr(obj))

    def display(obj: Any, display_id: bool = False) -> Handle:
        assert display_id is True
        shown.append(repr(obj))
        return Handle()

    clock = Clock()
    progress = RunProgress("notebook", clock=clock, display=display)
    progress.start(_estimate(4))
    for _ in range(4):
        clock.now += 1.0
        progress.advance()
    progress.stop()
    assert shown[0] == "scoring 0/4 sample x metric · -/s · ETA -:--:-- · 0:00:00"
    assert shown[-1] == "scoring 4/4 sample x metric · 1.0/s · ETA 0:00:00 · 0:00:04"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_mode_follows_the_option_and_the_stream() -> None:
    assert choose_mode(False, stream=_Tty()) == "off"
    assert choose_mode(None, stream=_Tty()) == "bar"
    assert choose_mode(None, stream=io.StringIO()) == "off"  # the Python API in a script piped to a file
    assert choose_mode(True, stream=io.StringIO()) == "lines"  # the CLI's default
    assert choose_mode(True, stream=_Tty(), ci=True) == "lines"


# ---- the entry points --------------------------------------------------------------------------


def _rows(path: Path, n: int) -> Path:
    out = path / "few.jsonl"
    out.write_text("".join(IT_HELPDESK.read_text(encoding="utf-8").splitlines(keepends=True)[:n]), encoding="utf-8")
    return out


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGQA", "CI", "PYTEST"))}
    env.update({"PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "160", "HF_HUB_OFFLINE": "1"})
    env.pop("NO_COLOR", None)
    return env


def test_ragqa_evaluate_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    data = _rows(tmp_path, 8)
    code = (
        f"import ragqa; r = ragqa.evaluate({str(data)!r}, ['faithfulness'], profile='local'); "
        "print('done', len(r.results))"
    )
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=secondary,
        cwd=tmp_path, env=_child_env(),
    )  # fmt: skip
    os.close(secondary)
    seen = b""
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(primary)
    stdout, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, seen.decode(errors="replace")
    assert stdout.decode().split() == ["done", "8"]
    text = seen.decode(errors="replace")
    assert "scoring" in text and "sample x metric" in text and "ETA" in text and "/8" in text


def test_ragqa_evaluate_is_silent_off_a_terminal_unless_asked(tmp_path: Path) -> None:
    data = _rows(tmp_path, 3)
    code = (
        f"import ragqa; ragqa.evaluate({str(data)!r}, ['faithfulness'], profile='local'); "
        f"ragqa.evaluate({str(data)!r}, ['faithfulness'], profile='local', progress=True)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=_child_env(), timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("scored ")]
    assert lines[-1].startswith("scored 3/3 (sample x metric) in ") and "/s · ETA 0:00:00" in lines[-1]
    assert len(lines) == 3  # all from the second run: the first (progress=None, a pipe) printed nothing


def test_the_cli_lines_off_a_terminal_carry_rate_and_eta(tmp_path: Path) -> None:
    data = _rows(tmp_path, 4)
    result = CliRunner().invoke(app, ["evaluate", str(data), "--profile", "local", "-m", "faithfulness"])
    assert result.exit_code == 0, result.output
    assert "scored 4/4 (sample x metric) in " in result.output and "/s · ETA 0:00:00" in result.output


def test_calibrate_prints_the_estimate_shows_progress_and_accepts_no_progress(tmp_path: Path) -> None:
    args = ["calibrate", str(BEGIN), "--profile", "local", "-m", "faithfulness", "--limit", "10", "--resamples", "50"]
    shown = CliRunner().invoke(app, [*args, "--no-cache"])
    assert shown.exit_code == 0, shown.output
    assert "estimate: 10 (sample, metric) pair(s) x 2 judge(s)" in shown.output
    assert "no prompt tokens (local judges)" in shown.output  # the local judges send no prompt
    assert "scored 10/10 (sample x metric)" in shown.output and "ETA" in shown.output
    quiet = CliRunner().invoke(app, [*args, "--no-cache", "--no-progress"])
    assert quiet.exit_code == 0, quiet.output
    assert "estimate: 10 (sample, metric) pair(s)" in quiet.output and "scored" not in quiet.output
    assert "panel (mean)" in quiet.output


def test_only_judges_that_send_prompts_count_tokens() -> None:
    sample = Sample(id="s", user_input="q", response="It opens at nine.", retrieved_contexts=["Opens at 9."])
    pairs = [(sample, Faithfulness())]
    both = estimate_pairs(pairs, 2)
    one = estimate_pairs(pairs, 2, token_judges=1)
    none = estimate_pairs(pairs, 2, token_judges=0)
    assert both.calls == one.calls == none.calls
    assert one.tokens * 2 in (both.tokens, both.tokens + 1) and none.tokens == 0
    assert str(none).endswith("no prompt tokens (local judges)") and "prompt tokens" in str(one)
    assert not sends_prompts(LocalJudge("local", LocalJudgeSettings()))
    assert sends_prompts(FunctionJudge("http", lambda prompt, data: None))
