"""A judge found down, and a 429, seen by one Ray worker slow every worker (loopback cluster, needs the ``ray`` extra).

The servers count what they receive; no test bounds the wall time. ``tests/run/test_ray_breakers.py``
checks the breaker's protocol step by step without a cluster.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")

from _ray_cluster import JUDGE_KEY, office_samples, two_judges_yaml  # noqa: E402

from ragqa.container import close_container, create_container  # noqa: E402
from ragqa.judges.breaker import DEFAULT_FAILURE_THRESHOLD  # noqa: E402
from ragqa.run.loop import run_sync  # noqa: E402
from ragqa.run.outcome import RunResult  # noqa: E402
from ragqa.run.plan import make_plan  # noqa: E402
from ragqa.run.ray_engine import RayEngine  # noqa: E402
from ragqa.run.runner import Runner  # noqa: E402
from ragqa.testing import fake_openai_server, ragqa_responder  # noqa: E402
from ragqa.testing.wire import ChatRequest, Fault  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("cluster")]


class _Resets:
    """A TCP endpoint on 127.0.0.1 that resets every connection it accepts, and counts them."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.accepted = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    def close(self) -> None:
        self._sock.close()


def _run(config: Path, n: int) -> RunResult:
    container = create_container(config)
    plan = make_plan(container.settings(), metrics=["faithfulness"], dataset="offices")
    try:
        return run_sync(Runner(plan, container, engine=RayEngine(workers=2, batch_size=5)).arun(office_samples(n)))
    finally:
        run_sync(close_container(container))


DOWN_YAML = """
spring:
  ai:
    retry: {max-attempts: 1}
    openai: {base-url: "${FAKE_URL}", api-key: "${JUDGE_API_KEY}"}
    chat-models:
      default-options: {temperature: 0.0, timeout: 10m}
      list:
        - {id: judge-a}
        - {id: judge-b, base-url: "${DOWN_URL}", group: down}
    embedding-models: {list: []}
ragqa:
  metrics: [faithfulness]
  circuit-breaker: {cool-down: 10m, max-cool-down: 10m}
  providers:
    down: {max-in-flight: 1}
"""


def test_a_judge_found_down_by_one_worker_is_not_rediscovered_by_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judge b's requests go one at a time across the cluster (``max-in-flight: 1``) to an endpoint
    that resets every connection. Each worker alone would open its breaker only after its own
    ``failure-threshold`` (5) of consecutive failures, so the endpoint would see 2 x 5 connections;
    shared, the first worker to open it stops the other, whose later requests need a permit from
    the actor and learn it there."""
    down = _Resets()
    with fake_openai_server(api_key=JUDGE_KEY) as server:
        server.script("judge-a", ragqa_responder())
        (tmp_path / "application.yaml").write_text(DOWN_YAML, encoding="utf-8")
        monkeypatch.setenv("FAKE_URL", server.base_url)
        monkeypatch.setenv("DOWN_URL", down.url)
        try:
            result = _run(tmp_path / "application.yaml", 40)
        finally:
            down.close()
        assert [s.n_scored for s in result.report.summaries] == [40]  # judge a scored every sample
        assert len(server.requests_for("judge-a")) == 40 * 2
    assert DEFAULT_FAILURE_THRESHOLD <= down.accepted < 2 * DEFAULT_FAILURE_THRESHOLD


BACKOFF_YAML = two_judges_yaml("{rps: 20, max-in-flight: 16}", max_attempts=2)

HOLD_S = 3.0


def test_a_retry_after_seen_by_one_worker_holds_every_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The 20th request of judge a is answered 429 with ``Retry-After: 3``: from 1.2 s after it
    (time for the news to reach the actor and the other worker's leased tokens to run out) until
    the hold ends, the server receives no request at all, from either worker or judge."""
    answers = ragqa_responder()
    seen: list[float] = []

    def judge_a(request: ChatRequest) -> Any:
        seen.append(time.monotonic())
        if len(seen) == 20:
            return Fault(status=429, retry_after=HOLD_S)
        return answers(request)

    with fake_openai_server(api_key=JUDGE_KEY, latency_s=0.05) as server:
        server.script("judge-a", judge_a)
        server.script("judge-b", answers)
        (tmp_path / "application.yaml").write_text(BACKOFF_YAML, encoding="utf-8")
        monkeypatch.setenv("FAKE_URL", server.base_url)
        # 40 samples: the worker that was not told still has about 60 requests to send after the 429, more
        # than 1.2 s of them at rps 20, so a hold that reached only the told worker would show in the window
        result = _run(tmp_path / "application.yaml", 40)
        arrivals = [r.t for r in server.requests]
    assert [s.n_scored for s in result.report.summaries] == [40]
    told = seen[19]
    assert max(arrivals) > told + HOLD_S  # the run went on after the hold
    during = [t - told for t in arrivals if told + 1.2 <= t < told + HOLD_S - 0.1]
    assert during == []  # every worker held, not only the one that was told
