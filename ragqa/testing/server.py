"""The fake OpenAI-compatible server's stable import path, and its ``python -m`` entry.

The implementation is split by concern; this module re-exports it unchanged:

- :mod:`ragqa.testing.wire`: :class:`ChatRequest`, :class:`Fault`, :class:`RecordedRequest`,
  :class:`ResponderError`, :class:`ResponderFailure`, the :data:`Responder` type;
- :mod:`ragqa.testing.schema_examples`: :func:`example_from_schema`;
- :mod:`ragqa.testing.responders`: :func:`ragqa_responder`, :func:`local_judge_responder`,
  :func:`default_responder`;
- :mod:`ragqa.testing.app`: :class:`FakeOpenAIServer` (the aiohttp app in a thread), answering
  with the JSON bodies of :mod:`ragqa.testing.bodies`;
- :mod:`ragqa.testing.fixtures`: :func:`fake_openai_server`, :func:`fake_openai_server_fixture`;
- :mod:`ragqa.testing.process`: :func:`fake_openai_server_process` and :func:`main`.

``python -m ragqa.testing.server --latency 0.2 --responder ragqa`` runs a server in the
foreground and prints ``READY <base_url>``.
"""

from __future__ import annotations

from ragqa.testing.app import FakeOpenAIServer
from ragqa.testing.fixtures import fake_openai_server, fake_openai_server_fixture
from ragqa.testing.process import fake_openai_server_process, main
from ragqa.testing.responders import default_responder, local_judge_responder, ragqa_responder
from ragqa.testing.schema_examples import example_from_schema
from ragqa.testing.wire import (
    ChatRequest,
    Fault,
    RecordedRequest,
    Responder,
    ResponderError,
    ResponderFailure,
)

__all__ = [
    "ChatRequest",
    "FakeOpenAIServer",
    "Fault",
    "RecordedRequest",
    "Responder",
    "ResponderError",
    "ResponderFailure",
    "default_responder",
    "example_from_schema",
    "fake_openai_server",
    "fake_openai_server_fixture",
    "fake_openai_server_process",
    "local_judge_responder",
    "main",
    "ragqa_responder",
]

if __name__ == "__main__":
    main()
