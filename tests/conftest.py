"""Fixtures shared by ragqa's tests: the remote-call block for the whole suite, and the fake server."""

from __future__ import annotations

from collections.abc import Iterator

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
