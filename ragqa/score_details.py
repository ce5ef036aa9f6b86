"""The typed view of a score's statements: which statements a judge checked and which failed.

A metric's :attr:`~ragqa.schema.MetricScore.details` stay a free JSON-like mapping (the results
file keeps them as they are). What assertions, the pytest plugin and ``ragqa test`` read from them
is declared here, once, as :class:`StatementDetails`, and reached through
:attr:`ragqa.schema.MetricScore.statement_details` and :attr:`~ragqa.schema.MetricScore.failed_statements`.

The detail keys a metric writes for it (the contract; ``tests/metrics/test_score_details.py`` checks that
every built-in statement metric keeps it):

- ``statements``: the statements checked, in order (``list[str]``);
- ``verdicts``: one support value per statement in [0, 1] (faithfulness, hallucination, response
  relevancy): a statement **fails** when its verdict is below 0.5;
- ``counted``: one value per statement in [0, 1] (noise sensitivity): a statement **fails** (is
  counted against the response) when its value is at least 0.5;
- an explicit list of the failing statements, which wins over the two above:
  :data:`FAILED_KEYS` (strings, or objects with a ``statement`` or ``text``), as faithfulness's
  and factual correctness's ``unsupported``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FAILED_KEYS", "StatementDetails", "statement_details"]

FAILED_KEYS: tuple[str, ...] = (
    "failed_statements",
    "unsupported_statements",
    "incorrect_statements",
    "unsupported",
    "incorrect",
)
"""Detail keys that list failing statements explicitly, first present wins."""


@dataclass(frozen=True)
class StatementDetails:
    """What a score says about its statements.

    Attributes:
        statements: the statements checked (``details["statements"]``), empty when none.
        verdicts: one support value per statement (< 0.5 fails), or ``None`` when absent or not
            parallel to :attr:`statements`.
        counted: one counted-against value per statement (>= 0.5 fails), or ``None`` likewise.
        failed: the failing statements, in order: the explicit list (:data:`FAILED_KEYS`) when
            there is one, else those whose ``counted`` is >= 0.5, else those whose ``verdicts``
            is < 0.5; empty when the details say nothing about failures.
    """

    statements: list[str] = field(default_factory=list)
    verdicts: list[float] | None = None
    counted: list[float] | None = None
    failed: list[str] = field(default_factory=list)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _parallel(values: Any, n: int) -> list[float | None] | None:
    if not isinstance(values, list) or len(values) != n:
        return None
    return [_number(v) for v in values]


def _explicit(details: Mapping[str, Any]) -> list[str] | None:
    for key in FAILED_KEYS:
        items = details.get(key)
        if isinstance(items, list):
            out: list[str] = []
            for item in items:
                text = item.get("statement", item.get("text")) if isinstance(item, Mapping) else item
                if isinstance(text, str):
                    out.append(text)
            return out
    return None


def statement_details(details: Mapping[str, Any]) -> StatementDetails:
    """Read :class:`StatementDetails` from a score's details (pure; see the module docstring).

    Values that are not numbers (``None``, booleans, text) in ``verdicts`` or ``counted`` never
    mark a statement as failing; lists of another length than ``statements`` are ignored.

    Args:
        details: a :attr:`~ragqa.schema.MetricScore.details` mapping.

    Returns:
        The statements, their per-statement values and the failing ones.
    """
    raw = details.get("statements")
    statements = [str(s) for s in raw] if isinstance(raw, list) else []
    n = len(statements) if isinstance(raw, list) else -1
    verdicts, counted = _parallel(details.get("verdicts"), n), _parallel(details.get("counted"), n)
    explicit = _explicit(details)
    if explicit is not None:
        failed = explicit
    elif counted is not None:
        failed = [s for s, c in zip(statements, counted, strict=True) if c is not None and c >= 0.5]
    elif verdicts is not None:
        failed = [s for s, v in zip(statements, verdicts, strict=True) if v is not None and v < 0.5]
    else:
        failed = []
    return StatementDetails(
        statements=statements,
        verdicts=None if verdicts is None else [v if v is not None else float("nan") for v in verdicts],
        counted=None if counted is None else [c if c is not None else float("nan") for c in counted],
        failed=failed,
    )
