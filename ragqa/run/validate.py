"""The run layer's name for the one sample validator, :mod:`ragqa.metrics.validation` (re-exported).

Every entry point validates samples with :func:`validate_run` and the same :class:`Limits`: the
runner before a dataset run, and :class:`~ragqa.run.check.SampleRunner` (with a
:class:`~ragqa.evaluation.PanelEvaluator`) for one sample of an assertion or a ``ragqa test`` case.
"""

from __future__ import annotations

from ragqa.metrics.validation import Limits, Validation, limit_problems, validate_run, validate_sample

__all__ = ["Limits", "Validation", "limit_problems", "validate_run", "validate_sample"]
