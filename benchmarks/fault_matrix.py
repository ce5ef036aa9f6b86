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
- ``malformed``: judge-d answers a truncated JSON body.

Per fault the table gives the outcomes scored, the outcomes typed as failed (a ``JudgeError``
subclass), those lost or duplicated (must be 0: every (sample, metric, judge) appears exactly
once in ``--out``), the wall time against the healthy run and the exit code.

Run::

    python benchmarks/fault_matrix.py                           # every fault, 50 samples
    python benchmarks/fault_matrix.py --faults healthy,refused --samples 20
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
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
FAULTS = ("healthy", "refused", "hang", "429", "5xx", "401", "malformed")
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


@dataclass
class Row:
    fault: str
    expected: int
    scored: int
    failed: int
    untyped: int
    lost: int
    duplicated: int
    wall_s: float
    exit_code: int
    errors: dict[str, int]


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


def prepare(fault: str, srv: FakeOpenAIServer, keyed: FakeOpenAIServer, dead_url: str) -> dict[str, dict[str, str]]:
    """Script the servers for ``fault``; returns per-judge ``base-url`` and ``api-key``."""
    srv.reset()
    keyed.reset()
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
    return judges


def run_cli(workdir: Path, fault: str, judges: dict[str, dict[str, str]], args: argparse.Namespace) -> Row:
    listing = "\n".join(
        f"        - {{id: {j}, base-url: {c['base-url']}, api-key: {c['api-key']}}}" for j, c in judges.items()
    )
    config = workdir / f"{fault}.yaml"
    config.write_text(YAML.format(timeout=f"{args.timeout}s", judges=listing), encoding="utf-8")
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
    parser.add_argument("--metrics", default="faithfulness,hallucination,context_recall")
    parser.add_argument("--faults", default=",".join(FAULTS), help=f"comma-separated, of {', '.join(FAULTS)}")
    parser.add_argument("--latency", type=float, default=0.1, help="server latency per answer, seconds")
    parser.add_argument("--timeout", type=float, default=2.0, help="per-request timeout of the judges, seconds")
    parser.add_argument("--verbose", action="store_true", help="show the CLI's output")
    args = parser.parse_args()
    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown:
        parser.error(f"unknown faults: {', '.join(unknown)}")
    if "healthy" in faults:
        faults.remove("healthy")
    faults.insert(0, "healthy")  # the baseline first
    lines = DATASET.read_text(encoding="utf-8").splitlines()[: args.samples]
    rows: list[Row] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAIServer(latency_s=args.latency, record=False) as srv,
        FakeOpenAIServer(latency_s=args.latency, record=False, api_key=KEY) as keyed,
    ):
        workdir = Path(tmp)
        (workdir / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        dead_url = closed_port_url()
        for fault in faults:
            rows.append(run_cli(workdir, fault, prepare(fault, srv, keyed, dead_url), args))
            print(f"... {fault}: {rows[-1].wall_s:.1f}s", file=sys.stderr, flush=True)
    base = rows[0].wall_s
    print(
        f"{args.samples} samples x {len(args.metrics.split(','))} metrics ({args.metrics}) x 4 judges; "
        f"latency {args.latency:g}s, timeout {args.timeout:g}s"
    )
    print()
    print("| fault | outcomes | scored | typed failures | untyped | lost | duplicated | wall s | vs healthy | exit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        versus = f"{(r.wall_s / base - 1) * 100:+.0f}%" if r is not rows[0] else "-"
        print(
            f"| {r.fault} | {r.expected} | {r.scored} | {r.failed - r.untyped} | {r.untyped} | {r.lost} | "
            f"{r.duplicated} | {r.wall_s:.1f} | {versus} | {r.exit_code} |"
        )
    print()
    for r in rows:
        if r.errors:
            shown = ", ".join(f"{k} {v}" for k, v in sorted(r.errors.items()))
            print(f"- {r.fault}: {shown}")


if __name__ == "__main__":
    main()
