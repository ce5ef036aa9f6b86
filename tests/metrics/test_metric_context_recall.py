"""Context recall through a judge: one attribution call, share attributed, NaN when nothing classified."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ragqa.errors import SampleError
from ragqa.metrics import ContextRecall
from ragqa.metrics.base import MetricContext
from ragqa.testing import ScriptedJudge, make_sample


def _classified(*attributed: int) -> dict[str, Any]:
    return {
        "classifications": [
            {"statement": f"sentence {i}", "reason": "scripted", "attributed": a} for i, a in enumerate(attributed)
        ]
    }


async def test_context_recall_share_of_attributed_sentences() -> None:
    judge = ScriptedJudge("j1", {"attribution": [_classified(1, 1, 0)]})
    sample = make_sample(retrieved_contexts=["first", "second"])
    result = await ContextRecall().score(sample, judge, MetricContext())
    assert result.value == pytest.approx(2 / 3)
    assert result.details["attributed"] == [1.0, 1.0, 0.0]
    assert "not found: sentence 2" in (result.reason or "")
    call = judge.calls[0]
    assert call.prompt == "attribution"
    assert call.data["context"] == "first\nsecond"  # RAGAS joins contexts with newlines
    assert call.data["answer"] == sample.reference
    assert len(judge.calls) == 1


async def test_context_recall_no_classification_is_nan() -> None:
    judge = ScriptedJudge("j1", {"attribution": [{"classifications": []}]})
    result = await ContextRecall().score(make_sample(), judge, MetricContext())
    assert math.isnan(result.value)
    assert "no classification" in (result.reason or "")


def test_context_recall_requires_reference() -> None:
    with pytest.raises(SampleError, match="reference"):
        ContextRecall().validate(make_sample(reference=None))
