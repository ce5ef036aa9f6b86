"""The per-item reliability section from counted verdict patterns read in chunks equals the per-item fit, bit for bit.

The oracle below is the section as it was computed before, on a full items x judges verdict
matrix with one posterior per item; the chunked path must give the same section for every chunk
size (1, chunk - 1, chunk, chunk + 1, larger than the items), NaN scores, failed judges (no
verdict), lower-is-better metrics and more judges.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator, Sequence
from typing import Literal

import numpy as np
import pytest

from ragqa.aggregate import aggregate
from ragqa.jury.dawid_skene import fit_dawid_skene, residual_correlation
from ragqa.jury.item_patterns import count_patterns, pattern_residual_correlation
from ragqa.jury.reliability import _judges_section, attach_item_reliability, gate_verdicts, item_reliability
from ragqa.jury.vote import vote_verdicts
from ragqa.report import JuryReliability
from ragqa.run.summary import RunSummary
from ragqa.schema import JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Usage

N_BOOT = 20  # fewer replicates than a run's 200: the same code, faster tests


def _per_item_oracle(
    scores: np.ndarray, judge_ids: Sequence[str], threshold: float, direction: Literal["higher", "lower"]
) -> JuryReliability | None:
    """The section as computed before the chunks: a verdict matrix and a posterior per item (copied, not shared)."""
    verdicts = gate_verdicts(scores, threshold, direction)
    matrix = verdicts[~np.isnan(verdicts).all(axis=1)]
    n = int(matrix.shape[0])
    if len(judge_ids) < 2 or n == 0:
        return None
    code = (np.where(np.isnan(matrix), 2.0, matrix) * 3.0 ** np.arange(matrix.shape[1])).sum(axis=1)
    _, first, inverse, counts = np.unique(code, return_index=True, return_inverse=True, return_counts=True)
    patterns = matrix[first]
    fit = fit_dawid_skene(patterns, weights=counts)
    rng = np.random.default_rng(0)
    draws = np.full((N_BOOT, 3, len(judge_ids)), np.nan)
    for b in range(N_BOOT):
        again = fit_dawid_skene(patterns, weights=rng.multinomial(n, counts / n), max_iterations=100)
        draws[b] = (again.sensitivity, again.specificity, again.accuracy)
    per_item = dataclasses.replace(fit, posterior=fit.posterior[inverse.ravel()])
    corr = residual_correlation(matrix, per_item)
    judges, pairs, warnings = _judges_section(corr, per_item, draws, judge_ids, 0.95, n)
    labels = per_item.labels.astype(np.float64)
    majority = vote_verdicts(matrix, tie_breaker=0)
    return JuryReliability(
        unit="item",
        threshold=threshold,
        n_statements=n,
        n_samples=n,
        prevalence=fit.prevalence,
        converged=fit.converged,
        judges=judges,
        correlations=pairs,
        warnings=warnings,
        voted_mean=float(labels.mean()),
        majority_mean=float(majority.mean()),
        n_changed=int(np.sum(labels != majority)),
    )


class _Chunks:
    def __init__(self, matrix: np.ndarray, size: int) -> None:
        self.matrix, self.size = matrix, size

    def chunks(self) -> Iterator[np.ndarray]:
        for start in range(0, self.matrix.shape[1], self.size):
            yield self.matrix[:, start : start + self.size]


def _scores(n_judges: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    scores = rng.choice([0.0, 0.25, 0.5, 2 / 3, 0.75, 0.8, 1.0], size=(n_judges, n))
    scores[rng.random((n_judges, n)) < 0.1] = np.nan  # failed judges and NaN scores: no verdict
    scores[:, rng.random(n) < 0.05] = np.nan  # items no judge gave a verdict on
    return scores


def _dump(section: JuryReliability | None) -> str | None:
    return None if section is None else section.model_dump_json()


@pytest.mark.parametrize("n_judges", [2, 3])
@pytest.mark.parametrize("direction", ["higher", "lower"])
@pytest.mark.slow
def test_chunks_of_every_size_give_the_per_item_section(n_judges: int, direction: Literal["higher", "lower"]) -> None:
    n = 257
    scores = _scores(n_judges, n, seed=n_judges)
    judges = [f"j{k}" for k in range(n_judges)]
    threshold = 0.7 if direction == "higher" else 0.3
    expected = _dump(_per_item_oracle(scores, judges, threshold, direction))
    assert expected is not None
    assert _dump(item_reliability(scores, judges, threshold, direction, n_boot=N_BOOT)) == expected
    for size in (1, 63, 64, 65, n - 1, n, n + 1):
        assert (
            _dump(item_reliability(_Chunks(scores, size), judges, threshold, direction, n_boot=N_BOOT)) == expected
        ), size


def test_a_panel_whose_residuals_correlate_keeps_its_correlation() -> None:
    rng = np.random.default_rng(9)
    truth = rng.random(2000) < 0.6
    noise = rng.random(2000) < 0.25  # both judges flip the same items
    a = np.where(truth ^ noise, 0.9, 0.1)
    b = np.where(truth ^ noise ^ (rng.random(2000) < 0.05), 0.95, 0.05)
    scores = np.vstack([a, b])
    expected = _per_item_oracle(scores, ["a", "b"], 0.5, "higher")
    assert expected is not None and abs(expected.correlations[0][2]) > 0.3
    got = item_reliability(_Chunks(scores, 300), ["a", "b"], 0.5, "higher", n_boot=N_BOOT)
    assert _dump(got) == _dump(expected)


def test_no_item_with_a_verdict_or_one_judge_gives_none_in_chunks_too() -> None:
    assert item_reliability(_Chunks(np.full((2, 5), np.nan), 2), ["a", "b"], 0.5, "higher") is None
    assert item_reliability(_Chunks(np.ones((1, 5)), 2), ["a"], 0.5, "higher") is None
    assert item_reliability(_Chunks(np.ones((2, 0)), 2), ["a", "b"], 0.5, "higher") is None
    with pytest.raises(ValueError, match="one per judge"):
        item_reliability(_Chunks(np.ones((3, 5)), 2), ["a", "b"], 0.5, "higher")


def test_pattern_correlation_is_the_per_item_residual_correlation() -> None:
    scores = _scores(4, 500, seed=4)
    verdicts = gate_verdicts(scores, 0.6, "higher")
    matrix = verdicts[~np.isnan(verdicts).all(axis=1)]

    def rows() -> Iterator[np.ndarray]:
        for start in range(0, matrix.shape[0], 77):
            yield matrix[start : start + 77]

    patterns = count_patterns(rows, 4)
    assert patterns.n == matrix.shape[0] and int(patterns.counts.sum()) == patterns.n
    fit = fit_dawid_skene(patterns.patterns, weights=patterns.counts)
    per_item = dataclasses.replace(fit, posterior=fit.posterior[patterns.index(matrix)])
    expected = residual_correlation(matrix, per_item)
    got = pattern_residual_correlation(rows, patterns, fit)
    assert np.array_equal(got, expected, equal_nan=True)
    assert not np.isnan(got[0, 1])


def _result(position: int, metric: str, rng: np.random.Generator, judges: Sequence[str]) -> PanelResult:
    outcomes = []
    for judge in judges:
        roll = rng.random()
        if roll < 0.1:
            failure = JudgeFailure(
                judge_id=judge, metric=metric, sample_id=f"s{position}", error_type="JudgeHTTPError", message="503"
            )
            outcomes.append(JudgeOutcome(judge_id=judge, failure=failure))
        elif roll < 0.15:
            outcomes.append(JudgeOutcome(judge_id=judge, score=MetricScore(value=math.nan)))
        else:
            value = float(rng.choice([0.0, 0.5, 0.8, 1.0]))
            outcomes.append(JudgeOutcome(judge_id=judge, score=MetricScore(value=value), usage=Usage(calls=1)))
    values = [o.score.value for o in outcomes if o.score is not None]
    n_failed = sum(o.failure is not None for o in outcomes)
    return PanelResult(
        sample_id=f"s{position}",
        metric=metric,
        direction="higher",
        judges=outcomes,
        aggregate=aggregate(values, n_failed=n_failed, strategy="mean", quorum=1),
    )


@pytest.mark.parametrize("missing", [False, True])
def test_a_run_summarys_chunks_are_its_scores_and_give_its_section(missing: bool) -> None:
    judges = ("a", "b")
    n = 130
    rng = np.random.default_rng(1)
    summary = RunSummary(judges, ("faithfulness",), n)
    for position in range(n):
        if missing and position % 7 == 3:
            continue  # positions without a result of the metric: left out of the scores
        summary.add(position, _result(position, "faithfulness", rng, judges))
    whole = summary.scores("faithfulness")
    for size in (1, 63, 64, 65, n - 1, n, n + 1):
        parts = list(summary.score_chunks("faithfulness", size).chunks())
        assert np.array_equal(np.concatenate(parts, axis=1), whole, equal_nan=True)
        assert max(p.shape[1] for p in parts) <= size
    expected = attach_item_reliability([], judges, {}, summary.scores)
    assert expected == []
    section = item_reliability(summary.score_chunks("faithfulness", 64), judges, 0.8, "higher", n_boot=N_BOOT)
    assert _dump(section) == _dump(_per_item_oracle(whole, judges, 0.8, "higher"))
    with pytest.raises(ValueError, match="at least 1"):
        summary.score_chunks("faithfulness", 0)
