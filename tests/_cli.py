"""Run the ``ragqa`` command line inside the test process, as ``python -m ragqa`` runs it in a child.

Starting ``python -m ragqa`` costs 0.3 to 1 s of imports per call on an idle machine and several
seconds under load; most CLI tests check what a command prints, writes and exits with, which the
process adds nothing to. :func:`run_cli` invokes the same typer app in this process and gives back
what a subprocess would: the exit code, stdout and stderr as text. What a command changes in the
process is put back afterwards: the environment, the working folder, ``sys.argv``, the root
logger (``-v``/``-q`` reconfigure it), the SIGINT/SIGTERM handlers (``ragqa evaluate`` installs
one) and the warning filters.

An exception the command does not handle comes back as a subprocess shows it: exit code 1 and a
``Traceback`` on stderr, so ``"Traceback" not in result.stderr`` means the same in both.

What only a process shows (signals, ``kill -9``, a pseudo-terminal, start-up imports, the console
script) stays in real subprocess tests: ``tests/cli/test_cli_process.py``, ``tests/cli/test_startup_imports.py``,
``tests/run/test_progress.py``, ``tests/cli/test_cli_run.py``'s interruption tests.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import traceback
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factories import application_yaml
from typer.testing import CliRunner

from ragqa.judges._guard import BLOCK_REMOTE_ENV

if TYPE_CHECKING:
    from ragqa.testing import FakeOpenAIServer

__all__ = [
    "APPLICATION_YAML",
    "JUDGES",
    "N_SAMPLES",
    "CliResult",
    "chat_requests",
    "cli_env",
    "ragqa",
    "records",
    "run_cli",
]

BASE_ENV = {"CI": "true", "COLUMNS": "200", "NO_COLOR": "1"}
"""What the CLI tests always set: a CI log (plain progress lines), 200 columns, no colour."""


@dataclass(frozen=True)
class CliResult:
    """What ``subprocess.run(..., capture_output=True, text=True)`` would give: exit code, stdout, stderr."""

    returncode: int
    stdout: str
    stderr: str


def cli_env(env: Mapping[str, str | None] | None = None) -> dict[str, str | None]:
    """The changes to ``os.environ`` for one command: the user's ragqa and provider variables unset.

    Every ``RAGQA_*`` variable and ``OPENROUTER_API_KEY`` of the test process is removed (a
    developer's own settings must not leak in), except the suite's remote-call block, which stays
    on; then :data:`BASE_ENV`, then ``env`` (a ``None`` value unsets a variable).
    """
    changes: dict[str, str | None] = {
        name: None
        for name in os.environ
        if (name.startswith("RAGQA") and name != BLOCK_REMOTE_ENV) or name == "OPENROUTER_API_KEY"
    }
    changes.update(BASE_ENV)
    changes.update(env or {})
    return changes


@contextlib.contextmanager
def _process_state(args: list[str], cwd: Path | str | None, env: Mapping[str, str | None]) -> Iterator[None]:
    """Set what a fresh process would have for the command, and put the test process's back after."""
    saved_env = dict(os.environ)
    saved_argv = sys.argv
    root = logging.getLogger()
    saved_handlers, saved_level = list(root.handlers), root.level
    saved_signals = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for name, value in env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        sys.argv = ["ragqa", *args]
        with warnings.catch_warnings(), contextlib.chdir(cwd if cwd is not None else os.getcwd()):
            warnings.resetwarnings()  # a new process: every warning shows once again
            yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        sys.argv = saved_argv
        for handler in root.handlers:
            if handler not in saved_handlers:
                handler.close()
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
        for sig, handler in saved_signals.items():
            if handler is not None:
                signal.signal(sig, handler)


def run_cli(
    *args: str | os.PathLike[str],
    cwd: Path | str | None = None,
    env: Mapping[str, str | None] | None = None,
    input: str | None = None,
) -> CliResult:
    """Run ``ragqa ARGS...`` in this process; returns its exit code, stdout and stderr.

    Args:
        args: the command line after ``ragqa`` (paths are turned into strings).
        cwd: the working folder for the command (default: the test process's).
        env: variables to set (or unset, with ``None``) on top of :func:`cli_env`'s.
        input: text on the command's stdin.
    """
    from ragqa.cli import app

    argv = [os.fspath(arg) for arg in args]
    with _process_state(argv, cwd, cli_env(env)):
        result = CliRunner().invoke(app, argv, input=input, prog_name="python -m ragqa", catch_exceptions=True)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        assert result.exc_info is not None
        stderr += "".join(traceback.format_exception(*result.exc_info))
        return CliResult(1, result.stdout, stderr)
    return CliResult(result.exit_code, result.stdout, stderr)


# --- ``ragqa evaluate`` of two judges on the fake server (``tests/cli/``, the ``work`` fixture) ---------

JUDGES = ("judge-a", "judge-b")
"""The judges of :data:`APPLICATION_YAML`, both on the fake server."""

N_SAMPLES = 12
"""The samples of the ``work`` folder's ``data.jsonl`` (``office_jsonl(N_SAMPLES)``)."""

APPLICATION_YAML = application_yaml(
    JUDGES, api_key="sk-test-SECRET", ragqa=["concurrency: {max-concurrent-samples: 2}"]
)
"""The ``work`` folder's settings: :data:`JUDGES` at ``${FAKE_URL}``, faithfulness, two samples at a time."""


def ragqa(srv: FakeOpenAIServer, cwd: Path, *args: str) -> CliResult:
    """``ragqa evaluate data.jsonl ARGS...`` in this process (``tests/_cli.py``); the interruptions run a real one."""
    return run_cli("evaluate", "data.jsonl", *args, cwd=cwd, env={"FAKE_URL": srv.base_url})


def chat_requests(srv: FakeOpenAIServer) -> int:
    """The chat completion requests :data:`JUDGES` received at ``srv``."""
    return sum(len(srv.requests_for(j, "/v1/chat/completions")) for j in JUDGES)


def records(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A results file read back: its header and its result records, as dicts."""
    header, *rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return header, rows
