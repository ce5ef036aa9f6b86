"""Test doubles for ragqa's tests and for users' own: scripted judges and the fake server.

Judges at the seam (:mod:`ragqa.testing.judges`) test metric logic without HTTP; the fake
OpenAI-compatible server (:class:`FakeOpenAIServer`, scripted with :func:`ragqa_responder` or
:func:`local_judge_responder`) tests the real client path. :class:`NoisyJudge` scores with known
truth, judge bias and seeded noise (:class:`NoiseModel`), to test intervals and repeats. See
``docs/testing.md``.
"""

from ragqa.testing.app import FakeOpenAIServer
from ragqa.testing.fixtures import fake_openai_server, fake_openai_server_fixture
from ragqa.testing.judges import CountingJudge, FunctionJudge, RecordedCall, ScriptedJudge, StaticEmbedder, make_sample
from ragqa.testing.noisy import NoiseModel, NoisyJudge
from ragqa.testing.responders import local_judge_responder, ragqa_responder
from ragqa.testing.wire import ChatRequest, Fault, RecordedRequest, Responder, ResponderError, ResponderFailure

__all__ = [
    "ChatRequest",
    "CountingJudge",
    "FakeOpenAIServer",
    "Fault",
    "FunctionJudge",
    "NoiseModel",
    "NoisyJudge",
    "RecordedCall",
    "RecordedRequest",
    "Responder",
    "ResponderError",
    "ResponderFailure",
    "ScriptedJudge",
    "StaticEmbedder",
    "fake_openai_server",
    "fake_openai_server_fixture",
    "local_judge_responder",
    "make_sample",
    "ragqa_responder",
]
