"""Fixtures shared by ragqa's tests: the remote-call block for the whole suite, the fake server, a headless Chromium."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from ragqa.judges._guard import BLOCK_REMOTE_ENV
from ragqa.testing import FakeOpenAIServer, fake_openai_server


@pytest.fixture(scope="session", autouse=True)
def block_remote_calls() -> Iterator[None]:
    """No test reaches a real provider: any judge request to a non-loopback host fails before it is sent.

    Subprocesses started by tests (the CLI, ``ragqa test``) inherit the variable. The opt-in live
    tests (``tests/test_live.py``) turn it off for themselves.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(BLOCK_REMOTE_ENV, "1")
        yield


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeOpenAIServer]:
    """One fake server per test module (a module may override it, e.g. to require an API key)."""
    with fake_openai_server() as server:
        yield server


@pytest.fixture
def reset_srv(srv: FakeOpenAIServer) -> None:
    """Give the test a clean server; modules opt in with ``pytest.mark.usefixtures("reset_srv")``."""
    srv.reset()


def find_chromium() -> str | None:
    """A Chromium to drive: ``RAGQA_CHROMIUM``, else Debian's ``chromium`` (or another Chromium on PATH)."""
    explicit = os.environ.get("RAGQA_CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (Playwright driving the system browser; never downloaded)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the Python package playwright is not installed (pip install -e '.[dev]')")
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set RAGQA_CHROMIUM to a Chromium binary)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


SLOW_MODULES = frozenset(
    {
        "test_allure",
        "test_calibration",
        "test_call_plan",
        "test_cli",
        "test_cli_process",
        "test_cli_run",
        "test_docs_commands",
        "test_e2e_all_metrics",
        "test_html_layout",
        "test_html_report",
        "test_local_language_lists",
        "test_promptfoo",
        "test_promptfoo_example",
        "test_promptfoo_text",
        "test_pytest_plugin",
        "test_pytest_plugin_async",
        "test_ray_engine",
        "test_startup_imports",
    }
)
"""Modules whose tests start processes (the CLI, pytest, a browser) or run whole datasets: each took
10 s or more in ``pytest -q --durations=0``. ``pytest -q -m "not slow"`` leaves them out; ``pytest -q``
(the README's command, which CI runs) runs everything."""


SLOW_TESTS = frozenset(
    {
        "test_progress::test_ragqa_evaluate_shows_progress_on_a_terminal",
        "test_progress::test_ragqa_evaluate_is_silent_off_a_terminal_unless_asked",
    }
)
"""Single tests of otherwise quick modules that start a process (``module::test``, parameters left
off): the progress bar needs a pseudo-terminal, and a child whose stderr is a real pipe."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of :data:`SLOW_MODULES` and every one of :data:`SLOW_TESTS` ``slow``."""
    for item in items:
        name = getattr(item, "originalname", item.name)
        if item.path.stem in SLOW_MODULES or f"{item.path.stem}::{name}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
