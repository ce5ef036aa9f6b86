"""ragqa._pairwise: numpy's sums and correlation from pieces equal numpy's on the whole array, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from ragqa._pairwise import LEAF, pairwise_mean, pairwise_sum, pairwise_var, row_correlation


def _pieces(values: np.ndarray, size: int) -> list[np.ndarray]:
    return [values[i : i + size].copy() for i in range(0, values.size, size)]


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 127, 128, 129, LEAF - 1, LEAF, LEAF + 1, 2 * LEAF + 17, 1_000_003])
@pytest.mark.parametrize("piece", [1, 5, 4096, LEAF - 1, LEAF, LEAF + 1])
@pytest.mark.slow
def test_the_sum_of_pieces_is_numpys_sum_of_the_whole_array(n: int, piece: int) -> None:
    if n > 200_000 and piece < 4096:
        pytest.skip("a million one-value pieces: slow, and the sizes above cover the boundaries")
    rng = np.random.default_rng(n + piece)
    values = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)  # sums that rounding changes
    assert pairwise_sum(_pieces(values, piece), n) == np.sum(values)
    if n:
        assert pairwise_mean(_pieces(values, piece), n) == np.mean(values)


def test_a_naive_or_exact_sum_differs_so_the_order_is_what_the_test_pins() -> None:
    values = np.random.default_rng(3).standard_normal(300_001) * 1e6
    assert pairwise_sum(_pieces(values, 1000), values.size) == np.sum(values)
    assert sum(values.tolist()) != np.sum(values)  # the left-to-right sum is another float


@pytest.mark.slow
def test_random_sizes_and_pieces_match() -> None:
    rng = np.random.default_rng(20)
    for _ in range(40):
        n = int(rng.integers(1, 600_000))
        values = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
        piece = int(rng.integers(1, 100_000))
        assert pairwise_sum(_pieces(values, piece), n) == np.sum(values)


def test_a_two_dimensional_piece_is_read_in_c_order() -> None:
    values = np.random.default_rng(5).standard_normal((70_001, 3))
    assert pairwise_sum([values[:40_000], values[40_000:]], values.size) == np.sum(values)


def test_too_few_values_raise() -> None:
    with pytest.raises(StopIteration):
        pairwise_sum([np.ones(3)], 4)


@pytest.mark.parametrize("n", [2, 3, 1000, 200_001])
def test_row_correlation_is_numpys_corrcoef(n: int) -> None:
    rng = np.random.default_rng(n)
    for x, y in (
        (rng.standard_normal(n), rng.standard_normal(n)),
        (rng.integers(0, 4, n).astype(float), rng.integers(0, 3, n) / 3),  # few distinct values, ties
        (np.arange(n, dtype=float), np.arange(n, dtype=float) * -2.0),
    ):
        with np.errstate(divide="ignore", invalid="ignore"):  # a constant row: NaN both ways
            expected = float(np.corrcoef(x, y)[0, 1])
        got = row_correlation(np.vstack([x, y]))
        assert got == expected or (np.isnan(got) and np.isnan(expected))


@pytest.mark.parametrize("n", [1, 2, 3, 129, LEAF + 3, 300_001])
@pytest.mark.parametrize("ddof", [0, 1])
def test_the_variance_without_its_temporary_is_numpys(n: int, ddof: int) -> None:
    rng = np.random.default_rng(n + ddof)
    for values in (rng.standard_normal(n) * 1e3 + 1e6, rng.choice([0.0, 0.25, 2 / 3, 1.0], n)):
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.var(values, ddof=ddof)
        got = pairwise_var(values, ddof)
        assert got == expected or (np.isnan(got) and np.isnan(expected))
        if n > ddof:
            assert np.sqrt(got) == np.std(values, ddof=ddof)
