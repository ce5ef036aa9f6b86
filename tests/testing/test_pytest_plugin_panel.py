"""The pytest plugin's ``ragqa_panel`` fixture (the package stays ``ragqa`` in the test) and per-judge thresholds.

Before: the fixture was named ``ragqa``, so inside a test that took it ``ragqa.MetricAssertionError``
was an ``AttributeError``; a gate per judge needed a loop over ``result.judges`` by hand.
"""

from __future__ import annotations

import pytest
from _pytest_run import run_pytest_inprocess

from ragqa.aggregate import aggregate
from ragqa.assertions import check_judge_thresholds, verdict_for, with_judge_thresholds
from ragqa.errors import ConfigError
from ragqa.schema import JudgeFailure, JudgeOutcome, MetricScore, PanelResult

SUITE = """
import pytest
import ragqa
from ragqa import Sample

SAMPLE = Sample(
    id="refund",
    user_input="What is the refund policy?",
    response="Refunds are accepted within 30 days. Store credit never expires.",
    retrieved_contexts=["Refunds are accepted within 30 days of purchase with a receipt."],
)


def test_the_package_stays_reachable(ragqa_panel):
    result = ragqa_panel.check_metric("faithfulness", SAMPLE, threshold=0.0)
    assert isinstance(result, ragqa.PanelResult)


def test_per_judge_thresholds_pass(ragqa_panel):
    ragqa_panel.check_metric("faithfulness", SAMPLE, threshold=0.0, judge_thresholds={"local-lenient": 0.1})


def test_per_judge_thresholds_fail(ragqa_panel):
    with pytest.raises(ragqa.MetricAssertionError) as caught:
        ragqa_panel.check_metric("faithfulness", SAMPLE, threshold=0.0, judge_thresholds={"local-strict": 0.99})
    assert caught.value.verdict.failing_judges == ["local-strict"]
    assert "judge thresholds: local-strict 0." in str(caught.value)


def test_an_unknown_judge_is_refused(ragqa_panel):
    with pytest.raises(ragqa.ConfigError, match="Did you mean 'local-strict'"):
        ragqa_panel.check_metric("faithfulness", SAMPLE, judge_thresholds={"local-stric": 0.5})


async def test_async_per_judge(ragqa_panel):
    await ragqa_panel.assert_metric("faithfulness", SAMPLE, threshold=0.0, judge_thresholds={"local-lenient": 0.1})


def test_the_former_name_still_works(ragqa):
    ragqa.check_metric("faithfulness", SAMPLE, threshold=0.0)
"""


pytest_plugins = ("pytester",)  # the user's session runs in this process (Pytester.runpytest_inprocess)


def test_the_panel_fixture_and_per_judge_thresholds_in_a_user_project(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp_path = pytester.path
    (tmp_path / "test_user.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n", encoding="utf-8")
    proc = run_pytest_inprocess(pytester, monkeypatch, "-q", "--ragqa-profile", "local")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 passed" in proc.stdout


def _result(scores: dict[str, float | None]) -> PanelResult:
    outcomes = [
        JudgeOutcome(judge_id=j, score=MetricScore(value=v))
        if v is not None
        else JudgeOutcome(
            judge_id=j,
            failure=JudgeFailure(
                judge_id=j, metric="faithfulness", sample_id="s", error_type="JudgeTimeout", message="x"
            ),
        )
        for j, v in scores.items()
    ]
    finite = [v for v in scores.values() if v is not None]
    agg = aggregate(finite, n_failed=len(scores) - len(finite))
    return PanelResult(sample_id="s", metric="faithfulness", direction="higher", judges=outcomes, aggregate=agg)


def test_a_judge_below_its_own_threshold_fails_a_passing_panel() -> None:
    base = verdict_for(_result({"a": 0.6, "b": 0.9}), threshold=0.5)
    assert base.passed
    gated = with_judge_thresholds(base, {"a": 0.8, "b": 0.8})
    assert not gated.passed and gated.decided
    assert gated.failing_judges == ["a"] and gated.passing_judges == ["b"]
    assert gated.why.endswith("judge thresholds: a 0.600 < 0.8, b 0.900 >= 0.8")
    assert with_judge_thresholds(base, {}) is base
    assert with_judge_thresholds(base, {"b": 0.8}).passed


def test_a_lower_is_better_metric_words_both_sides_of_its_thresholds_the_other_way() -> None:
    result = _result({"a": 0.6, "b": 0.1}).model_copy(update={"direction": "lower"})
    base = verdict_for(result, threshold=0.5)  # the mean 0.35 <= 0.5 passes
    assert base.passed and base.headline() == "faithfulness 0.350 <= 0.5 (mean of 2 judges), sample 's'"
    gated = with_judge_thresholds(base, {"a": 0.5, "b": 0.5})
    assert gated.why.endswith("judge thresholds: a 0.600 > 0.5, b 0.100 <= 0.5")
    failed = verdict_for(result, threshold=0.2)
    assert failed.headline() == "faithfulness 0.350 > 0.2 (mean of 2 judges), sample 's'"


def test_a_named_judge_that_failed_leaves_the_verdict_undecided() -> None:
    base = verdict_for(_result({"a": None, "b": 0.9}), threshold=0.5)
    assert base.passed
    gated = with_judge_thresholds(base, {"a": 0.8})
    assert not gated.passed and not gated.decided
    assert "a excluded (needs >= 0.8)" in gated.why


def test_judge_thresholds_are_checked_before_any_call() -> None:
    check_judge_thresholds(["a", "b"], {"a": 0.5})
    with pytest.raises(ConfigError, match=r"'c' is not a judge of the panel \(a, b\)"):
        check_judge_thresholds(["a", "b"], {"c": 0.5})
    with pytest.raises(ConfigError, match="needs a number"):
        check_judge_thresholds(["a"], {"a": "high"})  # type: ignore[dict-item]
