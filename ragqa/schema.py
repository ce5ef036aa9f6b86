"""Data shapes shared by every part of ragqa: samples in, per-judge and panel results out.

Field names follow RAGAS (``user_input``, ``response``, ``reference``, ``retrieved_contexts``,
``reference_contexts``); promptfoo's labelled chunks are ``context_chunks``. Results keep, per
judge, the score, the reason, the intermediate steps, tokens, latency and any failure, so the
report can show every judge next to the aggregate.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from ragqa.errors import ConfigError
from ragqa.languages import check_language, known_languages
from ragqa.messages import Message, ToolCall, last_human_message, parse_messages, parse_tool_calls
from ragqa.score_details import StatementDetails, statement_details

__all__ = [
    "DEFAULT_CONFIDENCE",
    "AdviceOption",
    "Aggregate",
    "ContestedSample",
    "ContextChunk",
    "Decomposition",
    "Interval",
    "JudgeBias",
    "JudgeFailure",
    "JudgeOrderConsistency",
    "JudgeOutcome",
    "Language",
    "MetricScore",
    "OrderConsistency",
    "OrderProbeResult",
    "PairAgreement",
    "PanelResult",
    "RepeatOutcome",
    "Sample",
    "Usage",
    "VarianceComponents",
    "check_confidence",
]


def _known_language(code: str) -> str:
    """``code`` when ragqa speaks it; the error leaves the value out (settings errors show it masked)."""
    try:
        return check_language(code)
    except ConfigError:
        codes = ", ".join(repr(c) for c in known_languages())
        message = "Input should be a language with a pack: {codes}"
        raise PydanticCustomError("language", message, {"codes": codes}) from None


Language = Annotated[str, AfterValidator(_known_language)]
"""A language code ragqa speaks: ``en`` (the source language) or one with a language pack
(:mod:`ragqa.languages`: ``ru`` built in, others installed); pydantic fields of this type refuse
any other code."""
"""Prompt and report language."""

Lever = Literal["samples", "judges", "repeats"]
"""What can be added to a run to narrow an interval (:class:`AdviceOption`)."""

DEFAULT_CONFIDENCE = 0.95
"""Confidence level of every interval unless configured (``--confidence``, ``ragqa.confidence``)."""


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` when it is a level strictly between 0 and 1.

    Raises:
        ValueError: for a value outside (0, 1) (for example 95 instead of 0.95) or NaN.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95), got {confidence!r}")
    return confidence


class ContextChunk(BaseModel):
    """A retrieved chunk with a human relevance label (promptfoo's ``contextChunks``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    """The chunk's text."""
    relevant: bool
    """True when the chunk is relevant to the question (replaces the judged relevance)."""


class Sample(BaseModel):
    """One single-turn RAG or agent trace to score.

    Every field is optional here; each metric declares which fields it needs and the evaluator
    checks them for every sample before any judge call (:class:`ragqa.errors.SampleError`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = None
    """Stable identifier used in reports and errors (defaults to the line number when loaded)."""
    user_input: str | None = None
    """The question or instruction given to the system under test."""
    response: str | None = None
    """The answer the system under test produced."""
    reference: str | None = None
    """The ground-truth answer."""
    retrieved_contexts: list[str] | None = None
    """Chunks the retriever returned, in retrieval order."""
    reference_contexts: list[str] | None = None
    """Gold evidence passages."""
    context_chunks: list[ContextChunk] | None = None
    """Labelled chunks (promptfoo); when set they are the contexts and their relevance labels."""
    noise_context: str | None = None
    """promptfoo's injected noise, appended as an extra irrelevant chunk by noise sensitivity."""
    messages: list[Message] | None = None
    """Multi-turn conversation (human / ai / tool messages, ai ones with tool calls; :mod:`ragqa.messages`)."""
    reference_tool_calls: list[ToolCall] | None = None
    """Expected tool calls, ``[{name, args}]``, in order."""
    reference_topics: list[str] | None = None
    """Topics the agent should stay within."""
    rubrics: dict[str, str] | None = None
    """Per-sample rubric (``score1_description`` ... ``score5_description``)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form data carried into results untouched."""

    @field_validator("messages", mode="before")
    @classmethod
    def _check_messages(cls, value: Any) -> Any:
        """Check a conversation (:func:`ragqa.messages.parse_messages`); ``ValueError`` names message and fix."""
        return None if value is None else parse_messages(value)

    @field_validator("reference_tool_calls", mode="before")
    @classmethod
    def _check_tool_calls(cls, value: Any) -> Any:
        """Check expected tool calls (:func:`ragqa.messages.parse_tool_calls`)."""
        return None if value is None else parse_tool_calls(value, what="reference tool call")

    def question(self) -> str | None:
        """The question reports show: ``user_input``, else the last human message of ``messages``."""
        if self.user_input is not None or not self.messages:
            return self.user_input
        return last_human_message(self.messages)

    def contexts(self) -> list[str]:
        """Return the chunks to judge: ``retrieved_contexts``, else the texts of ``context_chunks``.

        Returns:
            The context strings in retrieval order (may be empty).
        """
        if self.retrieved_contexts is not None:
            return list(self.retrieved_contexts)
        if self.context_chunks is not None:
            return [c.text for c in self.context_chunks]
        return []

    @property
    def label(self) -> str:
        """The name used for this sample in messages: its ``id`` or ``"?"``."""
        return self.id if self.id is not None else "?"


class Usage(BaseModel):
    """Tokens, calls and latency of judge calls; adds up with ``+``.

    Cost is in the currency of the configured price table (``None`` when no price is known).
    """

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    """Number of judge (or embedding) requests that reached a provider (cache hits excluded; a run's
    hits and misses are in :attr:`ragqa.report.Report.cache`)."""
    prompt_tokens: int = 0
    """Input tokens reported by the provider."""
    completion_tokens: int = 0
    """Output tokens reported by the provider."""
    latency_s: float = 0.0
    """Sum of request latencies in seconds (not wall time: calls may overlap)."""
    cost: float | None = None
    """Cost from the price table, or ``None`` when no price is configured for the model."""

    def __add__(self, other: Usage) -> Usage:
        """Sum two usages; cost stays ``None`` only when both are ``None``."""
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            latency_s=self.latency_s + other.latency_s,
            cost=cost,
        )

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class MetricScore(BaseModel):
    """What one metric computed for one sample with one judge.

    ``value`` is in the metric's range, or NaN when the metric is undefined for this sample
    (for example faithfulness of a response with no statements). NaN means "unscored", never 0.
    """

    model_config = ConfigDict(extra="forbid")

    value: float
    """The score, or NaN when undefined for this sample."""
    reason: str | None = None
    """A short human-readable explanation."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Intermediate steps (statements, verdicts, matrices), JSON-serialisable. What assertions and
    reports read from them is typed: :attr:`statement_details`, :attr:`failed_statements`."""

    @property
    def is_nan(self) -> bool:
        """True when the value is NaN (unscored)."""
        return math.isnan(self.value)

    @property
    def statement_details(self) -> StatementDetails:
        """The statements this score checked, their per-statement values and the failing ones.

        Read from :attr:`details` by the one contract of :mod:`ragqa.score_details` (never
        serialised: the results file keeps the details as the metric wrote them).
        """
        return statement_details(self.details)

    @property
    def failed_statements(self) -> list[str]:
        """The statements the judge found failing (unsupported, incorrect, counted against), in order; may be empty."""
        return self.statement_details.failed


class JudgeFailure(BaseModel):
    """A judge that failed on one sample and metric; excluded from the aggregate."""

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    """The failing judge."""
    metric: str
    """The metric being computed."""
    sample_id: str
    """The sample being scored."""
    step: str | None = None
    """The prompt/step that failed (``statements``, ``nli``...), when known."""
    error_type: str
    """The ragqa error class name (``JudgeTimeout``, ``JudgeOutputError``...)."""
    message: str
    """The cause, without secrets."""
    raw: str | None = None
    """The judge's raw output, when it was unparseable."""


class RepeatOutcome(BaseModel):
    """One repeat (epoch) of one judge on one sample and metric: a score or a failure, plus usage.

    Only present when a run judges every (sample, metric, judge) more than once (``repeats > 1``);
    the owning :class:`JudgeOutcome` then holds the score reduced over its repeats.
    """

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0)
    """The repeat's index, 0-based (repeat 0 is the call a single-repeat run makes)."""
    score: MetricScore | None = None
    """The repeat's score, or ``None`` when it failed."""
    failure: JudgeFailure | None = None
    """Why the repeat failed, or ``None``."""
    latency_s: float = 0.0
    """Wall time of this repeat's metric computation, seconds."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and calls spent by this repeat."""


