"""Builders the container calls: judges, embedders, metrics and panel options from settings.

The container only declares providers; every ``if`` and loop of construction lives here. Each
judge or embedder that owns an HTTP client is registered with a :class:`Closer` so that
:func:`ragqa.container.close_container` can close it on the event loop that used it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ragqa.errors import ConfigError
from ragqa.evaluation import PanelOptions
from ragqa.judges.base import Embedder, Embedders, Judge
from ragqa.judges.providers import ProviderContext
from ragqa.jury.cascade import cascade_of
from ragqa.jury.probe import OrderProbeOptions
from ragqa.metrics import build_metric
from ragqa.metrics.base import Metric
from ragqa.metrics.validation import Limits
from ragqa.settings import CacheSettings, ResolvedChatModel, ResolvedEmbeddingModel, Settings, provider

if TYPE_CHECKING:  # the disk cache (and diskcache) is imported only when ragqa.cache.enabled
    from ragqa.cache import JudgeCache

__all__ = [
    "Closer",
    "HttpPolicy",
    "build_configured_embedders",
    "build_embedders",
    "build_judges",
    "build_metrics",
    "cached_embedders",
    "cached_judges",
    "embedder_fingerprint",
    "http_policy",
    "make_limiters",
    "open_cache",
    "panel_options",
    "uncached_embedder",
    "uncached_judge",
]

log = logging.getLogger(__name__)


class _Closable(Protocol):
    def aclose(self) -> Awaitable[None]: ...


class Closer:
    """Collects objects with an async ``aclose()`` and closes them once, in reverse order."""

    def __init__(self) -> None:
        """Start empty."""
        self._items: list[_Closable] = []

    def register(self, item: Any) -> None:
        """Remember ``item`` when it has an ``aclose`` coroutine method."""
        if callable(getattr(item, "aclose", None)):
            self._items.append(item)

    async def aclose(self) -> None:
        """Close everything registered; errors are logged, not raised (closing must not mask results)."""
        items, self._items = self._items[::-1], []
        for item in items:
            try:
                await item.aclose()
            except Exception:  # closing is best effort
                log.warning("closing %r failed", item, exc_info=True)


@dataclasses.dataclass(frozen=True)
class HttpPolicy:
    """How every HTTP judge and embedder of a container treats its endpoint.

    Attributes:
        failure_threshold: consecutive transport or timeout failures that open a circuit
            breaker (``ragqa.circuit-breaker.failure-threshold``).
        cool_down_s: seconds an open breaker fails fast before its first probe
            (``ragqa.circuit-breaker.cool-down``).
        max_cool_down_s: the cap of the cool-down, which doubles after each failed probe, seconds
            (``ragqa.circuit-breaker.max-cool-down``).
        max_response_bytes: the largest answer body read, bytes (``ragqa.limits.max-response-bytes``).
    """

    failure_threshold: int = 5
    cool_down_s: float = 1.0
    max_cool_down_s: float = 30.0
    max_response_bytes: int = 4 * 1024 * 1024

    def options(self) -> dict[str, Any]:
        """The keyword arguments of :class:`~ragqa.judges.openai.OpenAIJudge` and ``OpenAIEmbedder``."""
        return dataclasses.asdict(self)


def http_policy(settings: Settings) -> HttpPolicy:
    """The :class:`HttpPolicy` of ``settings`` (``ragqa.circuit-breaker`` and ``ragqa.limits``)."""
    breaker = settings.ragqa.circuit_breaker
    return HttpPolicy(
        failure_threshold=breaker.failure_threshold,
        cool_down_s=breaker.cool_down.total_seconds(),
        max_cool_down_s=breaker.max_cool_down.total_seconds(),
        max_response_bytes=settings.ragqa.limits.max_response_bytes,
    )


def make_limiters() -> Any:
    """The per-provider rate-limit registry shared by one container's judges and embedders."""
    from ragqa.judges.ratelimit import ProviderLimiters

    return ProviderLimiters()


