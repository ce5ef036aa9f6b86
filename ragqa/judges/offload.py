"""Whether CPU-bound judge work may run on the calling thread: the switch the panel sets for the local judge.

The local judge computes its answers in one worker thread (:mod:`ragqa.judges.local.worker`) so
that the event loop stays free for HTTP judges in the same panel. When every judge of a panel is
local there is nothing for the loop to serve meanwhile, and the hand-off only costs: on the README
job (60 samples, two local judges) the thread's hand-offs and GIL switches cost about a fifth of
the run's CPU. The panel evaluator therefore sets :data:`inline_work` for a run whose judges are all
local, and the local judge then computes in place. Same functions on the same inputs: the answers
(and every score) are identical either way (``tests/judges/local/test_local_judge_inline.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from ragqa.judges.base import Judge

__all__ = ["all_local", "inline_work", "run_inline"]

inline_work: ContextVar[bool] = ContextVar("ragqa_inline_work", default=False)
"""True while CPU-bound judge work should run on the calling thread (set with :func:`run_inline`)."""


def all_local(judges: Sequence[Judge]) -> bool:
    """Whether every judge is ragqa's offline local judge (its fingerprint's ``provider`` is ``local``).

    An empty panel counts as local (nothing waits on the loop). A fingerprint that is not a JSON
    object counts as not local, so an unknown judge always keeps the worker thread.
    """
    for judge in judges:
        try:
            identity = json.loads(judge.fingerprint)
        except ValueError:
            return False
        if not isinstance(identity, dict) or identity.get("provider") != "local":
            return False
    return True


@contextmanager
def run_inline(enabled: bool) -> Iterator[None]:
    """Set :data:`inline_work` to ``enabled`` for the block (tasks created inside inherit it)."""
    token = inline_work.set(enabled)
    try:
        yield
    finally:
        inline_work.reset(token)