class JudgeOutcome(BaseModel):
    """One judge's result for one sample and metric: a score or a failure, plus usage.

    With repeats (``repeats > 1``), ``score`` is the reduction of the repeats' scores and
    ``repeats`` keeps every repeat; with one repeat, ``repeats`` is empty and nothing else changes.
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    """The judge (chat model id)."""
    score: MetricScore | None = None
    """The score, or ``None`` when the judge failed."""
    failure: JudgeFailure | None = None
    """Why the judge failed, or ``None``."""
    latency_s: float = 0.0
    """Wall time of this judge's whole metric computation, seconds."""
    usage: Usage = Field(default_factory=Usage)
    """Tokens and calls spent by this judge on this metric and sample."""
    repeats: list[RepeatOutcome] = Field(default_factory=list)
    """Every repeat's outcome in index order when the run judged more than once; else empty."""

    def repeat_values(self) -> list[float]:
        """Return this judge's score per repeat, NaN for a failed or unscored repeat.

        Returns:
            One value per repeat (index order); ``[score.value]`` (or ``[nan]`` on failure) when
            the run had a single repeat.
        """
        if not self.repeats:
            return [self.score.value if self.score is not None else float("nan")]
        return [r.score.value if r.score is not None else float("nan") for r in self.repeats]

    @property
    def ok(self) -> bool:
        """True when the judge produced a score (possibly NaN)."""
        return self.failure is None and self.score is not None


