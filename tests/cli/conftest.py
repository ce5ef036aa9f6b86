"""Fixtures of the ``ragqa evaluate`` CLI tests (``test_cli_run.py``, ``test_repeats_cli.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import APPLICATION_YAML, JUDGES, N_SAMPLES
from factories import office_jsonl

from ragqa.testing import FakeOpenAIServer, ragqa_responder


@pytest.fixture
def work(srv: FakeOpenAIServer, tmp_path: Path) -> Path:
    """A folder with ``application.yaml`` (:data:`_cli.APPLICATION_YAML`) and ``data.jsonl`` of
    :data:`_cli.N_SAMPLES` samples; the server reset and both judges scripted with ``ragqa_responder``."""
    srv.reset()
    for judge in JUDGES:
        srv.script(judge, ragqa_responder())
    (tmp_path / "application.yaml").write_text(APPLICATION_YAML, encoding="utf-8")
    (tmp_path / "data.jsonl").write_text(office_jsonl(N_SAMPLES), encoding="utf-8")
    return tmp_path
