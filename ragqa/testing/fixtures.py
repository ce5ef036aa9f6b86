"""A running :class:`~ragqa.testing.app.FakeOpenAIServer` for a block or a pytest fixture."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ragqa.testing.app import FakeOpenAIServer

__all__ = ["fake_openai_server", "fake_openai_server_fixture"]


@contextmanager
def fake_openai_server(**kwargs: Any) -> Iterator[FakeOpenAIServer]:
    """Run a :class:`FakeOpenAIServer` for the block (keyword arguments go to its constructor).

    Example::

        @pytest.fixture
        def server():
            with fake_openai_server(latency_s=0.01) as srv:
                yield srv
    """
    server = FakeOpenAIServer(**kwargs)
    with server:
        yield server


def fake_openai_server_fixture(*, scope: str = "function", **kwargs: Any) -> Any:
    """Make a pytest fixture that yields a running :class:`FakeOpenAIServer`.

    Put ``fake_server = fake_openai_server_fixture(scope="module")`` in a ``conftest.py`` (or a
    test module) and ask for ``fake_server`` in tests. With a scope wider than ``function`` the
    server is shared: call :meth:`FakeOpenAIServer.reset` where a test needs a clean one.

    Args:
        scope: the pytest fixture scope.
        **kwargs: passed to :class:`FakeOpenAIServer`.

    Returns:
        A pytest fixture function.
    """
    import pytest  # only test code calls this; ragqa itself does not need pytest

    def fixture() -> Iterator[FakeOpenAIServer]:
        with fake_openai_server(**kwargs) as srv:
            yield srv

    return pytest.fixture(scope=scope)(fixture)  # type: ignore[call-overload]
