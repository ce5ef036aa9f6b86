"""The bootstrap's fits side by side give each replicate's own fit, bit for bit (``ragqa.jury.dawid_skene_batch``).

A score must never change silently: :func:`fit_dawid_skene_batch` replaces one
:func:`fit_dawid_skene` per bootstrap replicate of the per-item section, so every number of every
fit (posterior, rates, prevalence, iterations, convergence, log-likelihood) is compared as bytes
with the single fit's on random cases: 2 to 4 judges, missing verdicts, zero counts, a replicate
with no item, fits that converge and fits that hit the iteration cap. The section itself is
compared with the per-replicate path it replaced (kept below as the reference) on random scores
with failed judges, a judge with no verdict at all, and scores on the threshold, and pinned to a
digest of the outputs that path gave.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pytest

from ragqa.jury import fit_dawid_skene
from ragqa.jury.dawid_skene import DawidSkeneFit
from ragqa.jury.dawid_skene_batch import DawidSkeneRates, fit_dawid_skene_batch, fit_dawid_skene_resamples
from ragqa.jury.reliability import fit_reliability, item_reliability


def _same(a: DawidSkeneFit, b: DawidSkeneFit) -> bool:
    """Every field equal as bytes (NaN and the sign of zero included)."""
    arrays = ("posterior", "sensitivity", "specificity")
    scalars = ("prevalence", "log_likelihood")
    return (
        all(getattr(a, f).tobytes() == getattr(b, f).tobytes() for f in arrays)
        and all(np.float64(getattr(a, f)).tobytes() == np.float64(getattr(b, f)).tobytes() for f in scalars)
        and (a.iterations, a.converged) == (b.iterations, b.converged)
    )


def _random_case(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Distinct verdict rows of 2 to 4 judges (missing verdicts or not) and a few replicates' counts."""
    n_judges = int(rng.integers(2, 5))
    values = (0.0, 1.0, math.nan) if rng.random() < 0.6 else (0.0, 1.0)
    rows = np.array([r for r in itertools.product(values, repeat=n_judges) if not all(map(math.isnan, r))])
    patterns = rows[np.sort(rng.choice(len(rows), int(rng.integers(1, len(rows) + 1)), replace=False))]
    share = rng.dirichlet(np.full(len(patterns), rng.uniform(0.2, 3.0)))
    counts = rng.multinomial(int(rng.integers(1, 3000)), share, size=int(rng.integers(1, 6)))
    if rng.random() < 0.15:
        counts[0] = 0  # no item at all: the rates stay at the prior's 0.5
    return patterns, counts


@pytest.mark.parametrize("seed", range(2))
def test_each_fit_of_the_batch_is_the_single_fit_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    capped = converged = 0
    for _ in range(20):
        patterns, counts = _random_case(rng)
        options: dict[str, Any] = {
            "max_iterations": int(rng.choice([1, 4, 30, 100])),
            "tolerance": float(rng.choice([1e-6, 1e-3, 0.0])),
            "smoothing": float(rng.choice([1.0, 1.0, 0.5, 0.0])),
        }
        with np.errstate(all="ignore"):  # smoothing 0 and a judge without a verdict: 0 / 0, in both
            batch = fit_dawid_skene_batch(patterns, counts, **options)
            singles = [fit_dawid_skene(patterns, weights=w, **options) for w in counts]
        for b, single in enumerate(singles):
            assert _same(batch.fit(b), single), (patterns, counts[b], options)
            assert batch.accuracy[b].tobytes() == single.accuracy.tobytes()
            capped += not single.converged
            converged += single.converged
    assert capped and converged  # both kinds of fit were compared


