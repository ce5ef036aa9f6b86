"""ragqa: score RAG and LLM-agent answers with LLM-as-judge metrics across a panel of judges.

Every metric runs once per judge model of the panel configured in ``application.yaml``; the
report shows each judge's score next to the aggregate. Scores are RAGAS-compatible.

One call scores a dataset: ``ragqa.evaluate(data, metrics=[...], profile="local")`` (and
``await ragqa.aevaluate(...)``), the same run layer as ``ragqa evaluate``. Applications build the
panel from settings with :func:`ragqa.container.create_container` (kept out of this namespace so
that importing ragqa, and its pytest plugin, stays light; ``evaluate`` is imported on first use).
"""

from typing import TYPE_CHECKING, Any

from ragqa.aggregate import aggregate, combine
from ragqa.assertions import MetricAssertionError, assert_metric, check_metric
from ragqa.datasets import load_dataset
from ragqa.errors import (
    ConfigError,
    DatasetError,
    InvalidSamples,
    JudgeError,
    JudgeHTTPError,
    JudgeOutputError,
    JudgeRateLimited,
    JudgeTimeout,
    JudgeUnsupported,
    RagqaError,
    SampleError,
)
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges import Embedder, Judge
from ragqa.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from ragqa.metrics import (
    METRICS,
    AgentGoalAccuracy,
    AnswerAccuracy,
    AnswerCorrectness,
    AspectCritic,
    ContextEntityRecall,
    ContextPrecision,
    ContextRecall,
    ContextRelevance,
    FactualCorrectness,
    Faithfulness,
    Hallucination,
    Metric,
    MetricContext,
    NoiseSensitivity,
    ResponseGroundedness,
    ResponseRelevancy,
    ResponseRelevancyLLM,
    RubricsScore,
    SemanticSimilarity,
    SimpleCriteriaScore,
    ToolCallAccuracy,
    ToolCallF1,
    TopicAdherence,
    build_metric,
)
from ragqa.metrics.text import (
    BleuScore,
    ChrfScore,
    ExactMatch,
    LevenshteinDistance,
    RougeScore,
    StringMatch,
    StringPresence,
    StringSimilarity,
)
from ragqa.prompts import Prompt
from ragqa.render import csvfile as _csv_writer  # noqa: F401 - registers Report.to_csv's writer
from ragqa.render import files as _file_writers  # noqa: F401 - registers Report.to_jsonl's writer
from ragqa.render import frames as _frame_writer  # noqa: F401 - registers Report.to_pandas's writer
from ragqa.report import Report
from ragqa.schema import Aggregate, ContextChunk, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Sample, Usage

if TYPE_CHECKING:
    from ragqa.run.api import IncompleteRunWarning, aevaluate, evaluate
    from ragqa.run.spec import MetricSpec

_LAZY = {
    "IncompleteRunWarning": "ragqa.run.api",
    "aevaluate": "ragqa.run.api",
    "evaluate": "ragqa.run.api",
    "MetricSpec": "ragqa.run.spec",
}

__all__ = [
    "METRICS",
    "AIMessage",
    "AgentGoalAccuracy",
    "Aggregate",
    "AnswerAccuracy",
    "AnswerCorrectness",
    "AspectCritic",
    "BleuScore",
    "ChrfScore",
    "ConfigError",
    "ContextChunk",
    "ContextEntityRecall",
    "ContextPrecision",
    "ContextRecall",
    "ContextRelevance",
    "DatasetError",
    "Embedder",
    "ExactMatch",
    "FactualCorrectness",
    "Faithfulness",
    "Hallucination",
    "HumanMessage",
    "IncompleteRunWarning",
    "InvalidSamples",
    "Judge",
    "JudgeError",
    "JudgeFailure",
    "JudgeHTTPError",
    "JudgeOutcome",
    "JudgeOutputError",
    "JudgeRateLimited",
    "JudgeTimeout",
    "JudgeUnsupported",
    "LevenshteinDistance",
    "Metric",
    "MetricAssertionError",
    "MetricContext",
    "MetricScore",
    "MetricSpec",
    "NoiseSensitivity",
    "PanelEvaluator",
    "PanelOptions",
    "PanelResult",
    "Prompt",
    "RagqaError",
    "Report",
    "ResponseGroundedness",
    "ResponseRelevancy",
    "ResponseRelevancyLLM",
    "RougeScore",
    "RubricsScore",
    "Sample",
    "SampleError",
    "SemanticSimilarity",
    "SimpleCriteriaScore",
    "StringMatch",
    "StringPresence",
    "StringSimilarity",
    "ToolCall",
    "ToolCallAccuracy",
    "ToolCallF1",
    "ToolMessage",
    "TopicAdherence",
    "Usage",
    "aevaluate",
    "aggregate",
    "assert_metric",
    "build_metric",
    "check_metric",
    "combine",
    "evaluate",
    "load_dataset",
]


def __getattr__(name: str) -> Any:
    """Import the run layer's public names on first use (``ragqa.evaluate``), keeping ``import ragqa`` light."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragqa' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
