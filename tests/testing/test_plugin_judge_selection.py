"""The plugin's judges marker: the container builds the narrowed panel, scores as before, container untouched."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from dependency_injector import providers

from ragqa.cache import CachingJudge
from ragqa.container import Container, close_container, create_container
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import build_metric
from ragqa.pytest_plugin import select_judges
from ragqa.schema import PanelResult, Sample
from ragqa.testing import ScriptedJudge

SAMPLES = [
    Sample(id="a", user_input="How do I reset my password?", response="Use the self-service portal.",
           retrieved_contexts=["Passwords are reset on the self-service portal."]),
    Sample(id="b", user_input="Who approves travel?", response="Your manager approves travel by phone.",
           retrieved_contexts=["Travel is approved by your manager before booking."]),
]  # fmt: skip


def _scores(results: Sequence[PanelResult]) -> list[tuple[str, str, float | None, dict[str, float]]]:
    return [(r.sample_id, r.metric, r.aggregate.value, r.by_judge()) for r in results]


@pytest.fixture
async def cached_container(tmp_path: Path) -> AsyncIterator[Container]:
    config = tmp_path / "application.yaml"
    config.write_text(
        f"ragqa:\n  metrics: [faithfulness, context_relevance]\n  cache:\n    enabled: true\n"
        f"    directory: {tmp_path / 'cache'}\n",
        encoding="utf-8",
    )
    container = create_container(config, ["local"])
    container.settings()
    yield container
    await close_container(container)


async def test_selected_judges_score_as_a_plain_evaluator_over_them_and_leave_the_container_as_it_was(
    cached_container: Container,
) -> None:
    container = cached_container
    full = container.evaluator()
    narrowed = select_judges(full, ["*-lenient"], container=container)

    # the plain path of before: an evaluator built by hand over the chosen judges
    chosen = [j for j in full.judges if j.id == "local-lenient"]
    plain = PanelEvaluator(chosen, full.metrics, embedders=container.embedders(), options=full.options)
    assert [j.id for j in narrowed.judges] == ["local-lenient"]
    assert narrowed.judges[0] is chosen[0] and isinstance(narrowed.judges[0], CachingJudge)
    assert narrowed.metrics == full.metrics and narrowed.options is full.options
    expected = _scores((await plain.evaluate(SAMPLES)).results)
    assert _scores((await narrowed.evaluate(SAMPLES)).results) == expected
    assert len(expected) == 4 and all(set(s[3]) == {"local-lenient"} for s in expected)

    # nothing of the caller's container was overridden or replaced
    assert not any(p.overridden for p in (container.evaluator, container.judges, container.cache, container.embedders))
    assert container.cache() is not None
    again = container.evaluator()
    assert [j.id for j in again.judges] == ["local-strict", "local-lenient"]
    assert all(isinstance(j, CachingJudge) for j in again.judges)
    assert again.judges == full.judges  # the same judge instances, shared with the narrowed panel


def test_the_narrowed_evaluator_comes_from_the_containers_provider() -> None:
    built: list[PanelEvaluator] = []

    class Recording(PanelEvaluator):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            built.append(self)

    judges = [ScriptedJudge(i, {}) for i in ("j1", "j2", "j3")]
    container = Container()
    container.evaluator.override(providers.Factory(Recording))
    narrowed = select_judges(PanelEvaluator(judges, [build_metric("faithfulness")]), ["j1", "j3"], container=container)
    assert built == [narrowed] and [j.id for j in narrowed.judges] == ["j1", "j3"]
    assert [m.name for m in narrowed.metrics] == ["faithfulness"]


def test_an_evaluator_replaced_by_an_object_is_still_narrowed() -> None:
    judges = [ScriptedJudge(i, {}) for i in ("j1", "j2")]
    whole = PanelEvaluator(judges, [])
    container = Container()
    container.evaluator.override(providers.Object(whole))
    narrowed = select_judges(container.evaluator(), ["j2"], container=container)
    assert [j.id for j in narrowed.judges] == ["j2"] and narrowed is not whole
    assert container.evaluator() is whole  # the caller's override is kept as it was
