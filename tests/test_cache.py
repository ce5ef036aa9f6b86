"""The disk cache of judge answers: keys, typed entries (graded ones too), stale entries, fingerprints."""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

import diskcache
import pytest
from pydantic import BaseModel, Field

from ragqa.cache import CacheEntry, CachingJudge, JudgeCache, class_name
from ragqa.errors import JudgeError
from ragqa.judges.base import Judge, SharedCallJudge
from ragqa.judges.local import GradedNLIOutput, GradedStatementVerdict, LocalEmbedder, LocalJudge
from ragqa.metrics import Faithfulness
from ragqa.metrics.base import MetricContext
from ragqa.prompts.base import Prompt
from ragqa.prompts.nli import NLI, NLIInput, NLIOutput, StatementVerdict
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import CountingJudge, FunctionJudge, ScriptedJudge, make_sample

NLI_DATA = NLIInput(context="Maria is a nurse at the city hospital.", statements=["Maria is a nurse.", "Maria is 40."])


def _script() -> dict[str, list[Any]]:
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


def _graded(*supports: float) -> GradedNLIOutput:
    return GradedNLIOutput(
        verdicts=[
            GradedStatementVerdict(statement=f"s{i}", reason="graded", verdict=int(s >= 0.5), support=s)
            for i, s in enumerate(supports)
        ]
    )


# ---- binary answers ---------------------------------------------------------------------------


async def test_second_run_is_served_from_disk(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path)
    first = ScriptedJudge("j", _script())
    score1 = await Faithfulness().score(make_sample(), CachingJudge(first, cache), MetricContext())
    second = ScriptedJudge("j", {})  # would fail if asked
    warm = JudgeCache(tmp_path)
    score2 = await Faithfulness().score(make_sample(), CachingJudge(second, warm), MetricContext())
    assert score1 == score2 and score1.value == 0.5
    assert len(first.calls) == 2 and second.calls == []
    assert (cache.hits, cache.misses, warm.hits, warm.misses) == (0, 2, 2, 0)


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


async def test_a_support_key_in_an_llm_answer_is_neither_used_nor_stored(tmp_path: Path) -> None:
    answer = {"verdicts": [{"statement": "a", "reason": "r", "verdict": 0, "support": 7.5}]}
    cold = await CachingJudge(ScriptedJudge("j", {"nli": [answer]}), JudgeCache(tmp_path)).ask(NLI, NLI_DATA)
    warm = await CachingJudge(ScriptedJudge("j", {}), JudgeCache(tmp_path)).ask(NLI, NLI_DATA)
    assert type(cold) is type(warm) is NLIOutput
    assert cold == warm and [v.value for v in warm.verdicts] == [0.0]
    assert "7.5" not in json.dumps(warm.model_dump())


# ---- graded answers ---------------------------------------------------------------------------


async def test_graded_answers_restore_their_class_and_every_field(tmp_path: Path) -> None:
    graded = _graded(0.62, 0.31, 1.0)
    cold = await CachingJudge(FunctionJudge("local", lambda p, d: graded), JudgeCache(tmp_path)).ask(NLI, NLI_DATA)
    assert cold is graded
    same = FunctionJudge("local", lambda p, d: pytest.fail("asked despite a cached answer"))
    again = await CachingJudge(same, JudgeCache(tmp_path)).ask(NLI, NLI_DATA)
    assert type(again) is GradedNLIOutput and all(type(v) is GradedStatementVerdict for v in again.verdicts)
    assert again == graded and [v.value for v in again.verdicts] == [0.62, 0.31, 1.0]


async def test_local_judge_scores_the_same_from_the_cache(tmp_path: Path) -> None:
    sample = make_sample(
        response="The first Super Bowl was played in January 1967. "
        "It took place at the Memorial Coliseum in Los Angeles, California."
    )
    cold_judge = CountingJudge(LocalJudge("local"))
    cold = await Faithfulness().score(sample, CachingJudge(cold_judge, JudgeCache(tmp_path)), MetricContext())
    warm_judge = CountingJudge(LocalJudge("local"))
    warm = await Faithfulness().score(sample, CachingJudge(warm_judge, JudgeCache(tmp_path)), MetricContext())
    # graded: neither verdict is 0 or 1 (a binary cache entry would have scored 0.5)
    assert cold.details["verdicts"] == [pytest.approx(0.92), pytest.approx(0.432, abs=1e-3)]
    assert warm == cold and warm.value == cold.value
    assert (cold_judge.calls, warm_judge.calls) == (2, 0)


async def test_changing_a_local_judge_setting_under_the_same_id_misses(tmp_path: Path) -> None:
    base = CountingJudge(LocalJudge("local", LocalJudgeSettings(support_threshold=0.5)))
    await CachingJudge(base, JudgeCache(tmp_path)).ask(NLI, NLI_DATA)
    same = CountingJudge(LocalJudge("local", LocalJudgeSettings(support_threshold=0.5)))
    await CachingJudge(same, JudgeCache(tmp_path)).ask(NLI, NLI_DATA)
    assert same.calls == 0
    for settings in (
        LocalJudgeSettings(support_threshold=0.9),
        LocalJudgeSettings(number_check=False),
        LocalJudgeSettings(entity_check=False),
    ):
        changed = CountingJudge(LocalJudge("local", settings))
        await CachingJudge(changed, JudgeCache(tmp_path)).ask(NLI, NLI_DATA)
        assert changed.calls == 1, settings


