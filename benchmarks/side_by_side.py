"""ragqa (each call plan) and RAGAS side by side: same fake server, samples, latency and concurrency.

Every contender scores the same synthetic samples (a question, a three-sentence answer, a
reference and ``--contexts`` retrieved contexts each) with the six metrics faithfulness,
noise_sensitivity, context_precision, context_recall, context_entity_recall and
response_relevancy, across ``--judges`` judges, against one fake OpenAI-compatible server in a
child process (``python -m ragqa.testing.server --responder ragqa+foreign --memo``: ragqa's prompts are
answered by the local judge's rules, RAGAS's by schema-valid placeholders). Each contender runs in
a process of its own, so its CPU and peak memory are its own. The benchmark prints:

- calls per sample and judge for each metric alone (a short pass on a server without latency;
  embedding requests are counted apart) and for the six together (from the timed run);
- wall time against the ideal ``requests x latency / concurrency`` of the plan used;
- client CPU per request and peak resident memory of the contender's process, and for ragqa the
  part of that CPU the garbage collector took (``gc.callbacks``, the collecting thread's CPU);
- the fake server's CPU per request (its process CPU over the timed run, ``GET /_fake/stats``)
  and the requests it had in flight: the mean over its busy time and the share of that time with
  all ``--concurrency`` in flight (a client that keeps its slots full is near 100%).

The ideal assumes a server of zero CPU, like a real provider: the fake server shares the machine
with the client, so its CPU per request is printed beside the client's. The server answers ragqa's
prompts by running the local judge's rules; it remembers each answer by request content, the
messages and the schema asked for (``--memo``: the rules are deterministic, so an answer asked
again is the same answer), which keeps its CPU low when every judge of the panel asks the same
prompts.

ragqa's plan is chosen with the normal settings override (``RAGQA__RAGQA__CALL_PLAN=batched``,
i.e. ``ragqa.call-plan``); a ragqa without that setting runs its one plan and the benchmark says so.
RAGAS is not a dependency of ragqa: install it in an environment of its own and pass its Python::

    python -m venv .venv-ragas && .venv-ragas/bin/pip install ragas==0.4.3 langchain-openai
    python benchmarks/side_by_side.py --ragas-python .venv-ragas/bin/python

Run::

    python benchmarks/side_by_side.py                    # 200 samples, 4 judges, 200 ms, 64 in flight
    python benchmarks/side_by_side.py --samples 20 --latency 0.05 --plans ragas
    python benchmarks/side_by_side.py --plans batched --samples-in-flight 16   # a smaller sample window
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from _fake_server import fake_server  # a sibling of this script: python -m ragqa.testing.server in a child

HERE = Path(__file__).resolve().parent
METRICS = [
    "faithfulness",
    "noise_sensitivity",
    "context_precision",
    "context_recall",
    "context_entity_recall",
    "response_relevancy",
]
PLAN_ENV = "RAGQA__RAGQA__CALL_PLAN"
"""The environment override of ``ragqa.call-plan`` (see ``docs/configuration.md``)."""
CHAT, EMBED = "/v1/chat/completions", "/v1/embeddings"


def make_samples(n: int, contexts: int) -> list[dict[str, Any]]:
    """``n`` RAGAS-shaped samples with ``contexts`` retrieved contexts each (deterministic)."""
    out = []
    for i in range(n):
        year, city = 1900 + i, f"City{i}"
        ctx = [f"Event {i} happened in {year} in {city}. It drew a crowd of {100 + i} people."]
        ctx += [f"Unrelated note {i}.{k}: the river {k} floods in spring." for k in range(1, contexts)]
        out.append(
            {
                "user_input": f"What happened in year {year}?",
                "response": f"Event {i} happened in {year}. It was in {city}. Nobody saw it.",
                "reference": f"Event {i} happened in {year} in {city}. About {100 + i} people came.",
                "retrieved_contexts": ctx[:contexts],
            }
        )
    return out


def counts(base_url: str) -> dict[str, int]:
    """The fake server's requests per path so far (``GET /_fake/counts``)."""
    with urllib.request.urlopen(base_url + "/_fake/counts", timeout=10) as response:
        data: dict[str, int] = json.load(response)
    return data