def build_embedders(
    models: Sequence[ResolvedEmbeddingModel],
    limiters: Any,
    closer: Closer,
    *,
    http: HttpPolicy | None = None,
    cache: JudgeCache | None = None,
) -> list[Embedder]:
    """One embedder per configured embedding model, in order.

    Args:
        models: resolved embedding models (``Settings.embedders()``).
        limiters: the per-provider limiter registry shared by the container's judges and embedders.
        closer: receives every embedder that owns a client.
        cache: when given, every embedder answers texts it embedded before from it
            (:class:`~ragqa.cache.CachingEmbedder`, keyed by :func:`embedder_fingerprint`).
        http: the circuit breaker and answer-size cap of every HTTP embedder (default: :class:`HttpPolicy`).

    Raises:
        ConfigError: when a provider is unknown or serves no embedding models.
    """
    out: list[Embedder] = []
    context = ProviderContext(limiters, (http or HttpPolicy()).options())
    for m in models:
        source = provider(m.provider, f"embedding model {m.id!r}")
        make = getattr(source, "embedder", None)
        if make is None:
            raise ConfigError(
                f"embedding model {m.id!r}: provider {m.provider!r} serves no embedding models; "
                "choose another provider for it",
                key="spring.ai.embedding-models.list",
            )
        embedder: Embedder = make(m, context)
        closer.register(embedder)
        if cache is not None:
            from ragqa.cache import CachingEmbedder

            embedder = CachingEmbedder(
                embedder,
                cache,
                fingerprint=embedder_fingerprint(m, embedder),
                model=m.model,
                dimensions=m.options.dimensions,
            )
        out.append(embedder)
    return out


def embedder_fingerprint(model: ResolvedEmbeddingModel, embedder: Embedder) -> str:
    """The identity of an embedder's vectors for the cache, as a JSON string; never a key or header.

    The embedder's own ``fingerprint`` when it has one (the local embedder: method, dimensions,
    model package version); else provider, endpoint, model and dimensions of its settings.
    """
    own = getattr(embedder, "fingerprint", None)
    if isinstance(own, str):
        return own
    from ragqa.judges._http import openai_base_url

    return json.dumps(
        {
            "provider": model.provider,
            "base_url": openai_base_url(model.base_url),
            "model": model.model,
            "dimensions": model.options.dimensions,
        },
        sort_keys=True,
    )


def build_configured_embedders(
    settings: Settings,
    limiters: Any,
    closer: Closer,
    *,
    http: HttpPolicy | None = None,
    cache: JudgeCache | None = None,
) -> Embedders:
    """The embedders of ``settings``; when the settings cannot resolve them, none, with the reason kept.

    An embedding model whose ``api-key`` / ``base-url`` placeholder is unset does not stop a run
    that embeds nothing: the error is kept in :attr:`Embedders.unavailable` and reported, before
    any judge call, for the metrics that need embeddings (see :meth:`PanelEvaluator.validate
    <ragqa.evaluation.PanelEvaluator.validate>`). With ``cache``, embeddings are cached as in
    :func:`build_embedders`.
    """
    try:
        models = settings.embedders()
    except ConfigError as exc:
        log.debug("no embedder: %s", exc)
        return Embedders(unavailable=str(exc))
    built = build_embedders(models, limiters, closer, http=http, cache=cache)
    return Embedders(built)


def open_cache(settings: CacheSettings, closer: Closer) -> JudgeCache | None:
    """The disk cache of judge calls when ``ragqa.cache.enabled``, else ``None``."""
    if not settings.enabled:
        return None
    from ragqa.cache import JudgeCache

    cache = JudgeCache(settings.directory)
    closer.register(cache)
    return cache


def build_judges(
    models: Sequence[ResolvedChatModel],
    limiters: Any,
    closer: Closer,
    embedders: Sequence[Embedder] = (),
    cache: JudgeCache | None = None,
    *,
    http: HttpPolicy | None = None,
) -> list[Judge]:
    """One judge per configured chat model, in panel order.

    Args:
        models: resolved chat models (``Settings.judges()``).
        limiters: the per-provider limiter registry.
        closer: receives every judge that owns a client.
        embedders: configured embedders; a local judge with ``use-embeddings`` uses the first local one.
        cache: when given, every judge answers repeated calls from it.
        http: the circuit breaker and answer-size cap of every HTTP judge (default: :class:`HttpPolicy`).

    Each judge is built by the provider its ``provider:`` names (:mod:`ragqa.judges.providers`).

    Raises:
        ConfigError: when a provider is unknown.
    """
    out: list[Judge] = []
    context = ProviderContext(limiters, (http or HttpPolicy()).options(), [_uncached(e) for e in embedders])
    for m in models:
        judge: Judge = provider(m.provider, f"chat model {m.id!r}").judge(m, context)
        closer.register(judge)
        if cache is not None:
            from ragqa.cache import CachingJudge

            judge = CachingJudge(judge, cache)
        out.append(judge)
    return out


