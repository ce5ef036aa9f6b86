"""The result of one promptfoo-style case, shared by the run (:mod:`.running`) and the output (:mod:`.output`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragqa.assertions import MetricVerdict
    from ragqa.promptfoo.loading import PromptfooCase

__all__ = ["CaseResult"]


@dataclass
class CaseResult:
    """A scored case: its verdict, and the wall time in seconds."""

    case: PromptfooCase
    verdict: MetricVerdict
    seconds: float = 0.0
