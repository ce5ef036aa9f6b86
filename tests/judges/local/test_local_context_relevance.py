"""The local judge's graded context relevance, and reasons that state what graded scores were computed from."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

from ragqa.datasets import load_dataset
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import GradedContextRelevance1Output, LocalJudge
from ragqa.judges.local.answers_judged import context_relevance_rating, graded_rating
from ragqa.metrics import ContextPrecision, ContextRelevance, NoiseSensitivity
from ragqa.metrics._rating import ask_rating
from ragqa.metrics.base import MetricContext
from ragqa.metrics.context_precision import context_precision_score, precision_reason
from ragqa.metrics.context_relevance import RELEVANCE_RATINGS
from ragqa.metrics.noise_sensitivity import noise_reason
from ragqa.prompts.nvidia import CONTEXT_RELEVANCE_1, ContextRelevance1Output, ContextRelevanceInput
from ragqa.settings import LocalJudgeSettings
from ragqa.testing import ScriptedJudge, make_sample

QUESTION = "How do I reset my VPN password?"
FOCUSED = "Reset your VPN password in the self-service portal under Reset VPN password."
DILUTED = (
    "The IT handbook covers laptops, printers, phones, badges, meeting rooms, travel bookings and the "
    "canteen menu. Accounts are managed centrally. One section mentions that a VPN password can be reset."
)


def test_graded_rating_is_increasing_and_its_nearest_level_is_the_integer_rating() -> None:
    grid = [i / 100 for i in range(101)]
    values = [graded_rating(x) for x in grid]
    assert values[0] == 0.0 and values[-1] == 2.0
    assert all(a < b for a, b in itertools.pairwise(values))
    for x, g in zip(grid, values, strict=True):
        level = 2 if x >= 0.5 else 1 if x >= 0.2 else 0
        assert abs(g - level) <= 0.5 + 1e-12, (x, g, level)
    assert graded_rating(-1.0) == 0.0 and graded_rating(2.0) == 2.0


async def test_contexts_holding_every_question_word_no_longer_tie() -> None:
    focused = await context_relevance_rating(QUESTION, [FOCUSED])
    diluted = await context_relevance_rating(QUESTION, [DILUTED])
    # both hold every question word: the integer ratings tie at the top level ...
    assert focused.rating == diluted.rating == 2
    # ... and the graded ratings rank the context that is about the question first
    assert 0.0 <= diluted.graded < focused.graded <= 2.0
    assert focused.reason.startswith("local approximation") and "graded" in focused.reason


async def test_unrelated_and_empty_inputs_keep_their_ratings() -> None:
    unrelated = await context_relevance_rating(QUESTION, ["The canteen opens at noon."])
    assert (unrelated.rating, unrelated.graded) == (0, 0.0)
    assert (await context_relevance_rating("What?", ["anything"]))[:2] == (1, 1.0)
    assert (await context_relevance_rating(QUESTION, []))[:2] == (0, 0.0)


async def test_the_metric_averages_the_local_judges_graded_ratings() -> None:
    judge = LocalJudge("l")
    scores = []
    for context in (FOCUSED, DILUTED):
        sample = make_sample(user_input=QUESTION, retrieved_contexts=[context])
        score = await ContextRelevance().score(sample, judge, MetricContext())
        graded = (await context_relevance_rating(QUESTION, [context], None, judge.support_config)).graded
        assert score.value == pytest.approx(graded / 2, abs=1e-9)  # (g/2 + g/2) / 2
        assert score.details["template_1"]["graded_rating"] == graded  # type: ignore[index]
        assert "(graded)" in score.reason
        scores.append(score.value)
    assert scores[0] > scores[1]
    assert any(v * 4 != round(v * 4) for v in scores)  # not on the 0.25 grid of integer ratings


class _OffScale(ContextRelevance1Output):
    @property
    def value(self) -> float:
        return 3.0


async def test_a_graded_rating_outside_the_scale_is_an_invalid_attempt() -> None:
    judge = ScriptedJudge(
        "j", {"context_relevance_1": [_OffScale(rating=2), GradedContextRelevance1Output(rating=1, graded_rating=0.8)]}
    )
    out = await ask_rating(
        judge,
        CONTEXT_RELEVANCE_1,
        lambda n: ContextRelevanceInput(user_input="q", context="c", attempt=n),
        allowed=RELEVANCE_RATINGS,
        scale=2,
        max_retries=3,
        language="en",
    )
    assert out.invalid == ["rating 2 (graded 3.0)"]
    assert (out.rating, out.graded, out.value) == (1, 0.8, 0.4)


async def test_an_llm_rating_is_scored_as_before() -> None:
    judge = ScriptedJudge("j", {"context_relevance_1": [{"rating": 2}], "context_relevance_2": [{"rating": 1}]})
    score = await ContextRelevance().score(
        make_sample(user_input="q?", retrieved_contexts=["c"]), judge, MetricContext()
    )
    assert score.value == 0.75 and score.reason == "template 1 rated 2/2; template 2 rated 1/2"
    assert "graded_rating" not in score.details["template_1"]  # type: ignore[operator]


# ---- reasons true to graded scores ---------------------------------------------------------------


def test_precision_reason_keeps_the_binary_wording_and_lists_graded_usefulness() -> None:
    assert precision_reason([1.0, 0.0, 1.0], "reference") == "2 of 3 contexts useful for the reference, at ranks 1, 3"
    assert precision_reason([0.0], "response") == "0 of 1 contexts useful for the response"
    graded = [0.95, 0.34, 0.18]
    reason = precision_reason(graded, "reference")
    assert reason == "usefulness (graded) of the 3 contexts for the reference, by rank: 0.95, 0.34, 0.18"
    assert "1 of 3" not in reason and context_precision_score(graded) > 0.8


def test_noise_reason_counts_graded_shares_as_the_score_does() -> None:
    statements = ["Outreach is the platform.", "It costs nothing."]
    binary = noise_reason(statements, [1.0, 0.0], "incorrect")
    assert binary == "1 of 2 response statements are incorrect: Outreach is the platform."
    graded = noise_reason(statements, [0.48, 0.001], "incorrect and from a relevant context")
    assert graded == (
        "0.48 (graded) of 2 response statements are incorrect and from a relevant context: "
        "Outreach is the platform. (0.48)"
    )
    assert noise_reason(statements, [0.0, 0.0], "incorrect") == "0 of 2 response statements are incorrect"


def _it_001() -> Any:
    """The audit's case: it-001 of the shipped dataset, whose local verdicts are graded."""
    path = Path(__file__).resolve().parents[3] / "examples" / "datasets" / "it_helpdesk.jsonl"
    return next(s for s in load_dataset(path) if s.id == "it-001")


