import contextlib
from pathlib import Path

from ragqa.cache import CachingJudge, JudgeCache
from ragqa.errors import JudgeError
from ragqa.metrics import Faithfulness
from ragqa.metrics.base import MetricContext
from ragqa.testing import ScriptedJudge, make_sample


def _script() -> dict:
    return {
        "statements": [{"statements": ["a", "b"]}],
        "nli": [
            {
                "verdicts": [
                    {"statement": "a", "reason": "r", "verdict": 1},
                    {"statement": "b", "reason": "r", "verdict": 0},
                ]
            }
        ],
    }


async def test_second_run_is_served_from_disk(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    first = ScriptedJudge("j", _script())
    score1 = await Faithfulness().score(make_sample(), CachingJudge(first, cache), MetricContext())
    second = ScriptedJudge("j", {})  # would fail if asked
    score2 = await Faithfulness().score(make_sample(), CachingJudge(second, JudgeCache(tmp_path)), MetricContext())
    assert score1.value == score2.value == 0.5
    assert len(first.calls) == 2 and second.calls == []


async def test_key_separates_models_and_prompt_inputs(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    await Faithfulness().score(make_sample(), CachingJudge(ScriptedJudge("model-a", _script()), cache), MetricContext())
    other_model = ScriptedJudge("model-b", _script())
    await Faithfulness().score(make_sample(), CachingJudge(other_model, cache), MetricContext())
    assert len(other_model.calls) == 2  # a different model never reuses model-a's answers (RAGAS #2983)
    other_input = ScriptedJudge("model-a", _script())
    await Faithfulness().score(make_sample(response="Other text."), CachingJudge(other_input, cache), MetricContext())
    # the new response is decomposed again; its NLI input (same context, same statements) is a hit
    assert [c.prompt for c in other_input.calls] == ["statements"]


async def test_failures_are_not_cached(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    failing = ScriptedJudge("j", {})
    with contextlib.suppress(JudgeError):
        await Faithfulness().score(make_sample(), CachingJudge(failing, cache), MetricContext())
    ok = ScriptedJudge("j", _script())
    score = await Faithfulness().score(make_sample(), CachingJudge(ok, cache), MetricContext())
    assert score.value == 0.5 and len(ok.calls) == 2
