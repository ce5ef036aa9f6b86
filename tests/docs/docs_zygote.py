"""The docs test's ragqa zygote: imports ragqa once, then forks one process per ``ragqa`` command.

Run as ``python docs_zygote.py SOCKET BIN_DIR`` by :class:`docs_forkserver.ForkServer`, with the
docs commands' environment. It imports what the commands use (:data:`PRELOAD`), listens on the
Unix socket ``SOCKET`` and, per connection (the shim's), forks a monitor. The monitor receives the
command's standard streams (file descriptors), arguments, working directory and environment, forks
the command's process and reports its exit code (negative: the signal that ended it); the shim's
end (EOF before the reply) ends the command with ``SIGTERM``. The command's process returns from
:func:`serve` to this module's top level, which runs ``ragqa.cli.main`` as the installed ``ragqa``
script does, so Python's normal exit follows. Before it listens, the zygote has also read the
datasets named after the socket's path into the local judge's text caches (:func:`warm`). The
zygote's imported objects are frozen (``gc.freeze``), in the command's process too: they live as
long as a fresh process's imports do, and its collections skip them. Nothing here imports pytest
or the tests.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import shutil
import signal
import socket
import sys
import threading
from collections.abc import Iterator

PRELOAD = (
    "ragqa.cli",
    "ragqa.run.runner",
    "ragqa.judges.openai",
    "ragqa.judges.local",
    "ragqa.render.html",
)
"""Modules the documented commands import (an HTTP judge's LangChain and openai SDK included)."""
ZYGOTE_PYTHONPATH = os.environ.get("PYTHONPATH", "")


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]] | None:
    """The shim's request and its standard streams, or ``None`` for a connection that sent nothing."""
    head, fds, _flags, _address = socket.recv_fds(conn, 8, 3)
    if len(head) < 8 or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    size = int.from_bytes(head, "big")
    payload = bytearray()
    while len(payload) < size:
        chunk = conn.recv(min(1 << 20, size - len(payload)))
        if not chunk:
            return None
        payload += chunk
    return json.loads(payload), fds


def _monitor(conn: socket.socket, worker: int) -> int:
    """Wait for the command's process; its exit code (negative: a signal). A shim gone first ends it.

    Waits on the process's pidfd (Linux 5.3+) and the connection together; elsewhere it polls.
    """
    try:
        watched: list[socket.socket | int] = [conn, os.pidfd_open(worker)]
        timeout = None
    except (AttributeError, OSError):
        watched, timeout = [conn], 0.05
    while True:
        readable, _, _ = select.select(watched, [], [], timeout)
        if conn in readable and not conn.recv(16):  # EOF: the shim ended before its command
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGTERM)
            _, status = os.waitpid(worker, 0)
            return os.waitstatus_to_exitcode(status)
        done, status = os.waitpid(worker, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)


def _reap(options: int) -> None:
    """Wait for ended monitors, so that their CPU (their commands' included) counts as the zygote's children's."""
    try:
        while os.waitpid(-1, options)[0]:
            pass
    except ChildProcessError:  # none left
        pass


def _reap_and_exit(number: int, frame: object) -> None:
    """``SIGTERM``: wait for every monitor, then exit (the test suite's CPU total then includes the commands)."""
    _reap(0)
    os._exit(0)


def _use_pythonpath(pythonpath: str) -> None:
    """Put the command's ``PYTHONPATH`` entries on ``sys.path`` where the zygote's own are (its sandbox's)."""
    own = [entry for entry in ZYGOTE_PYTHONPATH.split(os.pathsep) if entry]
    given = [entry for entry in pythonpath.split(os.pathsep) if entry]
    rest = [entry for entry in sys.path[1:] if entry not in own]
    sys.path[:] = [sys.path[0], *given, *rest]


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def warm(datasets: list[str]) -> None:
    """Split every text of these JSONL ``datasets`` into sentences and their features, once.

    ``split_sentences`` and ``features`` are pure functions of a text, cached per process (the
    caches are cleared when the local judge reads a new language), as a long-lived process that
    scored these datasets before would have them. A command forked afterwards answers as a fresh
    process does; it only skips splitting the shipped datasets' contexts again (pysbd's sentence
    rules and the stemming: about two thirds of a local-judge run of the README job's dataset).
    """
    from ragqa.judges.local.text import detect_script, features, split_sentences, strip_citations

    for path in datasets:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                for text in _strings(json.loads(line)):
                    script = detect_script(text[:2000])
                    for sentence in split_sentences(strip_citations(text)):
                        features(sentence, script)


def serve(socket_path: str, datasets: list[str]) -> dict[str, object]:
    """Listen forever in the zygote; return only in a command's process, with its request.

    Args:
        socket_path: where to listen.
        datasets: JSONL files whose texts :func:`warm` reads before the zygote listens.
    """
    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # an optional extra the sandbox hides
            importlib.import_module(name)
    warm(datasets)
    if threading.active_count() != 1:  # fork copies only the forking thread: another could hold a lock forever
        raise RuntimeError(f"the zygote must fork from one thread, not {threading.enumerate()}")
    gc.collect()
    gc.freeze()  # the imported objects: a command's collections skip them, so it copies fewer of the zygote's pages
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(socket_path)
    server.listen(64)
    signal.signal(signal.SIGTERM, _reap_and_exit)
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getppid()
    server.settimeout(1.0)
    while True:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            if os.getppid() != parent:  # the test process is gone (killed): so is the zygote's purpose
                shutil.rmtree(os.path.dirname(socket_path), ignore_errors=True)  # ForkServer's folder
                _reap_and_exit(signal.SIGTERM, None)
            continue
        conn.settimeout(None)
        if os.fork():
            conn.close()
            _reap(os.WNOHANG)
            continue
        # the monitor
        server.close()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        received = _receive(conn)
        if received is None:
            os._exit(0)
        request, fds = received
        worker = os.fork()
        if worker == 0:
            conn.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            os.chdir(str(request["cwd"]))
            env = request["env"]
            assert isinstance(env, dict)
            os.environ.clear()
            os.environ.update(env)
            _use_pythonpath(str(env.get("PYTHONPATH", "")))
            return request
        for fd in fds:
            os.close(fd)
        code = _monitor(conn, worker)
        try:
            conn.sendall(str(code).encode())
        finally:
            os._exit(0)


if __name__ == "__main__":
    sys.path[0] = sys.argv[2]  # as for the installed script: its own folder first
    command = serve(sys.argv[1], sys.argv[3:])
    sys.argv = [str(arg) for arg in command["argv"]]  # type: ignore[attr-defined]
    del command
    from ragqa.cli import main

    main()  # the installed script's sys.exit(main()): main returns None or raises SystemExit
