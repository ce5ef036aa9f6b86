"""Scores with known truth and known noise: a simulated panel, for testing intervals and variance splits.

:class:`NoiseModel` states what a panel's scores are made of, per the crossed random-effects model
of :mod:`ragqa.uncertainty`: each sample's true score, each judge's bias (its leniency), a
sample x judge interaction (how differently a judge ranks samples) and repeat noise (what a judge
changes when asked again). :meth:`NoiseModel.scores` draws a whole (samples, judges, repeats)
array at once with numpy, seeded, so a test can check coverage over many seeded runs in well
under a second.

:class:`NoisyJudge` puts those same scores behind the judge seam, so a real panel run (the
evaluator, repeats, the summaries and their intervals) scores what the model says: it answers
faithfulness's two prompts (one statement per response, then a graded verdict whose support is
the simulated score), so a sample's faithfulness is its simulated score and its hallucination one
minus it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from ragqa.errors import JudgeOutputError, JudgeUnsupported
from ragqa.judges.local.graded import GradedNLIOutput, GradedStatementVerdict
from ragqa.prompts.base import Prompt
from ragqa.prompts.nli import NLIInput
from ragqa.prompts.statements import StatementsInput, StatementsOutput
from ragqa.repeats import repeat_index
from ragqa.schema import Language

__all__ = ["NoiseModel", "NoisyJudge"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


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
            Shape (samples, judges, repeats); ``scores(r)[..., :k]`` equals ``scores(k)`` for ``k <= r``.

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
        # drawn repeat-major, so the first k repeats are the same whatever ``repeats`` is asked for
        noise = rng.normal(0.0, self.repeat_sd, size=(repeats, n, j)).transpose(1, 2, 0)
        values: NDArray[np.float64] = truth + biases + interaction + noise
        if self.bounds is not None:
            values = np.clip(values, *self.bounds)
        return values


class NoisyJudge:
    """A judge whose faithfulness scores are :class:`NoiseModel`'s draws: known truth, bias and noise.

    It answers the ``statements`` prompt with the response itself as the one statement and the
    ``nli`` prompt with one graded verdict (:class:`~ragqa.judges.local.graded.GradedStatementVerdict`)
    whose support is ``model.scores()[i, judge, k]``: ``i`` the position of the response in
    ``responses``, ``k`` the repeat being judged (:data:`ragqa.repeats.repeat_index`, 0 without
    repeats), so a run with ``repeats=N`` gets the model's first N draws, whatever order its calls
    run in, and the same call always gets the same answer (as a cached judge would). So
    faithfulness scores exactly the simulated value and hallucination one minus it; every other
    prompt raises :class:`~ragqa.errors.JudgeUnsupported`.

    Args:
        model: the noise model (its bounds must lie within [0, 1]: a support is a share).
        judge: this judge's index into ``model.biases``.
        responses: the samples' ``response`` texts, in the order of ``model.truth`` (distinct).
        judge_id: the id in reports (default ``noisy-<judge>``).

    Raises:
        ValueError: when ``responses`` and ``model.truth`` differ in length, repeat a text, or
            ``judge`` is not an index of ``model.biases``.

    Example:
        ``judges = NoisyJudge.panel(NoiseModel(truth=[0.8, 0.4], biases=[0.0, -0.1]), ["a", "b"])``
    """

    __test__ = False

    def __init__(self, model: NoiseModel, judge: int, responses: Sequence[str], *, judge_id: str | None = None) -> None:
        """Create the judge; nothing is drawn until the first verdict."""
        if len(responses) != len(model.truth):
            raise ValueError(f"{len(responses)} response(s) for {len(model.truth)} true score(s)")
        if len({text.strip() for text in responses}) != len(responses):
            raise ValueError("responses must be distinct: the judge finds a sample by its response")
        if not 0 <= judge < len(model.biases):
            raise ValueError(f"judge {judge} is not an index of the {len(model.biases)} bias(es)")
        self.model = model
        self.judge = judge
        self._id = judge_id if judge_id is not None else f"noisy-{judge}"
        self._position = {text.strip(): i for i, text in enumerate(responses)}
        self._drawn: NDArray[np.float64] = np.empty((len(responses), len(model.biases), 0))
        self.calls = 0
        """Prompts answered (both steps)."""

    @classmethod
    def panel(cls, model: NoiseModel, responses: Sequence[str]) -> list[NoisyJudge]:
        """One judge per bias of ``model``, ids ``noisy-0``, ``noisy-1``, ..."""
        return [cls(model, j, responses) for j in range(len(model.biases))]

    @property
    def id(self) -> str:
        """The judge id."""
        return self._id

    @property
    def fingerprint(self) -> str:
        """The cache identity: the noise model and this judge's index (two equal models answer alike)."""
        model = self.model
        state = {
            "truth": [float(t) for t in model.truth],
            "biases": [float(b) for b in model.biases],
            "sd": [model.interaction_sd, model.repeat_sd],
            "bounds": model.bounds,
            "seed": model.seed,
        }
        digest = hashlib.sha256(json.dumps(state).encode()).hexdigest()[:16]
        return json.dumps({"provider": "noisy", "id": self._id, "judge": self.judge, "model": digest})

    def score_of(self, response: str, repeat: int) -> float:
        """The simulated score of ``response`` at ``repeat`` (0-based) for this judge."""
        i = self._position[response.strip()]
        if repeat >= self._drawn.shape[2]:
            self._drawn = self.model.scores(max(2 * self._drawn.shape[2], repeat + 1, 4))
        return float(self._drawn[i, self.judge, repeat])

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer ``statements`` and ``nli`` from the model; any other prompt is unsupported.

        Raises:
            JudgeUnsupported: for another prompt.
            JudgeOutputError: for a statement that is not one of ``responses``.
        """
        self.calls += 1
        answer: Any
        if isinstance(data, StatementsInput):
            answer = StatementsOutput(statements=[data.answer])
        elif isinstance(data, NLIInput):
            verdicts = []
            for statement in data.statements:
                if statement not in self._position:
                    raise JudgeOutputError(
                        f"the noisy judge knows no response {statement[:60]!r}", judge_id=self.id, step=prompt.name
                    )
                support = self.score_of(statement, repeat_index.get())
                verdicts.append(
                    GradedStatementVerdict(
                        statement=statement, reason="simulated", verdict=int(support >= 0.5), support=support
                    )
                )
            answer = GradedNLIOutput(verdicts=verdicts)
        else:
            raise JudgeUnsupported(
                f"the noisy judge answers only faithfulness's prompts, not {prompt.name!r}",
                judge_id=self.id,
                step=prompt.name,
            )
        result: Out = answer
        return result
