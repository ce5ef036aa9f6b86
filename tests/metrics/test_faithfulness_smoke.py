import math

from factories import nli_answer

from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness, Hallucination
from ragqa.testing import ScriptedJudge, make_sample


async def test_super_bowl_example_faithfulness_half_and_shared_calls() -> None:
    judge = ScriptedJudge(
        "j1",
        {
            "statements": [
                {"statements": ["The first Super Bowl was held on January 15, 1967.", "It was held in Florida."]}
            ],
            "nli": [nli_answer(1, 0)],
        },
    )
    sample = make_sample(response="The first Super Bowl was held on January 15, 1967, in Florida.")
    ev = PanelEvaluator([judge], [Faithfulness(), Hallucination()])
    report = await ev.evaluate([sample])
    assert report.summary("faithfulness").aggregate_mean == 0.5
    assert report.summary("hallucination").aggregate_mean == 0.5
    assert len(judge.calls) == 2  # statements + nli shared by both metrics


async def test_no_statements_is_nan() -> None:
    judge = ScriptedJudge("j1", {"statements": [{"statements": []}]})
    ev = PanelEvaluator([judge], [Faithfulness()])
    r = await ev.score(make_sample(), Faithfulness())
    assert math.isnan(r.aggregate.value)
    assert r.aggregate.n_nan == 1
