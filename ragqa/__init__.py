"""ragqa: score RAG and LLM-agent answers with LLM-as-judge metrics across a panel of judges.

Every metric runs once per judge model of the panel configured in ``application.yaml``; the
report shows each judge's score next to the aggregate. Scores are RAGAS-compatible.

Applications build the panel from settings with :func:`ragqa.container.create_container`
(kept out of this namespace so that importing ragqa, and its pytest plugin, stays light).
"""

from ragqa.aggregate import aggregate, combine
from ragqa.assertions import MetricAssertionError, assert_metric, check_metric
from ragqa.datasets import load_dataset
from ragqa.errors import (
    ConfigError,
    DatasetError,
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
from ragqa.metrics import (
    METRICS,
    ContextEntityRecall,
    ContextPrecision,
    ContextRecall,
    Faithfulness,
    Hallucination,
    Metric,
    MetricContext,
    NoiseSensitivity,
    ResponseRelevancy,
    ResponseRelevancyLLM,
    build_metric,
)
from ragqa.prompts import Prompt
from ragqa.report import Report
from ragqa.schema import Aggregate, ContextChunk, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Sample, Usage

__all__ = [
    "METRICS",
    "Aggregate",
    "ConfigError",
    "ContextChunk",
    "ContextEntityRecall",
    "ContextPrecision",
    "ContextRecall",
    "DatasetError",
    "Embedder",
    "Faithfulness",
    "Hallucination",
    "Judge",
    "JudgeError",
    "JudgeFailure",
    "JudgeHTTPError",
    "JudgeOutcome",
    "JudgeOutputError",
    "JudgeRateLimited",
    "JudgeTimeout",
    "JudgeUnsupported",
    "Metric",
    "MetricAssertionError",
    "MetricContext",
    "MetricScore",
    "NoiseSensitivity",
    "PanelEvaluator",
    "PanelOptions",
    "PanelResult",
    "Prompt",
    "RagqaError",
    "Report",
    "ResponseRelevancy",
    "ResponseRelevancyLLM",
    "Sample",
    "SampleError",
    "Usage",
    "aggregate",
    "assert_metric",
    "build_metric",
    "check_metric",
    "combine",
    "load_dataset",
]
