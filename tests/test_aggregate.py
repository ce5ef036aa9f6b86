import math

import pytest

from ragqa.aggregate import aggregate, combine

NAN = float("nan")


@pytest.mark.parametrize(
    ("strategy", "scores", "expected"),
    [
        ("mean", [0.2, 0.4, 0.9], 0.5),
        ("median", [0.2, 0.4, 0.9], 0.4),
        ("median", [0.2, 0.4, 0.6, 0.9], 0.5),
        ("min", [0.2, 0.4, 0.9], 0.2),
        ("max", [0.2, 0.4, 0.9], 0.9),
        ("majority", [0.6, 0.7, 0.1], 1.0),
        ("majority", [0.6, 0.1], 0.0),  # a tie is not a majority (spring-ai-ragas MAJORITY_VOTING)
        ("majority", [0.4, 0.1, 0.9], 0.0),
    ],
)
def test_strategies(strategy: str, scores: list[float], expected: float) -> None:
    assert combine(scores, strategy) == pytest.approx(expected)  # type: ignore[arg-type]


def test_nan_is_unscored_not_zero() -> None:
    agg = aggregate([1.0, NAN, 0.5])
    assert agg.value == pytest.approx(0.75)
    assert (agg.n_ok, agg.n_nan) == (2, 1)
    assert agg.spread == pytest.approx(0.5)


def test_all_nan_or_empty_gives_nan_not_zero() -> None:
    assert math.isnan(aggregate([NAN, NAN]).value)
    empty = aggregate([], n_failed=3)
    assert math.isnan(empty.value) and math.isnan(empty.spread)
    assert empty.n_failed == 3 and not empty.quorum_met


def test_quorum() -> None:
    below = aggregate([0.8], n_failed=2, quorum=2)
    assert math.isnan(below.value) and not below.quorum_met
    met = aggregate([0.8, 0.6], n_failed=1, quorum=2)
    assert met.value == pytest.approx(0.7) and met.quorum_met


def test_single_judge_spread_is_zero() -> None:
    assert aggregate([0.3]).spread == 0.0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="quorum"):
        aggregate([0.1], quorum=0)
    with pytest.raises(ValueError, match="unknown aggregation"):
        combine([0.1], "average")  # type: ignore[arg-type]
