"""Live tests against a real OpenAI-compatible provider (opt-in).

Skipped unless ``RAGQA_LIVE_API_KEY`` and ``RAGQA_LIVE_BASE_URL`` (Spring style, e.g.
``https://openrouter.ai/api``) are set, and never under ``.ci/run`` (which sets ``CI``). Optional:
``RAGQA_LIVE_MODEL`` (default ``openai/gpt-4o-mini``), ``RAGQA_LIVE_EMBEDDING_MODEL`` (embedding
test skipped when unset). Run with ``pytest -m live tests/test_live.py``. These are the only tests
that turn the suite's ``RAGQA_BLOCK_REMOTE`` off (see ``tests/conftest.py``).
"""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
from pydantic import SecretStr

from ragqa.evaluation import PanelEvaluator
from ragqa.judges._guard import BLOCK_REMOTE_ENV
from ragqa.judges.openai import OpenAIEmbedder, OpenAIJudge
from ragqa.metrics import Faithfulness
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import (
    BackoffSettings,
    ChatOptions,
    EmbeddingOptions,
    ResolvedChatModel,
    ResolvedEmbeddingModel,
    RetrySettings,
)
from ragqa.testing import make_sample
from ragqa.usage import usage_scope

KEY = os.environ.get("RAGQA_LIVE_API_KEY", "")
BASE_URL = os.environ.get("RAGQA_LIVE_BASE_URL", "")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not (KEY and BASE_URL), reason="set RAGQA_LIVE_API_KEY and RAGQA_LIVE_BASE_URL"),
    pytest.mark.skipif(os.environ.get("CI") == "true", reason="live tests never run in CI"),
]


@pytest.fixture(autouse=True)
def allow_remote_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Live tests call the real provider: lift the suite-wide block for each of them."""
    monkeypatch.setenv(BLOCK_REMOTE_ENV, "0")


RETRY = RetrySettings(
    max_attempts=4,
    on_http_codes=[429],
    backoff=BackoffSettings(initial_interval=timedelta(seconds=2), multiplier=2, max_interval=timedelta(seconds=30)),
)


def chat_model(structured_output: str = "json_schema") -> ResolvedChatModel:
    return ResolvedChatModel(
        id="live",
        model=os.environ.get("RAGQA_LIVE_MODEL", "openai/gpt-4o-mini"),
        base_url=BASE_URL,
        api_key=SecretStr(KEY),
        options=ChatOptions(
            temperature=0.0,
            max_tokens=1000,
            timeout=timedelta(seconds=60),
            structured_output=structured_output,  # type: ignore[arg-type]
        ),
        retry=RETRY,
    )


@pytest.mark.parametrize("mode", ["json_schema", "function_calling", "prompt"])
async def test_live_statements_in_every_structured_output_mode(mode: str) -> None:
    judge = OpenAIJudge(chat_model(mode))
    try:
        with usage_scope() as meter:
            out = await judge.ask(
                STATEMENTS,
                StatementsInput(question="Who?", answer="Ada Lovelace was a mathematician. She was born in 1815."),
            )
    finally:
        await judge.aclose()
    assert 1 <= len(out.statements) <= 4
    assert meter.total.calls >= 1 and meter.total.prompt_tokens > 0


async def test_live_faithfulness_of_a_supported_answer() -> None:
    judge = OpenAIJudge(chat_model())
    try:
        result = await PanelEvaluator([judge]).score(make_sample(), Faithfulness())
    finally:
        await judge.aclose()
    assert result.aggregate.value == pytest.approx(1.0)


@pytest.mark.skipif(not os.environ.get("RAGQA_LIVE_EMBEDDING_MODEL"), reason="set RAGQA_LIVE_EMBEDDING_MODEL")
async def test_live_embeddings_with_dimensions() -> None:
    embedder = OpenAIEmbedder(
        ResolvedEmbeddingModel(
            id="live-emb",
            model=os.environ["RAGQA_LIVE_EMBEDDING_MODEL"],
            base_url=BASE_URL,
            api_key=SecretStr(KEY),
            options=EmbeddingOptions(dimensions=256, batch_size=2),
            retry=RETRY,
        )
    )
    try:
        vectors = await embedder.embed(["a cat", "a dog", "a car"])
    finally:
        await embedder.aclose()
    assert [len(v) for v in vectors] == [256, 256, 256]
