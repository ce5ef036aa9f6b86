"""Fair slots queue waiters per holder: the same grants, in the same order, as one sorted queue.

:class:`~ragqa.judges.ratelimit.FairSlots` used to keep one queue of every waiter and sort it
on every release (about 0.4 ms of CPU per request with 1,500 requests waiting for 64 permits).
It now keeps one queue per holder and looks at each holder's first waiter. Random scripts of
acquires, releases and cancellations run against it and against the one-queue version
(:class:`OneQueueSlots`, the code it replaced) must grant the same waiters in the same order and
leave the same permits held. The cost is checked by counting, not timing: serving a waiter looks
at each holder's first waiter only, whatever the number of waiters.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from typing import Any

import pytest

from ragqa.judges.ratelimit import FairSlots


class OneQueueSlots:
    """The previous ``FairSlots``: every waiter in one deque, sorted by permits held on each wake.

    A deliberate independent copy (the oracle), not a subclass or a call into ``FairSlots``: its
    admission rule (``_may_take``, ``_grant``) matches the production code line for line on purpose.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held: dict[str, int] = {}
        self._members: set[str] = set()
        self._waiters: deque[tuple[str, asyncio.Future[None]]] = deque()
        self._in_use = 0

    def register(self, name: str) -> None:
        self._members.add(name)

    @property
    def free(self) -> int:
        return self.capacity - self._in_use

    def _may_take(self, name: str) -> bool:
        if self.free <= 0:
            return False
        if self.held.get(name, 0) == 0:
            return True
        reserved = sum(1 for m in self._members if m != name and self.held.get(m, 0) == 0)
        return self.free > reserved

    def _grant(self, name: str) -> None:
        self._in_use += 1
        self.held[name] = self.held.get(name, 0) + 1

    def _wake(self) -> None:
        if any(f.done() for _, f in self._waiters):
            self._waiters = deque((n, f) for n, f in self._waiters if not f.done())
        while self._waiters and self.free > 0:
            order = sorted(range(len(self._waiters)), key=lambda i: self.held.get(self._waiters[i][0], 0))
            for i in order:
                name, future = self._waiters[i]
                if self._may_take(name):
                    del self._waiters[i]
                    self._grant(name)
                    future.set_result(None)
                    break
            else:
                return

    async def acquire(self, name: str) -> None:
        self._waiters = deque((n, f) for n, f in self._waiters if not f.done())
        if not self._waiters and self._may_take(name):
            self._grant(name)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((name, future))
        self._wake()
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self.release(name)
            else:
                self._waiters = deque((n, f) for n, f in self._waiters if f is not future)
            raise

    def release(self, name: str) -> None:
        self._in_use -= 1
        left = self.held.get(name, 0) - 1
        if left > 0:
            self.held[name] = left
        else:
            self.held.pop(name, None)
        self._wake()


async def play(slots: Any, seed: int, steps: int = 80) -> list[Any]:
    """Run one random script against ``slots``; returns the log of grants and held permits."""
    rng = random.Random(seed)
    for name in ("a", "b", "c"):
        slots.register(name)
    names = ["a", "a", "a", "b", "b", "c", "x"]  # "x" is not registered; "a" asks most
    log: list[Any] = []
    holding: dict[int, asyncio.Event] = {}
    waiting: dict[int, asyncio.Task[None]] = {}

    async def one(i: int, name: str) -> None:
        await slots.acquire(name)
        waiting.pop(i, None)
        log.append(("granted", i, name))
        done = holding[i] = asyncio.Event()
        try:
            await done.wait()
        finally:
            del holding[i]
            slots.release(name)

    tasks = []
    for step in range(steps):
        action = rng.random()
        if action < 0.5:
            name = rng.choice(names)
            task = asyncio.ensure_future(one(step, name))
            waiting[step] = task
            tasks.append(task)
        elif action < 0.85 and holding:
            holding[rng.choice(sorted(holding))].set()
        elif waiting:
            waiting.pop(rng.choice(sorted(waiting))).cancel()
        for _ in range(3):
            await asyncio.sleep(0)
        log.append(("held", sorted(slots.held.items())))
    for event in list(holding.values()):
        event.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    log.append(("end", sorted(slots.held.items()), slots.free))
    return log


