"""The ``ragqa`` command of the docs test, forked from an interpreter that has already imported ragqa.

About 55 of the documented commands start ``ragqa``. Each fresh process spends most of its CPU on
Python's start and on importing ragqa and, for an HTTP judge, LangChain and the openai SDK
(``python -c "import ragqa.cli"``: about 0.6 CPU seconds, and about 1.7 more with ``import
ragqa.judges.openai``; less where ragqa's bytecode is written), before the command's own work.
Here one interpreter per sandbox kind (the *zygote*, :mod:`docs_zygote`) imports them once;
``ragqa`` on the commands' ``PATH`` is a small shim that hands the zygote its arguments, working
directory, environment and its standard input, output and error (the file descriptors
themselves, so pipes and redirections behave as for any process), and exits with the command's
exit code. The zygote forks a monitor per command, which forks the command's process; that
process sets the working directory, the environment and ``sys.argv`` and runs ``ragqa.cli.main``
as the installed ``ragqa`` script does, and Python's normal exit follows (``atexit``, flushing,
joining threads). The zygote has also split the shipped datasets' texts into sentences once
(:func:`docs_zygote.warm`: pure, cached functions of the text), so a local-judge command, most
of whose own work that splitting was, starts where a long-lived process would.

What a fresh process would show and a forked one does not (its start, its imports, its own hash
seed) is tested with real processes in ``tests/cli`` (``test_cli_process.py``,
``test_startup_imports.py``); :func:`test_docs_commands.test_the_forked_ragqa_runs_as_a_fresh_one`
compares the two ways on commands that print, fail and write files. A shim whose standard
streams include a terminal runs the real ``ragqa`` instead (a forked process keeps the zygote's
buffering). A shim that ends before its command (killed, or interrupted) ends the command with
``SIGTERM``.
"""

from __future__ import annotations

import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ZYGOTE = Path(__file__).resolve().with_name("docs_zygote.py")
START_TIMEOUT_S = 120.0  # only stops a zygote that never starts from hanging the suite
STOP_TIMEOUT_S = 60.0  # the same for one whose commands never end

LAUNCHER = """\
#!/bin/sh
# ragqa for the docs test: runs the command in a process forked from {zygote_name} (see docs_forkserver.py)
exec {python} -SE {shim} "$@"
"""
"""The ``ragqa`` on the commands' ``PATH`` (a shell script: a ``#!`` line has a length limit a venv's path may pass)."""

SHIM = """\
# the docs test's ragqa shim (see docs_forkserver.py): hands the command to the zygote, exits with its code
import json, os, signal, socket, sys

if any(os.isatty(fd) for fd in (0, 1, 2)):
    os.execv({real!r}, [{real!r}, *sys.argv[1:]])
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect({socket_path!r})
payload = json.dumps({{"argv": [{real!r}, *sys.argv[1:]], "cwd": os.getcwd(), "env": dict(os.environ)}}).encode()
socket.send_fds(conn, [len(payload).to_bytes(8, "big")], [0, 1, 2])
conn.sendall(payload)
reply = b""
while chunk := conn.recv(64):
    reply += chunk
if not reply:
    sys.exit("ragqa (docs test shim): the zygote closed the connection without an exit code")
code = int(reply)
if code < 0:  # killed by a signal: end the same way, as a shell expects
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
sys.exit(code)
"""


class ForkServer:
    """One zygote and the ``ragqa`` shim that sends commands to it.

    Args:
        env: the zygote's environment: the docs commands' (:func:`docs_sandbox.command_env` of the
            sandbox kind's template), so it imports that ragqa copy with the optional extras hidden.
        datasets: JSONL files whose texts the zygote reads into the local judge's caches before
            it listens (:func:`docs_zygote.warm`).

    Attributes:
        shim_dir: the folder holding the ``ragqa`` shim: put it first on a command's ``PATH``.

    Raises:
        RuntimeError: the zygote exited or did not listen within :data:`START_TIMEOUT_S` (its log
            is in the message).
    """

    def __init__(self, env: dict[str, str], datasets: Sequence[Path] = ()) -> None:
        self._folder = Path(tempfile.mkdtemp(prefix="ragqa-zygote-"))  # short: a socket path has 107 bytes at most
        self.socket_path = self._folder / "zygote.sock"
        self.shim_dir = self._folder / "bin"
        self.shim_dir.mkdir()
        real = shutil.which("ragqa", path=str(Path(sys.executable).parent))
        if real is None:
            raise RuntimeError(f"no ragqa script beside {sys.executable}: install ragqa (pip install -e .)")
        shim = self._folder / "shim.py"
        shim.write_text(SHIM.format(real=real, socket_path=str(self.socket_path)), encoding="utf-8")
        launcher = self.shim_dir / "ragqa"
        launcher.write_text(
            LAUNCHER.format(python=shlex.quote(sys.executable), zygote_name=ZYGOTE.name, shim=shlex.quote(str(shim))),
            encoding="utf-8",
        )
        launcher.chmod(0o755)
        self._log = self._folder / "zygote.log"
        with self._log.open("wb") as log:
            self._process = subprocess.Popen(
                [sys.executable, str(ZYGOTE), str(self.socket_path), str(Path(real).parent), *map(str, datasets)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self._wait_until_listening()

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                break
            if self.socket_path.exists():
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                    try:
                        probe.connect(str(self.socket_path))
                        probe.sendall(b"")  # a connection that sends nothing is closed by the monitor
                        return
                    except OSError:
                        pass
            time.sleep(0.05)
        self.close()
        log = self._log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise RuntimeError(f"the docs test's ragqa zygote did not start (exit {self._process.returncode}):\n{log}")

    def close(self) -> None:
        """Stop the zygote and remove its folder.

        ``SIGTERM`` makes the zygote wait for its monitors first, so the CPU of the forked commands
        counts among the test process's children (as a fresh process's would).
        """
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
        self._process.wait()
        shutil.rmtree(self._folder, ignore_errors=True)
