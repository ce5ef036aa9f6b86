"""What makes the local judge fast keeps its answers: the splitter, the worker thread, Spearman without scipy."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pysbd
import pytest

from ragqa.agreement import _spearman
from ragqa.judges.local import LocalJudge
from ragqa.judges.local.text import _PYSBD, _plain_split, split_sentences
from ragqa.judges.local.worker import run_in_worker, worker_thread_name
from ragqa.prompts.nli import NLI, NLIInput

LINES = [
    "The tower was completed in 1889. It is 330 metres tall.",
    "Dr. Smith arrived at 5 p.m. and left. Then he called Mr. Jones.",
    "Use the U.S. portal (see Fig. 3. Then restart). Next, log in.",
    '"It would be hard to describe him that way. He does not exude charisma," Beneke said. He left.',
    "1. Open the self service application. 2. Select Google and accept the terms.",
    "Visit https://example.com/kb_view.do?sys_kb_id=123 for details. Ask the desk!",
    "Wow! Is that true? Yes it is. The e.g. case is odd. Also i.e. this one.",
    "Contact anna.schmidt@snowflake.com or call 555-1234. She answers fast.",
    "The aggregate demand curve slopes downwards. Why? Because prices rise.",
    "In the 1990s the U.K. and the E.U. signed it... Later the U.S. Army joined.",
    "Step iv. Install the driver. Step v. Reboot.",
    "Plain line without any sentence mark",
    "Two  spaces. Tab\there. Ellipsis… And more.",
]


@pytest.mark.parametrize("line", LINES)
def test_the_splitter_gives_pysbd_sentences(line: str) -> None:
    reference = pysbd.Segmenter(language="en", clean=False)
    want = tuple(s.strip() for s in (str(x) for x in reference.segment(line)) if s.strip())
    assert tuple(s.strip() for s in (str(x) for x in _PYSBD.segment(line)) if s.strip()) == want
    plain = _plain_split(line)
    assert plain is None or plain == want
    assert split_sentences(line) == want


def test_the_plain_path_takes_ordinary_prose() -> None:
    assert _plain_split("The tower was completed in 1889. It is 330 metres tall.") is None  # a number before a mark
    assert _plain_split("The tower is tall. It was built for the fair. Visitors love it.") == (
        "The tower is tall.",
        "It was built for the fair.",
        "Visitors love it.",
    )
    assert _plain_split("Dr. Smith arrived. He left.") is None  # an abbreviation: pysbd decides


async def test_handlers_compute_in_the_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    original = LocalJudge.support

    def spy(self: LocalJudge, statement: str, context: str):  # type: ignore[no-untyped-def]
        threads.append(threading.current_thread().name)
        return original(self, statement, context)

    monkeypatch.setattr(LocalJudge, "support", spy)
    judge = LocalJudge("local")
    loop_thread = threading.current_thread().name
    out = await judge.ask(NLI, NLIInput(context="Paris is in France.", statements=["Paris is in France."]))
    assert out.verdicts[0].verdict == 1
    assert threads and all(t.startswith(worker_thread_name) and t != loop_thread for t in threads)


async def test_the_event_loop_runs_while_the_worker_computes() -> None:
    started, release = threading.Event(), threading.Event()
    ticks = 0

    def blocking() -> str:
        started.set()
        release.wait(timeout=10)
        return "done"

    async def ticker() -> None:
        nonlocal ticks
        while not release.is_set():
            ticks += 1
            if ticks == 5:
                release.set()  # the loop ran five times while the worker was busy
            await asyncio.sleep(0)

    result, _ = await asyncio.gather(run_in_worker(blocking), ticker())
    assert result == "done" and started.is_set() and ticks >= 5


def test_spearman_without_scipy_matches_scipy() -> None:
    # imported here, not at collection (which every xdist worker does for every module): 1.3 CPU seconds
    from scipy.stats import spearmanr  # type: ignore[import-untyped]

    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 60):
        for _ in range(50):
            a = rng.integers(0, 4, n).astype(float)
            b = rng.random(n)
            if np.ptp(a) == 0:
                continue
            assert _spearman(a, b) == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