def test_fits_that_stop_at_different_iterations_keep_their_own_numbers() -> None:
    patterns = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [math.nan, 1.0]])
    counts = np.array([[40, 3, 2, 50, 5], [10, 10, 10, 10, 0], [0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [5, 20, 20, 5, 1]])
    batch = fit_dawid_skene_batch(patterns, counts, max_iterations=100)
    singles = [fit_dawid_skene(patterns, weights=w, max_iterations=100) for w in counts]
    assert len({fit.iterations for fit in singles}) > 2
    assert all(_same(batch.fit(b), fit) for b, fit in enumerate(singles))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: fit_dawid_skene_batch([[0.0, 1.0]], [[1]], max_iterations=0), "max_iterations"),
        (lambda: fit_dawid_skene_batch([[0.0, 1.0]], [[1]], smoothing=-1.0), "smoothing"),
        (lambda: fit_dawid_skene_batch(np.empty((0, 2)), np.empty((1, 0))), "at least one"),
        (lambda: fit_dawid_skene_batch([[0.0], [1.0]], [[1, 1]]), "two or more judges"),
        (lambda: fit_dawid_skene_batch([[0.0, 1.0]], [1]), "weights"),
        (lambda: fit_dawid_skene_batch([[0.0, 1.0]], [[-1]]), "weights"),
        (lambda: fit_dawid_skene_batch([[0.0, 2.0]], [[1]]), "verdicts"),
    ],
)
def test_bad_input_is_refused(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def _rates(fits: Sequence[DawidSkeneFit]) -> DawidSkeneRates:
    return DawidSkeneRates(
        np.array([f.sensitivity for f in fits]),
        np.array([f.specificity for f in fits]),
        np.array([f.prevalence for f in fits]),
        np.array([f.iterations for f in fits]),
        np.array([f.converged for f in fits]),
        np.array([f.log_likelihood for f in fits]),
    )


def _one_fit_per_replicate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sections' bootstrap before the fits ran side by side: one ``fit_dawid_skene`` per distinct draw, in order."""

    def bootstrap(draws: Sequence[np.ndarray], fit: Callable[[np.ndarray], DawidSkeneRates]) -> np.ndarray:
        fitted: dict[bytes, np.ndarray] = {}
        rows = []
        for chosen in draws:
            key = chosen.tobytes()
            if key not in fitted:
                again = fit(chosen[None, :])
                fitted[key] = np.array([again.sensitivity[0], again.specificity[0], again.accuracy[0]])
            rows.append(fitted[key])
        return np.array(rows)

    def patterns(patterns: np.ndarray, weights: np.ndarray, **options: Any) -> DawidSkeneRates:
        return _rates([fit_dawid_skene(patterns, weights=w, **options) for w in weights])

    def resamples(blocks: Sequence[np.ndarray], draws: np.ndarray, **options: Any) -> DawidSkeneRates:
        return _rates([fit_dawid_skene(np.vstack([blocks[i] for i in d]), **options) for d in draws])

    monkeypatch.setattr("ragqa.jury.reliability._bootstrap_rates", bootstrap)
    monkeypatch.setattr("ragqa.jury.reliability.fit_dawid_skene_batch", patterns)
    monkeypatch.setattr("ragqa.jury.reliability.fit_dawid_skene_resamples", resamples)


def _random_scores(rng: np.random.Generator) -> tuple[np.ndarray, float, Literal["higher", "lower"]]:
    """Scores of 2 to 4 judges on a grid that hits the threshold, with failures and, at times, a silent judge."""
    n_judges, n_items = int(rng.integers(2, 5)), int(rng.integers(1, 80))
    scores = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=(n_judges, n_items))
    scores[rng.random(scores.shape) < rng.uniform(0.0, 0.3)] = math.nan  # failed judges: no verdict
    if rng.random() < 0.2:
        scores[int(rng.integers(n_judges))] = math.nan  # one judge missing on every item
    direction: Literal["higher", "lower"] = "higher" if rng.random() < 0.5 else "lower"
    return scores, 0.5, direction  # 0.5 is on the grid: ties with the threshold