class Interval(BaseModel):
    """A two-sided confidence interval around an estimate, e.g. a metric's aggregate.

    ``low <= estimate <= high`` for the usual methods; all three are in the metric's units.
    ``method`` names how it was computed (for example ``clustered-se`` or ``cluster-bootstrap``,
    see :mod:`ragqa.uncertainty`), ``confidence`` is the nominal coverage in (0, 1), and ``n`` the
    number of independent units (clusters, usually samples) it rests on.
    """

    model_config = ConfigDict(extra="forbid")

    estimate: float
    """The point estimate the interval surrounds."""
    low: float
    """Lower bound."""
    high: float
    """Upper bound."""
    confidence: float = Field(gt=0.0, lt=1.0)
    """Nominal coverage, e.g. 0.95."""
    method: str
    """How the interval was computed."""
    n: int = Field(ge=0)
    """Independent units (clusters) behind it."""

    def contains(self, value: float) -> bool:
        """Return True when ``low <= value <= high`` (the bounds count as inside)."""
        return self.low <= value <= self.high

    @property
    def half_width(self) -> float:
        """Half the interval's width, ``(high - low) / 2``, in the metric's units."""
        return (self.high - self.low) / 2


class VarianceComponents(BaseModel):
    """Variance of one metric's scores split into samples, judges, sample x judge and repeats.

    Model (crossed two-way random effects with replication): ``y[i, j, k] = mu + s_i + b_j +
    (sb)_ij + e_ijk`` for sample ``i``, judge ``j``, repeat ``k``, each effect independent with
    mean 0 and the variance named below, in squared metric units. ``None`` means the design cannot
    estimate that component (one judge: no judge variance; one repeat: repeats not separated from
    the interaction). Estimated by :func:`ragqa.uncertainty.variance_components`.

    Attributes:
        samples: variance between samples' true scores (what the eval measures), ``sigma_s^2``.
        judges: variance between judges' overall leniency (their main effects), ``sigma_b^2``.
        interaction: sample x judge variance (judges ranking samples differently), ``sigma_sb^2``;
            with one repeat it also holds the repeat variance (see :attr:`confounded`).
        repeats: variance of one judge's repeated scores of one sample (residual), ``sigma_e^2``;
            0 for a deterministic judge.
        n_samples: samples used (those with a score from every judge kept).
        n_judges: judges used (those with at least one score).
        repeats_per_cell: harmonic mean of finite repeats per (sample, judge) cell used (>= 1).
        n_dropped: samples left out because a kept judge has no finite score for them.
        n_judges_dropped: judges with scores left out because they scored too few samples (see
            :func:`ragqa.uncertainty.variance_components`).
        truncated: components whose estimate was negative and was set to 0.
        confounded: pairs the design cannot separate, as ``"interaction+repeats"`` (one repeat:
            :attr:`interaction` holds both) or ``"samples+interaction"`` (one judge: :attr:`samples`
            holds both).
        method: the estimator's name.
    """

    model_config = ConfigDict(extra="forbid")

    samples: float | None
    judges: float | None
    interaction: float | None
    repeats: float | None
    n_samples: int = Field(ge=0)
    n_judges: int = Field(ge=0)
    repeats_per_cell: float
    n_dropped: int = Field(default=0, ge=0)
    n_judges_dropped: int = Field(default=0, ge=0)
    truncated: list[str] = Field(default_factory=list)
    confounded: list[str] = Field(default_factory=list)
    method: str = "anova-unweighted-means"


