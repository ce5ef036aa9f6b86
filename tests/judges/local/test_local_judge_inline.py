"""A panel of local judges computes in place instead of in the worker thread: same answers, less CPU.

The worker thread keeps the event loop free for HTTP judges; with only local judges nothing else
needs the loop, so the evaluator sets ``inline_work`` (``ragqa.judges.offload``). The answers
must be those of the worker thread, to the last bit, details and reasons included.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from ragqa.datasets import load_dataset
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalJudge
from ragqa.judges.local import worker as worker_module
from ragqa.judges.offload import all_local, inline_work, run_inline
from ragqa.metrics import ContextEntityRecall, ContextPrecision, Faithfulness, NoiseSensitivity
from ragqa.testing import ScriptedJudge

ROOT = Path(__file__).resolve().parents[3]


def _outcomes(report: Any) -> list[str]:
    return sorted(
        f"{r.sample_id}|{r.metric}|{o.judge_id}|{o.score.value!r}|{o.score.reason}|"
        f"{json.dumps(o.score.details, sort_keys=True)}"
        for r in report.results
        for o in r.judges
        if o.score is not None
    )


@pytest.mark.slow
async def test_inline_and_worker_thread_give_identical_answers(monkeypatch: Any) -> None:
    samples = load_dataset(ROOT / "examples" / "datasets" / "it_helpdesk.jsonl")[:12]
    metrics = [Faithfulness(), NoiseSensitivity(), ContextPrecision(), ContextEntityRecall()]
    judges = [LocalJudge("strict"), LocalJudge("lenient")]
    threads: set[str] = set()
    original = worker_module.run_in_worker

    async def spy(fn: Any, *args: Any, **kwargs: Any) -> Any:
        def record(*a: Any, **k: Any) -> Any:
            threads.add(threading.current_thread().name)
            return fn(*a, **k)

        return await original(record, *args, **kwargs)

    monkeypatch.setattr("ragqa.judges.local.judge.run_in_worker", spy)
    inline = await PanelEvaluator(judges, metrics).evaluate(samples)
    assert threads == {threading.current_thread().name}  # all local: computed in place
    threads.clear()
    monkeypatch.setattr("ragqa.evaluation.evaluator.all_local", lambda judges: False)  # as with an HTTP judge beside
    threaded = await PanelEvaluator(judges, metrics).evaluate(samples)
    assert threads and all(name.startswith(worker_module.worker_thread_name) for name in threads)
    assert _outcomes(inline) == _outcomes(threaded)
    assert len(_outcomes(inline)) == 12 * 4 * 2


def test_all_local_reads_the_fingerprints() -> None:
    assert all_local([LocalJudge("a"), LocalJudge("b")])
    assert all_local([])
    assert not all_local([LocalJudge("a"), ScriptedJudge("s", {})])
    assert inline_work.get() is False
    with run_inline(True):
        assert inline_work.get() is True
    assert inline_work.get() is False
