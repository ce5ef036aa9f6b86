"""Fault matrix: ``ragqa evaluate`` with four HTTP judges while one fault at a time is injected.

Every run is the real command line (``python -m ragqa evaluate``, a child process) over a
generated ``application.yaml`` whose four judges point at a :class:`~ragqa.testing.FakeOpenAIServer`
answering every ragqa prompt like the local judge (:func:`~ragqa.testing.local_judge_responder`),
scoring the first ``--samples`` samples of ``examples/datasets/it_helpdesk.jsonl`` with
``--metrics``. Faults:

- ``healthy``: no fault (the baseline of the wall-time column);
- ``refused``: judge-d's ``base-url`` is a closed port (connection refused from the start);
- ``hang``: judge-d's requests hang past the request timeout;
- ``429``: 30% of all requests answer 429 with ``Retry-After: 0.1`` (seeded);
- ``5xx``: bursts of 503: 25 requests of every 150 (all judges);
- ``401``: judge-d sends a wrong API key;
- ``malformed``: judge-d answers a truncated JSON body;
- ``burst``: every judge answers 500, 502 (an HTML page) and 503 in turn to every request that
  arrives from 1 s to 4 s after the run's first request (a 3 s burst);
- ``restart``: judge-d's server stops 1 s after its first request (connections refused) and
  starts again on the same port 3 s later;
- ``hang-default``: judge-d accepts requests and never answers, under ragqa's default timeout
  (60 s).

``burst``, ``restart`` and ``hang-default`` run with ragqa's own defaults (no retry block, no
timeout: 10 attempts, backoff 2 s x 5, timeout 60 s); the others with the short settings of
:data:`YAML`. Every fault run is paired with a healthy run of the same settings made just
before it (the baseline is measured alternately with each fault, ``--repeats`` pairs each), so
the load of a shared machine hits both alike. ``--no-baseline`` runs the faults alone (half the
runs), for their outcome columns; the healthy and extra wall-time columns then show ``-``.

Per fault the table gives the outcomes scored, the outcomes typed as failed (a ``JudgeError``
subclass), those lost or duplicated (must be 0: every (sample, metric, judge) appears exactly
once in ``--out``), the wall time against its paired healthy run and the exit code.

Run::

    python benchmarks/fault_matrix.py                           # every fault, 50 samples
    python benchmarks/fault_matrix.py --faults refused --samples 20
    python benchmarks/fault_matrix.py --faults burst,restart --repeats 2
    python benchmarks/fault_matrix.py --faults restart --no-baseline   # outcomes only, no healthy runs
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ragqa.testing import ChatRequest, FakeOpenAIServer, Fault, local_judge_responder

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"
JUDGES = ("judge-a", "judge-b", "judge-c", "judge-d")
FAULTY = "judge-d"
KEY = "sk-fault-matrix-0123456789"
TYPED = {"JudgeTimeout", "JudgeHTTPError", "JudgeRateLimited", "JudgeOutputError", "JudgeUnavailable"}
FAULTS = ("healthy", "refused", "hang", "429", "5xx", "401", "malformed", "burst", "restart", "hang-default")
WITH_DEFAULTS = frozenset({"burst", "restart", "hang-default"})
"""Faults run under ragqa's default retry block and timeout."""
BURST = (1.0, 4.0)
"""Seconds after the run's first request during which ``burst`` answers 5xx."""
RESTART = (1.0, 3.0)
"""``restart``: seconds after judge-d's first request until its server stops, then until it starts again."""
RESPONDER = local_judge_responder()

YAML = """\
spring:
  ai:
    retry:
      max-attempts: 4
      backoff: {{initial-interval: 200ms, max-interval: 2s, multiplier: 2}}
    chat-models:
      default-options: {{temperature: 0.0, timeout: {timeout}}}
      list:
{judges}
ragqa:
  concurrency: {{max-concurrent-samples: 16}}
"""

