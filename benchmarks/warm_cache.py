"""A cold run against a warm re-run from the disk cache: requests made and wall time.

The fake OpenAI-compatible server (a child process, answering with
:func:`ragqa.testing.ragqa_responder` after ``--latency`` seconds, embeddings included) serves a
panel of ``--judges`` judges and one embedding model. ``ragqa evaluate`` runs twice in child
processes with the same cache directory: the cold run asks for everything, the warm run should
ask for nothing, neither a judge call nor an embedding. Each run's line shows the provider
requests made (``calls`` of the usage line: chat and embedding requests), the cache's judge-call
and embedding hits and misses, the scoring wall time of the report (``wall time`` of the usage
line) and the child process's wall time (Python start-up and imports included).

Run::

    python benchmarks/warm_cache.py                       # 200 samples x response_relevancy x 4 judges, 200 ms
    python benchmarks/warm_cache.py --metrics faithfulness,response_relevancy
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _fake_server import fake_server  # a sibling of this script: the server without importing ragqa here

ROOT = Path(__file__).resolve().parent.parent

CONFIG = """
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
      default-options: {{dimensions: 256}}
      list:
        - {{id: embed, group: fake, options: {{model: embed}}}}
ragqa:
  concurrency: {{max-concurrent-samples: {window}}}
  providers:
    fake: {{max-in-flight: {in_flight}}}
  cache:
    enabled: true
    directory: {cache}
"""


def write_samples(path: Path, n: int) -> None:
    """N samples, one JSON object per line."""
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            record = {
                "id": f"s{i}",
                "user_input": f"When does office {i} open?",
                "response": f"Office {i} opens at nine. It is on floor {i % 40}.",
                "reference": f"Office {i} opens at nine on floor {i % 40}.",
                "retrieved_contexts": [f"Office {i} opens at nine every weekday and is on floor {i % 40}."],
            }
            f.write(json.dumps(record) + "\n")


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Run one ``ragqa evaluate``; its wall time (seconds) and its output."""
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"ragqa evaluate exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return wall, proc.stdout + proc.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--metrics", default="response_relevancy")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--max-in-flight", type=int, default=64, help="calls in flight (one provider)")
    parser.add_argument("--window", type=int, default=64, help="samples in flight")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with (
        tempfile.TemporaryDirectory() as tmp,
        fake_server(latency_s=args.latency, responder="ragqa") as base_url,
    ):
        folder = Path(tmp)
        judges = "\n".join(f"        - {{id: judge-{j}, group: fake}}" for j in range(args.judges))
        config = folder / "application.yaml"
        config.write_text(
            CONFIG.format(
                base_url=base_url,
                judges=judges,
                window=args.window,
                in_flight=args.max_in_flight,
                cache=folder / "cache",
            ),
            encoding="utf-8",
        )
        data = folder / "data.jsonl"
        write_samples(data, args.samples)
        cmd = [sys.executable, "-m", "ragqa", "evaluate", str(data), "--config", str(config)]
        cmd += ["--metrics", args.metrics, "--out", str(folder / "results.jsonl"), "--no-progress"]
        print(
            f"{args.samples} samples x {args.metrics} x {args.judges} judges, {args.latency * 1000:.0f} ms latency, "
            f"{args.max_in_flight} calls in flight"
        )
        walls = {}
        for name in ("cold", "warm"):
            wall, output = run(cmd, env)
            found = re.search(r"calls ([\d,]+) ·.*?wall time ([\d.]+) s", output, re.DOTALL)
            line = " ".join(found.group(0).split()) if found else ""  # the usage line, wrapped or not
            calls = re.search(r"calls ([\d,]+)", line)
            scoring = re.search(r"wall time ([\d.]+) s", line)
            cache = re.search(r"cache: (.*?) · wall", line)
            walls[name] = (float(scoring.group(1)) if scoring else float("nan"), wall)
            print(
                f"{name}: requests {calls.group(1) if calls else '?'} · {cache.group(1) if cache else 'no cache'} · "
                f"scoring {walls[name][0]:.1f} s · process {wall:.1f} s"
            )
        (cold_run, cold_wall), (warm_run, warm_wall) = walls["cold"], walls["warm"]
        print(f"warm / cold: scoring {100 * warm_run / cold_run:.1f} %, process {100 * warm_wall / cold_wall:.1f} %")


if __name__ == "__main__":
    main()
