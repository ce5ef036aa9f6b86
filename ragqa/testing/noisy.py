"""Scores with known truth and known noise: a simulated panel, for testing intervals and variance splits.

:class:`NoiseModel` states what a panel's scores are made of, per the crossed random-effects model
of :mod:`ragqa.uncertainty`: each sample's true score, each judge's bias (its leniency), a
sample x judge interaction (how differently a judge ranks samples) and repeat noise (what a judge
changes when asked again). :meth:`NoiseModel.scores` draws a whole (samples, judges, repeats)
array at once with numpy, seeded, so a test can check coverage over many seeded runs in well
under a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["NoiseModel"]


@dataclass(frozen=True)
class NoiseModel:
    """How a simulated panel's scores deviate from the truth.

    A score is ``truth[i] + biases[j] + interaction[i, j] + noise[i, j, k]`` for sample ``i``,
    judge ``j`` and repeat ``k``, with ``interaction ~ N(0, interaction_sd^2)`` drawn once per
    (sample, judge) and ``noise ~ N(0, repeat_sd^2)`` per repeat, clipped to ``bounds``.

    Attributes:
        truth: each sample's true score, in the metric's units.
        biases: each judge's bias (added to every score it gives), in the metric's units.
        interaction_sd: standard deviation of the sample x judge interaction (>= 0).
        repeat_sd: standard deviation of one repeat's noise (>= 0; 0 is a deterministic judge).
        bounds: the metric's range to clip to, or ``None`` for no clipping.
        seed: seeds every draw: the same model gives the same scores.
    """

    truth: Sequence[float]
    biases: Sequence[float]
    interaction_sd: float = 0.0
    repeat_sd: float = 0.0
    bounds: tuple[float, float] | None = (0.0, 1.0)
    seed: int = 0

    @property
    def panel_truth(self) -> float:
        """The panel's true mean: mean truth plus mean bias (what a fixed panel's aggregate estimates).

        Exact without clipping; clipping moves it where scores reach a bound.
        """
        return float(np.mean(self.truth) + np.mean(self.biases))

    def scores(self, repeats: int = 1) -> NDArray[np.float64]:
        """Draw every score at once.

        Args:
            repeats: repeats per (sample, judge), >= 1.

        Returns:
            Shape (samples, judges, repeats).

        Raises:
            ValueError: for ``repeats < 1`` or a negative standard deviation.
        """
        if repeats < 1:
            raise ValueError(f"repeats must be at least 1, got {repeats}")
        if self.interaction_sd < 0 or self.repeat_sd < 0:
            raise ValueError("standard deviations must be >= 0")
        rng = np.random.default_rng(self.seed)
        truth = np.asarray(self.truth, dtype=float)[:, None, None]
        biases = np.asarray(self.biases, dtype=float)[None, :, None]
        n, j = truth.shape[0], biases.shape[1]
        interaction = rng.normal(0.0, self.interaction_sd, size=(n, j, 1))
        noise = rng.normal(0.0, self.repeat_sd, size=(n, j, repeats))
        values: NDArray[np.float64] = truth + biases + interaction + noise
        if self.bounds is not None:
            values = np.clip(values, *self.bounds)
        return values
