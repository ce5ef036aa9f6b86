"""The variance decomposition from blocks of the cube (ragqa.uncertainty.variance_stream) equals the whole cube's."""

from __future__ import annotations

import numpy as np
import pytest

from ragqa.uncertainty.variance import decompose
from ragqa.uncertainty.variance_stream import blocked_decompose


def _blocks(cube: np.ndarray, size: int):  # type: ignore[no-untyped-def]
    return lambda: (cube[start : start + size] for start in range(0, cube.shape[0], size))


def _cube(n: int, judges: int, repeats: int, seed: int, *, missing: float, continuous: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if continuous:
        cube = rng.random((n, judges, repeats)) * 10.0 ** rng.uniform(-3, 1, (n, judges, repeats))
    else:
        cube = rng.choice([0.0, 0.25, 0.5, 2 / 3, 0.75, 1.0], size=(n, judges, repeats))
    cube[rng.random((n, judges, repeats)) < missing] = np.nan  # failed repeats, NaN scores
    return cube


def _same(cube: np.ndarray, sizes: tuple[int, ...]) -> None:
    expected = decompose(cube, calls_per_judgement=2.0).model_dump_json()
    for size in sizes:
        got = blocked_decompose(_blocks(cube, size), cube.shape[0], cube.shape[1], calls_per_judgement=2.0)
        assert got.model_dump_json() == expected, size


@pytest.mark.parametrize("judges", [1, 2, 3, 4])
@pytest.mark.parametrize("repeats", [1, 3])
@pytest.mark.parametrize("continuous", [False, True])
@pytest.mark.slow
def test_every_block_size_gives_the_whole_cubes_decomposition(judges: int, repeats: int, continuous: bool) -> None:
    n = 257
    cube = _cube(n, judges, repeats, seed=judges * 10 + repeats, missing=0.1, continuous=continuous)
    _same(cube, (1, 63, 64, 65, n - 1, n, n + 1))


@pytest.mark.slow
def test_a_judge_left_out_of_the_complete_table_and_uneven_repeats() -> None:
    cube = _cube(300, 3, 4, seed=5, missing=0.3, continuous=True)
    cube[:200, 2, :] = np.nan  # judge 2 scored few samples: the table leaves it out
    _same(cube, (1, 7, 128, 301))


def test_long_cubes_sum_across_many_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragqa._pairwise.LEAF", 1000)
    cube = _cube(60_001, 2, 1, seed=9, missing=0.05, continuous=True)
    _same(cube, (999, 65_536))


def test_edge_cases() -> None:
    for cube in (
        np.full((0, 2, 1), np.nan),
        np.full((5, 2, 1), np.nan),
        np.full((6, 2, 2), 0.5),  # every score equal: zero components
        np.array([[[1.0], [0.5]]]),  # one sample
        np.array([[[1.0], [np.nan]], [[np.nan], [0.5]], [[0.2], [0.4]]]),
    ):
        _same(cube, (1, 2, 5))
