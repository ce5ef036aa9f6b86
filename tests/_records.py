"""Small runs with a test-double judge, shared by the results-file tests (not a test module)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dependency_injector import providers

from ragqa.container import Container, create_container
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.run.stream import ResultsHeader, ResultStream
from ragqa.testing import FunctionJudge, make_sample

SAMPLES = [f"s{i}" for i in range(1, 9)]
"""The eight samples of a :func:`write_run` run (``s1`` .. ``s8``) unless told others."""

BASELINE = {"x": [4, 4, 3, 4, 4, 3, 4, 4], "y": [3, 3, 3, 4, 3, 3, 3, 3]}
"""A :func:`write_run` plan: judges ``x`` and ``y``, supported statements out of 4 per sample (faithfulness = n / 4)."""


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
