"""A Ray worker imports the worker side only: each worker of each run pays that import.

Ray starts a worker actor by importing the module of its class; :class:`ragqa.run.ray_worker.PanelWorker`
lives apart from the driver's side (the runner, the results stream, the report's sections) so that
this import stays short. Checked in a fresh interpreter, as a worker starts.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("ray")

DRIVER_SIDE = (
    "ragqa.run.ray_engine",
    "ragqa.run.runner",
    "ragqa.run.stream",
    "ragqa.run.api",
    "ragqa.jury.reliability",
)


def test_importing_the_worker_class_leaves_the_driver_side_unimported() -> None:
    code = (
        "import json, sys, pickle\n"
        "from ragqa.run.ray_worker import PanelWorker\n"
        "assert pickle.loads(pickle.dumps(PanelWorker)) is PanelWorker\n"
        f"print(json.dumps([m for m in {DRIVER_SIDE!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == []


def test_the_engine_module_still_exports_the_worker_class() -> None:
    from ragqa.run import ray_engine, ray_worker

    assert ray_engine.PanelWorker is ray_worker.PanelWorker
    assert ray_engine.WorkerSettings is ray_worker.WorkerSettings
    assert ray_worker.PanelWorker.__module__ == "ragqa.run.ray_worker"  # what Ray's workers import
