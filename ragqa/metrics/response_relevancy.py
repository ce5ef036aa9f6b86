"""Response relevancy: do questions generated from the response resemble the user's question?

RAGAS ``ResponseRelevancy`` / ``AnswerRelevancy`` (``metrics/_answer_relevance.py``): generate
``strictness`` questions from the response alone, each with a ``noncommittal`` flag; embed the
user input and the questions; score::

    score = mean_i cos(E(user_input), E(q_i)) * (0 if ALL q_i are noncommittal else 1)

The gate is RAGAS's ``np.all``: one noncommittal generation out of three does not zero the
score. Cosine is raw (not clipped), so the range is [-1, 1], ~[0, 1] in practice.

ragqa computes the score with *every* configured embedding model and reports their mean, with
each model's value in ``details`` (spring-ai-ragas used only the first model that answered).

Call plans: ``ragas`` asks ``strictness`` question generations as separate calls (RAGAS asks one
request with ``n``); ``batched`` asks for all ``strictness`` questions in one
:data:`~ragqa.prompts.question_generation_batch.QUESTION_GENERATION_BATCH` call, each numbered
like the per-call ``attempt`` and flagged on its own (same maths).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import ClassVar

from ragqa._math import cosine, mean_or_nan
from ragqa.errors import JudgeError, JudgeOutputError
from ragqa.judges.base import Embedder, Judge
from ragqa.metrics._batched import generate_questions
from ragqa.metrics.base import CallPlan, Direction, Metric, MetricContext
from ragqa.prompts.question_generation import QUESTION_GENERATION, QuestionGenerationInput, QuestionGenerationOutput
from ragqa.schema import MetricScore, Sample

__all__ = ["ResponseRelevancy", "embed_texts", "response_relevancy_score"]


def response_relevancy_score(
    question_vector: Sequence[float],
    generated_vectors: Sequence[Sequence[float]],
    noncommittal: Sequence[int],
) -> float:
    """RAGAS's answer-relevancy formula for one embedding model.

    Args:
        question_vector: ``float[D]``, the embedding of ``user_input``.
        generated_vectors: ``float[Q, D]``, embeddings of the generated questions.
        noncommittal: ``int[S]``, the flags of all S generations (S >= Q when blank
            questions were dropped).

    Returns:
        ``mean_i cos(question_vector, generated_vectors[i])``, times 0 when every flag is
        non-zero; in [-1, 1], higher is better. NaN when there is no generated question or a
        vector has zero norm.

    Raises:
        ValueError: when vector lengths differ.
    """
    if not generated_vectors:
        return math.nan
    cosines = [cosine(question_vector, v) for v in generated_vectors]
    gate = 0.0 if noncommittal and all(noncommittal) else 1.0
    return mean_or_nan(cosines) * gate


async def embed_texts(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Embed ``texts`` with ``embedder`` and check the answer's shape.

    Returns:
        One vector per text, in order.

    Raises:
        JudgeError: when the embedder fails (any non-ragqa exception is wrapped, step ``embed``).
        JudgeOutputError: when it returns a different number of vectors than texts.
    """
    try:
        vectors = await embedder.embed(list(texts))
    except JudgeError:
        raise
    except Exception as exc:  # a provider or library error: make it a judge failure, never a crash
        raise JudgeError(f"embedding model {embedder.id!r} failed: {exc}", judge_id=embedder.id, step="embed") from exc
    if len(vectors) != len(texts):
        raise JudgeOutputError(
            f"embedding model {embedder.id!r} returned {len(vectors)} vectors for {len(texts)} texts",
            judge_id=embedder.id,
            step="embed",
        )
    return vectors


