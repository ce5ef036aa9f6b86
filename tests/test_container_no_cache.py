"""``no_cache`` never writes the cache and never takes it from the caller's container for later runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragqa
from ragqa.cache import CachingJudge
from ragqa.container import close_container, create_container

DATASET = Path(__file__).resolve().parents[1] / "examples" / "datasets" / "it_helpdesk.jsonl"
SAMPLES = [
    {"id": "a", "user_input": "How do I reset my password?", "response": "Use the self-service portal.",
     "retrieved_contexts": ["Passwords are reset on the self-service portal."]},
    {"id": "b", "user_input": "Who approves travel?", "response": "Your manager approves travel.",
     "retrieved_contexts": ["Travel is approved by your manager before booking."]},
]  # fmt: skip


@pytest.fixture
def cached_config(tmp_path: Path) -> Path:
    config = tmp_path / "application.yaml"
    config.write_text(f"ragqa:\n  cache:\n    enabled: true\n    directory: {tmp_path / 'cache'}\n", encoding="utf-8")
    return config


def _entries(container: ragqa.Container) -> int:  # type: ignore[name-defined]
    cache = container.cache()
    return len(cache._cache) if cache is not None else 0


async def test_no_cache_on_a_fresh_container_opens_nothing_and_the_next_run_caches(
    cached_config: Path, tmp_path: Path
) -> None:
    container = create_container(cached_config, ["local"])
    try:
        first = await ragqa.aevaluate(SAMPLES, ["faithfulness"], container=container, no_cache=True)
        assert not (tmp_path / "cache").exists()
        assert first.cache is None
        second = await ragqa.aevaluate(SAMPLES, ["faithfulness"], container=container)
        assert all(isinstance(j, CachingJudge) for j in container.judges())
        assert _entries(container) > 0 and second.cache is not None and second.cache.misses > 0
        assert [r.aggregate.value for r in first.results] == [r.aggregate.value for r in second.results]
    finally:
        await close_container(container)


async def test_no_cache_after_the_judges_were_built_writes_no_entry(cached_config: Path) -> None:
    container = create_container(cached_config, ["local"])
    try:
        warm = await ragqa.aevaluate(SAMPLES, ["faithfulness"], container=container)
        before = _entries(container)
        assert before > 0
        plain = await ragqa.aevaluate(
            SAMPLES, ["faithfulness", "context_relevance"], container=container, no_cache=True
        )
        assert _entries(container) == before  # context_relevance calls were not stored
        assert [r.aggregate.value for r in plain.results if r.metric == "faithfulness"] == [
            r.aggregate.value for r in warm.results
        ]
        again = await ragqa.aevaluate(SAMPLES, ["faithfulness"], container=container)
        assert again.cache is not None and again.cache.hits > 0 and again.cache.misses == 0
    finally:
        await close_container(container)
