"""What only a real ``python -m ragqa`` process shows: its exit status, its streams, no traceback.

The CLI's behaviour is tested in process (``tests/_cli.py``); these few tests start the
interpreter as a user's shell or CI does, so the module entry point, the exit status the shell
sees and what reaches the real stdout and stderr are checked too. Signals and ``kill -9`` are in
``tests/cli/test_cli_run.py``, start-up imports in ``tests/cli/test_startup_imports.py``, the
progress bar on a pseudo-terminal in ``tests/run/test_progress.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from _cli import cli_env, run_cli

ROOT = Path(__file__).resolve().parents[2]


def python_m_ragqa(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m ragqa ARGS...`` in a child process, with the environment :func:`run_cli` gives a command."""
    environ = dict(os.environ)
    for name, value in cli_env().items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environ.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "ragqa", *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=300
    )


def test_version_through_the_module_entry_point(tmp_path: Path) -> None:
    result = python_m_ragqa("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ragqa ") and result.stderr == ""


def test_a_usage_error_exits_2_with_one_message_and_no_traceback_as_in_process(tmp_path: Path) -> None:
    dataset = tmp_path / "bad.jsonl"
    good = json.dumps({"user_input": "Q", "response": "A", "retrieved_contexts": ["c"]})
    dataset.write_text("\n".join([good, '{"user_input": "Q" "response": "A"}']) + "\n", encoding="utf-8")
    process = python_m_ragqa("evaluate", "bad.jsonl", "--profile", "local", cwd=tmp_path)
    assert process.returncode == 2
    assert "bad.jsonl line 2: not valid JSON" in process.stderr
    assert "Traceback" not in process.stderr and process.stdout == ""
    # the in-process runner the other CLI tests use gives the same exit code and streams
    in_process = run_cli("evaluate", "bad.jsonl", "--profile", "local", cwd=tmp_path)
    assert (in_process.returncode, in_process.stdout, in_process.stderr) == (2, "", process.stderr)


def test_an_unexpected_error_is_a_traceback_and_exit_1_in_both(tmp_path: Path) -> None:
    # a results file whose header is not an object: whatever `ragqa report` makes of it, both ways agree
    (tmp_path / "r.jsonl").write_text("[1, 2]\n", encoding="utf-8")
    process = python_m_ragqa("report", "r.jsonl", "-o", "r.html", cwd=tmp_path)
    in_process = run_cli("report", "r.jsonl", "-o", "r.html", cwd=tmp_path)
    assert in_process.returncode == process.returncode
    assert ("Traceback" in in_process.stderr) == ("Traceback" in process.stderr)
