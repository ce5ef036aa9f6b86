"""The metric contract: what every metric declares and implements.

A metric computes one score for one sample with one judge; it never knows how many judges the
panel has (the :class:`~ragqa.evaluation.PanelEvaluator` runs it once per judge). Its maths
lives in pure module-level functions next to it.
"""

from __future__ import annotations

import functools
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ragqa.errors import JudgeUnsupported, SampleError, ScoreOutOfRange
from ragqa.interpretation import STANDARD, Band
from ragqa.judges.base import Embedder, Judge
from ragqa.schema import Language, MetricScore, Sample

__all__ = [
    "CALL_PLANS",
    "RANGE_TOLERANCE",
    "CallPlan",
    "ClaimVote",
    "Direction",
    "Metric",
    "MetricContext",
    "VoteFormula",
    "VoteLayout",
]

RANGE_TOLERANCE = 1e-9
"""How far past an end of its range a score may be and still count as that end (float rounding).

Relative to the end's magnitude (absolute below 1). Double-precision sums and products of
values in [0, 1] err by a few units of 2**-52 (about 2.2e-16); 1e-9 is far above that and far
below any difference a score can mean.
"""

Direction = Literal["higher", "lower"]

CallPlan = Literal["batched", "ragas"]
"""How a metric asks its judge (``ragqa.call-plan``, see ``docs/call-plan.md``).

``ragas``: RAGAS's prompts and calls, one per item (per context, per generated question, per
text). ``batched``: one call per step for all items (a statement x context verdict matrix, every
context's usefulness, k questions, the entities of several texts), with the per-item prompt's
verdict semantics; items a batched answer leaves out are asked again one by one.
"""

CALL_PLANS: tuple[CallPlan, ...] = ("batched", "ragas")
"""Every call plan, the settings' default first."""


@dataclass(frozen=True)
class MetricContext:
    """What a metric may use besides the sample and the judge.

    Attributes:
        language: the language of prompts and explanations.
        embedders: every configured embedding model (metrics that embed use each of them).
        call_plan: how the metric asks its judge (:data:`CallPlan`); ``ragas`` here, RAGAS's
            calls, so a metric used on its own asks what RAGAS asks; the settings
            (``ragqa.call-plan``) and :class:`~ragqa.evaluation.PanelOptions` default to ``batched``.
        claim_vote: the panel votes per statement (``claim-vote``, ``dawid-skene``); a metric whose
            statements are extracted inside its verdict call (context recall) then asks the
            extraction and the verdicts apart, so the panel can share the extraction
            (:mod:`ragqa.jury.panel`). False everywhere else.
    """

    language: Language = "en"
    embedders: Sequence[Embedder] = field(default_factory=tuple)
    call_plan: CallPlan = "ragas"
    claim_vote: bool = False

    def require_embedders(self, metric: str, judge_id: str, *, part: str = "", otherwise: str = "") -> None:
        """Refuse, before any call, a metric that embeds when no embedding model is configured.

        Args:
            metric: the metric's name, first word of the message.
            judge_id: the judge the metric was scoring with (for the error).
            part: what needs the embeddings, e.g. ``" for its similarity part"`` (empty: the metric).
            otherwise: another fix after the first, e.g. ``" or set weights: [1, 0]"``.

        Raises:
            JudgeUnsupported: ``"<metric> needs an embedding model<part>; configure
                spring.ai.embedding-models<otherwise>"`` (step ``embed``) when :attr:`embedders` is empty.
        """
        if not self.embedders:
            raise JudgeUnsupported(
                f"{metric} needs an embedding model{part}; configure spring.ai.embedding-models{otherwise}",
                judge_id=judge_id,
                step="embed",
            )


VoteFormula = Callable[[Sequence[Sequence[float]]], float]
"""A metric's score from voted verdicts: one ``float[S]`` (0 or 1 each) per voted list -> a score."""

