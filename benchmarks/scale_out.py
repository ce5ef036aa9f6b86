"""One process, ``--engine ray`` with 1 and 2 workers, and 2 shards side by side: the same run four ways.

Two cases (``--case``):

- ``local``: the IT-helpdesk dataset repeated under new ids, faithfulness and hallucination with the
  offline ``local`` profile. CPU-bound: the case where a second core must pay off.
- ``server``: generated samples, faithfulness with two judges on the fake OpenAI-compatible server
  (``--latency`` per answer), one provider at ``--rps`` and ``--max-in-flight``. Bound by the
  provider's limits: workers must share them, not multiply them.

Ray's start-up (a local cluster of ``--cpus`` CPUs on 127.0.0.1, no dashboard) is timed apart;
each Ray run's wall time includes starting its workers (importing ragqa, building the panel). The
shards are two ``ragqa evaluate --shard K/2`` processes started together (their wall includes
Python's start-up and imports), then ``ragqa merge``. Every way must give the same aggregate means.
Prints wall time, samples/s, requests/s (server case), the server's peak in flight and busiest
one-second window, and the cluster limiter's peak against the configured limits. Under each
in-process way, the CPU seconds it took (``_cpu.py``: this process and every process it started,
sampled from ``/proc``, Linux only): the driver's, the Ray workers' and Ray's own processes'
(raylet, GCS, agents), with the total against one process's. On a shared machine the CPU ratio is
the steadier number; the wall ratio needs free cores.

    python benchmarks/scale_out.py --samples 2000                # needs pip install -c constraints.txt -e '.[ray]'
    python benchmarks/scale_out.py --case server --samples 200 --latency 0.2 --rps 100 --max-in-flight 32
    python benchmarks/scale_out.py --samples 20000 --no-shards --workers 2   # the issue's target run
    python benchmarks/scale_out.py --samples 20000 --no-shards --workers 2 --results-file   # as ragqa evaluate --out
    python benchmarks/scale_out.py --samples 20000 --no-shards --workers 2 --rounds 5   # alternating, medians

``--results-file`` streams every in-process way's results to a ``.jsonl`` file, as ``ragqa evaluate
--out`` does (the driver then also writes each result's line). ``--profile DIR`` writes cProfile
files of the driver and of every Ray worker to ``DIR`` and prints each worker's CPU by phase
(``_ray_profile.py``; the profiles slow the run, so its times are not the benchmark's).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _ray_profile
import ray
from _cpu import TreeCPU
from ray_limits import YAML, most_in_one_second, office_samples

from ragqa.container import close_container, create_container
from ragqa.run.loop import run_sync
from ragqa.run.plan import make_plan, plan_output
from ragqa.run.ray_engine import RayEngine, connect
from ragqa.run.runner import Runner
from ragqa.schema import Sample
from ragqa.testing import FakeOpenAIServer, fake_openai_server, ragqa_responder

DATASET = Path(__file__).resolve().parents[1] / "examples" / "datasets" / "it_helpdesk.jsonl"
LOCAL_METRICS = ["faithfulness", "hallucination"]


def local_samples(n: int) -> list[Sample]:
    base = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Sample.model_validate({**base[i % len(base)], "id": f"s{i}"}) for i in range(n)]


class Case:
    """What one case scores and how: the samples, the settings, and the commands of its shards."""

    def __init__(self, args: argparse.Namespace, tmp: Path, server: FakeOpenAIServer | None) -> None:
        self.server = server
        self.results = tmp / "results.jsonl" if args.results_file else None
        self.samples = local_samples(args.samples) if server is None else office_samples(args.samples)
        self.data = tmp / "data.jsonl"
        self.data.write_text("".join(s.model_dump_json(exclude_none=True) + "\n" for s in self.samples))
        if server is None:
            self.config: Path | None = None
            self.profiles = ["local"]
            self.metrics = LOCAL_METRICS
        else:
            self.config = tmp / "application.yaml"
            self.config.write_text(YAML.format(url=server.base_url, rps=args.rps, cap=args.max_in_flight))
            self.profiles = []
            self.metrics = ["faithfulness"]

    def run(self, engine: RayEngine | None) -> tuple[float, list[float], dict[str, float]]:
        container = create_container(self.config, self.profiles)
        outputs = [plan_output(self.results)] if self.results is not None else []
        plan = make_plan(container.settings(), metrics=self.metrics, dataset="bench", no_cache=True, outputs=outputs)
        cpu = TreeCPU()
        cpu.start()
        began = time.perf_counter()
        try:
            result = run_sync(Runner(plan, container, engine=engine, keep_results=False).arun(self.samples))
        finally:
            run_sync(close_container(container))
        wall = time.perf_counter() - began
        return wall, [s.aggregate_mean for s in result.report.summaries], cpu.stop()

    def shards(self, tmp: Path) -> tuple[float, list[float]]:
        base = [sys.executable, "-m", "ragqa", "evaluate", str(self.data), "--metrics", ",".join(self.metrics)]
        base += ["--no-cache", "--no-progress", "--quiet"]
        base += ["--config", str(self.config)] if self.config else ["--profile", ",".join(self.profiles)]
        parts = [tmp / f"part-{k}.jsonl" for k in (1, 2)]
        began = time.perf_counter()
        jobs = [
            subprocess.Popen(
                [*base, "--shard", f"{k}/2", "--out", str(parts[k - 1])],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for k in (1, 2)
        ]
        codes = [job.wait() for job in jobs]
        merged = tmp / "merged.jsonl"
        merge = [sys.executable, "-m", "ragqa", "merge", *map(str, parts), "--out", str(merged)]
        subprocess.run(merge, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - began
        assert all(code in (0, 1) for code in codes), codes  # 1: a threshold failed, the run is whole
        rows = [json.loads(x) for x in merged.read_text(encoding="utf-8").splitlines()[1:]]
        values = {
            m: [r["aggregate"]["value"] for r in rows if r["metric"] == m and r.get("aggregate")] for m in self.metrics
        }
        means = [statistics.fmean(v for v in values[m] if v is not None and not math.isnan(v)) for m in self.metrics]
        return wall, means


def line(name: str, wall: float, case: Case, base: float | None, requests: int | None, same: str) -> None:
    rate = f"  {requests / wall:7.1f} requests/s" if requests is not None else ""
    times = f"  {wall / base:5.2f} x one process" if base else ""
    print(f"{name:<18} {wall:7.1f} s  {len(case.samples) / wall:8.1f} samples/s{rate}{times}  {same}")


def cpu_line(cpu: dict[str, float], base: dict[str, float] | None) -> None:
    times = f"  {cpu['total'] / base['total']:5.2f} x one process" if base else ""
    print(
        f"{'':<18} CPU {cpu['total']:6.1f} s{times}: driver {cpu['driver']:.1f} s, "
        f"workers {cpu['workers']:.1f} s, Ray's own processes {cpu['ray']:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=["local", "server"], default="local")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--rps", type=float, default=100.0)
    parser.add_argument("--max-in-flight", type=int, default=32)
    parser.add_argument("--no-shards", action="store_true", help="skip the two shards")
    parser.add_argument("--results-file", action="store_true", help="stream the results to a .jsonl file (--out)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="the Ray runs' worker counts")
    parser.add_argument("--profile", type=Path, help="write profiles of the driver and the workers to this folder")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="local case: alternate one process (each in a fresh child, cold caches) and the Ray runs this "
        "many times; prints each round's wall ratio and the medians",
    )
    parser.add_argument("--one-process-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_process_child:
        _one_process_child(args)
        return
    if args.rounds > 1:
        if args.case != "local" or args.profile is not None or not args.no_shards:
            parser.error("--rounds takes the local case with --no-shards and no --profile")
        _rounds(args)
        return
    if args.profile is not None:
        _ray_profile.install(args.profile)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as folder, fake_openai_server(latency_s=args.latency) as server:
        for judge in ("judge-a", "judge-b"):
            server.script(judge, ragqa_responder())
        tmp = Path(folder)
        case = Case(args, tmp, server if args.case == "server" else None)

        def counted() -> int | None:
            return len(server.requests) if args.case == "server" else None

        levels = [dict(server.stats["seconds_at"])]  # time at each in-flight level, before each way

        def limits() -> str:
            if args.case != "server":
                return ""
            seen = [r.t for r in server.requests]
            server.clear_requests()
            now, before = dict(server.stats["seconds_at"]), levels[0]
            levels[0] = now
            peak = max((int(level) for level, s in now.items() if s > before.get(level, 0.0)), default=0)
            return (
                f"  server: peak in flight {peak} (max-in-flight {args.max_in_flight}), "
                f"busiest 1 s {most_in_one_second(seen)} (rps {args.rps:g})"
            )

        wall, means, cpu = case.run(None)
        if args.profile is not None:
            _ray_profile.dump_driver(args.profile, "one-process")
        line("one process", wall, case, None, counted(), limits())
        cpu_line(cpu, None)
        if not args.no_shards:
            shard_wall, shard_means = case.shards(tmp)
            same = "same means" if _close(shard_means, means) else f"OTHER MEANS {shard_means} vs {means}"
            line("2 shards", shard_wall, case, wall, counted(), same + limits())
        started = time.perf_counter()
        connect(None, num_cpus=args.cpus)
        print(
            f"ray start-up       {time.perf_counter() - started:7.1f} s  (local cluster, {args.cpus} CPUs, 127.0.0.1)"
        )
        try:
            for workers in args.workers:
                engine = RayEngine(workers=workers, batch_size=args.batch_size)
                ray_wall, ray_means, ray_cpu = case.run(engine)
                if args.profile is not None:
                    _ray_profile.dump_driver(args.profile, f"ray-{workers}")
                same = "same means" if ray_means == means else f"OTHER MEANS {ray_means} vs {means}"
                line(f"ray, {workers} worker(s)", ray_wall, case, wall, counted(), same + limits() + _peaks(engine))
                cpu_line(ray_cpu, cpu)
        finally:
            ray.shutdown()
        if args.profile is not None:
            _print_phases(_ray_profile.worker_phases(args.profile))


def _one_process_child(args: argparse.Namespace) -> None:
    """One round's one-process run, in this fresh process: its wall, means and CPU as one JSON line."""
    with tempfile.TemporaryDirectory() as folder:
        wall, means, cpu = Case(args, Path(folder), None).run(None)
    print(json.dumps({"wall": wall, "means": means, "cpu": cpu}))