class AdviceOption(BaseModel):
    """One way to halve an aggregate's interval: more samples, more judges or more repeats.

    Halving the interval's half-width means quartering the variance of the mean (the half-width is
    proportional to its square root).

    Attributes:
        lever: ``samples``, ``judges`` or ``repeats``.
        possible: True when adding this lever alone can halve the interval, False when it cannot
            (the variance it averages away is too small a share), ``None`` when the design cannot
            tell (the component it acts on was not estimated: one repeat, or one judge).
        target: the number of samples, judges or repeats (per judge) needed in all, or ``None``.
        extra_judgements: extra (sample, judge, repeat) metric computations that takes, or ``None``.
        extra_calls: those times the judge calls per computation, or ``None`` when unknown.
    """

    model_config = ConfigDict(extra="forbid")

    lever: Lever
    possible: bool | None
    target: int | None = None
    extra_judgements: int | None = None
    extra_calls: int | None = None


class Decomposition(BaseModel):
    """Where one metric's aggregate variance comes from, and what would halve its interval.

    Attributes:
        components: the variance components (:func:`ragqa.uncertainty.variance_components`).
        share: each component's share of the per-sample aggregate's variance under the fixed-panel
            model (:func:`ragqa.uncertainty.aggregate_variance`), keys ``samples``, ``interaction``, ``repeats``
            (each in [0, 1], summing to 1; a component the design cannot estimate has no key, its
            variance is in the one it is confounded with); empty when the variance is unknown or 0.
        advice: how to halve the interval (:func:`ragqa.uncertainty.halving_advice`): samples, judges, repeats.
        repeats: repeats per judge the run used (the largest count of any cell).
        calls_per_judgement: judge calls per (sample, judge, repeat) this run spent, or ``None``.
    """

    model_config = ConfigDict(extra="forbid")

    components: VarianceComponents
    share: dict[str, float] = Field(default_factory=dict)
    advice: list[AdviceOption] = Field(default_factory=list)
    repeats: int = Field(default=1, ge=1)
    calls_per_judgement: float | None = None