def _graded_count(reason: str) -> float:
    head = reason.split(" of ", 1)[0]
    return float(head.removesuffix(" (graded)"))


@pytest.mark.parametrize("settings", [{}, {"support_threshold": 0.6}])
async def test_the_local_judges_reasons_state_its_graded_scores(settings: dict[str, Any]) -> None:
    judge = LocalJudge("l", LocalJudgeSettings(**settings))
    sample = _it_001()
    noise = (await PanelEvaluator([judge]).score(sample, NoiseSensitivity())).judges[0].score
    assert noise is not None and not math.isnan(noise.value)
    n = len(noise.details["statements"])  # type: ignore[arg-type]
    # the stated count over the statements is the score (to the two decimals written)
    assert "(graded)" in noise.reason
    assert _graded_count(noise.reason) / n == pytest.approx(noise.value, abs=0.01)

    precision = (await PanelEvaluator([judge]).score(sample, ContextPrecision())).judges[0].score
    assert precision is not None and "(graded)" in precision.reason
    stated = [float(v) for v in precision.reason.rsplit(": ", 1)[1].split(", ")]
    assert stated == pytest.approx(precision.details["verdicts"], abs=0.005)  # type: ignore[arg-type]
    assert context_precision_score(stated) == pytest.approx(precision.value, abs=0.01)
