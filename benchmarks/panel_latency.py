"""Wall time of a panel run against the ideal: 200 samples x 3 judges of faithfulness at 200 ms latency.

Faithfulness makes 2 judge calls per sample and judge (statements, then verdicts), so the run
makes ``samples x judges x 2`` calls. The fake OpenAI server (in a child process, answering by
:func:`ragqa.testing.ragqa_responder`) waits ``latency`` before every answer. The ideal wall time
is ``calls x latency / concurrency``, where concurrency is the number of calls that can be in
flight at once: ``min(max_in_flight x providers, samples_in_flight x judges)``.

Run::

    python benchmarks/panel_latency.py                          # one provider, 16 in flight
    python benchmarks/panel_latency.py --max-in-flight 64 --samples-in-flight 64
    python benchmarks/panel_latency.py --providers separate     # one provider per judge
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import timedelta

from pydantic import SecretStr

from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.openai import aclose_all, build_openai_judges
from ragqa.judges.ratelimit import ProviderLimiters
from ragqa.metrics import Faithfulness
from ragqa.schema import Sample
from ragqa.settings import ChatOptions, ProviderLimits, ResolvedChatModel, RetrySettings
from ragqa.testing.server import fake_openai_server_process


def samples(n: int) -> list[Sample]:
    return [
        Sample(
            id=f"s{i}",
            user_input=f"What happened in year {1900 + i}?",
            response=f"Event {i} happened in {1900 + i}. It was in city {i}. Nobody saw it.",
            retrieved_contexts=[f"Event {i} happened in {1900 + i} in city {i}.", "Unrelated text."],
        )
        for i in range(n)
    ]


async def run(args: argparse.Namespace) -> None:
    judges_n = 3
    with fake_openai_server_process(latency_s=args.latency, responder="ragqa") as base_url:
        limits = ProviderLimits(max_in_flight=args.max_in_flight)
        models = [
            ResolvedChatModel(
                id=f"judge-{j}",
                model=f"judge-{j}",
                base_url=base_url,
                api_key=SecretStr("sk-bench"),
                provider_key="shared" if args.providers == "shared" else f"provider-{j}",
                options=ChatOptions(temperature=0.0, timeout=timedelta(seconds=30)),
                retry=RetrySettings(max_attempts=1),
                limits=limits,
            )
            for j in range(judges_n)
        ]
        judges = build_openai_judges(models, ProviderLimiters())
        evaluator = PanelEvaluator(
            judges, [Faithfulness()], options=PanelOptions(max_concurrent_samples=args.samples_in_flight)
        )
        data = samples(args.samples)
        await evaluator.evaluate(data[:3])  # warm-up: connections and imports
        cpu0, wall0 = time.process_time(), time.perf_counter()
        report = await evaluator.evaluate(data)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        await aclose_all(judges)

    calls = report.usage.calls
    providers = 1 if args.providers == "shared" else judges_n
    concurrency = min(args.max_in_flight * providers, args.samples_in_flight * judges_n)
    ideal = calls * args.latency / concurrency
    failed = sum(len(r.failures) for r in report.results)
    print(
        f"samples={args.samples} judges={judges_n} latency={args.latency * 1000:.0f}ms "
        f"providers={args.providers} max_in_flight={args.max_in_flight} samples_in_flight={args.samples_in_flight}"
    )
    print(f"calls={calls} failed={failed} concurrency={concurrency}")
    print(f"wall={wall:.2f}s ideal={ideal:.2f}s ratio={wall / ideal:.3f} overhead={wall - ideal:+.2f}s")
    print(f"client CPU={cpu:.2f}s ({cpu / calls * 1000:.2f} ms per call)")
    print(f"faithfulness mean={report.summary('faithfulness').aggregate_mean:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--max-in-flight", type=int, default=16, help="per provider")
    parser.add_argument("--samples-in-flight", type=int, default=16)
    parser.add_argument("--providers", choices=["shared", "separate"], default="shared")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
