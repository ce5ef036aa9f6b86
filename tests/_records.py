"""Small runs with a test-double judge, shared by the results-file tests (not a test module)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from dependency_injector import providers
from pydantic import BaseModel

from ragqa.aggregate import aggregate
from ragqa.container import Container, create_container
from ragqa.errors import JudgeHTTPError
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.base import Judge
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.prompts.base import Prompt
from ragqa.report import MetricSummary
from ragqa.run.stream import ResultsHeader, ResultStream
from ragqa.schema import JudgeFailure, JudgeOutcome, Language, MetricScore, PanelResult, RepeatOutcome, Usage
from ragqa.testing import FunctionJudge, make_sample

SAMPLES = [f"s{i}" for i in range(1, 9)]
"""The eight samples of a :func:`write_run` run (``s1`` .. ``s8``) unless told others."""

BASELINE = {"x": [4, 4, 3, 4, 4, 3, 4, 4], "y": [3, 3, 3, 4, 3, 3, 3, 3]}
"""A :func:`write_run` plan: judges ``x`` and ``y``, supported statements out of 4 per sample (faithfulness = n / 4)."""

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


def office_records(n: int = 6) -> list[dict[str, Any]]:
    """``n`` samples ``s1..sN``; each response is one sentence, ``Office <i> opens at nine.``."""
    return [
        {
            "id": f"s{i}",
            "user_input": f"When does office {i} open?",
            "response": f"Office {i} opens at nine.",
            "retrieved_contexts": [f"Office {i} opens at nine."],
        }
        for i in range(1, n + 1)
    ]


def one_judge_container(judge: FunctionJudge) -> Container:
    """A container whose panel is ``judge`` alone, with no embedder and no settings file."""
    container = create_container(None, [], environ={})
    container.judges.override(providers.Object([judge]))
    container.embedders.override(providers.Object([]))
    return container


def untimed(value: Any) -> Any:
    """A result record (or a list or dict of them) without its timing fields (``latency_s``)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != "latency_s"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def exact_summaries(summaries: Sequence[MetricSummary]) -> str:
    """Summaries as text in which every float is its repr (NaN included): equal text, equal bits.

    The run's per-item reliability section (``item_jury``) is left out: :func:`~ragqa.report.summarize`
    has no thresholds to make it; ``tests/jury/test_jury_items.py`` checks the run's against the one
    rebuilt from its records.
    """
    return json.dumps([s.model_dump(exclude={"item_jury"}) for s in summaries], allow_nan=True)


class FlakyJudge:
    """A judge (id ``flaky``) around another that fails (HTTP 503) on every question naming office 3, 6 or 9."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner

    @property
    def id(self) -> str:
        return "flaky"

    @property
    def fingerprint(self) -> str:
        return json.dumps({"flaky": self.inner.fingerprint})

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        if any(f"office {i} " in data.model_dump_json() for i in (3, 6, 9)):
            raise JudgeHTTPError("down", judge_id=self.id, status=503)
        return await self.inner.ask(prompt, data, language=language)


def local_with_a_flaky_judge() -> Container:
    """The ``local`` profile's panel and a :class:`FlakyJudge` around its first judge (close it after)."""
    built = create_container(None, ["local"], environ={})
    local = built.judges()
    built.judges.override(providers.Object([*local, FlakyJudge(local[0])]))
    return built


def _usage(rng: random.Random) -> Usage:
    return Usage(
        calls=rng.randint(0, 3),
        prompt_tokens=rng.randint(0, 900),
        completion_tokens=rng.randint(0, 90),
        latency_s=rng.random() / 3,
        cost=rng.choice((None, rng.random() / 7)),
    )


