"""ragqa: score RAG and LLM-agent answers with LLM-as-judge metrics across a panel of judges.

Every metric runs once per judge model of the panel configured in ``application.yaml``; the
report shows each judge's score next to the aggregate. Scores are RAGAS-compatible.

One call scores a dataset: ``ragqa.evaluate(data, metrics=[...], profile="local")`` (and
``await ragqa.aevaluate(...)``), the same run layer as ``ragqa evaluate``. Applications build the
panel from settings with :func:`ragqa.container.create_container` (kept out of this namespace so
that importing ragqa, and its pytest plugin, stays light; ``evaluate`` is imported on first use).
"""

# The public API is declared once, by the imports of this module: every public name bound here
# (imported as ``from module import Name as Name``, the form that tells type checkers it is
# re-exported) is in ``__all__``, which is derived from them; adding a public name is adding its
# import. Helpers of this module are private (``_typing``, ``_csv_writer``...) so as not to count.
import types as _types
import typing as _typing

from ragqa.aggregate import aggregate as aggregate
from ragqa.aggregate import combine as combine
from ragqa.assertions import MetricAssertionError as MetricAssertionError
from ragqa.assertions import assert_metric as assert_metric
from ragqa.assertions import check_metric as check_metric
from ragqa.datasets import load_dataset as load_dataset
from ragqa.errors import ConfigError as ConfigError
from ragqa.errors import DatasetError as DatasetError
from ragqa.errors import InvalidSamples as InvalidSamples
from ragqa.errors import JudgeError as JudgeError
from ragqa.errors import JudgeHTTPError as JudgeHTTPError
from ragqa.errors import JudgeOutputError as JudgeOutputError
from ragqa.errors import JudgeRateLimited as JudgeRateLimited
from ragqa.errors import JudgeTimeout as JudgeTimeout
from ragqa.errors import JudgeUnsupported as JudgeUnsupported
from ragqa.errors import RagqaError as RagqaError
from ragqa.errors import SampleError as SampleError
from ragqa.evaluation import PanelEvaluator as PanelEvaluator
from ragqa.evaluation import PanelOptions as PanelOptions
from ragqa.judges import Embedder as Embedder
from ragqa.judges import Judge as Judge
from ragqa.messages import AIMessage as AIMessage
from ragqa.messages import HumanMessage as HumanMessage
from ragqa.messages import ToolCall as ToolCall
from ragqa.messages import ToolMessage as ToolMessage
from ragqa.metrics import METRICS as METRICS
from ragqa.metrics import AgentGoalAccuracy as AgentGoalAccuracy
from ragqa.metrics import AnswerAccuracy as AnswerAccuracy
from ragqa.metrics import AnswerCorrectness as AnswerCorrectness
from ragqa.metrics import AspectCritic as AspectCritic
from ragqa.metrics import ContextEntityRecall as ContextEntityRecall
from ragqa.metrics import ContextPrecision as ContextPrecision
from ragqa.metrics import ContextRecall as ContextRecall
from ragqa.metrics import ContextRelevance as ContextRelevance
from ragqa.metrics import FactualCorrectness as FactualCorrectness
from ragqa.metrics import Faithfulness as Faithfulness
from ragqa.metrics import Hallucination as Hallucination
from ragqa.metrics import Metric as Metric
from ragqa.metrics import MetricContext as MetricContext
from ragqa.metrics import NoiseSensitivity as NoiseSensitivity
from ragqa.metrics import ResponseGroundedness as ResponseGroundedness
from ragqa.metrics import ResponseRelevancy as ResponseRelevancy
from ragqa.metrics import ResponseRelevancyLLM as ResponseRelevancyLLM
from ragqa.metrics import RubricsScore as RubricsScore
from ragqa.metrics import SemanticSimilarity as SemanticSimilarity
from ragqa.metrics import SimpleCriteriaScore as SimpleCriteriaScore
from ragqa.metrics import ToolCallAccuracy as ToolCallAccuracy
from ragqa.metrics import ToolCallF1 as ToolCallF1
from ragqa.metrics import TopicAdherence as TopicAdherence
from ragqa.metrics import build_metric as build_metric
from ragqa.metrics.text import BleuScore as BleuScore
from ragqa.metrics.text import ChrfScore as ChrfScore
from ragqa.metrics.text import ExactMatch as ExactMatch
from ragqa.metrics.text import LevenshteinDistance as LevenshteinDistance
from ragqa.metrics.text import RougeScore as RougeScore
from ragqa.metrics.text import StringMatch as StringMatch
from ragqa.metrics.text import StringPresence as StringPresence
from ragqa.metrics.text import StringSimilarity as StringSimilarity
from ragqa.prompts import Prompt as Prompt
from ragqa.render import csvfile as _csv_writer  # noqa: F401 - registers Report.to_csv's writer
from ragqa.render import files as _file_writers  # noqa: F401 - registers Report.to_jsonl's writer
from ragqa.render import frames as _frame_writer  # noqa: F401 - registers Report.to_pandas's writer
from ragqa.report import Report as Report
from ragqa.schema import Aggregate as Aggregate
from ragqa.schema import ContextChunk as ContextChunk
from ragqa.schema import JudgeFailure as JudgeFailure
from ragqa.schema import JudgeOutcome as JudgeOutcome
from ragqa.schema import MetricScore as MetricScore
from ragqa.schema import PanelResult as PanelResult
from ragqa.schema import Sample as Sample
from ragqa.schema import Usage as Usage

if _typing.TYPE_CHECKING:
    from ragqa.run.api import IncompleteRunWarning as IncompleteRunWarning
    from ragqa.run.api import aevaluate as aevaluate
    from ragqa.run.api import evaluate as evaluate
    from ragqa.run.spec import MetricSpec as MetricSpec

_LAZY = {
    "IncompleteRunWarning": "ragqa.run.api",
    "aevaluate": "ragqa.run.api",
    "evaluate": "ragqa.run.api",
    "MetricSpec": "ragqa.run.spec",
}
"""Public names of the run layer, imported on first use (also imported above for type checkers)."""


def _sort_key(name: str) -> tuple[int, str]:
    """Ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


__all__ = sorted(
    {name for name, value in globals().items() if not name.startswith("_") and not isinstance(value, _types.ModuleType)}
    | set(_LAZY),
    key=_sort_key,
)


def __getattr__(name: str) -> _typing.Any:
    """Import the run layer's public names on first use (``ragqa.evaluate``), keeping ``import ragqa`` light."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragqa' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