VoteLayout = tuple[list[tuple[list[str], list[float]]], VoteFormula]
"""One judge's voted lists on one sample and the formula for them: ``([(keys, verdicts), ...], formula)``.

``keys`` name the items of a list (statements; ``"context 2"``); judges whose keys differ do not vote
on that list of that sample. ``verdicts`` hold one value in [0, 1] per key (the vote counts >= 0.5 as 1).
"""


@dataclass(frozen=True)
class ClaimVote:
    """How a statement-based metric takes part in claim-level voting (``ragqa.aggregation: claim-vote``).

    Under claim-vote one judge (the extractor) answers the extraction prompt for every judge of
    the panel, every judge gives its verdicts on that same list, the panel votes per statement
    (:mod:`ragqa.jury.vote`) and :attr:`formula` runs on the voted verdicts.

    Attributes:
        extraction_prompt: name of the prompt the extractor answers for the whole panel
            (``statements``, ``claim_decomposition``).
        steps: the extraction calls of one judge on one sample, named as steps (the response's
            statements is :meth:`Metric.shared_steps`'s ``statements:response``); each is made
            once per sample instead of once per judge (the run's estimate counts them so).
        lists: the statement lists the panel votes on, each ``(statements_key, verdicts_key)`` of
            :attr:`~ragqa.schema.MetricScore.details` (the statements, and one verdict in [0, 1]
            per statement): ``(("statements", "verdicts"),)`` for faithfulness.
        formula: the metric's score from the voted verdicts, one ``float[S]`` (0 or 1 each) per
            entry of ``lists`` -> a score in the metric's range (left out of equality: a bound
            method differs per instance).
        layout: for a metric whose lists or formula depend on the sample (noise sensitivity's
            verdict matrices, context precision's contexts): ``details -> (lists, formula)`` of one
            judge's score (:data:`VoteLayout`), or ``None`` when the details hold no verdicts.
            ``None`` (the default): the lists are read from ``details`` by :attr:`lists` and scored
            by :attr:`formula`. Left out of equality.

    ``extraction_prompt`` is ``None`` for a metric that extracts nothing (context precision votes on
    the sample's own contexts): every judge then makes all of its calls itself.
    """

    extraction_prompt: str | None
    steps: tuple[str, ...]
    lists: tuple[tuple[str, str], ...]
    formula: VoteFormula = field(compare=False)
    layout: Callable[[Mapping[str, Any]], VoteLayout | None] | None = field(default=None, compare=False)

    def layout_of(self, details: Mapping[str, Any]) -> VoteLayout | None:
        """One judge's voted lists and formula from its score's ``details`` (see :attr:`layout`).

        Returns:
            ``(lists, formula)``, or ``None`` when a list is missing or its verdicts do not match its keys.
        """
        if self.layout is not None:
            return self.layout(details)
        lists: list[tuple[list[str], list[float]]] = []
        for keys_at, verdicts_at in self.lists:
            keys, verdicts = details.get(keys_at), details.get(verdicts_at)
            if not isinstance(keys, list) or not isinstance(verdicts, list) or len(keys) != len(verdicts):
                return None
            lists.append(([str(k) for k in keys], [float(v) for v in verdicts]))
        return lists, self.formula


