"""Client overhead of one judge call: calls per second and client CPU per call at zero latency.

The fake OpenAI server runs in a child process, so the CPU measured here (``time.process_time``
of this process) is the client's own: prompt rendering, the LangChain/OpenAI SDK layers, HTTP,
JSON parsing and schema validation, the limiter and the retry wrapper. With a real provider the
latency is hundreds of milliseconds, so this CPU is the ceiling on calls per second per core.

Rows:

- ``raw AsyncOpenAI``: the OpenAI SDK alone over the aiohttp client, ``response_format`` and
  ``model_validate_json`` (the floor: what any client of ``chat.completions.create`` pays).
- ``raw AsyncOpenAI.post``: the same request and validation through the SDK's ``post`` with a
  ready JSON body, which skips ``create``'s request transform as ragqa's judge does: the SDK's
  HTTP and parsing alone, the lowest a client of this SDK can go.
- ``OpenAIJudge json_schema`` / ``function_calling`` / ``prompt``: ragqa's judge, per mode
  (prompt rendering, LangChain's ``ChatOpenAI``, limiter, breaker, retry, validation, usage).
- ``OpenAIJudge json_schema, traced``: the path a judge takes when a LangChain callback listens
  (tracing on): ``ChatOpenAI.ainvoke`` with its callback machinery, as every call took before.

The rows of one concurrency level run in turns (floor, then each judge mode) for ``--rounds``
rounds, so that the floor and ragqa see the same machine; each row shows the median of its
rounds, and ``over floor`` is the row's CPU per call minus the floor's of the same level.

``--waiting`` measures the provider limiter alone under contention instead: that many requests
of 4 judges wait for 64 in-flight permits of one provider (as 64 samples in flight x 6 metrics x
4 judges do), and the CPU per permit taken and given back is printed, without HTTP.

Run::

    python benchmarks/client_overhead.py                 # 1000 calls per row and round, 3 rounds, concurrency 1, 16, 64
    python benchmarks/client_overhead.py --calls 500 --concurrency 16 --rounds 5
    python benchmarks/client_overhead.py --waiting 64 256 1536
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta

import openai
from openai.types.chat import ChatCompletion
from pydantic import SecretStr

from ragqa.judges import openai as judge_module
from ragqa.judges.openai import OpenAIJudge, openai_base_url
from ragqa.judges.ratelimit import ProviderLimiter
from ragqa.prompts.nli import NLI, NLIInput
from ragqa.settings import ChatOptions, ProviderLimits, ResolvedChatModel, RetrySettings
from ragqa.testing.server import fake_openai_server_process

DATA = NLIInput(
    context="The First AFL-NFL World Championship Game was played on January 15, 1967, in Los Angeles.",
    statements=["The first Super Bowl was held on January 15, 1967.", "It was held in Florida."],
)


TRACED = "OpenAIJudge json_schema, traced"


async def measure(call: Callable[[], Awaitable[object]], calls: int, concurrency: int) -> tuple[float, float]:
    """Run ``calls`` calls, ``concurrency`` at a time; returns (calls/s, client CPU ms per call)."""
    for _ in range(min(50, calls)):  # warm-up: connections, imports, caches
        await call()
    gc.collect()
    queue = iter(range(calls))

    async def worker() -> None:
        for _ in queue:
            await call()

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return calls / wall, cpu / calls * 1000


def judge_for(base_url: str, mode: str, concurrency: int) -> OpenAIJudge:
    model = ResolvedChatModel(
        id=f"bench-{mode}",
        model="bench",
        base_url=base_url,
        api_key=SecretStr("sk-bench"),
        options=ChatOptions(temperature=0.0, max_tokens=1000, timeout=timedelta(seconds=30), structured_output=mode),  # type: ignore[arg-type]
        retry=RetrySettings(max_attempts=1),
        limits=ProviderLimits(max_in_flight=max(concurrency, 1)),
    )
    return OpenAIJudge(model)


FORMAT = {"type": "json_schema", "json_schema": {"name": "NLIOutput", "schema": NLI.output_schema}}
FLOOR = "raw AsyncOpenAI + validate"


def raw_call(client: openai.AsyncOpenAI) -> Callable[[], Awaitable[object]]:
    """The floor: the OpenAI SDK alone, json_schema response_format, then validation."""
    fmt = FORMAT
    messages = [{"role": m.role, "content": m.content} for m in NLI.messages(DATA)]

    async def raw() -> object:
        resp = await client.chat.completions.create(
            model="bench",
            messages=messages,
            response_format=fmt,  # type: ignore[arg-type]
        )
        return NLI.output_model.model_validate_json(resp.choices[0].message.content or "")

    return raw


def raw_post_call(client: openai.AsyncOpenAI) -> Callable[[], Awaitable[object]]:
    """The SDK without ``create``'s request transform: ``post`` with a ready body, then validation."""

    messages = [{"role": m.role, "content": m.content} for m in NLI.messages(DATA)]

    async def raw() -> object:
        resp = await client.post(
            "/chat/completions",
            body={"model": "bench", "messages": messages, "response_format": FORMAT},
            options={"security": {"bearer_auth": True}},  # as create() sends it: with the API key
            cast_to=ChatCompletion,
        )
        return NLI.output_model.model_validate_json(resp.choices[0].message.content or "")

    return raw


