"""The metric registry: every metric ragqa ships, by name, and those registered or installed (:mod:`.registry`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ragqa.errors import ConfigError
from ragqa.interpretation import Band, register_scale_source
from ragqa.metrics.agent_goal_accuracy import AgentGoalAccuracy
from ragqa.metrics.answer_accuracy import AnswerAccuracy
from ragqa.metrics.answer_correctness import AnswerCorrectness
from ragqa.metrics.aspect_critic import AspectCritic
from ragqa.metrics.base import CALL_PLANS, CallPlan, Direction, Metric, MetricContext
from ragqa.metrics.context_entity_recall import ContextEntityRecall
from ragqa.metrics.context_precision import ContextPrecision
from ragqa.metrics.context_recall import ContextRecall
from ragqa.metrics.context_relevance import ContextRelevance
from ragqa.metrics.factual_correctness import FactualCorrectness
from ragqa.metrics.faithfulness import Faithfulness
from ragqa.metrics.hallucination import Hallucination
from ragqa.metrics.noise_sensitivity import NoiseSensitivity
from ragqa.metrics.registry import ENTRY_POINT_GROUP, MetricRegistry
from ragqa.metrics.response_groundedness import ResponseGroundedness
from ragqa.metrics.response_relevancy import ResponseRelevancy
from ragqa.metrics.response_relevancy_llm import ResponseRelevancyLLM
from ragqa.metrics.rubrics_score import RubricsScore
from ragqa.metrics.semantic_similarity import SemanticSimilarity
from ragqa.metrics.simple_criteria import SimpleCriteriaScore
from ragqa.metrics.text import (
    TEXT_METRICS,
    BleuScore,
    ChrfScore,
    ExactMatch,
    LevenshteinDistance,
    RougeScore,
    StringMatch,
    StringPresence,
    StringSimilarity,
)
from ragqa.metrics.tool_call_accuracy import ToolCallAccuracy
from ragqa.metrics.tool_call_f1 import ToolCallF1
from ragqa.metrics.topic_adherence import TopicAdherence

__all__ = [
    "CALL_PLANS",
    "ENTRY_POINT_GROUP",
    "METRICS",
    "AgentGoalAccuracy",
    "AnswerAccuracy",
    "AnswerCorrectness",
    "AspectCritic",
    "BleuScore",
    "CallPlan",
    "ChrfScore",
    "ContextEntityRecall",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "Direction",
    "ExactMatch",
    "FactualCorrectness",
    "Faithfulness",
    "Hallucination",
    "LevenshteinDistance",
    "Metric",
    "MetricContext",
    "NoiseSensitivity",
    "ResponseGroundedness",
    "ResponseRelevancy",
    "ResponseRelevancyLLM",
    "RougeScore",
    "RubricsScore",
    "SemanticSimilarity",
    "SimpleCriteriaScore",
    "StringMatch",
    "StringPresence",
    "StringSimilarity",
    "ToolCallAccuracy",
    "ToolCallF1",
    "TopicAdherence",
    "build_metric",
    "register_metric",
    "value_ranges",
]

METRICS: MetricRegistry = MetricRegistry(
    (
        Faithfulness,
        Hallucination,
        NoiseSensitivity,
        ContextPrecision,
        ContextRecall,
        ContextEntityRecall,
        ResponseRelevancy,
        ResponseRelevancyLLM,
        FactualCorrectness,
        AnswerCorrectness,
        SemanticSimilarity,
        AnswerAccuracy,
        ContextRelevance,
        ResponseGroundedness,
        AspectCritic,
        SimpleCriteriaScore,
        RubricsScore,
        ToolCallAccuracy,
        ToolCallF1,
        AgentGoalAccuracy,
        TopicAdherence,
        *TEXT_METRICS,
    )
)
"""Every metric class by registry name, in the order ``ragqa metrics`` lists them; installed packages'
metrics (entry-point group ``ragqa.metrics``) and registered ones come after the built-ins."""


def _registry_scale(name: str, direction: Direction | None) -> Sequence[Band] | None:
    """The interpretation scale of a registered metric (:meth:`Metric.interpretation_scale`), or ``None``."""
    return METRICS[name].interpretation_scale(direction) if name in METRICS else None


register_scale_source(_registry_scale)

register_metric = METRICS.register
"""Class decorator: ``@register_metric`` on a :class:`Metric` subclass makes it usable by its ``name``
in ``application.yaml``, ``--metrics``, promptfoo files and :func:`ragqa.evaluate` (see :mod:`.registry`)."""


def value_ranges(keys: Iterable[str]) -> dict[str, tuple[float, float]]:
    """The closed score range of each metric key whose metric is registered (``x(mode=y)`` is ``x``'s).

    For summaries made from a results file, which names its metrics by key only: the intervals of
    :func:`ragqa.report.summarize` are clamped to these ranges (a key of an unknown metric is left
    out, so its intervals are not clamped).
    """
    ranges = {}
    for key in keys:
        name = key.split("(", 1)[0].strip()
        if name in METRICS:
            ranges[key] = METRICS[name].value_range
    return ranges


def build_metric(name: str, options: Mapping[str, Any] | None = None) -> Metric:
    """Build the metric ``name`` with keyword ``options``.

    Raises:
        ConfigError: for an unknown name (with the closest names) or options the metric rejects.
    """
    import difflib
    import inspect

    cls = METRICS.get(name)
    if cls is None:
        close = difflib.get_close_matches(name, list(METRICS), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"unknown metric {name!r}.{hint} Known: {', '.join(METRICS)}", key="ragqa.metrics")
    factory: Callable[..., Metric] = cls
    accepted = [
        p.name
        for p in inspect.signature(cls).parameters.values()
        if p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    unknown = [k for k in (options or {}) if k not in accepted]
    if unknown:
        hints = "".join(
            f" Did you mean {', '.join(close)} for {k!r}?"
            for k in unknown
            if (close := difflib.get_close_matches(k, accepted, n=2))
        )
        raise ConfigError(
            f"bad options for metric {name!r}: unknown option(s) {', '.join(map(repr, unknown))}.{hints} "
            f"Options: {', '.join(accepted) or 'none'}",
            key=f"ragqa.metric-options.{name}",
        )
    try:
        return factory(**dict(options or {}))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"bad options for metric {name!r}: {exc}", key=f"ragqa.metric-options.{name}") from exc
