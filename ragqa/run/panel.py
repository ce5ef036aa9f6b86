"""The run's panel: its judges and embedders, its options, and the evaluator built once from them.

What :meth:`Runner.build <ragqa.run.runner.Runner.build>` does, as functions of the plan and the
container: the container's judges and embedders (without the cache for a ``no_cache`` run), the
container's panel options with the plan's overrides, and the evaluator the container's
``evaluator`` provider builds from them, after the panel-level checks that need no judge call.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ragqa.aggregate import STRATEGIES
from ragqa.errors import ConfigError
from ragqa.factory import uncached_embedder, uncached_judge
from ragqa.judges.base import Embedders, Judge
from ragqa.run.plan import RunPlan, check_judge_free

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator, PanelOptions

__all__ = ["build_evaluator", "check_fit_strategy", "panel_members", "panel_options", "panel_options_or_none"]


def panel_options(plan: RunPlan, container: Container) -> PanelOptions:
    """The run's panel options: the container's with the plan's overrides (:attr:`RunPlan.panel`).

    Raises:
        ConfigError, ValueError, TypeError: settings or overrides that do not build.
    """
    return dataclasses.replace(container.panel_options(), **dict(plan.panel))


def panel_options_or_none(plan: RunPlan, container: Container) -> PanelOptions | None:
    """:func:`panel_options`, or ``None`` when they do not build.

    :func:`build_evaluator` raises the error then: the checks of the samples come first.
    """
    try:
        return panel_options(plan, container)
    except (ConfigError, ValueError, TypeError):
        return None


def build_evaluator(plan: RunPlan, container: Container) -> PanelEvaluator:
    """Build the evaluator once, with the plan's panel overrides; check panel-level problems.

    The container's ``evaluator`` provider builds it, with the run's judges, metrics,
    embedders and options as call-time keywords (the container is not changed).

    Raises:
        ConfigError: settings that cannot build a judge (a missing key), a metric that
            needs an embedding model none is configured for, one that needs a judge when
            the panel has none, or the audit run of a cascade fit (:attr:`RunPlan.cascade_fit`)
            aggregated by a vote per statement (key ``ragqa.aggregation.strategy``).
    """
    judges, embedders = panel_members(plan, container)
    if not judges:  # a panel of no judge runs judge-free metrics only
        check_judge_free(plan.metrics)
    options = panel_options(plan, container)
    if plan.cascade_fit:
        check_fit_strategy(options.strategy)
    if options.cascade is not None:  # the escalation rule reads the run's thresholds
        options = dataclasses.replace(
            options, cascade=dataclasses.replace(options.cascade, thresholds=dict(plan.thresholds))
        )
    if options.quorum > len(judges) and judges:
        raise ConfigError(
            f"quorum {options.quorum} is more than the {len(judges)} judge(s) of the panel; no aggregate could exist",
            key="ragqa.aggregation.quorum",
        )
    evaluator: PanelEvaluator = container.evaluator(
        judges=judges, metrics=plan.metrics, embedders=embedders, options=options
    )
    panel_problems = evaluator.validate([], plan.metrics)
    if panel_problems:
        raise ConfigError(str(panel_problems[0]), key="spring.ai.embedding-models.list")
    return evaluator


def panel_members(plan: RunPlan, container: Container) -> tuple[list[Judge], Embedders]:
    """The container's judges and embedders; for ``no_cache``, the same ones without the cache.

    The container is never changed: a ``no_cache`` run takes its ``plain_*`` providers (or,
    where an application overrode ``judges`` / ``embedders``, unwraps what they give), so the
    cache is neither opened nor written, and the next run of the same container has it again.
    """
    c = container
    if not plan.no_cache:
        return list(c.judges()), c.embedders()
    judges = [uncached_judge(j) for j in c.judges()] if c.judges.overridden else list(c.plain_judges())
    source = c.embedders() if c.embedders.overridden else c.plain_embedders()
    unavailable = source.unavailable if isinstance(source, Embedders) else None
    return judges, Embedders([uncached_embedder(e) for e in source], unavailable=unavailable)


def check_fit_strategy(strategy: str) -> None:
    """Refuse a cascade fit's audit run aggregated by ``strategy`` when the fit cannot rebuild it.

    The fit (:mod:`ragqa.calibration.cascade`) recomputes tier 1's aggregate from the judges'
    scores with the run's strategy; a vote per statement (``claim-vote``, ``dawid-skene``) is not
    rebuilt from scores, so such a run is refused before any judge call instead of after scoring.

    Raises:
        ConfigError: naming ``ragqa.aggregation.strategy`` and the strategies the fit accepts.
    """
    if strategy not in STRATEGIES:
        key = "ragqa.aggregation.strategy"
        raise ConfigError(
            f"cannot fit the cascade on a run aggregated by {strategy!r}, a vote per statement the fit does not "
            f"rebuild; set {key} to one of {', '.join(STRATEGIES)} for the audit run (ragqa calibrate --fit-cascade)",
            key=key,
        )
