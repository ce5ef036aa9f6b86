"""The cluster-wide provider limiter of ``--engine ray``: what it holds and what it costs per call.

Starts a local Ray cluster on 127.0.0.1 (``--cpus``, no dashboard), a fake OpenAI-compatible server
(``--latency`` per answer) and scores ``--samples`` samples with faithfulness and two judges of one
provider limited to ``--rps`` requests/s and ``--max-in-flight`` calls, on ``--workers`` workers.
Prints what the server counted (requests, peak in flight, most requests in any 1 s window), what the
limiter actor counted (permits, tokens, round trips) and the round trips per call; then the time of
one actor round trip, from ``--pings`` sequential calls to the actor from the driver.

    python benchmarks/ray_limits.py                 # needs pip install -c constraints.txt -e '.[ray]'
"""

from __future__ import annotations

import argparse
import bisect
import os
import tempfile
import time
from pathlib import Path

import ray

from ragqa.container import close_container, create_container
from ragqa.run.loop import run_sync
from ragqa.run.plan import make_plan
from ragqa.run.ray_engine import RayEngine, connect
from ragqa.run.ray_limits import start_limits
from ragqa.run.runner import Runner
from ragqa.schema import Sample
from ragqa.testing import fake_openai_server, ragqa_responder

YAML = """
spring:
  ai:
    retry: {{max-attempts: 1}}
    openai: {{base-url: "{url}", api-key: sk-bench}}
    chat-models:
      default-options: {{temperature: 0.0, timeout: 10m}}
      list: [{{id: judge-a}}, {{id: judge-b}}]
    embedding-models: {{list: []}}
ragqa:
  metrics: [faithfulness]
  default-limits: {{rps: {rps}, max-in-flight: {cap}}}
"""


def office_samples(n: int) -> list[Sample]:
    """``n`` small valid samples for faithfulness, ids ``s0``, ``s1``, ..."""
    return [
        Sample(
            id=f"s{i}",
            user_input=f"When does office {i} open?",
            response=f"The office opens at nine. Office {i} has a kitchen.",
            retrieved_contexts=[f"The office opens at nine. Office {i} has a kitchen and a garden."],
        )
        for i in range(n)
    ]


def most_in_one_second(times: list[float]) -> int:
    times = sorted(times)
    return max((bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times)), default=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--rps", type=float, default=20.0)
    parser.add_argument("--max-in-flight", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.8)
    parser.add_argument("--pings", type=int, default=300)
    args = parser.parse_args()

    started = time.perf_counter()
    connect(None, num_cpus=args.cpus)
    print(f"ray start-up: {time.perf_counter() - started:.1f} s (local cluster, {args.cpus} CPUs, 127.0.0.1)")
    try:
        with fake_openai_server(latency_s=args.latency) as server, tempfile.TemporaryDirectory() as tmp:
            for judge in ("judge-a", "judge-b"):
                server.script(judge, ragqa_responder())
            config = Path(tmp) / "application.yaml"
            config.write_text(YAML.format(url=server.base_url, rps=args.rps, cap=args.max_in_flight))
            container = create_container(config, environ=dict(os.environ))
            plan = make_plan(container.settings(), metrics=["faithfulness"], dataset="bench")
            samples = office_samples(args.samples)
            engine = RayEngine(workers=args.workers, batch_size=max(1, args.samples // (2 * args.workers)))
            began = time.perf_counter()
            try:
                run_sync(Runner(plan, container, engine=engine).arun(samples))
            finally:
                run_sync(close_container(container))
            wall = time.perf_counter() - began
            calls = server.requests
            print(f"run: {len(calls)} requests in {wall:.1f} s (workers started inside), {args.workers} workers")
            print(
                f"server counted: peak in flight {server.stats['peak_in_flight']} (limit {args.max_in_flight}), "
                f"most requests in any 1 s window {most_in_one_second([r.t for r in calls])} (rps {args.rps:g})"
            )
            for key, stats in engine.limits_stats.items():
                trips = stats["round_trips"]
                print(
                    f"limiter actor, provider {key}: permits {stats['permits']:.0f}, tokens {stats['tokens']:.0f}, "
                    f"peak in flight {stats['peak_in_flight']:.0f}, round trips {trips:.0f} "
                    f"= {trips / max(1, len(calls)):.2f} per call"
                )
            breakers = engine.breaker_stats
            print(
                f"shared circuit breakers: {breakers['calls']:.0f} actor calls for {len(calls)} requests "
                f"({breakers['opened']:.0f} openings, {breakers['probes']:.0f} probes); the lease replies carry "
                "their news, so none while every breaker stays closed"
            )
        limits = start_limits("ragqa-limits-ping")
        ray.get(limits.take.remote("ping", None, 1, 1))
        began = time.perf_counter()
        for _ in range(args.pings):
            ray.get(limits.take.remote("ping", None, 1, 1))
        each = (time.perf_counter() - began) / args.pings
        print(f"one actor round trip: {each * 1000:.2f} ms (mean of {args.pings}, sequential, from the driver)")
        ray.kill(limits)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
