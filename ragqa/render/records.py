"""The one JSON shape of a panel result, written by every sink and read back by ``--resume``.

A record is one (sample, metric) across the panel::

    {"sample_id", "metric", "direction",
     "aggregate": {value, strategy, spread, n_ok, n_nan, n_failed, quorum, quorum_met},
     "judges": [{judge_id, score, reason, details, latency_s,
                 usage: {calls, prompt_tokens, completion_tokens, latency_s, cost},
                 failure: {step, error_type, message, raw} | null,
                 repeats: [{index, score, reason, details, latency_s, usage, failure}]}]}

NaN and infinite numbers are written as ``null`` (NaN means "unscored"); a judge that failed has
``score: null`` and a ``failure``; a judge that ran but could not score has ``score: null`` and
``failure: null``. Judges keep panel order. No settings are included, so no secret can leak here.

``repeats`` is written only by a run that judged each pair more than once (:mod:`ragqa.repeats`):
one entry per repeat in index order, each with that repeat's own score, reason, details, usage
and failure; the judge's ``score`` is then their reduction and its ``usage`` their sum. A
single-repeat record has no ``repeats`` key, exactly as before repeats existed.

:class:`ResultRecord` and its parts describe that shape as types; :func:`result_record_schema`
turns them into the JSON Schema shipped as ``ragqa/schemas/result-record.schema.json``
(regenerate with ``python -m ragqa.schemas``). :func:`report_record` is the JSON document of a
whole report, whose ``results`` are these records.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragqa.aggregate import PanelStrategy
from ragqa.report import Report, finite_json
from ragqa.schema import Aggregate, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, RepeatOutcome, Usage

__all__ = [
    "AggregateRecord",
    "FailureRecord",
    "JudgeRecord",
    "RepeatRecord",
    "ResultRecord",
    "UsageRecord",
    "read_result_record",
    "report_record",
    "report_to_json",
    "result_record",
    "result_record_schema",
]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
"""The JSON Schema dialect of :func:`result_record_schema`."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class UsageRecord(_Record):
    """Tokens, calls and latency of one judge on one sample and metric (:class:`~ragqa.schema.Usage`)."""

    calls: int = Field(ge=0)
    """Requests that reached a provider (cache hits excluded)."""
    prompt_tokens: int = Field(ge=0)
    """Input tokens reported by the provider."""
    completion_tokens: int = Field(ge=0)
    """Output tokens reported by the provider."""
    latency_s: float = Field(ge=0)
    """Sum of request latencies, seconds (calls may overlap)."""
    cost: float | None
    """Cost in the price table's currency; null when no price is configured."""


class FailureRecord(_Record):
    """Why a judge failed; the judge was excluded from the aggregate."""

    step: str | None
    """The prompt or step that failed (statements, nli, score...), when known."""
    error_type: str
    """The ragqa error class name (JudgeTimeout, JudgeOutputError, ScoreOutOfRange...)."""
    message: str
    """The cause, without secrets."""
    raw: str | None
    """The judge's raw output when it was unparseable, else null."""


class _ScoredRecord(_Record):
    """A score (null when NaN or failed) or a failure, plus usage: what a judge and a repeat record share."""

    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"failure": {"type": "object"}}},
            "then": {"properties": {"score": {"type": "null"}}},
        }
    )

    score: float | None
    """The score in the metric's range; null when the metric is undefined for this judge (NaN) or the judge failed."""
    reason: str | None
    """A short explanation; null when the judge failed or gave none."""
    details: dict[str, Any]
    """The metric's intermediate steps (statements, verdicts...); empty when the judge failed."""
    latency_s: float = Field(ge=0)
    """Wall time of this judge's whole metric computation, seconds."""
    usage: UsageRecord
    """What this judge spent on this sample and metric."""
    failure: FailureRecord | None
    """Why the judge failed (then score is null), or null."""


