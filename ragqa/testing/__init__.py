"""Test doubles for ragqa's tests and for users' own: scripted judges and the fake server."""

from ragqa.testing.judges import FunctionJudge, RecordedCall, ScriptedJudge, StaticEmbedder, make_sample
from ragqa.testing.server import (
    ChatRequest,
    FakeOpenAIServer,
    Fault,
    RecordedRequest,
    fake_openai_server,
    fake_openai_server_fixture,
    local_judge_responder,
    ragqa_responder,
)

__all__ = [
    "ChatRequest",
    "FakeOpenAIServer",
    "Fault",
    "FunctionJudge",
    "RecordedCall",
    "RecordedRequest",
    "ScriptedJudge",
    "StaticEmbedder",
    "fake_openai_server",
    "fake_openai_server_fixture",
    "local_judge_responder",
    "make_sample",
    "ragqa_responder",
]
