"""Answer correctness: a weighted mean of statement-level factuality and semantic similarity.

RAGAS ``AnswerCorrectness`` (``metrics/_answer_correctness.py``, v0.4.3 legacy API)::

    S_r = statements(user_input, response); S_g = statements(user_input, reference)
    TP, FP, FN = correctness_classifier(user_input, S_r, S_g)   # skipped when S_r = S_g = []
    factuality = fbeta_score(|TP|, |FP|, |FN|, beta)             # 1.0 when S_r = S_g = []
    similarity = cos(E(reference), E(response))                  # 0.0 when weights[1] == 0
    score = (w_f * factuality + w_s * similarity) / (w_f + w_s) # np.average(weights=...)

with ``weights = [0.75, 0.25]`` and ``beta = 1.0`` by default. The statement step is the one
faithfulness uses (the response's statements are made once per judge and sample across both
metrics). ragqa computes the similarity with every configured embedding model and reports the
mean (each model's similarity and score in ``details``); the score is linear in the similarity,
so it equals the mean of the per-model scores. When the similarity weight is 0 no embedding
model is needed or asked.

spring-ai-ragas's presets are the ``preset`` option: ``default`` (0.75/0.25), ``equal_weights``
(0.5/0.5), ``factual_focused`` (0.9/0.1), ``semantic_focused`` (0.1/0.9). Java computes its
factual part with FactualCorrectness F1 instead of the classifier, and turns a failed component
into 0.0; ragqa follows RAGAS (see ``docs/metrics/answer_correctness.md``).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

from ragqa._math import fbeta, mean_or_nan
from ragqa.judges.base import Judge
from ragqa.metrics._steps import RESPONSE_STATEMENTS, extract_statements
from ragqa.metrics.base import Direction, Metric, MetricContext
from ragqa.metrics.semantic_similarity import cosine_by_model
from ragqa.prompts.correctness import CORRECTNESS, CorrectnessInput, CorrectnessOutput
from ragqa.schema import MetricScore, Sample

__all__ = ["PRESETS", "AnswerCorrectness", "Preset", "answer_correctness_score", "factuality_score"]

Preset = Literal["default", "equal_weights", "factual_focused", "semantic_focused"]
PRESETS: Mapping[str, tuple[float, float]] = {
    "default": (0.75, 0.25),
    "equal_weights": (0.5, 0.5),
    "factual_focused": (0.9, 0.1),
    "semantic_focused": (0.1, 0.9),
}
"""spring-ai-ragas's ``AnswerCorrectnessMetric.Config`` presets: (factuality, similarity) weights."""

REFERENCE_STATEMENTS = "statements:reference"
"""The step that decomposes the reference into statements (with the user input as the question)."""


def factuality_score(tp: float, fp: float, fn: float, *, beta: float = 1.0, no_statements: bool = False) -> float:
    """RAGAS's factuality: F-beta of the classifier's counts.

    Args:
        tp: answer statements supported by the reference (>= 0).
        fp: answer statements not supported (>= 0).
        fn: reference statements missing from the answer (>= 0).
        beta: F-beta's beta (> 0).
        no_statements: neither text has a statement (RAGAS then skips the classifier): 1.0.

    Returns:
        In [0, 1], higher is better: ``fbeta_score`` (P = 0 if TP + FP = 0, R = 0 if TP + FN = 0,
        0 if P = R = 0), or 1.0 when ``no_statements``.
    """
    return 1.0 if no_statements else fbeta(tp, fp, fn, beta)


def answer_correctness_score(factuality: float, similarity: float, weights: Sequence[float] = (0.75, 0.25)) -> float:
    """``np.average([factuality, similarity], weights=weights)``.

    Args:
        factuality: in [0, 1].
        similarity: cosine in [-1, 1] (ignored when its weight is 0).
        weights: two non-negative weights, not both 0.

    Returns:
        The weighted mean, in [-1, 1] (in [0, 1] whenever the cosine is >= 0); NaN when a
        weighted part is NaN.
    """
    wf, ws = weights
    if ws == 0:
        similarity = 0.0  # RAGAS does not compute it then, and averages with 0.0
    return (wf * factuality + ws * similarity) / (wf + ws)


def _number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def _check_weights(weights: Sequence[float] | str | None, preset: str | None) -> tuple[float, float]:
    if weights is not None and preset is not None:
        raise ValueError("give either weights or preset, not both")
    if preset is not None:
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {', '.join(PRESETS)}, not {preset!r}")
        return PRESETS[preset]
    if weights is None:
        return PRESETS["default"]
    given: object = weights
    if isinstance(weights, str):  # "0.9/0.1": the form of the result key and of a --metrics option
        given = [_number(w) for w in weights.split("/")]
    values = list(given) if isinstance(given, list | tuple) else None
    if values is None or len(values) != 2:
        raise ValueError(f"weights must be a list of two numbers [factuality, similarity] (or 'a/b'), not {weights!r}")
    if any(isinstance(w, bool) or not isinstance(w, int | float) or not math.isfinite(w) or w < 0 for w in values):
        raise ValueError(f"weights must be non-negative numbers, not {weights!r}")
    if values[0] == 0 and values[1] == 0:
        raise ValueError("at least one weight must be non-zero")
    return float(values[0]), float(values[1])


