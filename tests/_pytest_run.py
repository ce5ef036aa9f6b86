"""Run ``pytest`` in a child process on a user's suite, as a user runs it with ragqa's plugin.

One copy for every module that checks the plugin from the outside (``tests/testing/``): the child
imports this checkout's ragqa first whatever the install state, and ignores the outer run's
``PYTEST_ADDOPTS`` and ``RAGQA_PROFILES_ACTIVE``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["run_pytest"]

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    # the checkout first, so the subprocess imports this ragqa whatever the install state
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("RAGQA_PROFILES_ACTIVE", None)
    return env


def run_pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -p no:cacheprovider *args`` in ``cwd``; output as text, 120 s at most.

    Raises:
        subprocess.TimeoutExpired: when the child runs past 120 s (a hung suite).
    """
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
