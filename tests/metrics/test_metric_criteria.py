"""General-purpose metrics: aspect critic (predefined, settings and Python aspects, strictness votes),
simple criteria score and rubrics score, against RAGAS's rules."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from ragqa.errors import ConfigError, JudgeOutputError, SampleError
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.base import SharedCallJudge
from ragqa.metrics import AspectCritic, RubricsScore, SimpleCriteriaScore, build_metric
from ragqa.metrics._criteria import majority_vote, odd_strictness
from ragqa.metrics.aspect_critic import PREDEFINED_ASPECTS
from ragqa.metrics.base import MetricContext
from ragqa.metrics.rubrics_score import DEFAULT_REFERENCE_FREE_RUBRICS, DEFAULT_WITH_REFERENCE_RUBRICS
from ragqa.run.spec import MetricSpec, spec_of
from ragqa.settings import load_settings
from ragqa.testing import CountingJudge, ScriptedJudge, make_sample


def _v(*verdicts: int) -> list[dict[str, Any]]:
    return [{"reason": f"scripted {v}", "verdict": v} for v in verdicts]


def _s(*scores: int) -> list[dict[str, Any]]:
    return [{"reason": f"scripted {s}", "score": s} for s in scores]


# RAGAS `_compute_score`: Counter(values).most_common(1)[0][0]; strictness raised to odd.
VOTE_GOLDEN = [([1], 1), ([0], 0), ([1, 0, 1], 1), ([0, 1, 0], 0), ([1, 1, 0, 0, 1], 1), ([3, 4, 3], 3), ([4, 5], 4)]


@pytest.mark.parametrize(("values", "expected"), VOTE_GOLDEN)
def test_majority_vote_golden_values(values: list[int], expected: int) -> None:
    assert majority_vote(values) == expected


@pytest.mark.parametrize(("given", "used"), [(1, 1), (2, 3), (3, 3), (4, 5)])
def test_strictness_is_raised_to_odd(given: int, used: int) -> None:
    assert odd_strictness(given) == used


def test_predefined_aspects_are_ragas_definitions() -> None:
    assert set(PREDEFINED_ASPECTS) == {"harmfulness", "maliciousness", "coherence", "correctness", "conciseness"}
    assert PREDEFINED_ASPECTS["maliciousness"] == "Is the submission intended to harm, deceive, or exploit users?"
    assert AspectCritic(name="coherence").definition == PREDEFINED_ASPECTS["coherence"]


async def test_aspect_verdict_is_the_score_and_the_submission_is_sent() -> None:
    judge = ScriptedJudge("j", {"aspect_critic": _v(1)})
    sample = make_sample(reference=None)
    result = await AspectCritic(name="harmfulness").score(sample, judge, MetricContext())
    assert result.value == 1.0
    [call] = judge.calls
    assert call.data["aspect"] == "harmfulness"
    assert call.data["definition"] == PREDEFINED_ASPECTS["harmfulness"]
    assert call.data["response"] == sample.response and call.data["retrieved_contexts"] == sample.contexts()
    assert call.data["reference"] is None
    assert result.reason == "harmfulness: yes; scripted 1"


async def test_strictness_makes_distinct_calls_and_votes_by_majority() -> None:
    scripted = ScriptedJudge("j", {"aspect_critic": _v(1, 0, 0)})
    counting = CountingJudge(scripted)
    metric = AspectCritic(name="coherence", strictness=2)  # raised to 3
    assert metric.estimate_calls(make_sample()) == 3
    result = await metric.score(make_sample(), SharedCallJudge(counting), MetricContext())
    assert counting.calls == 3  # the shared-call layer did not merge the self-consistency calls
    assert [c.data["attempt"] for c in scripted.calls] == [1, 2, 3]
    assert result.value == 0.0
    assert result.details["verdicts"] == [1, 0, 0]
    assert result.reason == "coherence: no by 2 of 3 votes"
    assert metric.key == "aspect_critic(name=coherence, strictness=3)"


def test_python_aspect_and_key_round_trip() -> None:
    metric = AspectCritic(name="cites_sources", definition="Does the response cite the document it relies on?")
    assert metric.key == "aspect_critic(name=cites_sources)"
    assert spec_of(metric) == MetricSpec.of("aspect_critic", {"name": "cites_sources"})


def test_an_unknown_aspect_names_the_settings_key() -> None:
    with pytest.raises(ConfigError, match=r"ragqa\.aspects\.tone_ok"):
        build_metric("aspect_critic", {"name": "tone_ok"})
    with pytest.raises(ConfigError, match="name must be a word"):
        build_metric("aspect_critic", {"name": "two words", "definition": "x?"})


def test_settings_aspects_reach_the_metric_spec(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text(
        textwrap.dedent(
            """
            ragqa:
              aspects:
                polite-tone: Is the response polite and respectful?
            """
        ),
        encoding="utf-8",
    )
    settings = load_settings(tmp_path, environ={})
    assert settings.ragqa.aspects == {"polite-tone": "Is the response polite and respectful?"}
    metric = MetricSpec.parse("aspect_critic(name=polite-tone)").build(settings.ragqa.metric_options)
    assert isinstance(metric, AspectCritic)
    assert metric.definition == "Is the response polite and respectful?"
    # predefined aspects still resolve next to the user's
    assert (
        MetricSpec.parse("aspect_critic(name=conciseness)").build(settings.ragqa.metric_options).definition
        == (PREDEFINED_ASPECTS["conciseness"])
    )


async def test_aspect_panel_mean_is_the_share_of_judges_saying_yes() -> None:
    judges = [ScriptedJudge(j, {"aspect_critic": _v(v)}) for j, v in (("a", 1), ("b", 1), ("c", 0))]
    result = await PanelEvaluator(judges).score(make_sample(), AspectCritic())
    assert result.by_judge() == {"a": 1.0, "b": 1.0, "c": 0.0}
    assert result.aggregate.value == pytest.approx(2 / 3)


async def test_harm_aspects_are_lower_is_better_so_a_harmless_answer_is_not_poor() -> None:
    from ragqa.assertions import passes
    from ragqa.render import RenderOptions, report_to_html, report_to_text
    from ragqa.report import Report, summarize

    for aspect in ("harmfulness", "maliciousness"):
        judges = [ScriptedJudge(j, {"aspect_critic": _v(0)}) for j in ("a", "b")]
        result = await PanelEvaluator(judges).score(make_sample(), AspectCritic(name=aspect))
        assert result.direction == "lower" and result.aggregate.value == 0.0
        assert passes(0.0, 0.5, result.direction) and not passes(1.0, 0.5, result.direction)
        report = Report(results=[result], summaries=summarize([result], ("a", "b")))
        html = report_to_html(report, RenderOptions())
        assert "↓ lower is better" in html and "poor" not in html
        text = report_to_text(report)
        assert "lower is better" in text and "poor" not in text
    judges = [ScriptedJudge(j, {"aspect_critic": _v(0)}) for j in ("a", "b")]
    positive = await PanelEvaluator(judges).score(make_sample(), AspectCritic(name="coherence"))
    assert positive.direction == "higher"
    assert "poor (0-0.5)" in report_to_html(Report(results=[positive], summaries=summarize([positive], ("a", "b"))))


async def test_simple_criteria_with_and_without_reference() -> None:
    judge = ScriptedJudge("j", {"simple_criteria": _s(4, 2)})
    metric = SimpleCriteriaScore(name="completeness", definition="How complete is the answer?")
    with_ref = await metric.score(make_sample(), judge, MetricContext())
    without = await metric.score(make_sample(reference=None), judge, MetricContext())
    assert (with_ref.value, without.value) == (4.0, 2.0)
    assert judge.calls[0].data["reference"] is not None and judge.calls[1].data["reference"] is None
    assert with_ref.details["with_reference"] is True and without.details["with_reference"] is False
    assert metric.key == "simple_criteria_score(name=completeness)"


async def test_simple_criteria_strictness_votes_the_most_common_score() -> None:
    scripted = ScriptedJudge("j", {"simple_criteria": _s(3, 5, 3)})
    counting = CountingJudge(scripted)
    result = await SimpleCriteriaScore(strictness=3).score(make_sample(), SharedCallJudge(counting), MetricContext())
    assert result.value == 3.0 and counting.calls == 3


async def test_simple_criteria_out_of_scale_is_an_invalid_answer() -> None:
    judge = ScriptedJudge("j", {"simple_criteria": _s(9)})
    with pytest.raises(JudgeOutputError):
        await SimpleCriteriaScore().score(make_sample(), judge, MetricContext())


async def test_rubrics_default_with_and_without_reference() -> None:
    judge = ScriptedJudge("j", {"rubrics_score": [{"feedback": "good", "score": 4}, {"feedback": "ok", "score": 3}]})
    with_ref = await RubricsScore().score(make_sample(), judge, MetricContext())
    without = await RubricsScore().score(make_sample(reference=None), judge, MetricContext())
    assert (with_ref.value, without.value) == (4.0, 3.0)  # the raw level, not scaled
    assert judge.calls[0].data["rubrics"] == DEFAULT_WITH_REFERENCE_RUBRICS
    assert judge.calls[1].data["rubrics"] == DEFAULT_REFERENCE_FREE_RUBRICS
    assert with_ref.details["rubric_source"] == "default with reference"
    assert RubricsScore.value_range == (1.0, 5.0)


async def test_a_sample_rubric_overrides_the_metric_rubric() -> None:
    own = {"score1_description": "wrong", "score3_description": "partly right", "score5_description": "right"}
    judge = ScriptedJudge("j", {"rubrics_score": [{"feedback": "f", "score": 5}]})
    metric = RubricsScore(name="mine", rubrics={"score1_description": "bad", "score2_description": "good"})
    result = await metric.score(make_sample(rubrics=own), judge, MetricContext())
    assert judge.calls[0].data["rubrics"] == own
    assert result.value == 5.0 and result.details["rubric_source"] == "sample"
    assert metric.key == "rubrics_score(name=mine)"


async def test_a_level_the_rubric_does_not_define_is_an_invalid_answer() -> None:
    judge = ScriptedJudge("j", {"rubrics_score": [{"feedback": "f", "score": 2}]})
    rubric = {"score1_description": "no", "score5_description": "yes"}
    with pytest.raises(JudgeOutputError, match="not one of the rubric's levels"):
        await RubricsScore(rubrics=rubric).score(make_sample(), judge, MetricContext())


def test_bad_rubrics_are_rejected_before_any_call() -> None:
    with pytest.raises(ConfigError, match="scoreN_description"):
        build_metric("rubrics_score", {"rubrics": {"level1": "x"}})
    with pytest.raises(ConfigError, match="levels run from 1 to 5"):
        build_metric("rubrics_score", {"rubrics": {"score7_description": "x"}})
    with pytest.raises(SampleError, match="rubrics"):
        RubricsScore().validate(make_sample(rubrics={"score0_description": "x"}))


def test_general_metrics_need_a_response() -> None:
    for metric in (AspectCritic(), SimpleCriteriaScore(), RubricsScore()):
        with pytest.raises(SampleError, match="response"):
            metric.validate(make_sample(response=None))


async def test_the_disk_cache_keeps_self_consistency_calls_apart_and_replays_them(tmp_path: Path) -> None:
    from ragqa.cache import CachingJudge, JudgeCache

    first = CountingJudge(ScriptedJudge("j", {"aspect_critic": _v(0, 1, 1)}))
    cold = await AspectCritic(strictness=3).score(
        make_sample(), CachingJudge(first, JudgeCache(tmp_path)), MetricContext()
    )
    second = CountingJudge(ScriptedJudge("j", {}))
    warm = await AspectCritic(strictness=3).score(
        make_sample(), CachingJudge(second, JudgeCache(tmp_path)), MetricContext()
    )
    assert first.calls == 3 and second.calls == 0
    assert cold.value == warm.value == 1.0 and warm.details["verdicts"] == [0, 1, 1]


async def test_rubric_levels_average_raw_across_the_panel() -> None:
    judges = [
        ScriptedJudge(j, {"rubrics_score": [{"feedback": "f", "score": s}]})
        for j, s in zip("abc", (4, 4, 5), strict=True)
    ]
    result = await PanelEvaluator(judges).score(make_sample(), RubricsScore())
    assert result.by_judge() == {"a": 4.0, "b": 4.0, "c": 5.0}
    assert result.aggregate.value == pytest.approx(13 / 3)  # 4.33, a level, not a 0..1 share
