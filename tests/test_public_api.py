import ast
import inspect

import ragqa

PUBLIC_NAMES = frozenset(
    {
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
    }
)
"""The public names as of the change that derived ``ragqa.__all__`` from the package's imports.

A guard against losing a name, not a second list to keep: a new public name needs no edit here;
removing one (a breaking change) does.
"""


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_unique_and_importable() -> None:
    assert ragqa.__all__ == sorted(set(ragqa.__all__), key=_isort_key)
    for name in ragqa.__all__:
        assert getattr(ragqa, name) is not None


def test_no_public_name_is_lost() -> None:
    assert set(ragqa.__all__) >= PUBLIC_NAMES


def test_all_is_exactly_the_names_imported_for_reexport() -> None:
    """``__all__`` is the ``import X as X`` names of ragqa/__init__.py (type checkers' re-export form), nothing else."""
    tree = ast.parse(inspect.getsource(ragqa))
    reexported = {
        alias.asname
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname == alias.name
    }
    assert set(ragqa.__all__) == reexported


def test_lazy_names_are_imported_for_type_checkers_from_their_module() -> None:
    tree = ast.parse(inspect.getsource(ragqa))
    checked = {
        alias.asname: node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for node in node.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert checked == ragqa._LAZY


def test_every_registered_metric_is_exported() -> None:
    exported = {id(getattr(ragqa, n)) for n in ragqa.__all__}
    assert all(id(cls) in exported for cls in ragqa.METRICS.values())