class Aggregate(BaseModel):
    """The panel's combined score for one sample and metric (see :mod:`ragqa.aggregate`)."""

    model_config = ConfigDict(extra="forbid")

    value: float
    """Aggregate over judges that scored (NaN when none did, or the quorum is not met)."""
    strategy: str
    """The aggregation strategy (``mean``, ``median``, ``min``, ``max``, ``majority``, ``claim-vote``,
    ``dawid-skene``)."""
    spread: float
    """max - min of the judges' non-NaN scores (0 with one judge, NaN with none)."""
    n_ok: int
    """Judges with a non-NaN score."""
    n_nan: int
    """Judges that ran but returned NaN (metric undefined for them)."""
    n_failed: int
    """Judges that failed (excluded)."""
    quorum: int
    """Minimum successful judges required for an aggregate."""
    quorum_met: bool
    """Whether ``n_ok >= quorum``."""


class PanelResult(BaseModel):
    """One metric on one sample across the whole panel.

    Every output writes it in one JSON shape, :func:`ragqa.render.records.result_record` (schema:
    ``ragqa/schemas/result-record.schema.json``), read back by
    :func:`ragqa.render.records.read_result_record`.
    """

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    """The sample."""
    metric: str
    """The metric's name (with its mode, e.g. ``noise_sensitivity(mode=relevant)``)."""
    direction: Literal["higher", "lower"]
    """Whether higher or lower scores are better."""
    judges: list[JudgeOutcome]
    """Every judge's outcome, in panel order."""
    aggregate: Aggregate
    """The combined score."""

    def by_judge(self) -> dict[str, float]:
        """Return ``{judge_id: value}`` for judges that produced a score (NaN kept)."""
        return {o.judge_id: o.score.value for o in self.judges if o.score is not None}

    @property
    def failures(self) -> list[JudgeFailure]:
        """Failures of excluded judges."""
        return [o.failure for o in self.judges if o.failure is not None]


class PairAgreement(BaseModel):
    """How two judges agree on one metric, over the samples both scored (finite values only).

    Attributes:
        judge_a: the first judge (panel order).
        judge_b: the second judge.
        n: samples both judges scored.
        spearman: Spearman's rank correlation, -1..1 (NaN when undefined: fewer than 2 samples or
            a constant judge); ``scipy.stats.spearmanr``.
        mean_abs_diff: mean absolute difference of their scores, in the metric's units (>= 0).
    """

    model_config = ConfigDict(extra="forbid")

    judge_a: str
    judge_b: str
    n: int
    spearman: float
    mean_abs_diff: float


