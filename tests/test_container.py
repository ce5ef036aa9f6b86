"""The container wires settings into judges, metrics and the evaluator; tests override providers."""

from pathlib import Path

import pytest
from dependency_injector import providers

from ragqa.container import close_container, create_container
from ragqa.errors import ConfigError
from ragqa.testing import ScriptedJudge, make_sample

ROOT = Path(__file__).resolve().parents[1]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "application.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_seed_panel_without_key_fails_at_start_naming_the_variable() -> None:
    container = create_container(ROOT / "application.yaml", environ={})
    with pytest.raises(ConfigError) as info:
        container.judges()
    assert "OPENROUTER_API_KEY" in str(info.value)


def test_metrics_and_options_come_from_settings(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "spring: {ai: {chat-models: {list: [{id: j1, provider: local}]}}}\n"
        "ragqa: {metrics: [hallucination, faithfulness], aggregation: {strategy: median, quorum: 1}, language: ru}\n",
    )
    container = create_container(path, environ={})
    assert [m.key for m in container.metrics()] == ["hallucination", "faithfulness"]
    options = container.panel_options()
    assert (options.strategy, options.language) == ("median", "ru")


def test_unknown_metric_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "ragqa: {metrics: [faithfullness]}\n")
    with pytest.raises(ConfigError, match="Did you mean faithfulness"):
        create_container(path, environ={}).metrics()


async def test_judges_provider_can_be_overridden_in_tests(tmp_path: Path) -> None:
    path = _write(tmp_path, "spring: {ai: {chat-models: {list: [{id: real, provider: local}]}}}\n")
    container = create_container(path, environ={})
    fake = ScriptedJudge("fake", {"statements": [{"statements": []}]})
    with container.judges.override(providers.Object([fake])):
        evaluator = container.evaluator()
        assert [j.id for j in evaluator.judges] == ["fake"]
        report = await evaluator.evaluate([make_sample()])
    assert report.summary("faithfulness").judges[0].judge_id == "fake"
    await close_container(container)


async def test_cache_wraps_judges_when_enabled(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "spring: {ai: {chat-models: {list: [{id: j1, provider: local}]}}}\n"
        f"ragqa: {{cache: {{enabled: true, directory: '{tmp_path / 'cache'}'}}}}\n",
    )
    container = create_container(path, environ={})
    [judge] = container.judges()
    assert type(judge).__name__ == "CachingJudge" and judge.id == "j1"
    await close_container(container)
    assert (tmp_path / "cache").is_dir()


def test_circuit_breaker_and_deadline_settings_reach_the_judges_and_the_panel(tmp_path):
    from ragqa.container import create_container

    config = tmp_path / "application.yaml"
    config.write_text(
        "spring:\n  ai:\n    openai:\n      base-url: http://127.0.0.1:9\n      api-key: k\n"
        "    chat-models:\n      list:\n        - {id: a}\n"
        "ragqa:\n  circuit-breaker: {failure-threshold: 2, cool-down: 7s}\n  run: {deadline: 90s}\n",
        encoding="utf-8",
    )
    container = create_container(config)
    (judge,) = container.judges()
    breaker = getattr(judge, "inner", judge).breaker
    assert (breaker.failure_threshold, breaker.cool_down_s) == (2, 7.0)
    assert container.panel_options().deadline_s == 90.0


def test_an_unresolvable_embedding_key_stops_only_the_metrics_that_embed(tmp_path):
    from ragqa.container import create_container
    from ragqa.metrics import build_metric

    config = tmp_path / "application.yaml"
    config.write_text(
        "spring:\n  ai:\n    openai:\n      base-url: http://127.0.0.1:9\n"
        "      api-key: ${OPENROUTER_API_KEY}\n"
        "    chat-models:\n      list:\n        - {id: a, api-key: none}\n"
        "    embedding-models:\n      list:\n        - {id: e}\n",
        encoding="utf-8",
    )
    container = create_container(config, environ={})
    assert [j.id for j in container.judges()] == ["a"]  # the panel builds without the embedding key
    evaluator = container.evaluator()
    assert evaluator.validate([], [build_metric("faithfulness")]) == []
    (problem,) = evaluator.validate([], [build_metric("response_relevancy")])
    assert "needs an embedding model, but environment variable OPENROUTER_API_KEY is not set" in str(problem)
    assert problem.metric == "response_relevancy"
