"""Factual correctness: precision / recall / F-beta of the response's claims against the reference.

RAGAS ``FactualCorrectness`` (``metrics/_factual_correctness.py``, v0.4.3 legacy API):

1. ``rr`` = NLI(premise = reference, claims = decompose(response)): one verdict per response
   claim; ``TP = sum(rr)``, ``FP = sum(not rr)``.
2. Unless ``mode == "precision"``: ``r2`` = NLI(premise = response, claims = decompose(reference));
   ``FN = sum(not r2)``. The two chains run concurrently (RAGAS ``asyncio.gather``).
3. ``precision = TP / (TP + FP + 1e-8)``; ``recall = TP / (TP + FN + 1e-8)``;
   ``f1 = fbeta_score(TP, FP, FN, beta)`` (P = 0 if TP + FP = 0, R = 0 if TP + FN = 0, 0 if
   P = R = 0, else ``(1 + b^2) P R / (b^2 P + R)``: no epsilon in F-beta).
4. The score is ``np.round(score, 2)``: rounded half to even at two decimals *after* scaling by
   100 (:func:`round2`), so 0.125 -> 0.12 and 2/3 -> 0.67.

Decomposition uses the claim-decomposition prompt at the metric's ``atomicity`` and
``coverage``; verification uses the shared NLI prompt (the same as faithfulness, RAGAS's
``NLIStatementPrompt``). Graded verdicts v in [0, 1] (the local judge's) count as ``TP += v``,
``FP += 1 - v``, ``FN += 1 - w``; an LLM's binary verdicts give RAGAS's counts exactly.

No claims: RAGAS returns 0.0, not NaN (``0 / (0 + 1e-8)`` and F-beta's "P = R = 0" rule), and
so does ragqa; the reason says that no claim was found.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import ClassVar, Literal, get_args

from ragqa._math import fbeta
from ragqa.judges.base import Judge
from ragqa.metrics._steps import judge_statements
from ragqa.metrics.base import CallPlan, ClaimVote, Direction, Metric, MetricContext
from ragqa.prompts.claim_decomposition import (
    Atomicity,
    ClaimDecompositionInput,
    Coverage,
    claim_decomposition_prompt,
)
from ragqa.prompts.nli import StatementVerdict
from ragqa.schema import Language, MetricScore, Sample

__all__ = [
    "FactualCorrectness",
    "Mode",
    "claim_counts",
    "decompose_claims",
    "factual_correctness_score",
    "round2",
]

Mode = Literal["precision", "recall", "f1"]
EPS = 1e-8
"""RAGAS's epsilon in the precision and recall denominators (not in F-beta)."""


def round2(value: float) -> float:
    """``numpy.round(value, 2)``: scale by 100, round half to even, scale back (NaN stays NaN).

    numpy rounds the *scaled* float, so the result can differ from Python's ``round(value, 2)``
    (which rounds the exact decimal value) on ties: ``round2(0.285) == 0.28`` because
    ``0.285 * 100 == 28.499999999999996``.
    """
    if not math.isfinite(value):
        return value
    return round(value * 100) / 100


def claim_counts(precision_verdicts: Sequence[float], recall_verdicts: Sequence[float]) -> tuple[float, float, float]:
    """``(TP, FP, FN)`` from the two verdict lists.

    Args:
        precision_verdicts: ``float[C_r]`` in [0, 1], one per response claim, judged against the reference.
        recall_verdicts: ``float[C_g]`` in [0, 1], one per reference claim, judged against the response
            (empty in precision mode).

    Returns:
        ``TP = sum(v)``, ``FP = sum(1 - v)`` over response claims, ``FN = sum(1 - w)`` over
        reference claims; integers for binary verdicts.
    """
    tp = math.fsum(precision_verdicts)
    fp = math.fsum(1.0 - v for v in precision_verdicts)
    fn = math.fsum(1.0 - w for w in recall_verdicts)
    return tp, fp, fn


def factual_correctness_score(tp: float, fp: float, fn: float, *, mode: Mode = "f1", beta: float = 1.0) -> float:
    """RAGAS's factual-correctness formula, rounded as RAGAS rounds.

    Args:
        tp: supported response claims (>= 0).
        fp: unsupported response claims (>= 0).
        fn: reference claims the response does not support (>= 0; ignored in precision mode).
        mode: ``precision``, ``recall`` or ``f1`` (F-beta).
        beta: F-beta's beta (> 0; > 1 weighs recall more).

    Returns:
        The score in [0, 1], rounded to 2 decimals (:func:`round2`); higher is better. 0.0 when
        there are no claims.
    """
    if mode == "precision":
        score = tp / (tp + fp + EPS)
    elif mode == "recall":
        score = tp / (tp + fn + EPS)
    else:
        score = fbeta(tp, fp, fn, beta)
    return round2(score)


async def decompose_claims(
    judge: Judge, text: str, atomicity: Atomicity, coverage: Coverage, language: Language
) -> list[str]:
    """Decompose ``text`` into claims (one judge call).

    Returns:
        The non-blank claims, stripped, in order (possibly empty).

    Raises:
        ragqa.errors.JudgeError: when the call fails.
    """
    prompt = claim_decomposition_prompt(atomicity, coverage)
    data = ClaimDecompositionInput(response=text, atomicity=atomicity, coverage=coverage)
    out = await judge.ask(prompt, data, language=language)
    return [c.strip() for c in out.claims if c.strip()]


