"""The heap alive when a run starts is frozen for the run (full collections skip it) and given back after;
young collections are rarer during the run, and the collector's thresholds are put back after.

Scores never depend on the collector; these tests pin the freezing itself: frozen while the
stream scores, unfrozen after (also after a failure), re-entrant across overlapping runs, and a
heap frozen by someone else is left as found.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from ragqa._heap import YOUNG_THRESHOLD, frozen_heap
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalJudge
from ragqa.metrics import Faithfulness
from ragqa.prompts.base import Prompt
from ragqa.testing.judges import FunctionJudge, make_sample


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_frozen_inside_unfrozen_after_also_on_error() -> None:
    assert gc.get_freeze_count() == 0
    before = gc.get_threshold()
    with frozen_heap():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (max(before[0], YOUNG_THRESHOLD), before[1], before[2])
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_overlapping_runs_unfreeze_when_the_last_ends() -> None:
    outer, inner = frozen_heap(), frozen_heap()
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)  # the first run ends while the second still runs
    assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] >= YOUNG_THRESHOLD
    inner.__exit__(None, None, None)
    assert gc.get_freeze_count() == 0 and gc.get_threshold()[0] < YOUNG_THRESHOLD


def test_a_heap_frozen_before_is_left_frozen() -> None:
    gc.freeze()
    before = gc.get_freeze_count()
    with frozen_heap():
        pass
    assert gc.get_freeze_count() >= before > 0


async def _frozen_local(prompt: Prompt[Any, Any], data: Any) -> BaseModel:
    """The local judge's answer, asked only while the heap is frozen."""
    assert gc.get_freeze_count() > 0, "the judge was asked while the heap was not frozen"
    return await LocalJudge("local").ask(prompt, data)


def test_the_evaluator_scores_with_the_heap_frozen_and_thaws_it_after() -> None:
    sample = make_sample()
    plain = asyncio.run(PanelEvaluator([LocalJudge("j")], [Faithfulness()]).evaluate([sample]))
    frozen = asyncio.run(PanelEvaluator([FunctionJudge("j", _frozen_local)], [Faithfulness()]).evaluate([sample]))
    assert gc.get_freeze_count() == 0
    [score] = [o.score for o in frozen.results[0].judges]
    assert score is not None and score == plain.results[0].judges[0].score