@pytest.mark.slow
def test_the_item_section_is_the_per_replicate_paths_section(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(11)
    cases = [(*_random_scores(rng), int(rng.integers(1, 1000))) for _ in range(10)]
    new = [item_reliability(s, [f"j{i}" for i in range(len(s))], t, d, n_boot=8, seed=k) for s, t, d, k in cases]
    _one_fit_per_replicate(monkeypatch)
    old = [item_reliability(s, [f"j{i}" for i in range(len(s))], t, d, n_boot=8, seed=k) for s, t, d, k in cases]
    assert sum(x is not None for x in new) > 6
    assert [x and x.model_dump_json() for x in new] == [x and x.model_dump_json() for x in old]


def _digest(n_boot: int) -> str:
    rng = np.random.default_rng(2024)
    found = []
    for k in range(8):
        scores, threshold, direction = _random_scores(rng)
        section = item_reliability(
            scores, [f"j{i}" for i in range(len(scores))], threshold, direction, n_boot=n_boot, seed=k
        )
        found.append(section and section.model_dump(mode="json"))
    return hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest()


SECTIONS_DIGEST = "628fa1235b3f9fd4579b308ad0310ac0fda505bb98760677a03a57e9ddf101cf"
"""The digest of :func:`_digest`'s eight sections (200 replicates each) as the per-replicate path gave them."""


@pytest.mark.slow
def test_the_sections_are_those_the_per_replicate_path_gave() -> None:
    assert _digest(200) == SECTIONS_DIGEST


def _random_blocks(rng: np.random.Generator, n_judges: int, n_blocks: int, longest: int) -> list[np.ndarray]:
    """Verdict blocks of 1 to ``longest`` rows with missing verdicts."""
    blocks = []
    for _ in range(n_blocks):
        block = (rng.random((int(rng.integers(1, longest + 1)), n_judges)) < rng.uniform(0.2, 0.9)).astype(float)
        block[rng.random(block.shape) < rng.uniform(0.0, 0.3)] = math.nan
        blocks.append(block)
    return blocks


@pytest.mark.parametrize("seed", range(2))
def test_each_resample_fit_is_the_single_fit_on_its_stacked_rows(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(100 + seed)
    capped = converged = 0
    for case in range(10):
        n_judges, n_blocks = int(rng.integers(2, 5)), int(rng.integers(1, 30))
        blocks = _random_blocks(rng, n_judges, n_blocks, 200 if case % 5 == 0 else 10)
        draws = rng.integers(0, n_blocks, size=(int(rng.integers(1, 8)), n_blocks))
        options: dict[str, Any] = {
            "max_iterations": int(rng.choice([1, 6, 100])),
            "tolerance": float(rng.choice([1e-6, 1e-2])),
        }
        monkeypatch.setattr("ragqa.jury.dawid_skene_batch.MAX_ROWS", int(rng.choice([1, 50, 1 << 16])))
        got = fit_dawid_skene_resamples(blocks, draws, **options)
        singles = _rates([fit_dawid_skene(np.vstack([blocks[i] for i in d]), **options) for d in draws])
        for name in ("sensitivity", "specificity", "prevalence", "iterations", "converged", "log_likelihood"):
            assert getattr(got, name).tobytes() == getattr(singles, name).tobytes(), (name, case)
        assert got.accuracy.tobytes() == singles.accuracy.tobytes()
        capped += int((~singles.converged).sum())
        converged += int(singles.converged.sum())
    assert capped and converged


def test_resamples_refuse_empty_blocks_and_draws_and_a_lone_judge() -> None:
    with pytest.raises(ValueError, match="at least one row"):
        fit_dawid_skene_resamples([np.empty((0, 2))], [[0]])
    with pytest.raises(ValueError, match="at least one block"):
        fit_dawid_skene_resamples([np.ones((1, 2))], [[]])
    with pytest.raises(ValueError, match="two or more judges"):
        fit_dawid_skene_resamples([np.ones((3, 1))], [[0]])


def _first_list_mean(lists: Sequence[Sequence[float]]) -> float:
    return float(np.mean(lists[0])) if lists[0] else math.nan


def _random_statement_samples(rng: np.random.Generator) -> tuple[list[list[list[np.ndarray]]], list[str]]:
    """Per sample, per repeat, one or two statement lists' verdict blocks (some empty) of 2 to 4 judges."""
    n_judges = int(rng.integers(2, 5))
    samples = []
    for _ in range(int(rng.integers(1, 25))):
        repeats = []
        for _ in range(int(rng.integers(1, 3))):
            lists = _random_blocks(rng, n_judges, int(rng.integers(1, 3)), 6)
            if rng.random() < 0.1:
                lists[0] = np.empty((0, n_judges))  # a list without statements
            repeats.append(lists)
        samples.append(repeats)
    return samples, [f"j{i}" for i in range(n_judges)]


def _statement_sections(seed: int, cases: int, n_boot: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    out = []
    for k in range(cases):
        samples, ids = _random_statement_samples(rng)
        fitted, per_sample = fit_reliability(samples, ids, _first_list_mean, n_boot=n_boot, seed=k, tie_breaker=k % 2)
        out.append([fitted and fitted.model_dump(mode="json"), [None if math.isnan(v) else v for v in per_sample]])
    return out


@pytest.mark.slow
def test_the_statement_section_is_the_per_replicate_paths_section(monkeypatch: pytest.MonkeyPatch) -> None:
    new = _statement_sections(5, 8, 8)
    _one_fit_per_replicate(monkeypatch)
    old = _statement_sections(5, 8, 8)
    assert sum(section is not None for section, _ in new) > 5
    assert json.dumps(new) == json.dumps(old)


STATEMENT_DIGEST = "7b3ee1710e320d248350bc72af87da4e6c6a099c7f793231fd0f342d5acb30c1"
"""The digest of four per-statement sections (100 replicates each) as the per-replicate path gave them."""


@pytest.mark.slow
def test_the_statement_sections_are_those_the_per_replicate_path_gave() -> None:
    found = _statement_sections(2025, 4, 100)
    assert hashlib.sha256(json.dumps(found, sort_keys=True).encode()).hexdigest() == STATEMENT_DIGEST
