"""The one JSON shape of a panel result, written by every sink and read back by ``--resume``.

A record is one (sample, metric) across the panel::

    {"sample_id", "metric", "direction",
     "aggregate": {value, strategy, spread, n_ok, n_nan, n_failed, quorum, quorum_met},
     "judges": [{judge_id, score, reason, details, latency_s,
                 usage: {calls, prompt_tokens, completion_tokens, latency_s, cost},
                 failure: {step, error_type, message, raw} | null}]}

NaN and infinite numbers are written as ``null`` (NaN means "unscored"); a judge that failed has
``score: null`` and a ``failure``; a judge that ran but could not score has ``score: null`` and
``failure: null``. Judges keep panel order. No settings are included, so no secret can leak here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ragqa.report import finite_json
from ragqa.schema import Aggregate, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Usage

__all__ = ["read_result_record", "result_record"]


def result_record(result: PanelResult) -> dict[str, Any]:
    """The JSON-ready record of one panel result (see the module docstring for the shape)."""
    judges = []
    for outcome in result.judges:
        score, failure = outcome.score, outcome.failure
        judges.append(
            {
                "judge_id": outcome.judge_id,
                "score": score.value if score is not None else None,
                "reason": score.reason if score is not None else None,
                "details": score.details if score is not None else {},
                "latency_s": outcome.latency_s,
                "usage": outcome.usage.model_dump(mode="json"),
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
        )
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


def read_result_record(record: Mapping[str, Any]) -> PanelResult:
    """Rebuild the panel result of a record written by :func:`result_record`.

    ``null`` numbers come back as NaN, so ``result_record(read_result_record(r)) == r``.

    Raises:
        KeyError, TypeError, ValueError: when the record is not of that shape (pydantic's
            ``ValidationError`` is a ``ValueError``).
    """
    sample_id, metric = str(record["sample_id"]), str(record["metric"])
    outcomes = []
    for judge in record["judges"]:
        failure = judge.get("failure")
        outcomes.append(
            JudgeOutcome(
                judge_id=judge["judge_id"],
                score=(
                    None
                    if failure is not None
                    else MetricScore(
                        value=_number(judge["score"]), reason=judge.get("reason"), details=judge["details"]
                    )
                ),
                failure=(
                    JudgeFailure(judge_id=judge["judge_id"], metric=metric, sample_id=sample_id, **failure)
                    if failure is not None
                    else None
                ),
                latency_s=float(judge.get("latency_s") or 0.0),
                usage=Usage.model_validate(judge.get("usage") or {}),
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
