"""The container is the only builder: a run's evaluator comes from its provider; one reading of the limits."""

from __future__ import annotations

from pathlib import Path

from dependency_injector import providers

import ragqa
from ragqa.container import close_container, create_container
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics.validation import Limits
from ragqa.run.plan import make_plan

SAMPLES = [
    {"id": "a", "user_input": "How do I reset my password?", "response": "Use the self-service portal.",
     "retrieved_contexts": ["Passwords are reset on the self-service portal."]},
]  # fmt: skip


async def test_a_runs_evaluator_is_built_by_the_containers_provider_with_the_runs_parts() -> None:
    built: list[PanelEvaluator] = []

    class Recording(PanelEvaluator):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            built.append(self)

    container = create_container(None, ["local"])
    try:
        plain = await ragqa.aevaluate(SAMPLES, ["faithfulness"], container=container)
        assert not container.evaluator.overridden
        container.evaluator.override(providers.Factory(Recording))
        recorded = await ragqa.aevaluate(SAMPLES, ["faithfulness"], container=container, no_cache=True)
    finally:
        await close_container(container)
    [evaluator] = built
    assert [j.id for j in evaluator.judges] == ["local-strict", "local-lenient"]
    assert [m.key for m in evaluator.metrics] == ["faithfulness"]
    assert [r.by_judge() for r in recorded.results] == [r.by_judge() for r in plain.results]


async def test_panel_options_and_the_run_plan_read_the_same_limits(tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text("ragqa:\n  limits:\n    max-contexts-per-sample: 7\n    max-text-chars: 1234\n", encoding="utf-8")
    container = create_container(config, ["local"])
    try:
        settings = container.settings()
        expected = Limits(max_contexts_per_sample=7, max_text_chars=1234)
        assert Limits.from_settings(settings) == expected
        assert container.panel_options().limits == expected
        assert make_plan(settings, metrics=["faithfulness"]).limits == expected
    finally:
        await close_container(container)
