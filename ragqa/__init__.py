"""ragqa: score RAG and LLM-agent answers with LLM-as-judge metrics across a panel of judges.

Every metric runs once per judge model of the panel configured in ``application.yaml``; the
report shows each judge's score next to the aggregate. Scores are RAGAS-compatible.
"""

from ragqa.aggregate import aggregate, combine
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
from ragqa.metrics import METRICS, Faithfulness, Hallucination, Metric, MetricContext, build_metric
from ragqa.prompts import Prompt
from ragqa.report import Report
from ragqa.schema import Aggregate, ContextChunk, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Sample, Usage

__all__ = [
    "METRICS",
    "Aggregate",
    "ConfigError",
    "ContextChunk",
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
    "MetricContext",
    "MetricScore",
    "PanelEvaluator",
    "PanelOptions",
    "PanelResult",
    "Prompt",
    "RagqaError",
    "Report",
    "Sample",
    "SampleError",
    "Usage",
    "aggregate",
    "build_metric",
    "combine",
]
