"""Typed judge prompts, one module per step; shared steps are shared modules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragqa.prompts.attribution import ATTRIBUTION
from ragqa.prompts.base import (
    DATA_CLOSE,
    DATA_OPEN,
    Example,
    Message,
    Prompt,
    data_block,
    read_data_blocks,
    system_rules,
)
from ragqa.prompts.claim_decomposition import CLAIM_DECOMPOSITION
from ragqa.prompts.context_usefulness import CONTEXT_USEFULNESS
from ragqa.prompts.context_usefulness_batch import CONTEXT_USEFULNESS_BATCH
from ragqa.prompts.correctness import CORRECTNESS
from ragqa.prompts.criteria import ASPECT_CRITIC, RUBRICS_SCORE, SIMPLE_CRITERIA
from ragqa.prompts.entities import ENTITIES
from ragqa.prompts.entities_batch import ENTITIES_BATCH
from ragqa.prompts.goal import GOAL_OUTCOME, OUTCOME_COMPARISON
from ragqa.prompts.nli import NLI
from ragqa.prompts.nli_matrix import NLI_MATRIX
from ragqa.prompts.nvidia import NVIDIA_PROMPTS
from ragqa.prompts.question_generation import QUESTION_GENERATION
from ragqa.prompts.question_generation_batch import QUESTION_GENERATION_BATCH
from ragqa.prompts.statement_relevance import STATEMENT_RELEVANCE
from ragqa.prompts.statements import STATEMENTS
from ragqa.prompts.topics import TOPIC_CLASSIFICATION, TOPIC_EXTRACTION, TOPIC_REFUSAL

__all__ = [
    "DATA_CLOSE",
    "DATA_OPEN",
    "PROMPTS",
    "Example",
    "Message",
    "Prompt",
    "data_block",
    "read_data_blocks",
    "system_rules",
]

PROMPTS: Mapping[str, Prompt[Any, Any]] = {
    p.name: p
    for p in (
        STATEMENTS,
        NLI,
        CONTEXT_USEFULNESS,
        ATTRIBUTION,
        ENTITIES,
        QUESTION_GENERATION,
        STATEMENT_RELEVANCE,
        *NVIDIA_PROMPTS,
        ASPECT_CRITIC,
        SIMPLE_CRITERIA,
        RUBRICS_SCORE,
        CLAIM_DECOMPOSITION,
        CORRECTNESS,
        *(GOAL_OUTCOME, OUTCOME_COMPARISON),
        *(TOPIC_EXTRACTION, TOPIC_REFUSAL, TOPIC_CLASSIFICATION),
        *(NLI_MATRIX, CONTEXT_USEFULNESS_BATCH, QUESTION_GENERATION_BATCH, ENTITIES_BATCH),  # the batched call plan
    )
}
"""Every prompt ragqa's metrics send, by name (names are unique and stable)."""
