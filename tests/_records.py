"""Small runs with a test-double judge, shared by the results-file tests (not a test module)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from dependency_injector import providers

from ragqa.container import Container, create_container
from ragqa.report import MetricSummary
from ragqa.testing import FunctionJudge


def office_records(n: int = 6) -> list[dict[str, Any]]:
    """``n`` samples ``s1..sN``; each response is one sentence, ``Office <i> opens at nine.``."""
    return [
        {
            "id": f"s{i}",
            "user_input": f"When does office {i} open?",
            "response": f"Office {i} opens at nine.",
            "retrieved_contexts": [f"Office {i} opens at nine."],
        }
        for i in range(1, n + 1)
    ]


def one_judge_container(judge: FunctionJudge) -> Container:
    """A container whose panel is ``judge`` alone, with no embedder and no settings file."""
    container = create_container(None, [], environ={})
    container.judges.override(providers.Object([judge]))
    container.embedders.override(providers.Object([]))
    return container


def untimed(value: Any) -> Any:
    """A result record (or a list or dict of them) without its timing fields (``latency_s``)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "latency_s"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def exact_summaries(summaries: Sequence[MetricSummary]) -> str:
    """Summaries as text in which every float is its repr (NaN included): equal text, equal bits.

    The run's per-item reliability section (``item_jury``) is left out: :func:`~ragqa.report.summarize`
    has no thresholds to make it; ``tests/jury/test_jury_items.py`` checks the run's against the one
    rebuilt from its records.
    """
    return json.dumps([s.model_dump(exclude={"item_jury"}) for s in summaries], allow_nan=True)
