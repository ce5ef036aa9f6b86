"""Noise sensitivity: the share of response claims that are wrong and came from the retrieved contexts.

RAGAS ``NoiseSensitivity`` (``metrics/_noise_sensitivity.py``, a port of RAGChecker), with the
same boolean-matrix maths:

- ``G`` reference statements and ``A`` response statements (two decompositions);
- ``reference_in_context: bool[G, N]``: reference statement g is entailed by context j
  (one NLI call per context);
- ``answer_in_context: bool[A, N]``: response statement a is entailed by context j
  (one NLI call per context);
- ``answer_in_reference: bool[A]``: response statement a is supported by the reference
  (one NLI call with the reference as the context).

Then ``relevant[j] = OR_g reference_in_context[g, j]``; ``incorrect[a] = NOT
answer_in_reference[a]``; ``relevant_faithful[a] = OR_j (relevant[j] AND answer_in_context[a, j])``;
``irrelevant_faithful[a] = OR_j (NOT relevant[j] AND answer_in_context[a, j]) AND NOT
relevant_faithful[a]``. Mode ``relevant`` scores ``mean_a(relevant_faithful AND incorrect)``,
mode ``irrelevant`` ``mean_a(irrelevant_faithful AND incorrect)``. A wrong claim that no context
entails (a pure hallucination) counts in neither mode.

Values in [0, 1] instead of booleans are accepted everywhere: with 0/1 verdicts the maths is
exactly RAGAS's boolean algebra; graded verdicts (the offline local judge) use the standard fuzzy
operators ``AND = min``, ``OR = max``, ``NOT x = 1 - x``, so offline scores rank finely.

Call plans: ``ragas`` asks one NLI call per context for each matrix (RAGAS's 2N + 1 NLI calls);
``batched`` asks ``answer_in_context`` and ``answer_in_reference`` in one
:data:`~ragqa.prompts.nli_matrix.NLI_MATRIX` call (the reference is one more column) and
``reference_in_context`` in a second one, with the same verdicts and the same maths.

promptfoo extensions: labelled chunks (``context_chunks: [{text, relevant}]``) replace the judged
relevance of their contexts (the reference-vs-context calls are skipped), ``noise_context`` is
appended as one more chunk labelled irrelevant, and ``counting="promptfoo"`` reproduces
promptfoo's documented relevant-mode rule: every incorrect claim counts (``mean_a(incorrect)``),
whether or not a context entails it. Its irrelevant mode is RAGAS's.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from ragqa._math import count_of, mean_or_nan
from ragqa.interpretation import interpret
from ragqa.judges.base import Judge
from ragqa.metrics._batched import judge_matrix
from ragqa.metrics._steps import REFERENCE_STATEMENTS, RESPONSE_STATEMENTS, extract_statements, judge_statements
from ragqa.metrics.base import CallPlan, ClaimVote, Direction, Metric, MetricContext, VoteLayout
from ragqa.prompts.nli import StatementVerdict
from ragqa.prompts.statements import STATEMENTS
from ragqa.schema import MetricScore, Sample

__all__ = [
    "Counting",
    "NoiseMode",
    "NoiseSensitivity",
    "claims_counted",
    "context_relevance",
    "noise_reason",
    "noise_sensitivity_score",
    "vote_layout",
]

NoiseMode = Literal["relevant", "irrelevant"]
"""Which context-borne errors count: from relevant contexts, or only from irrelevant ones."""
Counting = Literal["ragas", "promptfoo"]
"""``ragas``: the boolean-matrix rule; ``promptfoo``: every incorrect claim counts in relevant mode."""


def context_relevance(reference_in_context: Sequence[Sequence[float]]) -> list[float]:
    """Which contexts are relevant: those that entail at least one reference statement.

    Args:
        reference_in_context: ``float[G, N]``, row g = reference statement g's verdict against
            each of the N contexts (0/1 for LLM judges; RAGAS's ``retrieved2ground_truth``).

    Returns:
        ``float[N]``: ``max_g reference_in_context[g, j]`` (boolean OR for 0/1 verdicts).

    Raises:
        ValueError: when there is no reference statement (``G == 0``; RAGAS fails the same way,
            a max over an empty axis) or the rows differ in length.
    """
    if not reference_in_context:
        raise ValueError("the reference has no statement, so no context can be judged relevant")
    n = len(reference_in_context[0])
    if any(len(row) != n for row in reference_in_context):
        raise ValueError("ragged reference-in-context matrix: rows differ in length")
    return [max(row[j] for row in reference_in_context) for j in range(n)]


@dataclass(frozen=True)
class _Claim:
    incorrect: float
    relevant_faithful: float
    irrelevant_faithful: float


def _claims(
    answer_in_context: Sequence[Sequence[float]],
    context_relevant: Sequence[float],
    answer_in_reference: Sequence[float],
) -> list[_Claim]:
    n = len(context_relevant)
    if len(answer_in_reference) != len(answer_in_context):
        raise ValueError(
            f"answer-in-reference has {len(answer_in_reference)} verdicts for {len(answer_in_context)} statements"
        )
    out: list[_Claim] = []
    for row, in_ref in zip(answer_in_context, answer_in_reference, strict=True):
        if len(row) != n:
            raise ValueError(f"ragged answer-in-context matrix: a row has {len(row)} verdicts for {n} contexts")
        rel = max((min(r, v) for r, v in zip(context_relevant, row, strict=True)), default=0.0)
        irr = max((min(1.0 - r, v) for r, v in zip(context_relevant, row, strict=True)), default=0.0)
        out.append(_Claim(incorrect=1.0 - in_ref, relevant_faithful=rel, irrelevant_faithful=min(irr, 1.0 - rel)))
    return out


def claims_counted(
    answer_in_context: Sequence[Sequence[float]],
    context_relevant: Sequence[float],
    answer_in_reference: Sequence[float],
    *,
    mode: NoiseMode = "relevant",
    counting: Counting = "ragas",
) -> list[float]:
    """Per response statement: does it count as a noise-induced error (1) or not (0)?

    Args:
        answer_in_context: ``float[A, N]``, row a = response statement a's verdict against each
            context (RAGAS's ``retrieved2answer``).
        context_relevant: ``float[N]``, 1 for a relevant context (see :func:`context_relevance`,
            or a human label).
        answer_in_reference: ``float[A]``, 1 when the reference supports statement a (RAGAS's
            ``ground_truth2answer``).
        mode: ``relevant`` or ``irrelevant``.
        counting: ``ragas`` or ``promptfoo`` (relevant mode: ``incorrect[a]`` alone).

    Returns:
        ``float[A]`` in [0, 1] (0/1 for 0/1 inputs).

    Raises:
        ValueError: for ragged shapes or an unknown mode/counting.
    """
    if mode not in get_args(NoiseMode):
        raise ValueError(f"mode must be 'relevant' or 'irrelevant', not {mode!r}")
    if counting not in get_args(Counting):
        raise ValueError(f"counting must be 'ragas' or 'promptfoo', not {counting!r}")
    claims = _claims(answer_in_context, context_relevant, answer_in_reference)
    if mode == "irrelevant":
        return [min(c.irrelevant_faithful, c.incorrect) for c in claims]
    if counting == "promptfoo":
        return [c.incorrect for c in claims]
    return [min(c.relevant_faithful, c.incorrect) for c in claims]


def noise_sensitivity_score(
    answer_in_context: Sequence[Sequence[float]],
    context_relevant: Sequence[float],
    answer_in_reference: Sequence[float],
    *,
    mode: NoiseMode = "relevant",
    counting: Counting = "ragas",
) -> float:
    """Noise sensitivity from the three verdict matrices (shapes as in :func:`claims_counted`).

    Returns:
        ``mean_a(counted[a])`` in [0, 1], lower is better; NaN when there is no response
        statement (``A == 0``, as RAGAS). With no context (``N == 0``) no claim is entailed, so
        RAGAS counting gives 0.0.

    Raises:
        ValueError: for ragged shapes (RAGAS: numpy broadcast errors, scored NaN).
    """
    return mean_or_nan(
        claims_counted(answer_in_context, context_relevant, answer_in_reference, mode=mode, counting=counting)
    )


def noise_reason(statements: Sequence[str], counted: Sequence[float], where: str) -> str:
    """The reason of a noise sensitivity score, true to the counts it was computed from.

    With 0/1 counts (LLM judges): ``"1 of 2 response statements are incorrect: <statement>"``.
    With graded counts (the local judge's fuzzy verdicts) a count of values >= 0.5 would
    contradict the score (``0 of 1 ... are incorrect`` beside 0.48), so the count is their sum,
    marked graded (:func:`ragqa._math.count_of`), and every statement that counts 0.01 or
    more is named with its share: ``"0.48 (graded) of 1 response statements are incorrect:
    <statement> (0.48)"``.

    Args:
        statements: the response statements, ``str[A]``.
        counted: ``float[A]`` in [0, 1], how far each counts (:func:`claims_counted`).
        where: what counting means (``"incorrect and from a relevant context"``).

    Returns:
        The reason.
    """
    graded = not all(c in (0.0, 1.0) for c in counted)
    named = [f"{s} ({c:.2f})" if graded else s for s, c in zip(statements, counted, strict=True) if round(c, 2) > 0]
    return f"{count_of(counted)} of {len(statements)} response statements are {where}" + (
        f": {'; '.join(named)}" if named else ""
    )


def _chunks(sample: Sample) -> list[tuple[str, bool | None]]:
    """The contexts with their relevance labels (``None`` = to be judged), noise chunk last."""
    if sample.context_chunks:
        chunks: list[tuple[str, bool | None]] = [(c.text, c.relevant) for c in sample.context_chunks]
    else:
        chunks = [(c, None) for c in sample.retrieved_contexts or []]
    if sample.noise_context and sample.noise_context.strip():
        chunks.append((sample.noise_context, False))
    return chunks


def vote_layout(details: Mapping[str, Any]) -> VoteLayout | None:
    """The verdicts one judge's score votes with (``claim-vote``), and the formula for the voted ones.

    Three lists, keyed by the shared statements: ``answer_in_reference`` (``A`` verdicts),
    ``answer_in_context`` row by row (``A x N``, keys ``context j: statement``) and the judged
    contexts' ``reference_in_context`` context by context (``U x G``). The formula rebuilds the
    matrices from the voted lists, takes the labelled contexts' relevance from the sample, and
    runs :func:`noise_sensitivity_score` with the score's mode and counting.

    Args:
        details: the judge's :attr:`~ragqa.schema.MetricScore.details` (see :class:`NoiseSensitivity`).

    Returns:
        The lists and the formula; no lists and a NaN formula when the score is NaN for want of
        statements (no verdicts); ``None`` for details that are not a noise sensitivity score's.
    """
    answer, mode, counting = details.get("statements"), details.get("mode"), details.get("counting")
    if not isinstance(answer, list) or mode not in get_args(NoiseMode) or counting not in get_args(Counting):
        return None
    if "answer_in_reference" not in details:
        return [], lambda lists: math.nan
    refs = [str(g) for g in details.get("reference_statements") or []]
    relevant, sources = list(details["context_relevant"]), list(details["relevance_source"])
    judged = {int(j): row for j, row in dict(details.get("reference_in_context") or {}).items()}
    order = sorted(judged)
    rows = list(details["answer_in_context"])
    n = len(relevant)
    lists = [
        ([str(a) for a in answer], [float(v) for v in details["answer_in_reference"]]),
        ([f"context {j + 1}: {a}" for a in answer for j in range(n)], [float(v) for row in rows for v in row]),
        ([f"context {j + 1}: {g}" for j in order for g in refs], [float(v) for j in order for v in judged[j]]),
    ]
    labels = [float(r) if source == "label" else None for r, source in zip(relevant, sources, strict=True)]
    size_a, size_g = len(answer), len(refs)
    how: NoiseMode = "irrelevant" if mode == "irrelevant" else "relevant"
    count: Counting = "promptfoo" if counting == "promptfoo" else "ragas"

    def formula(voted: Sequence[Sequence[float]]) -> float:
        in_reference, flat, flat_ref = voted
        in_context = [list(flat[a * n : (a + 1) * n]) for a in range(size_a)]
        by_context = {j: list(flat_ref[k * size_g : (k + 1) * size_g]) for k, j in enumerate(order)}
        rel = [label if label is not None else max(by_context[j], default=0.0) for j, label in enumerate(labels)]
        return noise_sensitivity_score(in_context, rel, in_reference, mode=how, counting=count)

    return lists, formula


def _values(verdicts: Sequence[StatementVerdict]) -> list[float]:
    return [v.value for v in verdicts]


class NoiseSensitivity(Metric):
    """How often the response states wrong claims taken from (relevant or irrelevant) contexts.

    - Fields: ``user_input``, ``response``, ``reference``, ``retrieved_contexts`` (or labelled
      ``context_chunks``); optional ``noise_context`` (appended as an irrelevant chunk).
    - Range 0..1, **lower is better** (0 = no context-borne error). Default threshold 0.2.
    - Judge calls per sample, with N contexts (noise chunk included) of which U carry no label,
      call plan ``ragas``: ``2 + N + U + (1 if U else 0)``; RAGAS's case (no labels) is
      ``2N + 3``, all labelled ``N + 2``; ``counting="promptfoo"`` in relevant mode needs only 2
      (statements, and statements vs reference). Call plan ``batched``: ``4`` (``2`` when every
      chunk is labelled or with ``counting="promptfoo"`` in relevant mode): the statements, one
      matrix call for the response's statements against every context and the reference, and
      (with U > 0) the reference's statements and one matrix call for them against the U
      unlabelled contexts. All independent calls run concurrently; the response's statements
      call is the one faithfulness and hallucination make, so it is shared.
    - NaN when the response makes no statement (RAGAS: NaN), or when contexts must be judged
      and the reference makes no statement (RAGAS raises; scored NaN under ``evaluate``).
    - ``details``: statements, per-context relevance and its source, the verdict matrices, the
      per-claim flags and the interpretation ``band``.
    - Under ``claim-vote`` the panel's extractor makes the response's (and the reference's)
      statements once per sample, every judge gives its verdicts on them, the panel votes on
      every verdict of the three matrices, and the formula runs on the voted matrices
      (:func:`vote_layout`).
    - Raises :class:`~ragqa.errors.JudgeOutputError` when a judge returns a verdict count that
      differs from the statements sent, and other :class:`~ragqa.errors.JudgeError` on failures.

    Args:
        mode: ``relevant`` (default) or ``irrelevant``.
        counting: ``ragas`` (default) or ``promptfoo``.
    """

    name: ClassVar[str] = "noise_sensitivity"
    direction: ClassVar[Direction] = "lower"
    required_fields: ClassVar[tuple[str, ...]] = ("user_input", "response", "reference", "retrieved_contexts")
    description: ClassVar[str] = "Share of response claims that are incorrect and entailed by (ir)relevant contexts"
    calls_per_sample: ClassVar[str] = "2N+3 (N contexts); N+2 with labelled chunks; 2 with counting=promptfoo relevant"
    batched_calls_per_sample: ClassVar[str | None] = "4; 2 with labelled chunks or counting=promptfoo relevant"
    default_threshold: ClassVar[float | None] = 0.2
    claim_vote: ClaimVote | None = ClaimVote(
        extraction_prompt=STATEMENTS.name,
        steps=(RESPONSE_STATEMENTS, REFERENCE_STATEMENTS),
        lists=(),
        formula=lambda lists: math.nan,
        layout=vote_layout,
    )

    def __init__(self, mode: NoiseMode = "relevant", counting: Counting = "ragas") -> None:
        """Create the metric.

        Raises:
            ValueError: for an unknown mode or counting.
        """
        if mode not in get_args(NoiseMode):
            raise ValueError(f"mode must be 'relevant' or 'irrelevant', not {mode!r}")
        if counting not in get_args(Counting):
            raise ValueError(f"counting must be 'ragas' or 'promptfoo', not {counting!r}")
        self.mode: NoiseMode = mode
        self.counting: Counting = counting

    @property
    def key(self) -> str:
        """``noise_sensitivity(mode=<mode>)`` (RAGAS's column name), plus the counting when not RAGAS's."""
        extra = f", counting={self.counting}" if self.counting != "ragas" else ""
        return f"{self.name}(mode={self.mode}{extra})"

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """Calls with ``N`` chunks (noise chunk included), ``U`` of them unlabelled.

        Plan ``ragas``: ``2 + N + U + (1 if U else 0)``, that is ``2N + 3`` without labels (RAGAS)
        and ``N + 2`` with every chunk labelled. Plan ``batched``: ``2 + (2 if U else 0)``. Both:
        2 with ``counting="promptfoo"`` in relevant mode (see the class docstring).
        """
        if self.counting == "promptfoo" and self.mode == "relevant":
            return 2
        chunks = _chunks(sample)
        unlabelled = sum(1 for _, label in chunks if label is None)
        if plan == "batched":
            return 2 + (2 if unlabelled else 0)
        return 2 + len(chunks) + unlabelled + (1 if unlabelled else 0)

    def shared_steps(self, sample: Sample) -> frozenset[str]:
        """The response's statements, shared with other metrics."""
        return frozenset({RESPONSE_STATEMENTS})

    def vote_steps(self, sample: Sample) -> frozenset[str]:
        """The response's statements, and the reference's when a context must be judged (made once for the panel)."""
        needs_contexts = not (self.counting == "promptfoo" and self.mode == "relevant")
        if needs_contexts and any(label is None for _, label in _chunks(sample)):
            return frozenset({RESPONSE_STATEMENTS, REFERENCE_STATEMENTS})
        return frozenset({RESPONSE_STATEMENTS})

    @staticmethod
    async def _verdicts(
        judge: Judge,
        chunks: Sequence[tuple[str, bool | None]],
        unlabelled: Sequence[int],
        answer: Sequence[str],
        ref_statements: Sequence[str],
        reference: str,
        context: MetricContext,
        details: dict[str, object],
    ) -> list[list[StatementVerdict]]:
        """The verdict lists in the ``ragas`` plan's call order: vs reference, vs each chunk, reference vs unlabelled.

        The ``batched`` plan asks the same verdicts in two matrix calls (see the class docstring)
        and records the rows it had to ask again in ``details["batched_fallback"]``.
        """
        lang = context.language
        if context.call_plan == "batched":
            answer_rows, reference_rows = await asyncio.gather(
                judge_matrix(judge, answer, [*(text for text, _ in chunks), reference], lang),
                judge_matrix(judge, ref_statements, [chunks[j][0] for j in unlabelled], lang),
            )
            fallback = answer_rows.fallback + reference_rows.fallback
            if fallback:
                details["batched_fallback"] = fallback
            return [answer_rows.items[-1], *answer_rows.items[:-1], *reference_rows.items]
        calls: list[Awaitable[list[StatementVerdict]]] = [judge_statements(judge, reference, answer, lang)]
        calls += [judge_statements(judge, text, answer, lang) for text, _ in chunks]
        calls += [judge_statements(judge, chunks[j][0], ref_statements, lang) for j in unlabelled]
        return list(await asyncio.gather(*calls))

    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score ``sample`` (see the class docstring)."""
        lang = context.language
        question = sample.user_input or ""
        reference = sample.reference or ""
        chunks = _chunks(sample)
        needs_contexts = not (self.counting == "promptfoo" and self.mode == "relevant")
        unlabelled = [j for j, (_, label) in enumerate(chunks) if label is None] if needs_contexts else []

        answer_task = extract_statements(judge, question, sample.response or "", lang)
        if unlabelled:
            answer, ref_statements = await asyncio.gather(
                answer_task, extract_statements(judge, question, reference, lang)
            )
        else:
            answer, ref_statements = await answer_task, []
        details: dict[str, object] = {
            "mode": self.mode,
            "counting": self.counting,
            "statements": answer,
            "reference_statements": ref_statements,
        }
        if not answer:
            return MetricScore(value=math.nan, reason="the response makes no statement", details=details)
        if unlabelled and not ref_statements:
            return MetricScore(
                value=math.nan,
                reason="the reference makes no statement, so no context can be judged relevant",
                details=details,
            )

        results = await self._verdicts(
            judge, chunks if needs_contexts else [], unlabelled, answer, ref_statements, reference, context, details
        )
        in_reference = _values(results[0])
        n = len(chunks) if needs_contexts else 0
        per_context = [_values(v) for v in results[1 : 1 + n]]
        answer_in_context = [[per_context[j][a] for j in range(n)] for a in range(len(answer))]

        relevant: list[float] = []
        sources: list[str] = []
        if needs_contexts:
            judged = [_values(v) for v in results[1 + n :]]
            # reference_in_context: float[G, U] over the unlabelled contexts only
            reference_in_context = [[judged[k][g] for k in range(len(unlabelled))] for g in range(len(ref_statements))]
            by_index = dict(zip(unlabelled, context_relevance(reference_in_context), strict=True)) if judged else {}
            for j, (_, label) in enumerate(chunks):
                relevant.append(by_index[j] if label is None else float(label))
                sources.append("judged" if label is None else "label")
            details["reference_in_context"] = {str(j): row for j, row in zip(unlabelled, judged, strict=True)}

        counted = claims_counted(answer_in_context, relevant, in_reference, mode=self.mode, counting=self.counting)
        value = mean_or_nan(counted)
        details.update(
            {
                "context_relevant": relevant,
                "relevance_source": sources,
                "answer_in_context": answer_in_context,
                "answer_in_reference": in_reference,
                "counted": counted,
                "band": interpret(self.name, value, lang),
            }
        )
        where = {
            "relevant": "incorrect" if self.counting == "promptfoo" else "incorrect and from a relevant context",
            "irrelevant": "incorrect and only from irrelevant contexts",
        }[self.mode]
        return MetricScore(value=value, reason=noise_reason(answer, counted, where), details=details)