class RepeatRecord(_ScoredRecord):
    """One repeat of a judge (runs with ``repeats`` > 1): that repeat's own score or failure, plus usage."""

    index: int = Field(ge=0)
    """The repeat's index, 0-based (repeat 0 is the call a single-repeat run makes)."""


class JudgeRecord(_ScoredRecord):
    """One judge's outcome: a score (null when NaN or failed) or a failure, plus usage.

    With repeats, ``score`` is the reduction of the repeats' scores (with the reason and details
    of the repeat nearest it), ``usage`` their sum, and ``failure`` set only when every repeat failed.
    """

    judge_id: str
    """The judge (chat model id)."""
    repeats: list[RepeatRecord] = Field(default_factory=list)
    """Every repeat in index order; absent when the run judged each pair once."""


class AggregateRecord(_Record):
    """The panel's combined score of one sample and metric."""

    value: float | None
    """The aggregate over judges with a finite score; null when below quorum or none scored."""
    strategy: PanelStrategy
    """How the judges' scores were combined."""
    spread: float | None
    """max - min of the judges' finite scores (0 with one judge); null with none."""
    n_ok: int = Field(ge=0)
    """Judges with a finite score."""
    n_nan: int = Field(ge=0)
    """Judges that ran but could not score (NaN)."""
    n_failed: int = Field(ge=0)
    """Judges that failed (excluded)."""
    quorum: int = Field(ge=1)
    """Minimum judges with a finite score for the aggregate to exist."""
    quorum_met: bool
    """Whether n_ok >= quorum."""


class ResultRecord(_Record):
    """One metric on one sample across the panel: the record written by every ragqa output."""

    sample_id: str
    """The sample's id."""
    metric: str
    """The metric's result key, with options (noise_sensitivity(mode=relevant))."""
    direction: Literal["higher", "lower"]
    """Whether higher or lower scores are better."""
    aggregate: AggregateRecord
    """The combined score."""
    judges: list[JudgeRecord]
    """Every judge's outcome, in panel order."""
    dawid_skene: float | None = None
    """Only in the final results file of a ``dawid-skene`` run: the metric on this sample's verdicts as
    the run's Dawid-Skene fit decides them (posterior > 0.5; ``docs/jury.md``), beside the aggregate's
    majority vote, which was written before the fit existed. Absent from every other record."""


