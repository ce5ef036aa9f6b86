"""Data shapes shared by every part of ragqa: samples in, per-judge and panel results out.

Field names follow RAGAS (``user_input``, ``response``, ``reference``, ``retrieved_contexts``,
``reference_contexts``); promptfoo's labelled chunks are ``context_chunks``. Results keep, per
judge, the score, the reason, the intermediate steps, tokens, latency and any failure, so the
report can show every judge next to the aggregate.

The shapes live in four modules of one concern each, all re-exported here (import them from
``ragqa.schema``): :mod:`~ragqa.schema.sample` (what is scored), :mod:`~ragqa.schema.results`
(per-judge outcomes and the aggregate), :mod:`~ragqa.schema.intervals` (confidence intervals and
their variance) and :mod:`~ragqa.schema.agreement` (how judges agree).
"""

from ragqa.schema.agreement import Agreement as Agreement
from ragqa.schema.agreement import (
    ContestedSample,
    JudgeBias,
    JudgeOrderConsistency,
    OrderConsistency,
    OrderProbeResult,
    PairAgreement,
)
from ragqa.schema.intervals import (
    DEFAULT_CONFIDENCE,
    AdviceOption,
    Decomposition,
    Interval,
    VarianceComponents,
    check_confidence,
)
from ragqa.schema.intervals import Lever as Lever
from ragqa.schema.results import Aggregate, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, RepeatOutcome, Usage
from ragqa.schema.sample import ContextChunk, Language, Sample

__all__ = [
    "DEFAULT_CONFIDENCE",
    "AdviceOption",
    "Aggregate",
    "ContestedSample",
    "ContextChunk",
    "Decomposition",
    "Interval",
    "JudgeBias",
    "JudgeFailure",
    "JudgeOrderConsistency",
    "JudgeOutcome",
    "Language",
    "MetricScore",
    "OrderConsistency",
    "OrderProbeResult",
    "PairAgreement",
    "PanelResult",
    "RepeatOutcome",
    "Sample",
    "Usage",
    "VarianceComponents",
    "check_confidence",
]
