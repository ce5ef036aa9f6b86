"""Memory flat in dataset size: a bounded window of samples in flight, summaries streamed exactly.

No clock is read: the window is shown by counting scoring tasks created and samples taken from
the input while others are still unfinished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.base import Judge
from ragqa.metrics.base import Metric, MetricContext
from ragqa.schema import MetricScore, PanelResult, Sample
from ragqa.testing import FunctionJudge, make_sample


class _Probe(Metric):
    """A metric that counts its scoring tasks: created in all, and alive at once."""

    name = "probe"
    direction = "higher"
    required_fields = ("user_input",)
    description = "counts scoring tasks"
    calls_per_sample = "0"
    needs_judge = False

    def __init__(self) -> None:
        self.created = 0
        self.live = 0
        self.peak = 0

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        self.created += 1
        self.live += 1
        self.peak = max(self.peak, self.live)
        try:
            for _ in range(5):  # let every other ready task run: whatever can be in flight is
                await asyncio.sleep(0)
        finally:
            self.live -= 1
        return MetricScore(value=(int(sample.label[1:]) % 7) / 7)


def _judges(n: int) -> list[Judge]:
    return [FunctionJudge(f"j{i}", lambda prompt, data: {}) for i in range(n)]


async def test_samples_in_flight_stay_within_the_window_however_many_samples() -> None:
    probe = _Probe()
    window, n_samples, n_judges = 4, 200, 3
    evaluator = PanelEvaluator(_judges(n_judges), [probe], options=PanelOptions(max_concurrent_samples=window))
    taken = finished = 0
    most_open = 0

    def todo() -> Iterator[tuple[int, Sample, tuple[Metric, ...]]]:
        nonlocal taken, most_open
        for i in range(n_samples):
            taken += 1
            most_open = max(most_open, taken - finished)
            yield i, make_sample(id=f"s{i}"), (probe,)

    def on_rows(tag: int, rows: list[PanelResult]) -> None:
        nonlocal finished
        finished += 1
        assert [r.sample_id for r in rows] == [f"s{tag}"]

    await evaluator.score_stream(todo(), on_rows)

    assert finished == taken == n_samples
    assert probe.created == n_samples * n_judges
    assert most_open == window  # a sample is taken only when a slot is free
    assert probe.peak == window * n_judges  # the window fills, and never more scoring tasks than it holds


async def test_evaluate_keeps_dataset_order_through_the_window() -> None:
    probe = _Probe()
    evaluator = PanelEvaluator(_judges(2), [probe], options=PanelOptions(max_concurrent_samples=3))
    samples = [make_sample(id=f"s{i}") for i in range(20)]
    report = await evaluator.evaluate(samples)
    assert [r.sample_id for r in report.results] == [s.label for s in samples]
    assert probe.peak <= 3 * 2
