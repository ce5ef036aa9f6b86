"""Run the suite offline: a fake OpenAI-compatible server plays three judges of the panel."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

import pytest

from ragqa.settings import LocalJudgeSettings
from ragqa.testing import FakeOpenAIServer, local_judge_responder

# Three judges that disagree on borderline statements. Each answers like the offline local judge:
# a statement is supported when its graded support reaches the threshold; judge-b is lenient and
# does not check numbers.
PANEL = {
    "judge-a": LocalJudgeSettings(support_threshold=0.8),
    "judge-b": LocalJudgeSettings(support_threshold=0.4, number_check=False),
    "judge-c": LocalJudgeSettings(support_threshold=0.9),
}


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        for judge, settings in PANEL.items():
            server.script(judge, local_judge_responder(settings))
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
    fake_server.script("judge-c", local_judge_responder(PANEL["judge-c"]))
