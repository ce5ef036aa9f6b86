"""The loopback Ray cluster the ``tests/run/test_ray_*.py`` modules share (import after ``importorskip("ray")``)."""

from __future__ import annotations

import os

import ray

from ragqa.run.ray_engine import connect
from ragqa.schema import Sample

JUDGE_KEY = "sk-ray-cluster-test-key"
"""The judges' API key: set on the driver before the cluster starts, so the workers inherit it (never shipped)."""


def start_cluster() -> None:
    """Start the two-CPU Ray cluster on 127.0.0.1, no dashboard, unless it runs; workers inherit ``JUDGE_API_KEY``.

    The ``cluster`` fixture of ``tests/conftest.py`` calls this; starting one takes 10-20 s, so one
    serves every test that asks for it, and :func:`stop_cluster` ends it after the last of them.
    """
    if not ray.is_initialized():
        os.environ["JUDGE_API_KEY"] = JUDGE_KEY
        assert connect(None, num_cpus=2)


def stop_cluster() -> None:
    """Shut the cluster down and drop the key the driver set for its workers (nothing when none runs)."""
    if ray.is_initialized():
        ray.shutdown()
    os.environ.pop("JUDGE_API_KEY", None)


def two_judges_yaml(limits: str, *, max_attempts: int = 3) -> str:
    """An ``application.yaml`` of judges ``judge-a`` and ``judge-b`` at ``${FAKE_URL}``, scoring faithfulness.

    Args:
        limits: the ``ragqa.default-limits`` mapping, e.g. ``{rps: 20, max-in-flight: 16}``.
        max_attempts: ``spring.ai.retry.max-attempts``.
    """
    return f"""
spring:
  ai:
    retry: {{max-attempts: {max_attempts}}}
    openai: {{base-url: "${{FAKE_URL}}", api-key: "${{JUDGE_API_KEY}}"}}
    chat-models:
      default-options: {{temperature: 0.0, timeout: 10m}}
      list: [{{id: judge-a}}, {{id: judge-b}}]
    embedding-models: {{list: []}}
ragqa:
  metrics: [faithfulness]
  default-limits: {limits}
"""


def office_samples(n: int) -> list[Sample]:
    """``n`` small valid samples for faithfulness, ids ``s000``, ``s001``, ..."""
    return [
        Sample(
            id=f"s{i:03d}",
            user_input=f"When does office {i} open?",
            response=f"The office opens at nine. Office {i} has a kitchen.",
            retrieved_contexts=[f"The office opens at nine. Office {i} has a kitchen and a garden."],
        )
        for i in range(n)
    ]
