"""The fake server in a process of its own (its CPU is not the caller's), for benchmarks.

``python -m ragqa.testing.server --latency 0.2 --responder ragqa`` prints ``READY <base_url>``
once it listens and serves until interrupted or sent SIGTERM (:func:`main`);
:func:`fake_openai_server_process` (:mod:`ragqa.testing.launch`, re-exported here) runs exactly
that and yields the base URL.
"""

from __future__ import annotations

import argparse
import signal
import threading
from contextlib import suppress

from ragqa.testing.app import FakeOpenAIServer
from ragqa.testing.launch import ENTRY, fake_openai_server_process
from ragqa.testing.responders import foreign_prompt_responder, memoised, ragqa_responder

__all__ = ["fake_openai_server_process", "main"]


def main(argv: list[str] | None = None) -> None:
    """Run a fake server in the foreground (``python -m ragqa.testing.server --help``).

    Prints ``READY <base_url>`` once it listens, then serves until interrupted or sent SIGTERM.
    """
    parser = argparse.ArgumentParser(prog=f"python -m {ENTRY}", description="A fake OpenAI-compatible server.")
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
