"""The fake server in a process of its own (its CPU is not the caller's), for benchmarks.

``python -m ragqa.testing.server --latency 0.2 --responder ragqa`` prints ``READY <base_url>``
once it listens and serves until interrupted or sent SIGTERM; :func:`fake_openai_server_process`
runs exactly that and yields the base URL.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from ragqa.testing.app import FakeOpenAIServer
from ragqa.testing.responders import foreign_prompt_responder, memoised, ragqa_responder

__all__ = ["fake_openai_server_process", "main"]

_ENTRY = "ragqa.testing.server"
"""The module ``python -m`` runs (the stable import path; it calls :func:`main`)."""


@contextmanager
def fake_openai_server_process(
    *, latency_s: float = 0.0, responder: str = "default", memo: bool = False
) -> Iterator[str]:
    """Run a fake server in a child process; yields its base URL (Spring style, no ``/v1``).

    Args:
        latency_s: delay before every answer, seconds.
        responder: ``default`` (schema-valid placeholders), ``ragqa`` (:func:`ragqa_responder`
            for every model) or ``ragqa+foreign`` (ragqa prompts by :func:`ragqa_responder`, any
            other prompt, RAGAS's say, by :func:`foreign_prompt_responder`'s placeholder).
        memo: answer a request whose content was answered before from memory
            (:func:`~ragqa.testing.responders.memoised`: the same answer, without running the
            responder again), e.g. when every judge of a benchmark's panel asks the same prompts.

    Raises:
        RuntimeError: the child did not print ``READY <url>`` as its first line.
    """
    cmd = [sys.executable, "-m", _ENTRY, "--latency", str(latency_s), "--responder", responder]
    if memo:
        cmd.append("--memo")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if not line.startswith("READY "):
            raise RuntimeError(f"fake server did not start: {line!r}")
        yield line.split(" ", 1)[1]
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a child too slow to stop (a loaded machine) is killed
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> None:
    """Run a fake server in the foreground (``python -m ragqa.testing.server --help``).

    Prints ``READY <base_url>`` once it listens, then serves until interrupted or sent SIGTERM.
    """
    parser = argparse.ArgumentParser(prog=f"python -m {_ENTRY}", description="A fake OpenAI-compatible server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--responder", choices=["default", "ragqa", "ragqa+foreign"], default="default")
    parser.add_argument("--record", action="store_true", help="keep every request in memory")
    parser.add_argument(
        "--memo", action="store_true", help="answer a request asked before from memory (same answer, less CPU)"
    )
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency_s=args.latency, host=args.host, port=args.port, record=args.record)
    chosen = None
    if args.responder == "ragqa":
        chosen = ragqa_responder()
    elif args.responder == "ragqa+foreign":
        chosen = ragqa_responder(fallback=foreign_prompt_responder)
    if chosen is not None:
        server.script("*", memoised(chosen) if args.memo else chosen)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"READY {server.base_url}", flush=True)
        with suppress(KeyboardInterrupt):
            stop.wait()