class Metric(ABC):
    """Base class of every metric.

    Subclasses set the class attributes and implement :meth:`score`. ``required_fields`` are
    checked by :meth:`validate` before any judge call: present, and non-empty for strings and
    lists.
    """

    name: ClassVar[str]
    """Registry name (``faithfulness``)."""
    direction: ClassVar[Direction]
    """``higher`` when a higher score is better, ``lower`` otherwise."""
    required_fields: ClassVar[tuple[str, ...]]
    """Sample fields that must be present and non-empty."""
    description: ClassVar[str]
    """One line on what the metric measures."""
    calls_per_sample: ClassVar[str]
    """Judge calls per sample as a formula (N = number of contexts), with the ``ragas`` call plan."""
    batched_calls_per_sample: ClassVar[str | None] = None
    """The same with the ``batched`` call plan; ``None`` when the metric asks the same calls on both plans."""
    value_range: ClassVar[tuple[float, float]] = (0.0, 1.0)
    """The closed range of scores (NaN aside)."""
    needs_judge: ClassVar[bool] = True
    """False for metrics that need no judge (text similarity)."""
    needs_embeddings: ClassVar[bool] = False
    """True when the metric needs at least one embedding model."""
    default_threshold: ClassVar[float | None] = None
    """The pass threshold used by assertions when none is given."""
    claim_vote: ClaimVote | None = None
    """How the metric votes per statement under ``claim-vote`` (:class:`ClaimVote`); ``None``: it
    cannot, and a claim-vote run aggregates it by the mean of the judges' scores. A class attribute,
    or set per instance when it depends on the metric's options (factual correctness's mode)."""

    @property
    def key(self) -> str:
        """The result key: the name, plus parameters that change the score (``name(mode=x)``)."""
        return self.name

    @classmethod
    def interpretation_scale(cls, direction: Direction | None = None) -> Sequence[Band] | None:
        """The metric's interpretation scale (:mod:`ragqa.interpretation`) for results of ``direction``.

        spring-ai-ragas's standard scale for a metric that asks a judge, scores in [0, 1] and is
        better higher (for the result's ``direction`` where an instance differs from its class, as
        a ``harmfulness`` aspect critic does); ``None`` otherwise. A metric with a scale of its own
        is listed in :data:`ragqa.interpretation.BANDS`, which wins.
        """
        if (direction or cls.direction) != "higher":
            return None
        return STANDARD if cls.needs_judge and cls.value_range == (0.0, 1.0) else None

    @classmethod
    def calls_formula(cls, plan: CallPlan = "ragas") -> str:
        """Judge calls per sample as a formula under ``plan`` (``calls_per_sample`` or ``batched_calls_per_sample``)."""
        if plan == "batched" and cls.batched_calls_per_sample is not None:
            return cls.batched_calls_per_sample
        return cls.calls_per_sample

    def estimate_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """Judge calls this metric makes on ``sample`` with one judge under ``plan``, at most.

        The run layer sums this over samples, metrics and judges to print the estimate and to
        enforce ``--max-calls`` before any call. It is an upper bound: calls that metrics share
        on one sample (the response's statements) are made once, and fewer calls are made when a
        step finds nothing (no statements). A batched answer that leaves items out costs one more
        call per item left out (``docs/call-plan.md``); the estimate counts complete answers. The
        base implementation reads the leading number of :meth:`calls_formula` (``"2 (1 if no
        statements)"`` is 2); metrics whose count depends on the sample (one call per context)
        override it.

        Args:
            sample: a sample that passed :meth:`validate`.
            plan: the call plan (:data:`CallPlan`).

        Returns:
            The number of judge calls (>= 0; 0 for metrics that need no judge).
        """
        if not self.needs_judge:
            return 0
        return _leading_calls(self.calls_formula(plan))

    def shared_steps(self, sample: Sample) -> frozenset[str]:
        """Steps of :meth:`estimate_calls` (one call each) that other metrics make identically on ``sample``.

        The panel makes an identical call once per judge and sample, so the run's estimate
        counts each shared step once however many metrics need it. Names are the step and
        what it reads: ``statements:response`` (the response's statements) and
        ``nli:response/contexts`` (those statements judged against all contexts joined).

        Returns:
            The shared step names (default: none).
        """
        return frozenset()

    def vote_calls(self, sample: Sample, plan: CallPlan = "ragas") -> int:
        """Judge calls of one judge on ``sample`` when the panel votes (:attr:`claim_vote`), at most.

        Counted as :meth:`estimate_calls` (the extraction steps included; the run's estimate makes
        those once for the panel). The default is :meth:`estimate_calls`; a metric that asks other
        calls when voting (context recall) overrides it.
        """
        return self.estimate_calls(sample, plan)

    def vote_steps(self, sample: Sample) -> frozenset[str]:
        """The extraction steps of :meth:`vote_calls` on ``sample``, made once per sample for the whole panel.

        Returns:
            :attr:`ClaimVote.steps` by default (none without :attr:`claim_vote`); a metric whose
            extractions depend on the sample (noise sensitivity) overrides it.
        """
        return frozenset(self.claim_vote.steps) if self.claim_vote is not None else frozenset()

    def validate(self, sample: Sample) -> None:
        """Check that ``sample`` has every field this metric needs.

        Raises:
            SampleError: naming the sample, the field, the metric and the fix.
        """
        for name in self.required_fields:
            value = getattr(sample, name)
            if name == "retrieved_contexts" and value is None and sample.context_chunks:
                continue
            if value is None:
                raise SampleError(
                    f"missing; add a {name!r} value (or map your column to it with a column map)",
                    sample_id=sample.label,
                    field=name,
                    metric=self.key,
                )
            if (isinstance(value, str | list) and len(value) == 0) or (isinstance(value, str) and not value.strip()):
                raise SampleError(
                    f"is empty; {self.key} needs a non-empty {name!r}",
                    sample_id=sample.label,
                    field=name,
                    metric=self.key,
                )

    def check_score(self, score: MetricScore, *, judge_id: str) -> MetricScore:
        """Return ``score`` checked against :attr:`value_range`, clamped when it is off by float rounding only.

        The panel evaluator calls this on every score before it is recorded (the one range check
        of every metric), so a score out of range becomes that judge's failure instead of
        entering an aggregate. A value within :data:`RANGE_TOLERANCE` of an end of the range
        (sacreBLEU's ``1.0000000000000004`` for a perfect match) is the end itself, computed with
        rounding error: it is clamped to that end, not failed. NaN (unscored) passes unchanged.

        Args:
            score: what :meth:`score` returned.
            judge_id: the judge that produced it (named in the error).

        Returns:
            ``score`` itself, or a copy whose ``value`` is the end of the range it rounded past.

        Raises:
            ScoreOutOfRange: (step ``score``) when the value is infinite or outside the range by
                more than the tolerance; ``raw`` holds the score with its reason and details, to
                find the cause.
        """
        value = score.value
        low, high = self.value_range
        if math.isnan(value) or (math.isfinite(value) and low <= value <= high):
            return score
        for end in (low, high):
            if math.isfinite(value) and math.isfinite(end) and abs(value - end) <= RANGE_TOLERANCE * max(1.0, abs(end)):
                return score.model_copy(update={"value": end})
        raise ScoreOutOfRange(
            f"{self.key} with judge {judge_id} scored {value!r}, outside its range [{low:g}, {high:g}]; "
            "the score is discarded (a judge answer that slipped past validation, or a metric bug; "
            "the raw field holds the metric's details)",
            metric=self.key,
            value=value,
            value_range=(low, high),
            judge_id=judge_id,
            step="score",
            raw=score.model_dump_json(),
        )

    @abstractmethod
    async def score(self, sample: Sample, judge: Judge, context: MetricContext) -> MetricScore:
        """Score one sample with one judge.

        Args:
            sample: a sample that passed :meth:`validate`.
            judge: the judge to ask (already wrapped so that shared steps are made once).
            context: language and embedders.

        Returns:
            The score with its reason and intermediate steps.

        Raises:
            ragqa.errors.JudgeError: when a judge call fails; the evaluator records it.
        """


@functools.cache
def _leading_calls(formula: str) -> int:
    """The leading number of a calls formula (``"2 (1 if no statements)"`` is 2); 1 when there is none."""
    match = re.match(r"\s*(\d+)", formula)
    return int(match.group(1)) if match else 1
