"""One process against ``--engine ray`` on the offline local judge (CPU-bound: where a second core must pay off).

Scores ``--samples`` samples (the IT-helpdesk dataset repeated under new ids) with faithfulness and
hallucination and the ``local`` profile: once in one process, then on a local Ray cluster
(``--cpus`` CPUs, 127.0.0.1 only) with 1 and with 2 workers. Ray's start-up is timed apart; each
Ray run's wall time includes starting its workers (importing ragqa, building the panel). Checks
that every run gives the same aggregate means.

    python benchmarks/scale_out.py --samples 2000      # needs pip install -c constraints.txt -e '.[ray]'
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import ray

from ragqa.container import close_container, create_container
from ragqa.run.engine import make_engine
from ragqa.run.loop import run_sync
from ragqa.run.plan import make_plan
from ragqa.run.ray_engine import connect
from ragqa.run.runner import Engine, Runner
from ragqa.schema import Sample

DATASET = Path(__file__).resolve().parents[1] / "examples" / "datasets" / "it_helpdesk.jsonl"
METRICS = ["faithfulness", "hallucination"]


def samples(n: int) -> list[Sample]:
    base = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Sample.model_validate({**base[i % len(base)], "id": f"s{i}"}) for i in range(n)]


def run(data: list[Sample], engine: Engine | None) -> tuple[float, list[float]]:
    container = create_container(None, ["local"])
    plan = make_plan(container.settings(), metrics=METRICS, dataset="bench", no_cache=True)
    began = time.perf_counter()
    try:
        result = run_sync(Runner(plan, container, engine=engine, keep_results=False).arun(data))
    finally:
        run_sync(close_container(container))
    return time.perf_counter() - began, [s.aggregate_mean for s in result.report.summaries]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args()
    data = samples(args.samples)
    pairs = args.samples * len(METRICS)

    wall, means = run(data, None)
    print(f"one process:     {wall:7.1f} s  {args.samples / wall:8.1f} samples/s  ({pairs} pairs)")
    started = time.perf_counter()
    connect(None, num_cpus=args.cpus)
    print(f"ray start-up:    {time.perf_counter() - started:7.1f} s  (local cluster, {args.cpus} CPUs, 127.0.0.1)")
    try:
        for workers in (1, 2):
            engine = make_engine("ray", workers=workers, batch_size=args.batch_size)
            ray_wall, ray_means = run(data, engine)
            same = "same means" if ray_means == means else f"OTHER MEANS {ray_means} vs {means}"
            print(
                f"ray, {workers} worker(s): {ray_wall:7.1f} s  {args.samples / ray_wall:8.1f} samples/s  "
                f"{ray_wall / wall:5.2f} x one process  ({same})"
            )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