def result_record_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :func:`result_record`'s output, built from :class:`ResultRecord`.

    The file ``ragqa/schemas/result-record.schema.json`` is this dictionary; a test keeps them equal.

    Returns:
        A JSON-ready schema dictionary with ``$schema`` set.
    """
    schema = ResultRecord.model_json_schema(mode="serialization")
    schema["title"] = "ragqa result record"
    return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def _scored_fields(
    score: MetricScore | None, failure: JudgeFailure | None, latency_s: float, usage: Usage
) -> dict[str, Any]:
    """The fields a judge and a repeat record share, in record order (``score`` ... ``failure``)."""
    return {
        "score": score.value if score is not None else None,
        "reason": score.reason if score is not None else None,
        "details": score.details if score is not None else {},
        "latency_s": latency_s,
        "usage": usage.model_dump(mode="json"),
        "failure": (
            {
                "step": failure.step,
                "error_type": failure.error_type,
                "message": failure.message,
                "raw": failure.raw,
            }
            if failure is not None
            else None
        ),
    }


def result_record(result: PanelResult) -> dict[str, Any]:
    """The JSON-ready record of one panel result (see the module docstring for the shape)."""
    judges = []
    for outcome in result.judges:
        judge = {
            "judge_id": outcome.judge_id,
            **_scored_fields(outcome.score, outcome.failure, outcome.latency_s, outcome.usage),
        }
        if outcome.repeats:
            judge["repeats"] = [
                {"index": r.index, **_scored_fields(r.score, r.failure, r.latency_s, r.usage)} for r in outcome.repeats
            ]
        judges.append(judge)
    record: dict[str, Any] = finite_json(
        {
            "sample_id": result.sample_id,
            "metric": result.metric,
            "direction": result.direction,
            "aggregate": result.aggregate.model_dump(mode="json"),
            "judges": judges,
        }
    )
    return record


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _scored_parts(
    entry: Mapping[str, Any], judge_id: str, metric: str, sample_id: str
) -> tuple[MetricScore | None, JudgeFailure | None, float, Usage]:
    """A judge's or repeat's record fields back as ``(score, failure, latency_s, usage)``."""
    failure = entry.get("failure")
    score = (
        None
        if failure is not None
        else MetricScore(value=_number(entry["score"]), reason=entry.get("reason"), details=entry["details"])
    )
    return (
        score,
        JudgeFailure(judge_id=judge_id, metric=metric, sample_id=sample_id, **failure) if failure is not None else None,
        float(entry.get("latency_s") or 0.0),
        Usage.model_validate(entry.get("usage") or {}),
    )


def read_result_record(record: Mapping[str, Any]) -> PanelResult:
    """Rebuild the panel result of a record written by :func:`result_record`, repeats included.

    ``null`` numbers come back as NaN, so ``result_record(read_result_record(r)) == r``.

    Raises:
        KeyError, TypeError, ValueError: when the record is not of that shape (pydantic's
            ``ValidationError`` is a ``ValueError``).
    """
    sample_id, metric = str(record["sample_id"]), str(record["metric"])
    outcomes = []
    for judge in record["judges"]:
        judge_id = judge["judge_id"]
        score, failure, latency_s, usage = _scored_parts(judge, judge_id, metric, sample_id)
        repeats = []
        for entry in judge.get("repeats") or ():
            r_score, r_failure, r_latency, r_usage = _scored_parts(entry, judge_id, metric, sample_id)
            repeats.append(
                RepeatOutcome(
                    index=entry["index"], score=r_score, failure=r_failure, latency_s=r_latency, usage=r_usage
                )
            )
        outcomes.append(
            JudgeOutcome(
                judge_id=judge_id, score=score, failure=failure, latency_s=latency_s, usage=usage, repeats=repeats
            )
        )
    aggregate = dict(record["aggregate"])
    aggregate["value"] = _number(aggregate.get("value"))
    aggregate["spread"] = _number(aggregate.get("spread"))
    return PanelResult(
        sample_id=sample_id,
        metric=metric,
        direction=record["direction"],
        judges=outcomes,
        aggregate=Aggregate.model_validate(aggregate),
    )


def report_record(report: Report) -> dict[str, Any]:
    """The JSON document of a whole report, in strict JSON (non-finite numbers as ``null``).

    Keys: ``results`` (one :func:`result_record` per sample and metric), ``summaries`` (the
    :class:`~ragqa.report.MetricSummary` fields per metric, with ``agreement``: the judges'
    Krippendorff alpha, ``pairs`` with Spearman and mean absolute difference, ``bias`` and
    ``contested`` samples, or ``null`` for a one-judge panel), ``skipped``, ``wall_time_s``,
    ``cache`` (hits and misses, or ``null``), ``samples``, ``run_id``, ``dataset`` and
    ``started_at`` (or ``null``) and ``usage`` (the run's total).
    Undefined figures (NaN) are ``null``.
    """
    data = report.model_dump(mode="json", exclude={"results"})
    document: dict[str, Any] = finite_json(
        {
            "results": [result_record(r) for r in report.results],
            **data,
            "usage": report.usage.model_dump(mode="json"),
        }
    )
    return document


def report_to_json(report: Report, *, indent: int | None = 2) -> str:
    """The whole report as JSON text (:func:`report_record`): results as records, summaries, usage.

    NaN and infinite values are written as ``null`` (strict JSON); NaN means "unscored".
    """
    return json.dumps(report_record(report), ensure_ascii=False, indent=indent, allow_nan=False)
