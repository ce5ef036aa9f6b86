"""A new user's async test (m21): fails with the fix (``asyncio_mode = auto``), not pytest's bare message."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from _pytest_run import run_pytest_inprocess

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
import pytest
from ragqa import Sample

SAMPLE = Sample(
    id="capital",
    user_input="What is the capital of France?",
    response="Paris is the capital of France.",
    retrieved_contexts=["Paris is the capital and largest city of France."],
)


def test_plain(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.5)


async def test_async(ragqa):
    await ragqa.assert_metric("faithfulness", SAMPLE, threshold=0.5)


@pytest.mark.asyncio
async def test_marked(ragqa):
    await ragqa.assert_metric("faithfulness", SAMPLE, threshold=0.5)


async def test_not_ragqa():
    pass
"""

FIX = "Add the line 'asyncio_mode = auto' to the [pytest] section of pytest.ini"


pytest_plugins = ("pytester",)  # the user's session runs in this process (Pytester.runpytest_inprocess)


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    (pytester.path / "test_user.py").write_text(SUITE, encoding="utf-8")
    return pytester.path


@pytest.fixture
def run_pytest(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Callable[..., CompletedProcess[str]]:
    """``pytest *args`` on the project, in this process."""
    return lambda cwd, *args: run_pytest_inprocess(pytester, monkeypatch, *args)


def test_strict_mode_says_how_to_run_the_async_test_and_leaves_the_rest_alone(
    project: Path, run_pytest: Callable[..., CompletedProcess[str]]
) -> None:
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    proc = run_pytest(project, "-q", "-rA", "--ragqa-profile", "local")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "PASSED test_user.py::test_plain" in out and "PASSED test_user.py::test_marked" in out
    assert "test_async is an async test, but no plugin runs it: pytest-asyncio is installed but in strict mode" in out
    assert FIX in out
    # a test that does not use ragqa keeps pytest's own handling
    assert "FAILED test_user.py::test_not_ragqa - Failed: async def functions are not nat" in out


def test_without_pytest_asyncio_the_message_names_the_extra(
    project: Path, run_pytest: Callable[..., CompletedProcess[str]]
) -> None:
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    proc = run_pytest(project, "-q", "-p", "no:asyncio", "--ragqa-profile", "local", "-k", "test_plain or test_async")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pytest-asyncio is not installed (pip install 'ragqa[pytest]')" in proc.stdout and FIX in proc.stdout
    assert "1 failed, 1 passed" in proc.stdout


def test_the_documented_ini_line_makes_every_test_pass(
    project: Path, run_pytest: Callable[..., CompletedProcess[str]]
) -> None:
    (project / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n", encoding="utf-8")
    proc = run_pytest(project, "-q", "--ragqa-profile", "local")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout


def test_the_pytest_extra_brings_the_async_plugin_and_the_docs_show_the_line() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(req.startswith("pytest-asyncio") for req in extras["pytest"])
    testing = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    assert "```ini\n[pytest]\nasyncio_mode = auto\n```" in testing
    assert "pip install 'ragqa[pytest]'" in testing
