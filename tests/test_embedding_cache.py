"""Embeddings cached like judge calls: one entry per text, exact vectors, no request on a warm re-run."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from ragqa.cache import CachingEmbedder, JudgeCache
from ragqa.container import close_container, create_container
from ragqa.evaluation import PanelEvaluator
from ragqa.factory import embedder_fingerprint
from ragqa.judges.local import LocalEmbedder
from ragqa.metrics import ResponseRelevancy
from ragqa.run.api import aevaluate
from ragqa.settings import EmbeddingOptions, ResolvedEmbeddingModel
from ragqa.testing import FakeOpenAIServer, FunctionJudge, StaticEmbedder, fake_openai_server, make_sample

VECTORS = {
    "q": [0.1, 0.2, 0.7000000000000001],
    "a": [1 / 3, 2 / 3, 0.1],
    "b": [0.30000000000000004, -0.5, 1e-300],
}


def _cached(inner: StaticEmbedder, cache: JudgeCache, **key: object) -> CachingEmbedder:
    defaults: dict[str, object] = {"fingerprint": '{"provider": "static"}', "model": "m", "dimensions": None}
    defaults.update(key)
    return CachingEmbedder(inner, cache, **defaults)  # type: ignore[arg-type]


async def test_a_warm_lookup_sends_nothing_and_returns_the_same_floats(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    inner = StaticEmbedder("e", VECTORS)
    embedder = _cached(inner, cache)
    cold = await embedder.embed(["q", "a", "q"])
    assert inner.calls == [["q", "a"]]  # each distinct missing text once
    assert (cache.embedding_hits, cache.embedding_misses) == (0, 2)
    warm = await embedder.embed(["a", "q"])
    assert inner.calls == [["q", "a"]]  # no request at all
    assert warm == [VECTORS["a"], VECTORS["q"]] and cold == [VECTORS["q"], VECTORS["a"], VECTORS["q"]]
    assert (cache.embedding_hits, cache.embedding_misses) == (2, 2)
    partly = await embedder.embed(["b", "a"])
    assert inner.calls[-1] == ["b"] and partly == [VECTORS["b"], VECTORS["a"]]
    cache.close()


async def test_the_key_is_fingerprint_model_dimensions_and_text(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    inner = StaticEmbedder("e", VECTORS)
    await _cached(inner, cache).embed(["q"])
    for other in ({"fingerprint": '{"provider": "other"}'}, {"model": "m2"}, {"dimensions": 3}):
        await _cached(inner, cache, **other).embed(["q"])
    assert len(inner.calls) == 4 and cache.embedding_hits == 0
    await _cached(inner, cache).embed(["q"])
    assert len(inner.calls) == 4 and cache.embedding_hits == 1
    cache.close()


def test_the_fingerprint_of_an_http_embedder_never_holds_its_key() -> None:
    model = ResolvedEmbeddingModel(
        id="e",
        model="text-embedding-3-small",
        base_url="http://localhost:1",
        api_key=SecretStr("sk-SECRET-123"),
        options=EmbeddingOptions(dimensions=256),
    )
    fingerprint = embedder_fingerprint(model, StaticEmbedder("e", {}))
    assert "SECRET" not in fingerprint
    assert '"dimensions": 256' in fingerprint and "text-embedding-3-small" in fingerprint
    local = LocalEmbedder("local", "hashing")
    assert embedder_fingerprint(model, local) == local.fingerprint


async def test_cached_embeddings_score_response_relevancy_exactly_like_the_plain_path(tmp_path: Path) -> None:
    def answer(prompt: object, data: object) -> dict[str, object]:
        return {"question": "When was the first Super Bowl?", "noncommittal": 0}

    sample = make_sample()
    metric = ResponseRelevancy()
    plain_embedder = LocalEmbedder("local", "hashing")
    cache = JudgeCache(tmp_path)
    scores = []
    for embedder in (plain_embedder, _cached_local(plain_embedder, cache), _cached_local(plain_embedder, cache)):
        evaluator = PanelEvaluator([FunctionJudge("j", answer)], [metric], embedders=[embedder])
        result = await evaluator.score(sample, metric)
        scores.append(result.judges[0].score)
    assert cache.embedding_hits > 0  # the third run read every vector from the cache
    plain, cold, warm = scores
    assert plain is not None and not math.isnan(plain.value)
    assert plain == cold == warm  # value, reason and details: bit for bit
    cache.close()


def _cached_local(embedder: LocalEmbedder, cache: JudgeCache) -> CachingEmbedder:
    return CachingEmbedder(embedder, cache, fingerprint=embedder.fingerprint, model="local", dimensions=None)


APPLICATION_YAML = """
spring:
  ai:
    retry:
      max-attempts: 1
    openai:
      base-url: ${FAKE_URL}
      api-key: sk-test-SECRET
    chat-models:
      default-options: {temperature: 0.0, timeout: 30s}
      list:
        - {id: judge-a}
        - {id: judge-b}
    embedding-models:
      default-options: {dimensions: 16}
      list:
        - {id: embed-a, options: {model: embed-a}}
ragqa:
  metrics: [response_relevancy]
  cache:
    enabled: true
    directory: ${CACHE_DIR}
"""


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as server:
        yield server


@pytest.mark.slow
async def test_a_warm_re_run_makes_no_request_at_all_and_no_cache_disables_both(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    from ragqa.testing import ragqa_responder

    srv.reset()
    srv.script("*", ragqa_responder())
    config = tmp_path / "application.yaml"
    config.write_text(APPLICATION_YAML, encoding="utf-8")
    environ = {"FAKE_URL": srv.base_url, "CACHE_DIR": str(tmp_path / "cache")}
    samples = [make_sample(id=f"s{i}", user_input=f"When was Super Bowl {i} held?") for i in range(4)]

    async def run(**options: bool) -> tuple[object, int, int]:
        srv.clear_requests()
        container = create_container(config, [], environ=environ)
        try:
            report = await aevaluate(samples, container=container, **options)
        finally:
            await close_container(container)
        chat = sum(1 for r in srv.requests if r.path.endswith("/chat/completions"))
        embed = sum(1 for r in srv.requests if r.path.endswith("/embeddings"))
        return report, chat, embed

    cold, cold_chat, cold_embed = await run()
    assert cold_chat == 4 * 2  # the batched plan asks for the 3 questions in one call per sample and judge
    assert 0 < cold_embed <= 4 * 2  # one batch per sample and judge, less when a judge's texts were cached already
    assert cold.cache is not None and cold.cache.embedding_misses > 0
    warm, warm_chat, warm_embed = await run()
    assert (warm_chat, warm_embed) == (0, 0)
    assert warm.cache is not None and warm.cache.misses == 0 and warm.cache.embedding_misses == 0
    assert warm.cache.embedding_hits > 0
    assert [r.model_dump(exclude={"judges"}) for r in warm.results] == [
        r.model_dump(exclude={"judges"}) for r in cold.results
    ]
    assert [[o.score for o in r.judges] for r in warm.results] == [[o.score for o in r.judges] for r in cold.results]
    uncached, chat, embed = await run(no_cache=True)
    assert (chat, embed) == (cold_chat, 4 * 2) and uncached.cache is None