def stats(base_url: str) -> dict[str, Any]:
    """The fake server's counters so far (``GET /_fake/stats``: counts, in flight over time, process CPU)."""
    with urllib.request.urlopen(base_url + "/_fake/stats", timeout=10) as response:
        data: dict[str, Any] = json.load(response)
    return data


def settings_file(
    folder: Path, base_url: str, judges: int, concurrency: int, samples_in_flight: int | None = None
) -> Path:
    """An ``application.yaml``: ``judges`` judges and one embedding model on the fake server.

    ``concurrency`` requests in flight (``max-in-flight``) and ``samples_in_flight`` samples
    (``max-concurrent-samples``; default: ``concurrency``).
    """
    lines = [
        "spring:",
        "  ai:",
        "    retry: {max-attempts: 1}",
        f"    openai: {{base-url: '{base_url}', api-key: sk-bench}}",
        "    chat-models:",
        "      default-options: {temperature: 0.0, timeout: 60s}",
        "      list:",
        *[f"        - {{id: judge-{j}}}" for j in range(judges)],
        "    embedding-models:",
        "      list:",
        "        - {id: embed, options: {dimensions: 8}}",
        "ragqa:",
        f"  concurrency: {{max-concurrent-samples: {samples_in_flight or concurrency}}}",
        f"  default-limits: {{max-in-flight: {concurrency}}}",
    ]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "application.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def own_environ(plan: str | None = None) -> dict[str, str]:
    """This process's environment without ``RAGQA__`` overrides (the benchmark's settings are its own) + the plan."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("RAGQA__")}
    if plan:
        env[PLAN_ENV] = plan
    return env


def plan_known(config: Path, plan: str) -> str | None:
    """``None`` when this ragqa accepts ``ragqa.call-plan=plan``, else why not (the ConfigError's first line)."""
    from ragqa.errors import ConfigError
    from ragqa.settings import load_settings

    try:
        load_settings(config_file=config, environ=own_environ(plan))
    except ConfigError as exc:
        return str(exc).splitlines()[0]
    return None


class CollectorCPU:
    """A :data:`gc.callbacks` entry adding up the CPU seconds of the threads that ran a collection."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started: dict[int, float] = {}

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        """Start or stop the clock of the collecting thread (its own CPU time, not wall time)."""
        thread = threading.get_ident()
        if phase == "start":
            self._started[thread] = time.thread_time()
        elif thread in self._started:
            self.seconds += time.thread_time() - self._started.pop(thread)


def ragqa_worker(job: dict[str, Any]) -> dict[str, Any]:
    """Score the job's samples with ``ragqa.evaluate`` in this process; wall, CPU and peak memory.

    First, on the job's ``count_url`` server, each metric alone on ``count_samples`` samples:
    the requests per path it made (``per_metric``). The timed server's counters are read just
    before and after the timed run (``server_before`` / ``server_after``), so the count pass may
    share that server.
    """
    import ragqa

    per_metric = {}
    for metric in job["metrics"]:
        before = counts(job["count_url"])
        ragqa.evaluate(job["samples"][: job["count_samples"]], [metric], config=job["count_config"], no_cache=True)
        after = counts(job["count_url"])
        per_metric[metric] = {path: after.get(path, 0) - before.get(path, 0) for path in after}
    collector = CollectorCPU()
    gc.callbacks.append(collector)
    server_before = stats(job["base_url"])
    cpu0, wall0 = time.process_time(), time.perf_counter()
    report = ragqa.evaluate(job["samples"], job["metrics"], config=job["config"], no_cache=True)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    server_after = stats(job["base_url"])
    gc.callbacks.remove(collector)
    outcomes = [o for r in report.results for o in r.judges]
    scored = sum(1 for o in outcomes if o.score is not None and o.score.value == o.score.value)  # not NaN
    failures = sum(1 for o in outcomes if o.failure is not None)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "gc_s": collector.seconds,
        "peak_mb": peak_mb,
        "scored": scored,
        "failures": failures,
        "per_metric": per_metric,
        "server_before": server_before,
        "server_after": server_after,
    }


def run_contender(name: str, job: dict[str, Any], python: str | None, folder: Path) -> dict[str, Any]:
    """Run one contender in a child process; its JSON result plus the timed server's request counts.

    The counters are the timed run's own when the worker read them (ragqa's worker), else the
    server's over the whole child process (its count pass then went to another server).
    """
    path = folder / f"job-{name.replace(' ', '_')}.json"
    path.write_text(json.dumps(job), encoding="utf-8")
    if python is None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(path)]
    else:
        cmd = [python, str(HERE / "_ragas_side.py"), str(path)]
    before = stats(job["base_url"])
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=own_environ(job.get("plan")))
    after = stats(job["base_url"])
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    before, after = result.pop("server_before", before), result.pop("server_after", after)
    result["chat"] = after["counts"].get(CHAT, 0) - before["counts"].get(CHAT, 0)
    result["embed"] = after["counts"].get(EMBED, 0) - before["counts"].get(EMBED, 0)
    result["server_cpu_s"] = after["cpu_s"] - before["cpu_s"]
    busy = after["busy_s"] - before["busy_s"]
    result["mean_in_flight"] = (after["request_seconds"] - before["request_seconds"]) / busy if busy > 0 else 0.0
    full = sum(
        s - before["seconds_at"].get(level, 0.0)
        for level, s in after["seconds_at"].items()
        if int(level) >= job["concurrency"]
    )
    result["full_share"] = full / busy if busy > 0 else 0.0
    return result


def server(stack: contextlib.ExitStack, latency: float, log: Path) -> str:
    """Start the fake server until ``stack`` closes (ragqa prompts by the local judge's rules, others by placeholders).

    Its stderr goes to ``log``: aiohttp logs a client that closes a kept-alive connection as an error.
    Every judge asks the same prompts, so it memoises (the local judge's rules run once per distinct prompt).
    """
    return stack.enter_context(fake_server(latency_s=latency, responder="ragqa+foreign", memo=True, log=log))


def contenders(args: argparse.Namespace, config: Path) -> list[tuple[str, str | None, str | None]]:
    """``(name, plan, python)`` per contender: ragqa per known plan, then RAGAS when given."""
    found: list[tuple[str, str | None, str | None]] = []
    for plan in args.plans:
        why = plan_known(config, plan)
        if why is None:
            found.append((f"ragqa {plan}", plan, None))
        elif not any(name == "ragqa" for name, _, _ in found):
            print(f"note: this ragqa has no `ragqa.call-plan` setting ({why}); running its one plan as 'ragqa'")
            found.append(("ragqa", None, None))
    if args.ragas_python:
        found.append(("RAGAS", None, args.ragas_python))
    return found


def gc_ms(row: dict[str, Any], requests: int) -> str:
    """The garbage collector's CPU ms per request of a contender's row, or ``-`` where it was not measured."""
    seconds = row.get("gc_s")
    return f"{seconds / requests * 1000:.2f}" if seconds is not None else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--contexts", type=int, default=4, help="retrieved contexts per sample")
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--concurrency", type=int, default=64, help="requests in flight (all judges together)")
    parser.add_argument("--samples-in-flight", type=int, help="ragqa's max-concurrent-samples (default: --concurrency)")
    parser.add_argument("--plans", nargs="+", default=["batched", "ragas"], help="values of ragqa.call-plan")
    parser.add_argument("--ragas-python", help="the Python of an environment with ragas==0.4.3 (not ragqa's)")
    parser.add_argument("--count-samples", type=int, default=2, help="samples per metric in the call-count pass")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(ragqa_worker(json.loads(Path(args.worker).read_text(encoding="utf-8")))))
        return

    samples = make_samples(args.samples, args.contexts)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as servers:
        folder = Path(tmp)
        quick_url = server(servers, 0.0, folder / "count-server.log")  # the call-count pass: no latency
        # At latency 0 the timed server would be a copy of this one: ragqa's workers read the
        # timed run's counters themselves, so they share it (RAGAS's worker does not: it gets its own).
        if args.latency == 0 and not args.ragas_python:
            timed_url = quick_url
        else:
            timed_url = server(servers, args.latency, folder / "timed-server.log")
        count_config = settings_file(folder / "count", quick_url, args.judges, args.concurrency)
        config = settings_file(folder, timed_url, args.judges, args.concurrency, args.samples_in_flight)
        runners = contenders(args, config)
        timed_rows = {}
        for name, plan, python in runners:
            job = {"samples": samples, "metrics": METRICS, "plan": plan, "judges": args.judges}
            job |= {"config": str(config), "base_url": timed_url, "concurrency": args.concurrency}
            job |= {"count_config": str(count_config), "count_url": quick_url, "count_samples": args.count_samples}
            timed_rows[name] = run_contender(name, job, python, folder)

    print(
        f"\n{args.samples} samples x {len(METRICS)} metrics x {args.judges} judges, {args.contexts} contexts, "
        f"latency {args.latency * 1000:.0f} ms, {args.concurrency} requests in flight\n"
    )
    names = [n for n, _, _ in runners]
    print("chat calls per sample and judge (embedding requests in parentheses)")
    print(f"{'metric':<24}" + "".join(f"{n:>16}" for n in names))
    per_pair = args.count_samples * args.judges
    for metric in METRICS:
        cells = []
        for n in names:
            seen = timed_rows[n]["per_metric"][metric]
            chat, embed = seen.get(CHAT, 0) / per_pair, seen.get(EMBED, 0) / per_pair
            cells.append(f"{chat:g}" + (f" ({embed:g})" if embed else ""))
        print(f"{metric:<24}" + "".join(f"{c:>16}" for c in cells))
    per = args.samples * args.judges
    print(f"{'all six (timed run)':<24}" + "".join(f"{timed_rows[n]['chat'] / per:>16.2f}" for n in names))
    print()
    header = f"{'contender':<16}{'requests':>9}{'ideal s':>9}{'wall s':>9}{'ratio':>7}{'CPU ms/req':>11}{'peak MB':>9}"
    print(header + f"{'scores':>8}{'GC ms/req':>10}{'server CPU ms/req':>18}{'in flight':>10}{'full':>6}")
    for n in names:
        r = timed_rows[n]
        requests = max(1, r["chat"] + r["embed"])
        ideal = requests * args.latency / args.concurrency
        ratio = f"{r['wall_s'] / ideal:>7.2f}" if ideal > 0 else f"{'-':>7}"
        print(
            f"{n:<16}{requests:>9}{ideal:>9.1f}{r['wall_s']:>9.1f}{ratio}"
            f"{r['cpu_s'] / requests * 1000:>11.2f}{r['peak_mb']:>9.0f}{r['scored']:>8}"
            f"{gc_ms(r, requests):>10}{r['server_cpu_s'] / requests * 1000:>18.2f}"
            f"{r['mean_in_flight']:>10.1f}{r['full_share']:>6.0%}"
        )
    print(
        "\nCPU ms/req: the contender's process CPU per request (GC ms/req: the part spent collecting garbage, "
        "ragqa only); server CPU ms/req: the fake server's; "
        f"in flight: the server's mean requests in flight while busy; full: its share of busy time with "
        f"{args.concurrency} in flight. Load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


if __name__ == "__main__":
    main()
