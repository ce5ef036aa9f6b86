"""A results file's metric keys read back as the metrics that wrote them (the report's reliability sections)."""

from __future__ import annotations

import pytest

from ragqa.run.replay import _metric_of
from ragqa.run.spec import MetricSpec


@pytest.mark.parametrize(
    "spec",
    [
        "faithfulness",
        "noise_sensitivity(mode=irrelevant, counting=promptfoo)",
        "semantic_similarity(threshold=0.5)",
        "aspect_critic(name=harmfulness, strictness=3)",  # an int option
        "tool_call_accuracy(strict_order=false)",  # a bool option
    ],
)
def test_a_written_key_reads_back_as_its_metric(spec: str) -> None:
    key = MetricSpec.parse(spec).build().key
    metric = _metric_of(key)
    assert metric is not None
    assert metric.key == key


@pytest.mark.parametrize("key", ["nonsense", "faithfulness(", "faithfulness(no_such_option=1)"])
def test_a_key_of_no_metric_reads_back_as_none(key: str) -> None:
    assert _metric_of(key) is None
