"""The offline local judge and embedder (``provider: local``): no key, no network, no download.

An approximation of an LLM judge, labelled as such in every reason it gives; its agreement with
human labels is measured in ``docs/local-judge.md``. Its graded answers are the subclasses of
:mod:`ragqa.judges.local.graded`.
"""

from ragqa.judges.local.embedder import LocalEmbedder, hashing_vector, minilm_available
from ragqa.judges.local.graded import (
    GradedAttribution,
    GradedAttributionOutput,
    GradedContextRelevance1Output,
    GradedContextRelevance2Output,
    GradedContextUsefulnessOutput,
    GradedNLIOutput,
    GradedRelevanceOutput,
    GradedRelevanceVerdict,
    GradedStatementVerdict,
)
from ragqa.judges.local.judge import (
    ALGORITHM_VERSION,
    HANDLERS,
    LocalJudge,
    extract_entities,
    register_handler,
    statements_of,
)
from ragqa.judges.local.support import SupportConfig, SupportResult, support
from ragqa.judges.local.text import claims, split_sentences

__all__ = [
    "ALGORITHM_VERSION",
    "HANDLERS",
    "GradedAttribution",
    "GradedAttributionOutput",
    "GradedContextRelevance1Output",
    "GradedContextRelevance2Output",
    "GradedContextUsefulnessOutput",
    "GradedNLIOutput",
    "GradedRelevanceOutput",
    "GradedRelevanceVerdict",
    "GradedStatementVerdict",
    "LocalEmbedder",
    "LocalJudge",
    "SupportConfig",
    "SupportResult",
    "claims",
    "extract_entities",
    "hashing_vector",
    "minilm_available",
    "register_handler",
    "split_sentences",
    "statements_of",
    "support",
]
