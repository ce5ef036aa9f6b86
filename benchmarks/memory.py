"""Peak resident memory of ``ragqa evaluate`` against the number of samples.

For each size N the benchmark writes N synthetic samples to a temporary JSON Lines file, runs
``python -m ragqa evaluate DATA --out results.jsonl`` in a child process (the CLI path: the file
is read line by line, results stream to the output, only summaries stay in memory), and reports
the child's peak resident set size (``ru_maxrss`` of that child from ``os.wait4``), its wall
time and its CPU time. The judges are either ragqa's local judge (offline, no server) or judges
at the fake OpenAI-compatible server, run in another child process so its memory is not counted.

Run::

    python benchmarks/memory.py --samples 1000 10000 100000 --judge local
    python benchmarks/memory.py --samples 1000 10000 100000 --judge fake --latency 0

Each sample has a question, a two-sentence response, a reference and two contexts (about
400 characters in all). ``--metrics`` picks the metrics (default ``context_recall``, one judge
call per sample and judge); the cache is off so every call is made.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from _fake_server import fake_server  # a sibling of this script: the server without importing ragqa here

ROOT = Path(__file__).resolve().parent.parent

LOCAL_YAML = """
spring:
  ai:
    chat-models:
      list:
{judges}
    embedding-models:
      list: []
ragqa:
  concurrency: {{max-concurrent-samples: {window}}}
"""

FAKE_YAML = """
spring:
  ai:
    retry:
      max-attempts: 1
    openai:
      base-url: {base_url}
      api-key: sk-benchmark
    chat-models:
      default-options: {{temperature: 0.0, timeout: 60s}}
      list:
{judges}
    embedding-models:
      list: []
ragqa:
  concurrency: {{max-concurrent-samples: {window}}}
  providers:
    fake: {{max-in-flight: {in_flight}}}
"""


def write_samples(path: Path, n: int) -> None:
    """N samples, one JSON object per line."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            record = {
                "id": f"s{i}",
                "user_input": f"When does office {i} open, and where is it?",
                "response": f"Office {i} opens at nine. It is on floor {i % 40} of the main building.",
                "reference": f"Office {i} opens at nine on floor {i % 40}.",
                "retrieved_contexts": [
                    f"Office {i} opens at nine every weekday and closes at five.",
                    f"The main building has forty floors; office {i} is on floor {i % 40}.",
                ],
            }
            f.write(json.dumps(record) + "\n")


@contextlib.contextmanager
def judges_config(args: argparse.Namespace, folder: Path) -> Iterator[Path]:
    """Write the application.yaml of the run (starting the fake server when asked); yields its path."""
    config = folder / "application.yaml"
    if args.judge == "local":
        judges = "\n".join(f"        - {{id: local-{j}, provider: local}}" for j in range(args.judges))
        config.write_text(LOCAL_YAML.format(judges=judges, window=args.window), encoding="utf-8")
        yield config
        return
    with fake_server(latency_s=args.latency, responder="ragqa") as base_url:
        judges = "\n".join(f"        - {{id: judge-{j}, group: fake}}" for j in range(args.judges))
        text = FAKE_YAML.format(base_url=base_url, judges=judges, window=args.window, in_flight=args.max_in_flight)
        config.write_text(text, encoding="utf-8")
        yield config


def measure(args: argparse.Namespace, n: int, config: Path, folder: Path) -> dict[str, float]:
    """Run the CLI on n samples in a child process; its peak RSS (MB), wall and CPU seconds."""
    data = folder / f"data-{n}.jsonl"
    write_samples(data, n)
    out = folder / f"results-{n}.jsonl"
    cmd = [sys.executable, "-m", "ragqa", "evaluate", str(data), "--config", str(config)]
    cmd += ["--metrics", args.metrics, "--out", str(out), "--no-cache", "--no-progress", "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    stderr = proc.stderr.read() if proc.stderr is not None else ""
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"ragqa evaluate exited {code} on {n} samples:\n{stderr[-2000:]}")
    with out.open(encoding="utf-8") as f:
        records = sum(1 for _ in f) - 1
    data.unlink()
    out.unlink()
    return {
        "samples": n,
        "records": records,
        "peak_mb": usage.ru_maxrss / 1024,  # kilobytes on Linux
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--judge", choices=["local", "fake"], default="local")
    parser.add_argument("--judges", type=int, default=1, help="judges in the panel")
    parser.add_argument("--metrics", default="context_recall")
    parser.add_argument("--latency", type=float, default=0.0, help="fake server: seconds per answer")
    parser.add_argument("--max-in-flight", type=int, default=64, help="fake server: calls in flight")
    parser.add_argument("--window", type=int, default=64, help="samples in flight (max-concurrent-samples)")
    args = parser.parse_args()
    print(f"judge={args.judge} judges={args.judges} metrics={args.metrics} window={args.window}")
    print(f"{'samples':>8} {'records':>8} {'peak MB':>8} {'wall s':>8} {'CPU s':>8}")
    with tempfile.TemporaryDirectory() as tmp, judges_config(args, Path(tmp)) as config:
        for n in args.samples:
            row = measure(args, n, config, Path(tmp))
            print(
                f"{row['samples']:>8,} {row['records']:>8,} {row['peak_mb']:>8.1f} {row['wall_s']:>8.1f} "
                f"{row['cpu_s']:>8.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
