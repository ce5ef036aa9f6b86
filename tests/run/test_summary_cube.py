"""``summary_columns.cube`` reads a judge's repeat columns a span at a time: the values one read per repeat gives."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from ragqa.run.summary_columns import JudgeColumns, cube

N = 40


def _judge(rng: np.random.Generator, repeats: int) -> JudgeColumns:
    columns = [array("d", rng.random(N)) for _ in range(repeats)]
    n_repeats = array("I", rng.integers(0, repeats + 1, N).tolist())
    return JudgeColumns(status=bytearray(N), score=array("d", [0.0] * N), n_repeats=n_repeats, repeats=columns)


def _reference(judges: list[JudgeColumns], rows: np.ndarray, width: int) -> np.ndarray:
    out = np.full((len(rows), len(judges), width), np.nan)
    for j, judge in enumerate(judges):
        assert judge.n_repeats is not None
        for i, position in enumerate(rows):
            for k in range(min(width, len(judge.repeats), judge.n_repeats[position])):
                out[i, j, k] = judge.repeats[k][position]
    return out


@pytest.mark.parametrize(
    "rows",
    [slice(None), slice(0, 0), slice(5, 6), slice(7, 31), slice(39, None), slice(3, 30, 4)],
    ids=["all", "empty", "one", "middle", "last", "stepped"],
)
@pytest.mark.parametrize("width", [1, 3, 5])
def test_a_slice_of_positions_reads_the_values_of_each_repeat(rows: slice, width: int) -> None:
    rng = np.random.default_rng(width)
    judges = [_judge(rng, 3), _judge(rng, 5)]
    positions = np.arange(N)[rows]
    got = cube(judges, rows, len(positions), width)
    np.testing.assert_array_equal(got, _reference(judges, positions, width))


@pytest.mark.parametrize("picked", [[], [4], [0, 39], [2, 3, 9, 10, 11, 30]])
def test_increasing_positions_read_the_values_of_each_repeat(picked: list[int]) -> None:
    rng = np.random.default_rng(len(picked))
    judges = [_judge(rng, 4), _judge(rng, 2)]
    rows = np.array(picked, dtype=np.intp)
    got = cube(judges, rows, len(rows), 4)
    np.testing.assert_array_equal(got, _reference(judges, rows, 4))
