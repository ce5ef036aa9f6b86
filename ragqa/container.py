"""The dependency-injector container: it only wires.

Applications get one with :func:`create_container` and close it with :func:`close_container`;
tests override providers (``container.judges.override(providers.Object([...]))``). Building
logic lives in :mod:`ragqa.factory`; every evaluator of ragqa comes from :attr:`Container.evaluator`,
with call-time keywords where a run or a test needs other parts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from dependency_injector import containers, providers

from ragqa import factory
from ragqa.evaluation import PanelEvaluator
from ragqa.settings import load_settings

__all__ = ["Container", "close_container", "create_container"]


class Container(containers.DeclarativeContainer):
    """Settings -> limiters -> embedders and judges -> metrics -> panel evaluator."""

    config = providers.Configuration()
    """``directory``, ``config_file``, ``profiles`` and ``environ`` of the settings load."""

    settings = providers.Singleton(
        load_settings,
        config.directory,
        config.profiles,
        config_file=config.config_file,
        environ=config.environ,
    )
    closer = providers.Singleton(factory.Closer)
    limiters = providers.Singleton(factory.make_limiters)
    http = providers.Singleton(factory.http_policy, settings)
    cache = providers.Singleton(factory.open_cache, settings.provided.ragqa.cache, closer)
    plain_embedders = providers.Singleton(
        factory.build_configured_embedders,
        settings,
        limiters,
        closer,
        http=http,
    )
    """The embedders without the cache (what a ``no_cache`` run uses; the cache is never opened for them)."""
    embedders = providers.Singleton(factory.cached_embedders, plain_embedders, settings, cache)
    """The embedders, each behind the cache when ``ragqa.cache.enabled`` (the same instances inside)."""
    plain_judges = providers.Singleton(
        factory.build_judges,
        settings.provided.judges.call(),
        limiters,
        closer,
        plain_embedders,
        http=http,
    )
    """The panel's judges without the cache (what a ``no_cache`` run uses)."""
    judges = providers.Singleton(factory.cached_judges, plain_judges, cache)
    """The panel's judges, each behind the cache when ``ragqa.cache.enabled`` (the same instances inside)."""
    metrics = providers.Singleton(
        factory.build_metrics, settings.provided.ragqa.metrics, settings.provided.ragqa.metric_options
    )
    panel_options = providers.Singleton(factory.panel_options, settings)
    evaluator = providers.Factory(
        PanelEvaluator, judges=judges, metrics=metrics, embedders=embedders, options=panel_options
    )
    """A new panel evaluator per call; every part is a keyword that a call may replace for that call only.

    ``container.evaluator(judges=subset, options=...)`` builds over the given parts and the
    container's others (a replaced part's provider is not even called); nothing is overridden, so
    the next call gets the container's parts again. The pytest plugin (a marker's judges, repeats)
    and the runner (the run's metrics, its ``no_cache`` judges) build their evaluators this way.
    """


def create_container(
    config: str | Path | None = None,
    profiles: Sequence[str] = (),
    *,
    environ: Mapping[str, str] | None = None,
) -> Container:
    """Create a container for ``config`` (an ``application.yaml`` path; default ``./application.yaml``).

    An explicit ``config`` must exist; the default may be absent (then the defaults, plus any
    profile found beside it or built into ragqa, e.g. ``local``).

    Settings are loaded and validated on first use (``container.settings()``); call it once at
    start-up to fail fast on configuration errors.

    Args:
        config: the base settings file; profile files are looked up beside it.
        profiles: active profiles (default: ``RAGQA_PROFILES_ACTIVE``).
        environ: variables for placeholders and overrides (default: the process environment).
    """
    path = Path(config) if config is not None else Path("application.yaml")
    container = Container()
    container.config.from_dict(
        {
            "directory": str(path.parent),
            "config_file": str(path) if config is not None else None,
            "profiles": list(profiles),
            "environ": dict(environ if environ is not None else os.environ),
        }
    )
    return container


async def close_container(container: Container) -> None:
    """Close every HTTP client the container's judges and embedders own (idempotent)."""
    await container.closer().aclose()
    container.reset_singletons()
