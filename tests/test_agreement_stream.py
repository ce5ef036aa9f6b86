"""Agreement from column blocks (ragqa.agreement_stream) equals the whole-matrix computation, bit for bit.

The oracle is the whole-matrix agreement as computed before the blocks (copied here); every block
size around the sizes (1, block - 1, block, block + 1, larger than the matrix) must give the same
Agreement: NaN scores, failed judges, ties, a constant judge, one pairable sample, the
``krippendorff`` package's path and the closed form's, two to four judges.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

import ragqa.agreement as agreement_module
from ragqa.agreement import agreement, interval_alpha, krippendorff_alpha
from ragqa.agreement_stream import matrix_blocks
from ragqa.schema import Agreement, ContestedSample, JudgeBias, PairAgreement


def _average_ranks(x: np.ndarray) -> np.ndarray:
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return (ends - (counts - 1) / 2.0)[inverse]


def _oracle(sample_ids: Sequence[str], judge_ids: Sequence[str], matrix: np.ndarray) -> Agreement:
    """The whole-matrix agreement as it was computed before the blocks (a copy, not shared code)."""
    alpha = krippendorff_alpha(matrix)
    finite = ~np.isnan(matrix)
    counts = finite.sum(axis=0)
    pairable = counts >= 2
    pairs = []
    for i in range(len(judge_ids)):
        for j in range(i + 1, len(judge_ids)):
            both = finite[i] & finite[j]
            a, b = matrix[i, both], matrix[j, both]
            if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
                rho = math.nan
            else:
                rho = float(np.corrcoef(_average_ranks(a), _average_ranks(b))[0, 1])
            mad = float(np.mean(np.abs(a - b))) if a.size else math.nan
            pairs.append(
                PairAgreement(
                    judge_a=judge_ids[i], judge_b=judge_ids[j], n=int(both.sum()), spearman=rho, mean_abs_diff=mad
                )
            )
    bias = []
    sums = np.where(finite, matrix, 0.0).sum(axis=0)
    for i, jid in enumerate(judge_ids):
        mask = finite[i] & (counts >= 2)
        others_mean = (sums[mask] - matrix[i, mask]) / (counts[mask] - 1)
        diffs = matrix[i, mask] - others_mean
        bias.append(JudgeBias(judge_id=jid, n=int(mask.sum()), bias=float(np.mean(diffs)) if diffs.size else math.nan))
    contested = []
    if pairable.any():
        cols = np.flatnonzero(pairable)
        sub = matrix[:, cols]
        spreads = np.nanmax(sub, axis=0) - np.nanmin(sub, axis=0)
        for k in np.argsort(-spreads, kind="stable")[:5]:
            if spreads[k] > 0:
                contested.append(ContestedSample(sample_id=sample_ids[int(cols[k])], spread=float(spreads[k])))
    return Agreement(alpha=alpha, n_samples=int(pairable.sum()), pairs=pairs, bias=bias, contested=contested)


def _matrix(n_judges: int, n: int, seed: int, *, continuous: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if continuous:
        matrix = rng.random((n_judges, n)) * 10.0 ** rng.uniform(-2, 2, (n_judges, n))
    else:
        matrix = rng.choice([0.0, 0.25, 0.5, 2 / 3, 0.75, 1.0], size=(n_judges, n))
    matrix[rng.random((n_judges, n)) < 0.15] = np.nan  # failed judges, NaN scores
    return matrix


def _same(got: Agreement | None, expected: Agreement) -> None:
    assert got is not None
    assert got.model_dump_json() == expected.model_dump_json()


@pytest.mark.parametrize("n_judges", [2, 3, 4])
@pytest.mark.parametrize("continuous", [False, True])
def test_every_block_size_gives_the_whole_matrix_figures(n_judges: int, continuous: bool) -> None:
    n = 301
    matrix = _matrix(n_judges, n, seed=n_judges + 10 * continuous, continuous=continuous)
    ids = [f"s{i}" for i in range(n)]
    judges = [f"j{k}" for k in range(n_judges)]
    expected = _oracle(ids, judges, matrix)
    _same(agreement(ids, judges, matrix), expected)
    for size in (1, 127, 128, 129, n - 1, n, n + 1):
        _same(agreement(ids, judges, matrix_blocks(matrix, size)), expected)


@pytest.mark.slow
def test_long_matrices_take_the_closed_form_and_pairwise_sums_across_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ragqa._pairwise.LEAF", 1000)  # many leaves of numpy's tree, each its own reduce
    n = 70_001
    matrix = _matrix(3, n, seed=7, continuous=True)
    ids = [f"s{i}" for i in range(n)]
    expected = _oracle(ids, ["a", "b", "c"], matrix)
    assert not math.isnan(expected.alpha)
    assert expected.alpha == interval_alpha(matrix[:, (~np.isnan(matrix)).sum(axis=0) >= 2])
    for size in (999, 1000, 1001, 65_536):
        _same(agreement(ids, ["a", "b", "c"], matrix_blocks(matrix, size)), expected)


def test_the_package_path_gets_the_pairable_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = _matrix(2, 200, seed=3, continuous=False)
    ids = [f"s{i}" for i in range(200)]
    expected = _oracle(ids, ["a", "b"], matrix)
    _same(agreement(ids, ["a", "b"], matrix_blocks(matrix, 17)), expected)
    monkeypatch.setattr(agreement_module, "PACKAGE_CELLS", 0)  # the closed form instead: the same alpha, to rounding
    closed = agreement(ids, ["a", "b"], matrix_blocks(matrix, 17))
    assert closed is not None and closed.alpha == pytest.approx(expected.alpha, rel=1e-12)


def test_edge_cases_match() -> None:
    cases = {
        "a constant judge": np.array([[1.0, 1.0, 1.0, 1.0], [0.1, 0.5, 0.9, 0.3]]),
        "one pairable sample": np.array([[1.0, np.nan, 0.2], [0.5, 0.4, np.nan]]),
        "nothing pairable": np.array([[1.0, np.nan], [np.nan, 0.5]]),
        "every score equal": np.full((3, 5), 0.5),
        "no sample": np.full((2, 0), np.nan),
        "ties in spread": np.array([[0.0, 1.0, 0.0, 1.0, 0.5], [1.0, 0.0, 1.0, 0.0, 0.5]]),
        "signed zeros": np.array([[0.0, -0.0, 1.0, 0.5], [-0.0, 0.0, 0.5, 1.0]]),
    }
    for name, matrix in cases.items():
        ids = [f"s{i}" for i in range(matrix.shape[1])]
        judges = [f"j{k}" for k in range(matrix.shape[0])]
        expected = _oracle(ids, judges, matrix)
        for size in (1, 2, 3, 64):
            got = agreement(ids, judges, matrix_blocks(matrix, size))
            assert got is not None and got.model_dump_json() == expected.model_dump_json(), (name, size)
