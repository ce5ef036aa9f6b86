"""Real runs with scripted judges, shared by the renderer tests (not a test module)."""

from __future__ import annotations

from typing import Any

from ragqa.errors import JudgeOutputError, JudgeTimeout
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.report import Report
from ragqa.schema import Usage
from ragqa.testing import FunctionJudge, make_sample
from ragqa.usage import record_usage

# Per judge and sample: NLI verdicts, "nan" (no statements: the metric is undefined), or an
# exception raised at a step. Statements carry the sample id, so concurrent samples cannot mix.
PLAN: dict[str, dict[str, Any]] = {
    "judge-a": {"s1": (1, 1), "s2": (1, 0), "s3": JudgeTimeout("no answer in 30 s", step="nli"), "s4": (1, 1)},
    "judge-b": {"s1": (1, 0), "s2": "nan", "s3": JudgeOutputError("not JSON", step="statements"), "s4": (1, 1)},
    "flaky": {
        "s1": (0, 0),
        "s2": JudgeTimeout("no answer in 30 s", step="nli"),
        "s3": JudgeTimeout("no answer in 30 s", step="statements"),
        "s4": JudgeTimeout("no answer in 30 s", step="nli"),
    },
}


def verdicts(statements: list[str], values: Any) -> dict[str, Any]:
    """An NLI answer giving ``values`` (1 supported, 0 not) to ``statements``, in order."""
    return {
        "verdicts": [{"statement": s, "reason": "r", "verdict": v} for s, v in zip(statements, values, strict=True)]
    }


def _sample_of(text: str) -> str:
    return text.split()[0]


def planned_judge(judge_id: str, *, usage: Usage | None = None) -> FunctionJudge:
    """A judge answering :data:`PLAN`; each call records ``usage`` when given."""
    plan = PLAN[judge_id]

    def answer(prompt: Any, data: Any) -> Any:
        if usage is not None:
            record_usage(usage)
        if prompt.name == "statements":
            sid = _sample_of(data.answer)
            step = plan[sid]
            if isinstance(step, Exception) and getattr(step, "step", None) == "statements":
                raise step
            return {"statements": [] if step == "nan" else [f"{sid} claim one", f"{sid} claim two"]}
        sid = _sample_of(data.statements[0])
        step = plan[sid]
        if isinstance(step, Exception):
            raise step
        return verdicts(data.statements, step)

    return FunctionJudge(judge_id, answer)


async def quorum_run() -> Report:
    """Four samples x faithfulness, hallucination x three judges, quorum 2.

    Faithfulness per sample (judge-a, judge-b, flaky):
    s1: 1.0, 0.5, 0.0 -> mean 0.5, spread 1.0;
    s2: 0.5, NaN, failed -> 1 judge scored: below quorum;
    s3: failed x 3 -> below quorum, every judge failed;
    s4: 1.0, 1.0, failed -> mean 1.0, spread 0.0.
    Hallucination is 1 - faithfulness per judge.
    """
    judges = [
        planned_judge("judge-a", usage=Usage(calls=1, prompt_tokens=100, completion_tokens=20, cost=0.001)),
        planned_judge("judge-b"),
        planned_judge("flaky"),
    ]
    evaluator = PanelEvaluator(judges, [Faithfulness(), Hallucination()], options=PanelOptions(quorum=2))
    samples = [make_sample(id=sid, response=f"{sid} says something") for sid in ("s1", "s2", "s3", "s4")]
    report = await evaluator.evaluate(samples)
    return report.model_copy(update={"wall_time_s": 1.25})


async def readme_run(n_samples: int = 3) -> Report:
    """The README's shape: two judges, faithfulness and hallucination, no failures, usage on one judge."""

    def strict(prompt: Any, data: Any) -> Any:
        record_usage(Usage(calls=1, prompt_tokens=1000, completion_tokens=250, cost=0.0125))
        if prompt.name == "statements":
            return {"statements": ["a", "b", "c"]}
        return verdicts(data.statements, (1, 1, 0))

    def lenient(prompt: Any, data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": ["a", "b"]}
        return verdicts(data.statements, [1] * len(data.statements))

    evaluator = PanelEvaluator(
        [FunctionJudge("local-strict", strict), FunctionJudge("local-lenient", lenient)],
        [Faithfulness(), Hallucination()],
    )
    report = await evaluator.evaluate([make_sample(id=f"s{i}") for i in range(1, n_samples + 1)])
    return report.model_copy(update={"wall_time_s": 3.5})
