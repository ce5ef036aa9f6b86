"""The local judge's answers to the response metrics' prompts (factual and answer correctness).

- ``claim_decomposition``: the claim sentences of the text (:func:`~ragqa.judges.local.text.claims`,
  what :func:`~ragqa.judges.local._handler.statements_of` gives without a question). With
  ``atomicity: high`` each sentence is further split at clause boundaries (``;``, ``, and``,
  ``, but``, ``and also``, ``, а также``, ``, но``...), and a clause that starts without a subject gets
  the sentence's leading name (``Albert Einstein ... and also contributed to X`` -> ``Albert
  Einstein contributed to X``). ``coverage`` is not modelled: a lexical judge cannot tell a main
  fact from a minor detail, so every claim is kept at both levels.
- ``correctness_classifier``: each answer statement's graded support by the ground-truth
  statements joined (TP at or above the judge's ``support_threshold``, else FP), and each
  ground-truth statement's support by the answer statements joined (FN below the threshold). The
  answer is :class:`GradedCorrectnessOutput`, whose :meth:`~GradedCorrectnessOutput.counts` are
  graded: ``TP = sum(s)``, ``FP = sum(1 - s)``, ``FN = sum(1 - r)``.

Every reason starts with ``local approximation``. Each handler registers itself for its prompt
(:func:`~ragqa.judges.local._handler.register_handler`).
"""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import Field

from ragqa.judges.local._handler import LocalJudgeView, register_handler
from ragqa.judges.local.text import claims, language_pattern
from ragqa.prompts.claim_decomposition import CLAIM_DECOMPOSITION, ClaimDecompositionInput, ClaimDecompositionOutput
from ragqa.prompts.correctness import CORRECTNESS, ClassifiedStatement, CorrectnessInput, CorrectnessOutput
from ragqa.schema import Language

__all__ = ["GradedCorrectnessOutput", "atomic_claims"]

_TAG = "local approximation"
_MIN_WORDS = 3


def _subject(sentence: str) -> str:
    """The leading run of capitalised words (``Albert Einstein``), or ``""``."""
    words = []
    for word in sentence.split():
        if not word[:1].isupper():
            break
        words.append(word.rstrip(",;:"))
    return " ".join(words)


def atomic_claims(text: str, atomicity: str = "low") -> list[str]:
    """The local judge's claims of ``text`` at ``atomicity``.

    Args:
        text: the text to decompose (English or Russian).
        atomicity: ``low``: one claim per claim sentence; ``high``: sentences split further at
            clause boundaries (clauses of fewer than 3 words stay with the previous one).

    Returns:
        The claims in order (empty when the text asserts nothing).
    """
    sentences = claims(text)
    if atomicity != "high":
        return sentences
    out: list[str] = []
    for sentence in sentences:
        parts = [p.strip(" ,.") for p in language_pattern("clause_breaks").split(sentence)]
        merged: list[str] = []
        for part in parts:
            if merged and len(part.split()) < _MIN_WORDS:
                merged[-1] = f"{merged[-1]} {part}".strip()
            elif part:
                merged.append(part)
        if len(merged) <= 1:
            out.append(sentence)
            continue
        subject = _subject(merged[0])
        for part in merged:
            if subject and part[:1].islower():
                part = f"{subject} {part}"
            out.append(part if part.endswith((".", "!")) else part + ".")
    return out


@register_handler(CLAIM_DECOMPOSITION)
async def _claim_decomposition(
    judge: LocalJudgeView, data: ClaimDecompositionInput, language: Language
) -> ClaimDecompositionOutput:
    return ClaimDecompositionOutput(claims=atomic_claims(data.response, data.atomicity))


_Support = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class GradedCorrectnessOutput(CorrectnessOutput):
    """A correctness classification with graded supports (the local judge's).

    Attributes:
        answer_support: ``float[A]`` in [0, 1], each answer statement's support by the ground
            truth (in the order given); the statement is in ``TP`` when it reaches the judge's
            ``support_threshold``, else in ``FP``.
        reference_support: ``float[G]`` in [0, 1], each ground-truth statement's support by the
            answer; the statement is in ``FN`` below the threshold.
    """

    answer_support: list[_Support] = Field(description="Support of each answer statement by the ground truth")
    reference_support: list[_Support] = Field(description="Support of each ground-truth statement by the answer")

    def counts(self) -> tuple[float, float, float]:
        """Graded ``(TP, FP, FN)``: ``sum(s)``, ``sum(1 - s)`` over the answer, ``sum(1 - r)`` over the truth."""
        tp = math.fsum(self.answer_support)
        fp = math.fsum(1.0 - s for s in self.answer_support)
        fn = math.fsum(1.0 - r for r in self.reference_support)
        return tp, fp, fn


@register_handler(CORRECTNESS)
async def _correctness(judge: LocalJudgeView, data: CorrectnessInput, language: Language) -> CorrectnessOutput:
    truth = "\n".join(data.ground_truth)
    answer = "\n".join(data.answer)
    tp: list[ClassifiedStatement] = []
    fp: list[ClassifiedStatement] = []
    fn: list[ClassifiedStatement] = []
    answer_support: list[float] = []
    reference_support: list[float] = []
    threshold = judge.settings.support_threshold
    for statement in data.answer:
        value = judge.support(statement, truth).value
        answer_support.append(value)
        if judge.verdict(value):
            tp.append(
                ClassifiedStatement(statement=statement, reason=f"{_TAG}: the ground truth supports it {value:.2f}")
            )
        else:
            reason = f"{_TAG}: the ground truth supports it only {value:.2f} (threshold {threshold:.2f})"
            fp.append(ClassifiedStatement(statement=statement, reason=reason))
    for statement in data.ground_truth:
        value = judge.support(statement, answer).value
        reference_support.append(value)
        if not judge.verdict(value):
            reason = f"{_TAG}: the answer covers it only {value:.2f} (threshold {threshold:.2f})"
            fn.append(ClassifiedStatement(statement=statement, reason=reason))
    return GradedCorrectnessOutput(
        TP=tp, FP=fp, FN=fn, answer_support=answer_support, reference_support=reference_support
    )