async def run(calls: int, levels: list[int], rounds: int) -> list[tuple[str, int, float, float, float]]:
    """``(row, concurrency, calls/s, CPU ms per call, CPU ms over the floor)``, medians over the rounds."""
    rows: list[tuple[str, int, float, float, float]] = []
    modes = ("json_schema", "function_calling", "prompt")
    with fake_openai_server_process(responder="ragqa") as base_url:
        for concurrency in levels:
            client = openai.AsyncOpenAI(
                base_url=openai_base_url(base_url),
                api_key="sk-bench",
                max_retries=0,
                http_client=openai.DefaultAioHttpClient(),
            )
            judges = {mode: judge_for(base_url, mode, concurrency) for mode in modes}
            calls_of: dict[str, Callable[[], Awaitable[object]]] = {
                FLOOR: raw_call(client),
                "raw AsyncOpenAI.post + validate": raw_post_call(client),
            }
            for mode, judge in judges.items():

                async def ask(judge: OpenAIJudge = judge) -> object:
                    return await judge.ask(NLI, DATA)

                calls_of[f"OpenAIJudge {mode}"] = ask
            calls_of[TRACED] = calls_of["OpenAIJudge json_schema"]
            seen: dict[str, list[tuple[float, float]]] = {name: [] for name in calls_of}
            listening = judge_module._callbacks_configured
            for _ in range(rounds):
                for name, call in calls_of.items():
                    if name == TRACED:  # as if a LangChain callback listened: the ainvoke path
                        judge_module._callbacks_configured = lambda: True
                    try:
                        seen[name].append(await measure(call, calls, concurrency))
                    finally:
                        judge_module._callbacks_configured = listening
            floor = statistics.median(cpu for _, cpu in seen[FLOOR])
            for name, results in seen.items():
                rate = statistics.median(r for r, _ in results)
                cpu = statistics.median(c for _, c in results)
                rows.append((name, concurrency, rate, cpu, cpu - floor))
            await client.close()
            for judge in judges.values():
                await judge.aclose()
    return rows


async def limiter_cpu(waiting: int, permits: int = 64, judges: int = 4, rounds: int = 4) -> float:
    """CPU ms per slot when ``waiting`` requests of ``judges`` judges share ``permits`` permits."""
    limiter = ProviderLimiter("bench", ProviderLimits(max_in_flight=permits))
    for j in range(judges):
        limiter.register(f"judge-{j}")

    async def requests(i: int) -> None:
        for _ in range(rounds):
            async with limiter.slot(f"judge-{i % judges}", "nli"):
                await asyncio.sleep(0)  # the request: give the loop to the others

    gc.collect()
    gc.disable()  # a collection of the whole heap would dwarf a short run of the limiter alone
    try:
        cpu0 = time.process_time()
        await asyncio.gather(*(requests(i) for i in range(waiting)))
        return (time.process_time() - cpu0) / (waiting * rounds) * 1000
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000, help="calls per row and round (after 50 warm-up calls)")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    parser.add_argument("--rounds", type=int, default=3, help="turns of every row per concurrency level")
    parser.add_argument("--waiting", type=int, nargs="+", help="measure the limiter alone with this many requests")
    args = parser.parse_args()
    if args.waiting:
        print(f"{'requests waiting':>16} {'permits':>8} {'CPU ms/slot':>12}")
        for waiting in args.waiting:
            print(f"{waiting:>16} {64:>8} {asyncio.run(limiter_cpu(waiting)):>12.3f}")
        return
    rows = asyncio.run(run(args.calls, args.concurrency, args.rounds))
    print(f"{'client':<32} {'conc':>5} {'calls/s':>9} {'CPU ms/call':>12} {'over floor':>11}")
    for name, conc, rate, cpu, over in rows:
        print(f"{name:<32} {conc:>5} {rate:>9.0f} {cpu:>12.2f} {over:>+11.2f}")


if __name__ == "__main__":
    main()