@pytest.mark.parametrize("capacity", [1, 2, 3, 5])
async def test_per_holder_queues_grant_as_the_one_sorted_queue(capacity: int) -> None:
    for seed in range(40):
        new = await play(FairSlots(capacity), seed)
        old = await play(OneQueueSlots(capacity), seed)
        assert new == old, f"seed {seed}"
        assert new[-1] == ("end", [], capacity)  # every permit came back


class CountingFuture(asyncio.Future[None]):
    """A future that counts how often the slots look at it (``done()``)."""

    looks = 0

    def done(self) -> bool:
        CountingFuture.looks += 1
        return super().done()


async def test_serving_a_waiter_looks_at_each_holders_first_waiter_only(monkeypatch: pytest.MonkeyPatch) -> None:
    loop = asyncio.get_running_loop()
    monkeypatch.setattr(loop, "create_future", lambda: CountingFuture(loop=loop))
    slots = FairSlots(2)
    for name in ("a", "b"):
        slots.register(name)
    await slots.acquire("a")
    await slots.acquire("b")
    waiters = [asyncio.ensure_future(slots.acquire(n)) for n in ["a", "b"] * 500]
    await asyncio.sleep(0)
    assert slots.waiting == 1000
    CountingFuture.looks = 0
    slots.release("a")  # serves the first waiter of "a"
    await asyncio.sleep(0)
    assert CountingFuture.looks <= 8  # not 1,000
    assert slots.held == {"a": 1, "b": 1} and waiters[0].done() and not waiters[1].done()
    for task in waiters:
        task.cancel()
    await asyncio.gather(*waiters, return_exceptions=True)


async def test_a_holders_waiters_are_served_earliest_sample_first() -> None:
    """request_priority (the sample's admission number) orders one holder's waiters; arrival breaks ties."""
    from ragqa.judges.ratelimit import request_priority

    slots = FairSlots(1)
    slots.register("a")
    await slots.acquire("a")
    granted: list[str] = []

    async def waiter(label: str, rank: int) -> None:
        request_priority.set(rank)
        await slots.acquire("a")
        granted.append(label)

    tasks = [asyncio.ensure_future(waiter(label, rank)) for label, rank in [("late", 7), ("early", 1), ("tie", 1)]]
    await asyncio.sleep(0)
    for _ in tasks:
        slots.release("a")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    assert granted == ["early", "tie", "late"]


async def test_the_evaluator_ranks_each_samples_requests_by_admission() -> None:
    """score_stream sets request_priority per sample task, in the order samples enter the window."""
    from ragqa.evaluation import PanelEvaluator
    from ragqa.judges.local import LocalJudge
    from ragqa.judges.ratelimit import request_priority
    from ragqa.metrics import Faithfulness
    from ragqa.testing import FunctionJudge, make_sample

    seen: dict[str, int] = {}
    local = LocalJudge("local")

    def answer(prompt: Any, data: Any) -> Any:
        if prompt.name == "statements":
            seen[data.answer] = request_priority.get()
        return local.ask(prompt, data)

    samples = [make_sample(id=f"s{i}", response=f"answer {i}") for i in range(5)]
    plain = await PanelEvaluator([LocalJudge("local")], [Faithfulness()]).evaluate(samples)
    report = await PanelEvaluator([FunctionJudge("j", answer)], [Faithfulness()]).evaluate(samples)
    assert [r.aggregate.value for r in report.results] == [r.aggregate.value for r in plain.results]
    assert [seen[f"answer {i}"] for i in range(5)] == [0, 1, 2, 3, 4]
