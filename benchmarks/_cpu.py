"""CPU seconds of this process and every process it started (Ray's raylet, GCS and workers), by role.

Linux only (reads ``/proc``). A thread samples the process tree every ``interval`` seconds and keeps
each process's last user + system time, so a worker that exits during the measured span still
counts up to its last sample (at most ``interval`` of its CPU is missed). Roles:

- ``driver``: this process (its asyncio loop and Ray's client threads in it), less the sampling
  thread's own CPU;
- ``workers``: Ray worker processes (``ray::...``, ``default_worker.py``);
- ``ray``: every other process of the tree (raylet, GCS server, Ray's agents and monitors).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """``(parent pid, user + system seconds)`` of ``pid``, or ``None`` if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def _role(pid: int) -> str:
    if pid == os.getpid():
        return "driver"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "ray"
    return "workers" if cmd.startswith("ray::") or "default_worker.py" in cmd else "ray"


class TreeCPU:
    """Samples the CPU of this process's tree; :meth:`split` gives CPU seconds per role since :meth:`start`."""

    def __init__(self, interval: float = 0.25) -> None:
        self.interval = interval
        self._own = 0.0
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._roles: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _tree(self) -> dict[int, float]:
        parents: dict[int, int] = {}
        times: dict[int, float] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                got = _stat(int(entry))
                if got is not None:
                    parents[int(entry)], times[int(entry)] = got
        root = os.getpid()
        children: dict[int, list[int]] = {}
        for pid, parent in parents.items():
            children.setdefault(parent, []).append(pid)
        found, stack = {}, [root]
        while stack:
            pid = stack.pop()
            if pid in times:
                found[pid] = times[pid]
            stack.extend(children.get(pid, []))
        return found

    def _sample(self, first: bool = False) -> None:
        for pid, seconds in self._tree().items():
            if pid not in self._roles:
                self._roles[pid] = _role(pid)
                self._first[pid] = seconds if first else 0.0
            self._last[pid] = seconds

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()
        self._own = time.thread_time()  # the sampling's own CPU, taken off the driver's

    def start(self) -> None:
        """Take the baseline (processes alive now count from here; new ones from zero) and start sampling."""
        self._sample(first=True)
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, float]:
        """Stop sampling; CPU seconds per role (``driver``, ``workers``, ``ray``) and ``total``."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()
        split = {"driver": 0.0, "workers": 0.0, "ray": 0.0}
        for pid, last in self._last.items():
            split[self._roles[pid]] += last - self._first[pid]
        split["driver"] -= self._own
        split["total"] = sum(split.values())
        return split