def test_local_fingerprint_covers_settings_embedder_and_versions() -> None:
    fp = json.loads(LocalJudge("local").fingerprint)
    assert fp["provider"] == "local" and fp["algorithm"] and fp["ragqa"]
    assert fp["settings"]["support_threshold"] == 0.5 and fp["support"]["window"] == 2
    assert fp["embedder"] is None
    hashing = LocalEmbedder("e", "hashing")
    with_embeddings = LocalJudge("local", LocalJudgeSettings(use_embeddings=True), embedder=hashing)
    assert json.loads(with_embeddings.fingerprint)["embedder"] == json.loads(hashing.fingerprint)
    # an embedder the judge does not use (use_embeddings false) changes no answer
    assert LocalJudge("local", embedder=hashing).fingerprint == LocalJudge("local").fingerprint
    # the id changes no answer
    assert LocalJudge("other").fingerprint == LocalJudge("local").fingerprint


def test_wrappers_and_doubles_have_fingerprints(tmp_path: Path) -> None:
    local = LocalJudge("local")
    cache = JudgeCache(tmp_path)
    wrapped = (CachingJudge(local, cache), SharedCallJudge(local), SharedCallJudge(CachingJudge(local, cache)))
    for judge in (local, *wrapped):
        assert isinstance(judge, Judge) and judge.fingerprint == local.fingerprint
    scripted, function = ScriptedJudge("j", {}), FunctionJudge("j", lambda p, d: None)
    assert isinstance(scripted, Judge) and isinstance(function, Judge)
    assert scripted.fingerprint != function.fingerprint != ScriptedJudge("k", {}).fingerprint
    assert ScriptedJudge("j", {}, fingerprint="v2").fingerprint == "v2"


# ---- stale and foreign entries ----------------------------------------------------------------


def _key(judge: Judge, data: BaseModel = NLI_DATA, prompt: Prompt[Any, Any] = NLI) -> str:
    return JudgeCache.key(judge.fingerprint, prompt, "en", data)


@pytest.mark.parametrize(
    "stored",
    [
        '{"verdicts": [{"statement": "a", "reason": "r", "verdict": 1}]}',  # the old layout: bare output JSON
        "not json",
        json.dumps({"format": 2, "output_class": class_name(NLIOutput), "output": {"verdicts": "x"}}),
        json.dumps({"format": 2, "output_class": "builtins:object", "output": {}}),
        json.dumps({"format": 2, "output_class": class_name(StatementVerdict), "output": {}}),  # not a subclass
        json.dumps(  # a graded entry whose support is out of range
            {
                "format": 2,
                "output_class": class_name(GradedNLIOutput),
                "output": {"verdicts": [{"statement": "a", "reason": "r", "verdict": 1, "support": 7.5}]},
            }
        ),
    ],
)
async def test_an_entry_that_does_not_validate_is_ignored_and_asked_again(tmp_path: Path, stored: str) -> None:
    judge = ScriptedJudge("j", {"nli": [_graded(0.4)]})
    with diskcache.Cache(str(tmp_path)) as raw:
        raw.set(_key(judge), stored)
    cache = JudgeCache(tmp_path)
    out = await CachingJudge(judge, cache).ask(NLI, NLI_DATA)
    assert out == _graded(0.4) and len(judge.calls) == 1 and (cache.hits, cache.misses) == (0, 1)
    again = await CachingJudge(ScriptedJudge("j", {}), cache).ask(NLI, NLI_DATA)  # overwritten with a good entry
    assert again == _graded(0.4) and cache.hits == 1


class _Hidden(BaseModel):
    value: float
    secret: float = Field(default=0.0, exclude=True)


_HIDDEN: Prompt[StatementsInput, _Hidden] = Prompt(
    name="hidden", version="1", input_model=StatementsInput, output_model=_Hidden, instructions={"en": "x"}
)


async def test_an_answer_that_would_not_restore_equal_is_not_stored(tmp_path: Path) -> None:
    data = StatementsInput(question="q", answer="a")
    cache = JudgeCache(tmp_path)
    for answer in (_Hidden(value=0.5, secret=0.7), _Hidden(value=math.nan)):
        judge = FunctionJudge("j", lambda p, d, a=answer: a)
        assert await CachingJudge(judge, cache).ask(_HIDDEN, data) is answer
        assert await CachingJudge(judge, cache).ask(_HIDDEN, data) is answer  # asked again, not restored
        assert len(judge.calls) == 2
    entry = CacheEntry.of(_Hidden(value=0.5))
    assert entry is not None and entry.restore(_Hidden) == _Hidden(value=0.5)


async def test_the_key_changes_with_prompt_version_language_and_input() -> None:
    judge = ScriptedJudge("j", {})
    data = StatementsInput(question="q", answer="a")
    key = JudgeCache.key(judge.fingerprint, STATEMENTS, "en", data)
    newer = Prompt(
        name=STATEMENTS.name,
        version=STATEMENTS.version + "-next",
        input_model=STATEMENTS.input_model,
        output_model=STATEMENTS.output_model,
        instructions=STATEMENTS.instructions,
    )
    assert len({
        key,
        JudgeCache.key(judge.fingerprint, newer, "en", data),
        JudgeCache.key(judge.fingerprint, STATEMENTS, "ru", data),
        JudgeCache.key(judge.fingerprint, STATEMENTS, "en", StatementsInput(question="q", answer="b")),
        JudgeCache.key(ScriptedJudge("k", {}).fingerprint, STATEMENTS, "en", data),
    }) == 5  # fmt: skip
