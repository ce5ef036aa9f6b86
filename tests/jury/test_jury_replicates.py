"""The bootstrap fits each distinct draw once: the reliability sections are the ones of a fit per replicate.

:func:`~ragqa.jury.reliability.fit_reliability` and :func:`~ragqa.jury.reliability.item_reliability`
reuse a replicate's rates when its draw was seen before (``_ReplicateRates``). Each is compared,
field by field and bit for bit (``repr`` writes every float exactly, NaN too), with the same call
where every replicate is fitted again.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from ragqa.jury import reliability
from ragqa.jury.reliability import fit_reliability, item_reliability
from ragqa.metrics.faithfulness import faithfulness_score

N_BOOT = 40
"""Replicates per call (the default is 200): draws repeat on a few samples, seldom on many."""


def _faith(lists: Sequence[Sequence[float]]) -> float:
    return faithfulness_score(lists[0])


def _blocks(n_samples: int, seed: int) -> list[np.ndarray]:
    """Per sample, 1 to 4 statements x 3 judges of 0, 1 and a NaN now and then."""
    rng = np.random.default_rng(seed)
    blocks = []
    for _ in range(n_samples):
        block = (rng.random((int(rng.integers(1, 5)), 3)) < 0.7).astype(float)
        block[rng.random(block.shape) < 0.1] = np.nan
        blocks.append(block)
    return blocks


def _item_scores(n_items: int, seed: int) -> np.ndarray:
    """3 judges x ``n_items`` scores in [0, 1], NaN now and then."""
    rng = np.random.default_rng(seed)
    scores = rng.random((3, n_items))
    scores[rng.random(scores.shape) < 0.1] = np.nan
    return scores


@pytest.fixture
def fits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the Dawid-Skene fits; the list grows by one per fit."""
    counted: list[int] = []
    fit = reliability.fit_dawid_skene

    def counting(*args: object, **kwargs: object) -> object:
        counted.append(1)
        return fit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reliability, "fit_dawid_skene", counting)
    return counted


def _every_replicate_fitted(monkeypatch: pytest.MonkeyPatch) -> None:
    def get(self: reliability._ReplicateRates, draw: np.ndarray) -> np.ndarray:
        again = self._fit(draw)
        return np.array([again.sensitivity, again.specificity, again.accuracy])

    monkeypatch.setattr(reliability._ReplicateRates, "get", get)


@pytest.mark.parametrize(("n_samples", "seed"), [(1, 0), (3, 1), (12, 2)])
def test_the_statement_section_is_the_one_of_a_fit_per_replicate(
    n_samples: int, seed: int, fits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    samples = [[[b]] for b in _blocks(n_samples, seed)]
    ids = ["a", "b", "c"]
    reused = fit_reliability(samples, ids, _faith, seed=seed, n_boot=N_BOOT)
    fitted_once = len(fits)
    _every_replicate_fitted(monkeypatch)
    fits.clear()
    assert repr(fit_reliability(samples, ids, _faith, seed=seed, n_boot=N_BOOT)) == repr(reused)
    assert len(fits) == 1 + N_BOOT  # the fit and every replicate
    assert fitted_once <= 1 + n_samples**n_samples  # a draw is an ordered choice of the samples
    if n_samples <= 3:
        assert fitted_once < 1 + N_BOOT


@pytest.mark.parametrize(("n_items", "seed", "direction"), [(1, 0, "higher"), (3, 1, "lower"), (40, 2, "higher")])
def test_the_item_section_is_the_one_of_a_fit_per_replicate(
    n_items: int, seed: int, direction: str, fits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    scores = _item_scores(n_items, seed)
    ids = ["a", "b", "c"]
    reused = item_reliability(scores, ids, 0.5, direction, seed=seed, n_boot=N_BOOT)  # type: ignore[arg-type]
    fitted_once = len(fits)
    _every_replicate_fitted(monkeypatch)
    fits.clear()
    again = item_reliability(scores, ids, 0.5, direction, seed=seed, n_boot=N_BOOT)  # type: ignore[arg-type]
    assert repr(again) == repr(reused)
    assert reused is not None and len(fits) == 1 + N_BOOT
    if n_items <= 3:
        assert fitted_once < 1 + N_BOOT
