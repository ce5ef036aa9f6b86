"""Pure maths shared by several metrics. No I/O, no judges; every function is table-tested.

NaN means "unscored": these functions return ``nan`` where RAGAS does, and never turn it into 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "ExactSum",
    "average_precision",
    "cosine",
    "count_of",
    "fbeta",
    "finite_mean",
    "mean_or_nan",
    "nan_mean",
    "nan_padded",
    "ratio",
]

NAN = float("nan")


def mean_or_nan(values: Sequence[float]) -> float:
    """Arithmetic mean of ``values``; NaN for an empty sequence (NaNs inside propagate).

    Args:
        values: numbers, typically verdicts in [0, 1].

    Returns:
        The mean, or NaN when ``values`` is empty.
    """
    return math.fsum(values) / len(values) if values else NAN


def nan_mean(values: Sequence[float]) -> float:
    """Mean ignoring NaNs (RAGAS's ``safe_nanmean``); NaN when no finite value remains."""
    finite = [v for v in values if not math.isnan(v)]
    return mean_or_nan(finite)


class ExactSum:
    """A running sum that ends as :func:`math.fsum` of every value added, whatever their order, in O(1) memory.

    It keeps Shewchuk's non-overlapping partials (J. R. Shewchuk, "Adaptive Precision
    Floating-Point Arithmetic and Fast Robust Geometric Predicates", Discrete & Computational
    Geometry 18, 1997; the algorithm behind :func:`math.fsum`): their exact sum is the exact sum of
    the values, so :attr:`value`, the correctly rounded sum of the partials, equals ``math.fsum``
    of the values, bit for bit. A handful of partials at most for values of one magnitude range.
    :meth:`remove` takes a value out again exactly. Non-finite values are counted apart and give
    what ``math.fsum`` gives (NaN, ``inf``, or :class:`ValueError` for ``inf`` and ``-inf``
    together); a sum whose partials overflow is not supported (``math.fsum`` raises then).
    """

    __slots__ = ("_nan", "_ninf", "_partials", "_pinf")

    def __init__(self) -> None:
        """Start at 0.0."""
        self._partials: list[float] = []
        self._nan = self._pinf = self._ninf = 0

    def add(self, x: float) -> None:
        """Add ``x``."""
        if not math.isfinite(x):
            self._special(x, 1)
            return
        partials = self._partials
        i = 0
        for y in partials:
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo:
                partials[i] = lo
                i += 1
            x = hi
        partials[i:] = [x]

    def remove(self, x: float) -> None:
        """Take out an ``x`` added before (exactly: the sum is as if it was never added)."""
        if math.isfinite(x):
            self.add(-x)
        else:
            self._special(x, -1)

    def _special(self, x: float, step: int) -> None:
        if math.isnan(x):
            self._nan += step
        elif x > 0:
            self._pinf += step
        else:
            self._ninf += step

    @property
    def value(self) -> float:
        """``math.fsum`` of the values added (and not removed); 0.0 when none.

        Raises:
            ValueError: when both ``inf`` and ``-inf`` were added (as ``math.fsum``).
        """
        specials = [NAN] * bool(self._nan) + [math.inf] * bool(self._pinf) + [-math.inf] * bool(self._ninf)
        return math.fsum(specials + self._partials)


def finite_mean(values: Iterable[float]) -> float:
    """Mean of the finite values (NaN and infinities left out); NaN when none remains.

    Args:
        values: numbers, e.g. one judge's scores over its repeats.

    Returns:
        The mean of the finite values, or NaN.
    """
    return mean_or_nan([v for v in values if math.isfinite(v)])


def nan_padded(rows: Iterable[Sequence[float]]) -> list[list[float]]:
    """Ragged rows as a rectangle: each row padded on the right with NaN to the longest row's length.

    Args:
        rows: e.g. one sample's values per judge, one per repeat (judges may have fewer repeats).

    Returns:
        New lists, all as long as the longest row (``[]`` for no row); the values are not copied
        or changed, only NaN appended. The (judges, repeats) shape
        :func:`ragqa.uncertainty.sample_interval` takes.
    """
    lists = [list(row) for row in rows]
    width = max((len(row) for row in lists), default=0)
    return [row + [NAN] * (width - len(row)) for row in lists]


def ratio(numerator: float, denominator: float, *, eps: float = 0.0) -> float:
    """``numerator / (denominator + eps)``; NaN when the denominator is 0 and ``eps`` is 0."""
    if denominator + eps == 0:
        return NAN
    return numerator / (denominator + eps)


def average_precision(verdicts: Sequence[float], *, eps: float = 1e-10) -> float:
    """Average precision over ranked usefulness verdicts, exactly as RAGAS computes it.

    ``AP = sum_i v_i * (cum_i / i) / (sum_i v_i + eps)`` with ``cum_i = sum_{k<=i} v_k``
    (RAGAS ``_context_precision.py``). With RAGAS's ``eps=1e-10`` an all-useful list is never
    exactly 1.0 (K useful -> K / (K + 1e-10)); an empty or all-zero list gives 0.0.

    Args:
        verdicts: v_i in {0, 1}, in retrieval order (rank 1 first).
        eps: the denominator epsilon (RAGAS: 1e-10; pass 0.0 for the exact AP).

    Returns:
        AP in [0, 1]; 0.0 when nothing is useful.
    """
    cumulative = 0.0
    total = 0.0
    for i, v in enumerate(verdicts, start=1):
        cumulative += v
        total += v * (cumulative / i)
    denominator = math.fsum(verdicts) + eps
    return total / denominator if denominator else 0.0


def fbeta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float:
    """F-beta as RAGAS's ``fbeta_score``: P = 0 if TP+FP = 0, R = 0 if TP+FN = 0, 0 if P = R = 0.

    Returns:
        ``(1 + beta^2) P R / (beta^2 P + R)`` in [0, 1].
    """
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    if precision == 0 and recall == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors of equal length (raw, not clipped: in [-1, 1]).

    Returns:
        The cosine, or NaN when either vector has zero norm.

    Raises:
        ValueError: when the lengths differ.
    """
    if len(a) != len(b):
        raise ValueError(f"vectors differ in length: {len(a)} vs {len(b)}")
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    if na == 0 or nb == 0:
        return NAN
    return dot / (na * nb)


def count_of(values: Sequence[float]) -> str:
    """How many of ``values`` count, as a reason states it: ``"2"``, or ``"1.58 (graded)"``.

    With 0/1 verdicts (LLM judges) it is the number of ones. With graded values (the local
    judge's supports in [0, 1]) a count of values >= 0.5 would contradict the score (``0 of 1
    attributed`` beside a score of 0.19), so it is their sum with two decimals, marked graded.

    Args:
        values: ``float[n]`` in [0, 1].

    Returns:
        The count as text for "<count> of <n> ..." reasons.
    """
    if all(v in (0.0, 1.0) for v in values):
        return str(int(math.fsum(values)))
    return f"{math.fsum(values):.2f} (graded)"