class JudgeBias(BaseModel):
    """One judge's mean signed difference from the panel mean of the other judges' scores, per sample.

    Attributes:
        judge_id: the judge.
        n: samples where the judge and at least one other judge scored.
        bias: mean of (judge's score - mean of the other judges' scores); positive = more lenient
            for a higher-is-better metric.
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    n: int
    bias: float


class ContestedSample(BaseModel):
    """A sample on which the judges disagree most (largest spread = max - min of their finite scores, > 0)."""

    model_config = ConfigDict(extra="forbid")

    sample_id: str
    spread: float


class Agreement(BaseModel):
    """Judge agreement on one metric across the run (needs two or more judges).

    Attributes:
        alpha: Krippendorff's alpha, interval level, across judges (samples x judges, NaN =
            missing); 1 = perfect agreement, 0 = chance, NaN when undefined (``krippendorff``).
        n_samples: samples with at least two judges' finite scores.
        pairs: every judge pair, in panel order.
        bias: every judge's bias against the others.
        contested: the samples with the largest spread, largest first (at most 5).
    """

    model_config = ConfigDict(extra="forbid")

    alpha: float
    n_samples: int
    pairs: list[PairAgreement] = Field(default_factory=list)
    bias: list[JudgeBias] = Field(default_factory=list)
    contested: list[ContestedSample] = Field(default_factory=list)


# -- the order probe (``--probe order``): position consistency per judge ----------------------------


class OrderConsistency(BaseModel):
    """One judge's position consistency on one metric under the order probe (:mod:`ragqa.jury.probe`).

    Attributes:
        metric: the metric's result key (``faithfulness``, ``context_precision``...).
        n_samples: probed samples with at least one verdict compared for this judge.
        n_items: verdicts compared: one per context (context precision, mapped back to its
            original position) or per statement (faithfulness, the same statements).
        n_changed: compared verdicts that differ once the contexts are reversed (0/1 verdicts;
            graded ones are read as >= 0.5).
        n_samples_changed: samples with at least one changed verdict.
        n_failed: probed samples whose reversed-order scoring failed for this judge (not compared).
        consistency: ``1 - n_changed / n_items`` in [0, 1], higher is better; NaN with no item.
    """

    model_config = ConfigDict(extra="forbid")

    metric: str
    n_samples: int = 0
    n_items: int = 0
    n_changed: int = 0
    n_samples_changed: int = 0
    n_failed: int = 0
    consistency: float = float("nan")

    @field_validator("consistency", mode="before")
    @classmethod
    def _null_is_nan(cls, value: Any) -> Any:
        """JSON's ``null`` (how a results file writes NaN) reads back as NaN."""
        return math.nan if value is None else value


class JudgeOrderConsistency(BaseModel):
    """One judge's position consistency over every probed metric (verdicts pooled).

    Attributes:
        judge_id: the judge.
        n_items: verdicts compared, all probed metrics together.
        n_changed: of them, those that changed with the contexts reversed.
        consistency: ``1 - n_changed / n_items`` in [0, 1] (NaN with no item); position
            consistency as in Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and
            Chatbot Arena" (https://arxiv.org/abs/2306.05685), taken per verdict.
        flagged: True when the share of changed verdicts exceeds the probe's ``max_change_rate``.
        metrics: the per-metric figures, in the run's metric order.
        usage: calls, tokens and cost of this judge's probe calls (not in any metric's usage).
    """

    model_config = ConfigDict(extra="forbid")

    judge_id: str
    n_items: int = 0
    n_changed: int = 0
    consistency: float = float("nan")
    flagged: bool = False
    metrics: list[OrderConsistency] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    @field_validator("consistency", mode="before")
    @classmethod
    def _null_is_nan(cls, value: Any) -> Any:
        """JSON's ``null`` (how a results file writes NaN) reads back as NaN."""
        return math.nan if value is None else value


class OrderProbeResult(BaseModel):
    """What the order probe found: each judge's position consistency with the contexts reversed.

    The probe re-judges context precision and faithfulness on a seeded share of the samples with
    the retrieved contexts in reversed order, and compares the verdicts (see ``docs/panel.md``,
    "Order bias probe"). It never changes a score of the run.

    Attributes:
        share: the share of samples selected, in (0, 1].
        seed: the seed of the selection (a sample is selected by a hash of the seed and its id).
        max_change_rate: a judge whose share of changed verdicts exceeds it is flagged, in [0, 1).
        n_selected: samples of the run the selection picked.
        n_samples: of them, the samples probed (two or more contexts, a probed metric scored).
        metrics: the probed metric keys, in run order.
        judges: one entry per judge, in panel order.
        usage: the probe's calls, tokens and cost, all judges together (counted in the run's usage).
        notes: plain-language notes (a metric not probed and why).
    """

    model_config = ConfigDict(extra="forbid")

    share: float
    seed: int
    max_change_rate: float
    n_selected: int = 0
    n_samples: int = 0
    metrics: list[str] = Field(default_factory=list)
    judges: list[JudgeOrderConsistency] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    notes: list[str] = Field(default_factory=list)

    @property
    def flagged(self) -> list[str]:
        """The ids of the flagged judges, in panel order."""
        return [j.judge_id for j in self.judges if j.flagged]
