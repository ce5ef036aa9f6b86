"""Fixtures shared by the tests that talk to the fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragqa.testing import FakeOpenAIServer, fake_openai_server


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeOpenAIServer]:
    """One fake server per test module (a module may override it, e.g. to require an API key)."""
    with fake_openai_server() as server:
        yield server


@pytest.fixture
def reset_srv(srv: FakeOpenAIServer) -> None:
    """Give the test a clean server; modules opt in with ``pytest.mark.usefixtures("reset_srv")``."""
    srv.reset()
