"""Run ``pytest`` on a user's suite, as a user runs it with ragqa's plugin: in this process or a child.

One copy for every module that checks the plugin from the outside (``tests/testing/``).
:func:`run_pytest_inprocess` runs the session in this process (``Pytester.runpytest_inprocess``: the
plugin loads from its ``pytest11`` entry point, the session's exit code comes through, and the
user's modules leave ``sys.modules`` afterwards), a fraction of a child's start-up cost.
:func:`run_pytest` starts a child, for the checks whose point is a fresh process; the child imports
this checkout's ragqa first whatever the install state. Both ignore the outer run's
``PYTEST_ADDOPTS`` and ``RAGQA_PROFILES_ACTIVE``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["run_pytest", "run_pytest_inprocess"]

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

    langsmith's plugin is left out, as in :func:`run_pytest_inprocess` (it imports langsmith's
    client: a bare child session took 2.4-2.5 CPU seconds with it, 1.0-1.2 without).

    Raises:
        subprocess.TimeoutExpired: when the child runs past 120 s (a hung suite).
    """
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:langsmith_plugin", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_pytest_inprocess(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str
) -> subprocess.CompletedProcess[str]:
    """``pytest -p no:cacheprovider *args`` in ``pytester.path``, in this process; the result as :func:`run_pytest`'s.

    The user's project is the files under ``pytester.path`` (the session's working directory). The
    terminal is 80 columns wide, as a child with piped output sees it; pytest-asyncio's
    ``asyncio_default_fixture_loop_scope`` is ``function`` (``-o``); langsmith's plugin is left out as
    the repository's own ``addopts`` does (``Pytester`` drops the modules a session imported, so it
    would import langsmith again, seconds, on every run); ``RAGQA_PROFILES_ACTIVE`` is
    unset (``Pytester`` unsets ``PYTEST_ADDOPTS`` itself). A module using it declares
    ``pytest_plugins = ("pytester",)``.
    """
    monkeypatch.delenv("RAGQA_PROFILES_ACTIVE", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    # pytest-asyncio warns when a project leaves its loop scope unset, and in this process the warning
    # lands in the outer session: the loop scope is set as the user's ini would set it
    scope = () if "no:asyncio" in args else ("-o", "asyncio_default_fixture_loop_scope=function")
    run = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:langsmith_plugin", *scope, *args)
    return subprocess.CompletedProcess(
        ["pytest", *args], int(run.ret), stdout=run.stdout.str() + "\n", stderr=run.stderr.str() + "\n"
    )