class FactualCorrectness(Metric):
    """Factual correctness of the response against the reference, by claim decomposition and NLI.

    - Fields: ``response``, ``reference``.
    - Range 0..1, higher is better; rounded to 2 decimals as RAGAS does.
    - Judge calls per sample: 2 in precision mode (decompose the response, verify its claims
      against the reference), 4 in recall and f1 modes (also decompose the reference and verify
      its claims against the response); a verification is skipped when its text has no claim.
    - 0.0 (not NaN) when no claim is found, as in RAGAS.
    - Raises :class:`~ragqa.errors.JudgeError` subclasses on judge failures, including a verdict
      count that differs from the claim count.

    Args:
        mode: ``f1`` (default), ``precision`` or ``recall``.
        beta: F-beta's beta for ``f1`` mode (default 1.0; > 0).
        atomicity: ``low`` (default) or ``high``: how finely sentences are split into claims.
        coverage: ``low`` (default) or ``high``: whether minor details become claims.

    Raises:
        ValueError: for an unknown mode or level, or a beta that is not a positive number.
    """

    name: ClassVar[str] = "factual_correctness"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("response", "reference")
    description: ClassVar[str] = "Precision/recall/F-beta of response claims verified against the reference"
    calls_per_sample: ClassVar[str] = "4 (2 in precision mode)"
    default_threshold: ClassVar[float | None] = 0.5

    def __init__(
        self, mode: Mode = "f1", beta: float = 1.0, atomicity: Atomicity = "low", coverage: Coverage = "low"
    ) -> None:
        """Create the metric (see the class docstring)."""
        if mode not in get_args(Mode):
            raise ValueError(f"mode must be one of {', '.join(get_args(Mode))}, not {mode!r}")
        if atomicity not in ("low", "high") or coverage not in ("low", "high"):
            raise ValueError(f"atomicity and coverage must each be 'low' or 'high', not {atomicity!r}, {coverage!r}")
        if isinstance(beta, bool) or not isinstance(beta, int | float) or not math.isfinite(beta) or beta <= 0:
            raise ValueError(f"beta must be a positive number (> 1 weighs recall more), not {beta!r}")
        self.mode: Mode = mode
        self.beta = float(beta)
        self.atomicity: Atomicity = atomicity
        self.coverage: Coverage = coverage
        # claim-vote: the extractor decomposes the response (and the reference) for the whole panel
        self.claim_vote = ClaimVote(
            extraction_prompt=claim_decomposition_prompt(atomicity, coverage).name,
            steps=("claims:response",) if mode == "precision" else ("claims:response", "claims:reference"),
            lists=(("response_claims", "precision_verdicts"), ("reference_claims", "recall_verdicts")),
            formula=self.voted_score,
        )

    def voted_score(self, lists: Sequence[Sequence[float]]) -> float:
        """The score from voted verdicts: ``lists = (precision verdicts, recall verdicts)``, 0/1 each.

        Returns:
            :func:`factual_correctness_score` of :func:`claim_counts` of the two lists, in [0, 1].
        """
        tp, fp, fn = claim_counts(lists[0], lists[1])
        return factual_correctness_score(tp, fp, fn, mode=self.mode, beta=self.beta)

    @property
    def key(self) -> str:
        """``factual_correctness(mode=<mode>)`` (RAGAS's column name), plus settings not at RAGAS's defaults."""
        extra = ""
        if self.atomicity != "low":
            extra += f", atomicity={self.atomicity}"
        if self.coverage != "low":
            extra += f", coverage={self.coverage}"
        if self.beta != 1.0:
            extra += f", beta={self.beta:g}"
        return f"{self.name}(mode={self.mode}{extra})"

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """2 in precision mode, else 4."""
        return 2 if self.mode == "precision" else 4

    async def _chain(
        self, judge: Judge, claims_of: str, premise: str, language: Language
    ) -> tuple[list[str], list[StatementVerdict]]:
        claims = await decompose_claims(judge, claims_of, self.atomicity, self.coverage, language)
        verdicts = await judge_statements(judge, premise, claims, language)
        return claims, verdicts

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        response, reference, lang = sample.response or "", sample.reference or "", context.language
        if self.mode == "precision":
            response_claims, precision_verdicts = await self._chain(judge, response, reference, lang)
            reference_claims: list[str] = []
            recall_verdicts: list[StatementVerdict] = []
        else:
            (response_claims, precision_verdicts), (reference_claims, recall_verdicts) = await asyncio.gather(
                self._chain(judge, response, reference, lang), self._chain(judge, reference, response, lang)
            )
        pv = [v.value for v in precision_verdicts]
        rv = [v.value for v in recall_verdicts]
        tp, fp, fn = claim_counts(pv, rv)
        value = factual_correctness_score(tp, fp, fn, mode=self.mode, beta=self.beta)
        precision = tp / (tp + fp + EPS)
        recall = tp / (tp + fn + EPS)
        details: dict[str, object] = {
            "mode": self.mode,
            "response_claims": response_claims,
            "precision_verdicts": pv,
            "precision_reasons": [v.reason for v in precision_verdicts],
            "reference_claims": reference_claims,
            "recall_verdicts": rv,
            "recall_reasons": [v.reason for v in recall_verdicts],
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "unsupported": [c for c, v in zip(response_claims, pv, strict=True) if v < 0.5],
            "missing": [c for c, w in zip(reference_claims, rv, strict=True) if w < 0.5],
        }
        if not response_claims and not reference_claims:
            reason = "no claim found in the response" + ("" if self.mode == "precision" else " or the reference")
        else:
            if self.mode == "precision":
                reason = f"TP {tp:.4g}, FP {fp:.4g}: precision {value:.2f}"
            else:
                reason = (
                    f"TP {tp:.4g}, FP {fp:.4g}, FN {fn:.4g}: precision {round2(precision):.2f}, "
                    f"recall {round2(recall):.2f}; {self.mode} {value:.2f}"
                )
        return MetricScore(value=value, reason=reason, details=details)