def _outcome(rng: random.Random, jid: str, metric: str, sample_id: str, repeats: int) -> JudgeOutcome:
    """One judge: a failure, a NaN, a score, or ``repeats`` repeats (some failed or NaN), with usage."""

    def failure() -> JudgeFailure:
        return JudgeFailure(judge_id=jid, metric=metric, sample_id=sample_id, error_type="JudgeTimeout", message="t")

    roll = rng.random()
    if roll < 0.12:
        return JudgeOutcome(judge_id=jid, failure=failure(), usage=_usage(rng))
    if repeats == 1 or roll < 0.3:
        value = math.nan if roll < 0.2 else rng.choice((rng.random(), 0.0, 1.0, 0.5))
        return JudgeOutcome(judge_id=jid, score=MetricScore(value=value), latency_s=rng.random(), usage=_usage(rng))
    runs = []
    for k in range(rng.randint(2, repeats)):  # outcomes of one judge may hold fewer repeats
        r = rng.random()
        if r < 0.1:
            runs.append(RepeatOutcome(index=k, failure=failure(), usage=_usage(rng)))
        else:
            value = math.nan if r < 0.2 else rng.choice((rng.random(), 0.25, 1.0))
            runs.append(RepeatOutcome(index=k, score=MetricScore(value=value, reason=f"r{k}"), usage=_usage(rng)))
    finite = [r.score.value for r in runs if r.score is not None and not math.isnan(r.score.value)]
    score = MetricScore(value=sum(finite) / len(finite) if finite else math.nan, details={"n": len(runs)})
    return JudgeOutcome(judge_id=jid, score=score, repeats=runs, usage=_usage(rng))


def random_results(seed: int, n_samples: int, repeats: int = 1) -> list[PanelResult]:
    """Results ``s0..`` of a three-judge panel (and a judge ``stranger`` not in it) on metrics ``m1`` (higher is
    better) and ``m2(mode=x)`` (lower): scores, NaNs, failures, up to ``repeats`` repeats, usage with and without cost.
    """
    rng = random.Random(seed)
    out = []
    for i in range(n_samples):
        for metric, direction in (("m1", "higher"), ("m2(mode=x)", "lower")):
            outcomes = [
                _outcome(rng, jid, metric, f"s{i}", repeats)
                for jid in ("a", "b", "c", "stranger")[: rng.choice((3, 4))]
            ]
            scores = [o.score.value for o in outcomes if o.score is not None]
            out.append(
                PanelResult(
                    sample_id=f"s{i}",
                    metric=metric,
                    direction=direction,  # type: ignore[arg-type]
                    judges=outcomes,
                    aggregate=aggregate(
                        scores, n_failed=sum(o.failure is not None for o in outcomes), strategy="median", quorum=2
                    ),
                )
            )
    return out


def _four_claim_judge(judge_id: str, plan: list[Any]) -> FunctionJudge:
    """A judge that splits sample ``sN``'s response into 4 claims and supports ``plan[N - 1]`` of them.

    A step of ``plan`` that is an exception is raised at the NLI call instead.
    """

    def answer(prompt: Any, data: Any) -> Any:
        if prompt.name == "statements":
            sid = data.answer.split()[0]
            return {"statements": [f"{sid} claim {k}" for k in range(4)]}
        sid = data.statements[0].split()[0]
        step = plan[SAMPLES.index(sid)]
        if isinstance(step, Exception):
            raise step
        values = [1] * step + [0] * (4 - step)
        return {
            "verdicts": [
                {"statement": s, "reason": "r", "verdict": v} for s, v in zip(data.statements, values, strict=True)
            ]
        }

    return FunctionJudge(judge_id, answer)


async def write_run(
    path: Path, plan: dict[str, list[Any]], *, samples: list[str] = SAMPLES, metrics: tuple[Any, ...] | None = None
) -> Path:
    """Score ``samples`` with judges answering ``plan`` and write the results file like ``--out`` does."""
    chosen = list(metrics or (Faithfulness(), Hallucination()))
    judges = [_four_claim_judge(jid, p) for jid, p in plan.items()]
    report = await PanelEvaluator(judges, chosen).evaluate(
        [make_sample(id=sid, response=f"{sid} says something") for sid in samples]
    )
    header = ResultsHeader(
        run_id=path.stem,
        ragqa_version="0",
        config_fingerprint="sha256:c",
        dataset="d.jsonl",
        dataset_fingerprint="sha256:d",
        samples=len(samples),
        metrics=tuple(m.key for m in chosen),
        judges=tuple(plan),
        started_at="2026-01-01T00:00:00+00:00",
    )
    stream = ResultStream(path, header)
    stream.open()
    for result in report.results:
        stream.write(result)
    stream.finish([(r.sample_id, r.metric) for r in report.results])
    return path
