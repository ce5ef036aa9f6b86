"""Run the suite offline: a fake OpenAI-compatible server plays three judges of the panel."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

import pytest

from ragqa.testing.server import FakeOpenAIServer, ragqa_responder

# Three judges that disagree on borderline statements: a statement is "supported" when at least
# this share of its content words occurs in the context.
STRICTNESS = {"judge-a": 0.8, "judge-b": 0.6, "judge-c": 0.9}


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        for judge, share in STRICTNESS.items():
            server.script(judge, ragqa_responder(support_threshold=share))
        yield server


@pytest.fixture(scope="session")
def ragqa_environ(fake_server: FakeOpenAIServer) -> Mapping[str, str]:
    """The variables for ${...} placeholders of application.yaml: point the panel at the fake server."""
    return {**os.environ, "RAGQA_FAKE_URL": fake_server.base_url}


@pytest.fixture
def judge_c_answers_garbage(fake_server: FakeOpenAIServer) -> Iterator[None]:
    """For one test, judge-c answers prose instead of JSON (its output fails validation)."""
    fake_server.script("judge-c", lambda request: "Sure! The answer looks fine to me.")
    yield
    fake_server.script("judge-c", ragqa_responder(support_threshold=STRICTNESS["judge-c"]))