class AnswerCorrectness(Metric):
    """Answer correctness: statement-level F-beta against the reference, blended with semantic similarity.

    - Fields: ``user_input``, ``response``, ``reference``; embedding models unless the
      similarity weight is 0.
    - Range 0..1 in practice (a negative cosine could pull it below 0; the declared range is
      -1..1), higher is better.
    - Judge calls per sample: 3 (statements of the response, shared with faithfulness;
      statements of the reference; the classification), 2 when neither text has a statement.
      Embedding calls: 1 per embedding model (both texts batched), none when the similarity
      weight is 0.
    - Raises :class:`~ragqa.errors.JudgeError` subclasses on judge or embedding failures,
      :class:`~ragqa.errors.JudgeUnsupported` when the similarity weight is > 0 and no
      embedding model is configured.

    Args:
        weights: ``[factuality, similarity]`` weights, non-negative, not both 0 (default
            ``[0.75, 0.25]``); normalised by their sum as ``np.average`` does. The text
            ``"0.9/0.1"`` is the same (the result key's form, usable in ``--metrics``).
        preset: a spring-ai-ragas preset instead of ``weights``: ``default``, ``equal_weights``,
            ``factual_focused`` or ``semantic_focused`` (see :data:`PRESETS`).
        beta: F-beta's beta for the factuality (default 1.0; > 0).

    Raises:
        ValueError: for bad weights, an unknown preset, both weights and preset, or a beta that
            is not a positive number.
    """

    name: ClassVar[str] = "answer_correctness"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response", "reference")
    description: ClassVar[str] = "Weighted F-beta of classified statements and semantic similarity to the reference"
    calls_per_sample: ClassVar[str] = "3 (2 if neither text has statements)"
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    needs_embeddings: ClassVar[bool] = True
    default_threshold: ClassVar[float | None] = 0.5

    def __init__(
        self, weights: Sequence[float] | str | None = None, preset: Preset | None = None, beta: float = 1.0
    ) -> None:
        """Create the metric (see the class docstring)."""
        self.weights = _check_weights(weights, preset)
        self.preset = preset
        if isinstance(beta, bool) or not isinstance(beta, int | float) or not math.isfinite(beta) or beta <= 0:
            raise ValueError(f"beta must be a positive number (> 1 weighs recall more), not {beta!r}")
        self.beta = float(beta)
        if self.weights[1] == 0:
            # The class says True (the default weights embed); this instance never embeds, and the
            # panel reads the attribute on the instance when it checks for embedding models.
            object.__setattr__(self, "needs_embeddings", False)

    @property
    def key(self) -> str:
        """``answer_correctness``, plus the preset or weights and beta when they differ from RAGAS's defaults."""
        extra = []
        if self.preset is not None and self.preset != "default":
            extra.append(f"preset={self.preset}")
        elif self.preset is None and self.weights != PRESETS["default"]:
            extra.append(f"weights={self.weights[0]:g}/{self.weights[1]:g}")
        if self.beta != 1.0:
            extra.append(f"beta={self.beta:g}")
        return f"{self.name}({', '.join(extra)})" if extra else self.name

    def shared_steps(self, sample: Sample) -> frozenset[str]:
        """The response's statements, shared with faithfulness and other metrics."""
        return frozenset({RESPONSE_STATEMENTS})

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        embeds = self.weights[1] != 0
        if embeds:
            context.require_embedders(
                self.name, judge.id, part=" for its similarity part", otherwise=" or set weights: [1, 0]"
            )
        question, response, reference = sample.user_input or "", sample.response or "", sample.reference or ""
        lang = context.language

        async def factuality() -> tuple[list[str], list[str], CorrectnessOutput | None]:
            s_r, s_g = await asyncio.gather(
                extract_statements(judge, question, response, lang),
                extract_statements(judge, question, reference, lang),
            )
            if not s_r and not s_g:
                return s_r, s_g, None
            data = CorrectnessInput(question=question, answer=s_r, ground_truth=s_g)
            return s_r, s_g, await judge.ask(CORRECTNESS, data, language=lang)

        async def similarity() -> dict[str, float]:
            return await cosine_by_model(context.embedders, response, reference) if embeds else {}

        (s_r, s_g, classified), cosines = await asyncio.gather(factuality(), similarity())
        tp, fp, fn = classified.counts() if classified is not None else (0.0, 0.0, 0.0)
        f_score = factuality_score(tp, fp, fn, beta=self.beta, no_statements=classified is None)
        sim = mean_or_nan(list(cosines.values())) if embeds else 0.0
        value = answer_correctness_score(f_score, sim, self.weights)
        details: dict[str, object] = {
            "weights": list(self.weights),
            "response_statements": s_r,
            "reference_statements": s_g,
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "factuality": f_score,
            "similarity": sim if embeds else None,
        }
        if classified is not None:
            details["classification"] = {
                "TP": [c.statement for c in classified.TP],
                "FP": [c.statement for c in classified.FP],
                "FN": [c.statement for c in classified.FN],
            }
        if embeds:
            details["embedders"] = {
                model: {"similarity": c, "score": answer_correctness_score(f_score, c, self.weights)}
                for model, c in cosines.items()
            }
        how = (
            "neither text has a statement: factuality 1.0"
            if classified is None
            else f"TP {tp:.4g}, FP {fp:.4g}, FN {fn:.4g}: factuality {f_score:.3f}"
        )
        if embeds:
            how += f"; similarity {sim:.3f} over {len(cosines)} embedding model(s)"
        reason = f"{how}; weights {self.weights[0]:g}/{self.weights[1]:g} give {value:.3f}"
        return MetricScore(value=value, reason=reason, details=details)