YAML_DEFAULTS = """\
spring:
  ai:
    chat-models:
      default-options: {{temperature: 0.0{timeout}}}
      list:
{judges}
ragqa:
  concurrency: {{max-concurrent-samples: 16}}
"""


@dataclass
class Row:
    fault: str
    baseline_s: float | None
    expected: int
    scored: int
    failed: int
    untyped: int
    lost: int
    duplicated: int
    wall_s: float
    exit_code: int
    errors: dict[str, int]
    note: str = ""


def closed_port_url() -> str:
    with FakeOpenAIServer() as dead:
        return dead.base_url  # the port is free (refusing connections) once the server stopped


def counting(respond: Callable[[ChatRequest], object], fault: Callable[[int], Fault | None]) -> Callable[..., object]:
    """A responder that asks ``fault(n)`` for the n-th request (all judges) before answering."""
    counter = itertools.count()
    lock = threading.Lock()

    def answer(request: ChatRequest) -> object:
        with lock:
            n = next(counter)
        injected = fault(n)
        return injected if injected is not None else respond(request)

    return answer


def timed(respond: Callable[[ChatRequest], object], fault: Callable[[float], Fault | None]) -> Callable[..., object]:
    """A responder that asks ``fault(t)``, ``t`` seconds since the first request it saw, before answering."""
    start: list[float] = []
    lock = threading.Lock()

    def answer(request: ChatRequest) -> object:
        with lock:
            if not start:
                start.append(time.monotonic())
            elapsed = time.monotonic() - start[0]
        injected = fault(elapsed)
        return injected if injected is not None else respond(request)

    return answer


def burst(elapsed: float) -> Fault | None:
    """500, 502 (HTML) and 503 in turn during :data:`BURST`."""
    if not BURST[0] <= elapsed < BURST[1]:
        return None
    kind = int(elapsed * 10) % 3
    if kind == 1:
        return Fault(status=502, body="<html><body>502 Bad Gateway</body></html>")
    return Fault(status=500 if kind == 0 else 503)