class ResponseRelevancy(Metric):
    """Relevance of the response to the question, via generated questions and embeddings.

    - Fields: ``user_input``, ``response``; needs at least one embedding model.
    - Range -1..1 (cosine; ~0..1 in practice), higher is better; 0.0 when every generation is
      flagged noncommittal (no embedding call is made then).
    - Judge calls per sample: ``strictness`` (default 3), concurrent, with the ``ragas`` call
      plan (each generation carries its attempt number so the calls are distinct); 1 with
      ``batched`` (all ``strictness`` questions in one call). Embedding calls: 1 per embedding model
      (user input and questions in one batch), concurrent.
    - NaN when every generated question is blank (RAGAS legacy).
    - Raises :class:`~ragqa.errors.JudgeError` when a generation or an embedding model fails,
      :class:`~ragqa.errors.JudgeUnsupported` when no embedding model is configured.

    Args:
        strictness: number of questions to generate (>= 1; RAGAS default 3).
    """

    name: ClassVar[str] = "response_relevancy"
    direction: ClassVar[Direction] = "higher"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response")
    description: ClassVar[str] = "Mean cosine between the question and questions generated from the response"
    calls_per_sample: ClassVar[str] = "strictness (default 3), concurrent"
    batched_calls_per_sample: ClassVar[str | None] = "1 (strictness questions in one call)"
    value_range: ClassVar[tuple[float, float]] = (-1.0, 1.0)
    needs_embeddings: ClassVar[bool] = True
    default_threshold: ClassVar[float | None] = 0.7

    def __init__(self, strictness: int = 3) -> None:
        """Create the metric.

        Raises:
            ValueError: when ``strictness`` < 1.
        """
        if isinstance(strictness, bool) or not isinstance(strictness, int) or strictness < 1:
            raise ValueError(f"strictness must be an integer >= 1, not {strictness!r}")
        self.strictness = strictness

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """``strictness`` generations per sample, 1 with the ``batched`` plan (embeddings are not judge calls)."""
        return 1 if plan == "batched" else self.strictness

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        context.require_embedders(self.name, judge.id)
        generations: Sequence[QuestionGenerationOutput]
        fallback: list[str] = []
        if context.call_plan == "batched":
            batch = await generate_questions(judge, sample.response or "", self.strictness, context.language)
            generations, fallback = batch.items, batch.fallback
        else:
            generations = await asyncio.gather(
                *(
                    judge.ask(
                        QUESTION_GENERATION,
                        QuestionGenerationInput(response=sample.response or "", attempt=i),
                        language=context.language,
                    )
                    for i in range(1, self.strictness + 1)
                )
            )
        questions = [g.question.strip() for g in generations]
        flags = [g.noncommittal for g in generations]
        details: dict[str, object] = {"questions": questions, "noncommittal": flags}
        if fallback:
            details["batched_fallback"] = fallback
        kept = [q for q in questions if q]
        if not kept:
            return MetricScore(value=math.nan, reason="every generated question is blank", details=details)
        if all(flags):
            return MetricScore(
                value=0.0, reason="the response is noncommittal (every generation says so)", details=details
            )

        texts = [sample.user_input or "", *kept]
        per_model = await asyncio.gather(*(embed_texts(e, texts) for e in context.embedders))
        by_model: dict[str, dict[str, object]] = {}
        scores: list[float] = []
        for embedder, vectors in zip(context.embedders, per_model, strict=True):
            try:
                value = response_relevancy_score(vectors[0], vectors[1:], flags)
                cosines = [cosine(vectors[0], v) for v in vectors[1:]]
            except ValueError as exc:
                raise JudgeOutputError(
                    f"embedding model {embedder.id!r} returned vectors of different lengths",
                    judge_id=embedder.id,
                    step="embed",
                ) from exc
            by_model[embedder.id] = {"score": value, "cosines": cosines}
            scores.append(value)
        details["embedders"] = by_model
        value = mean_or_nan(scores)
        reason = f"mean cosine {value:.3f} over {len(kept)} generated questions and {len(scores)} embedding model(s)"
        if any(flags):
            reason += f"; {sum(1 for f in flags if f)} of {len(flags)} generations flagged noncommittal"
        return MetricScore(value=value, reason=reason, details=details)
