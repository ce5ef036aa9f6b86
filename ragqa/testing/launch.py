"""Start the fake server in a child process: the launcher alone, with nothing but the standard library.

:func:`fake_openai_server_process` runs ``python -m ragqa.testing.server`` (:func:`ragqa.testing.process.main`)
and yields the base URL the child prints (``READY <url>``). This module imports nothing of ragqa, so
a process that only starts other processes (a benchmark whose measured runs are its children) can
load it from the package's folder without importing ragqa (about 1.3 CPU seconds: ragqa, aiohttp
and the local judge's rules); see ``benchmarks/_fake_server.py``.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["ENTRY", "fake_openai_server_process"]

ENTRY = "ragqa.testing.server"
"""The module ``python -m`` runs (the stable import path; it calls :func:`ragqa.testing.process.main`)."""
STOP_TIMEOUT_S = 60.0
"""How long a stopped child may take before it is killed (a loaded machine is slow to stop one)."""


@contextlib.contextmanager
def fake_openai_server_process(
    *, latency_s: float = 0.0, responder: str = "default", memo: bool = False, log: Path | None = None
) -> Iterator[str]:
    """Run a fake server in a child process; yields its base URL (Spring style, no ``/v1``).

    Args:
        latency_s: delay before every answer, seconds.
        responder: ``default`` (schema-valid placeholders), ``ragqa``
            (:func:`~ragqa.testing.responders.ragqa_responder` for every model) or ``ragqa+foreign``
            (ragqa prompts by ``ragqa_responder``, any other prompt, RAGAS's say, by
            :func:`~ragqa.testing.responders.foreign_prompt_responder`'s placeholder).
        memo: answer a request whose content was answered before from memory
            (:func:`~ragqa.testing.responders.memoised`: the same answer, without running the
            responder again), e.g. when every judge of a benchmark's panel asks the same prompts.
        log: a file for the child's stderr (aiohttp logs a client that closes a kept-alive
            connection as an error); ``None`` leaves it on this process's stderr.

    Raises:
        RuntimeError: the child did not print ``READY <url>`` as its first line.
    """
    cmd = [sys.executable, "-m", ENTRY, "--latency", str(latency_s), "--responder", responder]
    if memo:
        cmd.append("--memo")
    with contextlib.ExitStack() as stack:
        err = stack.enter_context(log.open("w", encoding="utf-8")) if log is not None else None
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            if not line.startswith("READY "):
                raise RuntimeError(f"fake server did not start: {line!r}")
            yield line.split(" ", 1)[1]
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:  # a child too slow to stop (a loaded machine) is killed
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