def _rounds(args: argparse.Namespace) -> None:
    """``--rounds N``: one process and each Ray run, alternating, N times; each round's ratio and the medians.

    Every one-process run is a fresh child (``--one-process-child``) so that each starts with cold
    caches, as every Ray worker does (in one driver process a second run would reuse the local
    judge's caches of the first). The child times its run as the in-process way does (from the
    runner's start, without Python's start-up), and the Ray runs' wall includes starting their
    workers. Each round starts the cluster after its one-process run and stops it after its Ray runs,
    so no Ray process runs beside the one-process run (start-up is not timed, as in one round).
    """
    child = [sys.executable, str(Path(__file__).resolve()), "--one-process-child", "--samples", str(args.samples)]
    if args.results_file:
        child.append("--results-file")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}, {os.cpu_count()} CPUs")
    walls: dict[str, list[float]] = {"one process": [], **{f"ray, {w} worker(s)": [] for w in args.workers}}
    with tempfile.TemporaryDirectory() as folder:
        case = Case(args, Path(folder), None)
        for round_ in range(1, args.rounds + 1):
            done = subprocess.run(child, check=True, capture_output=True, text=True)
            one = json.loads(done.stdout.strip().splitlines()[-1])
            walls["one process"].append(one["wall"])
            cells = [f"one process {one['wall']:.1f} s"]
            connect(None, num_cpus=args.cpus)  # after the one-process run: Ray's daemons are not running then
            try:
                for workers in args.workers:
                    wall, means, _ = case.run(RayEngine(workers=workers, batch_size=args.batch_size))
                    same = "" if means == one["means"] else f" OTHER MEANS {means} vs {one['means']}"
                    walls[f"ray, {workers} worker(s)"].append(wall)
                    cells.append(f"ray {workers} worker(s) {wall:.1f} s = {wall / one['wall']:.2f} x{same}")
            finally:
                ray.shutdown()
            print(f"round {round_}: " + ", ".join(cells) + f"  (load {os.getloadavg()[0]:.2f})", flush=True)
    base = walls.pop("one process")
    print(f"median of {args.rounds} rounds: one process {statistics.median(base):.1f} s", end="")
    for name, values in walls.items():
        ratios = [w / b for w, b in zip(values, base, strict=True)]
        print(f", {name} {statistics.median(values):.1f} s = median ratio {statistics.median(ratios):.2f} x", end="")
    print()


def _print_phases(workers: list[dict[str, Any]]) -> None:
    """Each worker's CPU seconds by phase, as :mod:`_ray_profile` wrote them (the last Ray run's last)."""
    for phases in workers:
        batches = sorted(phases["batches"])
        print(
            f"worker CPU: {phases['before_init']:.2f} s before its constructor (process start, imports), "
            f"build {phases['build']:.2f} s, {len(batches)} batches {sum(batches):.2f} s (first "
            f"{phases['batches'][0]:.2f} s, median {batches[len(batches) // 2]:.3f} s)"
        )


def _close(got: list[float], want: list[float]) -> bool:
    return all(abs(g - w) < 1e-9 for g, w in zip(got, want, strict=True))


def _peaks(engine: RayEngine) -> str:
    return "".join(
        f"  limiter: peak in flight {s['peak_in_flight']:.0f}/{s['max_in_flight']:.0f}, "
        f"{s['round_trips'] / max(1, s['permits']):.2f} round trips per permit"
        for s in engine.limits_stats.values()
    )


if __name__ == "__main__":
    main()
