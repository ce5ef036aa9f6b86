"""The fake OpenAI-compatible server in a child process, started without importing ragqa here.

It runs ``python -m ragqa.testing.server`` (:mod:`ragqa.testing.process`), as
:func:`ragqa.testing.server.fake_openai_server_process` does, and yields the base URL the child
prints (``READY <url>``). A benchmark whose own process only starts other processes (the runs it
measures are children) uses this one: importing ``ragqa.testing.server`` would cost its process
about 1.3 CPU seconds (ragqa, aiohttp and the local judge's rules) for nothing, which is why
this does not reuse ``fake_openai_server_process``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def fake_server(
    latency_s: float = 0.0, responder: str = "ragqa", *, memo: bool = False, log: Path | None = None
) -> Iterator[str]:
    """Run ``python -m ragqa.testing.server`` until the block ends; yields its base URL (no ``/v1``).

    Args:
        latency_s: seconds the server waits before every answer.
        responder: ``default``, ``ragqa`` or ``ragqa+foreign`` (see ``python -m ragqa.testing.server --help``).
        memo: answer a request asked before from memory (the same answer, less server CPU).
        log: a file for the server's stderr (aiohttp logs a client that closes a kept-alive
            connection as an error); ``None`` leaves it on this process's stderr.

    Raises:
        RuntimeError: the child did not print ``READY <url>`` as its first line.
    """
    cmd = [sys.executable, "-m", "ragqa.testing.server", "--latency", str(latency_s), "--responder", responder]
    cmd += ["--memo"] if memo else []
    with contextlib.ExitStack() as stack:
        err = stack.enter_context(log.open("w", encoding="utf-8")) if log is not None else None
        proc = stack.enter_context(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True))
        stack.callback(proc.terminate)  # runs before Popen's exit, which waits for the child
        assert proc.stdout is not None
        ready = proc.stdout.readline().strip()
        if not ready.startswith("READY "):
            raise RuntimeError(f"fake server did not start: {ready!r}")
        yield ready.removeprefix("READY ")
