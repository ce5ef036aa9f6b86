"""The results of a run as data: the report model, its summaries, run comparisons and the writer registry."""

from __future__ import annotations

from ragqa.report.model import *  # noqa: F403
from ragqa.report.model import __all__ as __all__