class Restarter:
    """Stops a server :data:`RESTART` [0] s after its first request and starts it again on the same port [1] s later."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        self.server = server
        self.armed = threading.Event()
        self.thread: threading.Thread | None = None
        self.seen_at_restart: int | None = None

    def responder(self, respond: Callable[[ChatRequest], object]) -> Callable[[ChatRequest], object]:
        def answer(request: ChatRequest) -> object:
            if not self.armed.is_set():
                self.armed.set()
                self.thread = threading.Thread(target=self._cycle, daemon=True)
                self.thread.start()
            return respond(request)

        return answer

    def _cycle(self) -> None:
        time.sleep(RESTART[0])
        self.server.stop()
        time.sleep(RESTART[1])
        self.seen_at_restart = sum(self.server.counts.values())
        self.server.start()

    def requests_after_restart(self) -> int:
        if self.thread is not None:
            self.thread.join()
        if self.seen_at_restart is None:
            return 0
        return sum(self.server.counts.values()) - self.seen_at_restart


def memoized(respond: Callable[[ChatRequest], object]) -> Callable[[ChatRequest], object]:
    """``respond`` computed once per distinct prompt: the four judges ask the same prompts.

    Keeps the fake server's CPU (it shares the machine with the client) small against its
    latency, so wall times reflect waiting, not the server's local-judge work.
    """
    answers: dict[tuple[str, str], object] = {}
    lock = threading.Lock()

    def answer(request: ChatRequest) -> object:
        key = (json.dumps(request.schema, sort_keys=True), request.prompt)
        with lock:
            known = answers.get(key)
        if known is None:
            known = respond(request)
            with lock:
                answers[key] = known
        return known

    return answer


def prepare(
    fault: str, srv: FakeOpenAIServer, keyed: FakeOpenAIServer, dead_url: str, restarter: Restarter
) -> dict[str, dict[str, str]]:
    """Script the servers for ``fault``; returns per-judge ``base-url`` and ``api-key``."""
    srv.reset()
    keyed.reset()
    restarter.server.reset()
    respond = memoized(RESPONDER)  # type: ignore[arg-type]
    srv.script("*", respond)
    keyed.script("*", respond)
    judges = {j: {"base-url": srv.base_url, "api-key": KEY} for j in JUDGES}
    if fault == "refused":
        judges[FAULTY]["base-url"] = dead_url
    elif fault == "hang":
        srv.hang(FAULTY, times=1_000_000, seconds=60)
    elif fault == "429":
        rng = random.Random(7)
        rng_lock = threading.Lock()

        def rate_limited(_n: int) -> Fault | None:
            with rng_lock:
                hit = rng.random() < 0.3
            return Fault(status=429, retry_after=0.1) if hit else None

        srv.script("*", counting(respond, rate_limited))  # type: ignore[arg-type]
    elif fault == "5xx":
        srv.script("*", counting(respond, lambda n: Fault(status=503) if n % 150 < 25 else None))  # type: ignore[arg-type]
    elif fault == "401":
        judges[FAULTY] = {"base-url": keyed.base_url, "api-key": "sk-wrong-key-0000"}
    elif fault == "malformed":
        srv.malformed(FAULTY, times=1_000_000)
    elif fault == "burst":
        srv.script("*", timed(respond, burst))  # type: ignore[arg-type]
    elif fault == "restart":
        restarter.armed.clear()
        restarter.thread, restarter.seen_at_restart = None, None
        restarter.server.script("*", restarter.responder(respond))  # type: ignore[arg-type]
        judges[FAULTY]["base-url"] = restarter.server.base_url
    elif fault == "hang-default":
        srv.hang(FAULTY, times=1_000_000, seconds=math.inf)
    return judges


def run_cli(
    workdir: Path, fault: str, judges: dict[str, dict[str, str]], args: argparse.Namespace, *, defaults: bool
) -> Row:
    listing = "\n".join(
        f"        - {{id: {j}, base-url: {c['base-url']}, api-key: {c['api-key']}}}" for j, c in judges.items()
    )
    config = workdir / f"{fault}.yaml"
    if defaults:
        own = f", timeout: {args.default_timeout}s" if args.default_timeout is not None else ""
        text = YAML_DEFAULTS.format(timeout=own, judges=listing)
    else:
        text = YAML.format(timeout=f"{args.timeout}s", judges=listing)
    config.write_text(text, encoding="utf-8")
    dataset = workdir / "samples.jsonl"
    out = workdir / f"{fault}.results.jsonl"
    cmd = [sys.executable, "-m", "ragqa", "evaluate", str(dataset), "--config", str(config)]
    cmd += ["--metrics", args.metrics, "--out", str(out), "--no-progress"]
    env = {**os.environ, "RAGQA_PROFILES_ACTIVE": ""}
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=workdir, check=False)
    wall = time.perf_counter() - started
    if args.verbose:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-3000:])
    metrics = [m.strip() for m in args.metrics.split(",")]
    expected = {(f"it-{i:03d}", m, j) for i in range(1, args.samples + 1) for m in metrics for j in JUDGES}
    seen: collections.Counter[tuple[str, str, str]] = collections.Counter()
    scored = failed = untyped = 0
    errors: collections.Counter[str] = collections.Counter()
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "ragqa_results" in record:  # the header line
                continue
            for judge in record["judges"]:
                seen[(record["sample_id"], record["metric"], judge["judge_id"])] += 1
                failure = judge["failure"]
                if failure is None:
                    scored += 1
                else:
                    failed += 1
                    errors[failure["error_type"]] += 1
                    untyped += failure["error_type"] not in TYPED
    return Row(
        fault=fault,
        baseline_s=None,
        expected=len(expected),
        scored=scored,
        failed=failed,
        untyped=untyped,
        lost=len(expected - set(seen)),
        duplicated=sum(n - 1 for n in seen.values() if n > 1),
        wall_s=wall,
        exit_code=proc.returncode,
        errors=dict(errors),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=50, help="samples of it_helpdesk.jsonl (default 50)")
    parser.add_argument("--metrics", default="faithfulness,hallucination,context_recall,context_precision")
    parser.add_argument("--faults", default=",".join(FAULTS[1:]), help=f"comma-separated, of {', '.join(FAULTS)}")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency per answer, seconds")
    parser.add_argument("--timeout", type=float, default=2.0, help="per-request timeout of the judges, seconds")
    parser.add_argument(
        "--default-timeout",
        type=float,
        default=None,
        help="request timeout of the faults run with ragqa's defaults, seconds (default: ragqa's own, 60 s)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="healthy/fault pairs per fault (default 1)")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="run each fault without its paired healthy run (half the runs; no wall-time comparison)",
    )
    parser.add_argument("--verbose", action="store_true", help="show the CLI's output")
    args = parser.parse_args()
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown:
        parser.error(f"unknown faults: {', '.join(unknown)}")
    faults = [f for f in faults if f != "healthy"]  # every fault run has its own healthy run just before
    lines = DATASET.read_text(encoding="utf-8").splitlines()[: args.samples]
    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAIServer(latency_s=args.latency, record=False) as srv,
        FakeOpenAIServer(latency_s=args.latency, record=False, api_key=KEY) as keyed,
        FakeOpenAIServer(latency_s=args.latency, record=False) as restartable,
    ):
        workdir = Path(tmp)
        (workdir / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        dead_url = closed_port_url()
        restarter = Restarter(restartable)
        for fault in faults:
            defaults = fault in WITH_DEFAULTS
            for _ in range(max(1, args.repeats)):
                healthy = None
                if not args.no_baseline:
                    ready = prepare("healthy", srv, keyed, dead_url, restarter)
                    healthy = run_cli(workdir, "healthy", ready, args, defaults=defaults)
                row = run_cli(workdir, fault, prepare(fault, srv, keyed, dead_url, restarter), args, defaults=defaults)
                if fault == "restart":
                    row.note = f"{restarter.requests_after_restart()} requests to judge-d after its restart"
                if healthy is not None:
                    row.baseline_s = healthy.wall_s
                    if healthy.scored != healthy.expected:
                        row.note += f" (the healthy run scored only {healthy.scored})"
                rows.append(row)
                paired = f"healthy {healthy.wall_s:.1f}s, " if healthy is not None else ""
                print(f"... {fault}: {paired}fault {row.wall_s:.1f}s", file=sys.stderr, flush=True)
    print(
        f"{args.samples} samples x {len(args.metrics.split(','))} metrics ({args.metrics}) x 4 judges; "
        f"latency {args.latency:g}s, timeout {args.timeout:g}s "
        f"(ragqa's defaults for {', '.join(sorted(WITH_DEFAULTS))}"
        + (f", with timeout {args.default_timeout:g}s)" if args.default_timeout is not None else ": timeout 60s)")
    )
    print()
    print(
        "| fault | outcomes | scored | typed failures | untyped | lost | duplicated | healthy s | fault s "
        "| extra s | exit |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        base, extra = ("-", "-") if r.baseline_s is None else (f"{r.baseline_s:.1f}", f"{r.wall_s - r.baseline_s:+.1f}")
        print(
            f"| {r.fault} | {r.expected} | {r.scored} | {r.failed - r.untyped} | {r.untyped} | {r.lost} | "
            f"{r.duplicated} | {base} | {r.wall_s:.1f} | {extra} | {r.exit_code} |"
        )
    print()
    for r in rows:
        if r.errors or r.note:
            shown = ", ".join(f"{k} {v}" for k, v in sorted(r.errors.items()))
            print(f"- {r.fault}: {'; '.join(filter(None, [shown, r.note.strip()]))}")


if __name__ == "__main__":
    main()