def cached_judges(judges: Sequence[Judge], cache: JudgeCache | None) -> list[Judge]:
    """The judges answering repeated calls from ``cache`` (:class:`~ragqa.cache.CachingJudge`); as given without one.

    The wrappers hold the very judges given, so a cached and an uncached run of one container share
    their HTTP clients and limiters.
    """
    if cache is None:
        return list(judges)
    from ragqa.cache import CachingJudge

    return [CachingJudge(judge, cache) for judge in judges]


def cached_embedders(embedders: Embedders, settings: Settings, cache: JudgeCache | None) -> Embedders:
    """The embedders answering texts they embedded before from ``cache``; as given without one.

    Each is keyed by :func:`embedder_fingerprint` of its configured model (``settings.embedders()``,
    in the same order as ``embedders``).
    """
    if cache is None or not embedders:
        return embedders
    from ragqa.cache import CachingEmbedder

    models = settings.embedders()
    wrapped = [
        CachingEmbedder(
            e, cache, fingerprint=embedder_fingerprint(m, e), model=m.model, dimensions=m.options.dimensions
        )
        for m, e in zip(models, embedders, strict=True)
    ]
    return Embedders(wrapped, unavailable=embedders.unavailable)


def uncached_judge(judge: Judge) -> Judge:
    """The judge inside a :class:`~ragqa.cache.CachingJudge`, else ``judge`` itself (for ``no_cache`` runs)."""
    cache_module = sys.modules.get("ragqa.cache")
    if cache_module is not None and isinstance(judge, cache_module.CachingJudge):
        inner: Judge = judge.inner
        return inner
    return judge


def uncached_embedder(embedder: Embedder) -> Embedder:
    """The embedder inside a :class:`~ragqa.cache.CachingEmbedder`, else ``embedder`` itself."""
    return _uncached(embedder)


def _uncached(embedder: Embedder) -> Embedder:
    """The embedder inside a :class:`~ragqa.cache.CachingEmbedder`, else ``embedder`` itself.

    Without ``ragqa.cache`` imported no caching embedder exists, so the check needs no import.
    """
    cache_module = sys.modules.get("ragqa.cache")
    if cache_module is not None and isinstance(embedder, cache_module.CachingEmbedder):
        inner: Embedder = embedder.inner
        return inner
    return embedder


def build_metrics(names: Sequence[str], options: Mapping[str, Mapping[str, Any]]) -> list[Metric]:
    """Build metrics by registry name with their configured options.

    Raises:
        ConfigError: for an unknown metric name or rejected options.
    """
    return [build_metric(name, options.get(name)) for name in names]


def panel_options(settings: Settings) -> PanelOptions:
    """Panel options from the ``ragqa:`` section."""
    return PanelOptions(
        strategy=settings.ragqa.aggregation.strategy,
        quorum=settings.ragqa.aggregation.quorum,
        extractor=settings.ragqa.jury.extractor,
        cascade=cascade_of(settings.ragqa.jury.cascade),
        language=settings.ragqa.language,
        call_plan=settings.ragqa.call_plan,
        repeats=settings.ragqa.repeats,
        reducer=settings.ragqa.repeat_reducer,
        confidence=settings.ragqa.confidence,
        max_concurrent_samples=settings.ragqa.concurrency.max_concurrent_samples,
        deadline_s=deadline.total_seconds() if (deadline := settings.ragqa.run.deadline) is not None else None,
        probes=tuple(settings.ragqa.probe.enabled),
        order_probe=OrderProbeOptions(
            share=(order := settings.ragqa.probe.order).share, seed=order.seed, max_change_rate=order.max_change_rate
        ),
        limits=Limits.from_settings(settings),
    )
