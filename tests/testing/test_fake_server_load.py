"""What the fake server tells a benchmark about itself: requests in flight over time and its CPU.

No wall-clock bounds: :class:`~ragqa.testing.load.InFlight` runs on an injected clock, and the
server's in-flight count is read while :meth:`~ragqa.testing.app.FakeOpenAIServer.hold` parks
requests (a lower bound on time only).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

import pytest

from ragqa.testing import FakeOpenAIServer
from ragqa.testing.load import InFlight

pytestmark = pytest.mark.usefixtures("reset_srv")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_in_flight_integrates_requests_over_time() -> None:
    clock = Clock()
    load = InFlight(clock)
    clock.now += 1.0  # idle second: level 0
    load.enter()
    clock.now += 2.0  # one in flight for 2 s
    load.enter()
    load.enter()
    clock.now += 0.5  # three in flight for 0.5 s
    load.leave()
    clock.now += 1.0  # two for 1 s
    load.leave()
    load.leave()
    clock.now += 3.0  # idle again
    snap = load.snapshot()
    assert snap["in_flight"] == 0 and snap["peak_in_flight"] == 3
    assert snap["seconds_at"] == {"0": 4.0, "1": 2.0, "2": 1.0, "3": 0.5}
    assert snap["busy_s"] == 3.5
    assert snap["request_seconds"] == 2.0 + 1.5 + 2.0  # mean in flight while busy: 5.5 / 3.5
    json.dumps(snap)  # JSON-ready, as /_fake/stats sends it


def _chat(srv: FakeOpenAIServer, model: str) -> dict[str, Any]:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}]}
    req = urllib.request.Request(
        srv.base_url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=600) as resp:
        data: dict[str, Any] = json.load(resp)
    return data


def _stats(srv: FakeOpenAIServer) -> dict[str, Any]:
    with urllib.request.urlopen(srv.base_url + "/_fake/stats", timeout=600) as resp:
        data: dict[str, Any] = json.load(resp)
    return data


def test_stats_count_held_requests_in_flight_and_report_process_cpu(srv: FakeOpenAIServer) -> None:
    before = srv.stats
    srv.hold("held")
    workers = [threading.Thread(target=_chat, args=(srv, "held"), daemon=True) for _ in range(3)]
    for worker in workers:
        worker.start()
    while srv.parked < 3:  # a lower bound on time only
        time.sleep(0.005)
    during = _stats(srv)  # over HTTP, as a benchmark in another process reads it
    assert during["in_flight"] == 3  # the stats request itself is not counted
    assert during["peak_in_flight"] >= 3
    srv.release("held")
    for worker in workers:
        worker.join(timeout=600)  # a hang guard, not a speed check
    after = srv.stats
    assert after["in_flight"] == 0
    assert after["counts"]["/v1/chat/completions"] - before["counts"].get("/v1/chat/completions", 0) == 3
    assert after["request_seconds"] > before["request_seconds"] and after["busy_s"] > before["busy_s"]
    assert after["cpu_s"] >= during["cpu_s"] >= before["cpu_s"] > 0
    assert "/_fake/stats" not in after["counts"]
