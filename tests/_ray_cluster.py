"""The loopback Ray cluster the ``tests/run/test_ray_*.py`` modules share (import after ``importorskip("ray")``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import ray
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.run.ray_engine import RayEngine, connect
from ragqa.schema import Sample

HELPDESK = Path(__file__).resolve().parents[1] / "examples" / "datasets" / "it_helpdesk.jsonl"
"""The shipped dataset (60 samples) that a Ray run must score as one process does."""

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


def cli(*args: str) -> Any:
    """``ragqa ARGS... --no-progress`` through typer's runner, 200 columns, no colour.

    Returns typer's result: ``exit_code``, ``stdout``, ``stderr``, ``output``.
    """
    return CliRunner().invoke(app, [*args, "--no-progress"], env={"COLUMNS": "200", "NO_COLOR": "1"})


def asked_modes(patch: pytest.MonkeyPatch) -> list[Any]:
    """Record the compact mode (:mod:`ragqa.run.rows`) each Ray run asks its workers for, while ``patch`` holds."""
    asked: list[Any] = []
    batches = RayEngine._batches

    def spy(engine: RayEngine, todo: Any, compact: Any) -> Any:
        asked.append(compact)
        return batches(engine, todo, compact)

    patch.setattr(RayEngine, "_batches", spy)
    return asked


@dataclass(frozen=True)
class HelpdeskRuns:
    """``ragqa evaluate`` of :data:`HELPDESK` with the local profile, in one process and on the cluster.

    Several tests read the same two runs (a Ray run costs seconds of worker start-up): the
    results files and the reports. Built by :func:`helpdesk_runs`.

    Attributes:
        directory: where the results files are: ``local.jsonl`` and ``ray.jsonl``.
        local: the one-process command's result (typer's: ``exit_code``, ``stdout``, ``stderr``).
        ray: the Ray command's result (``--engine ray --workers 2 --batch-size 16``).
        asked: the compact mode the Ray run asked its workers for, per run.
    """

    directory: Path
    local: Any
    ray: Any
    asked: list[Any]


def helpdesk_runs(directory: Path) -> HelpdeskRuns:
    """Run :data:`HELPDESK` in one process and on the running cluster, writing into ``directory``."""
    base = ["evaluate", str(HELPDESK), "--profile", "local"]
    local = cli(*base, "--out", str(directory / "local.jsonl"))
    with pytest.MonkeyPatch.context() as patch:
        asked = asked_modes(patch)
        spread = cli(
            *base, "--engine", "ray", "--workers", "2", "--batch-size", "16", "--out", str(directory / "ray.jsonl")
        )
    return HelpdeskRuns(directory, local, spread, asked)


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
