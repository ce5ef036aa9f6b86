"""The cascade fit reads tier 1 as the run aggregated it, and hands back the fit it wrote.

Tier 1's aggregate in a fit item must be the one the cascade will see at run time: the run's
strategy and quorum (``ragqa.aggregation``), not a mean assumed whatever the run did. A voting run
(``claim-vote``, ``dawid-skene``) cannot be rebuilt from the results and is refused by name, before
any judge call when the fit is asked for (``ragqa calibrate --fit-cascade``): requests are counted at
the fake server.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import random
from pathlib import Path

import pytest
from _cli import run_cli
from factories import CASCADE_PANEL_YAML, application_yaml

from ragqa.aggregate import aggregate
from ragqa.calibration import calibrate
from ragqa.calibration import cascade as cascade_fit
from ragqa.calibration.cascade import (
    MARGINS,
    SPREADS,
    CascadeItem,
    _escalates,
    _Facts,
    _facts,
    fit_body,
    fit_cascade,
    write_fit,
)
from ragqa.errors import ConfigError
from ragqa.jury.cascade import Cascade, CascadeRule, escalation, read_fit
from ragqa.schema import JudgeFailure, JudgeOutcome, MetricScore, PanelResult
from ragqa.testing import FakeOpenAIServer, ragqa_responder
from ragqa.thresholds import passes

ROOT = Path(__file__).resolve().parents[2]
LABELLED = ROOT / "examples" / "datasets" / "begin_wow_labelled.jsonl"
FIT_JUDGES = ("cheap-a", "cheap-b", "dear")


def _result(tier1: list[float | None], tier2: float, *, strategy: str = "mean", quorum: int = 1) -> PanelResult:
    """A result of judge ``dear`` (tier 2) and ``t0``, ``t1``... (tier 1; ``None``: that judge failed)."""
    outcomes = [JudgeOutcome(judge_id="dear", score=MetricScore(value=tier2))]
    for i, v in enumerate(tier1):
        failure = JudgeFailure(judge_id=f"t{i}", metric="faithfulness", sample_id="s", error_type="X", message="x")
        outcomes.append(
            JudgeOutcome(judge_id=f"t{i}", failure=failure)
            if v is None
            else JudgeOutcome(judge_id=f"t{i}", score=MetricScore(value=v))
        )
    scores = [tier2, *(v for v in tier1 if v is not None)]
    full = aggregate(scores, n_failed=tier1.count(None), strategy="mean", quorum=quorum)
    full = full.model_copy(update={"strategy": strategy})
    return PanelResult(sample_id="s", metric="faithfulness", direction="higher", judges=outcomes, aggregate=full)


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [("mean", (0.2 + 0.9 + 0.95) / 3), ("median", 0.9), ("min", 0.2), ("max", 0.95), ("majority", 1.0)],
)
def test_tier_one_is_aggregated_by_the_runs_strategy(strategy: str, expected: float) -> None:
    item = CascadeItem.of(_result([0.2, 0.9, 0.95], 0.1, strategy=strategy), tier2=["dear"], label=True)
    assert item.tier1 == pytest.approx(expected)
    assert item.values == ((0.2,), (0.9,), (0.95,)) and item.full == pytest.approx(0.5375)


def test_tier_one_below_the_runs_quorum_has_no_aggregate_and_a_failed_judge_is_left_out() -> None:
    short = CascadeItem.of(_result([0.8, None], 0.9, quorum=2), tier2=["dear"], label=True)
    assert math.isnan(short.tier1)  # one tier-1 judge scored, the run needs two: the cascade escalates it
    met = CascadeItem.of(_result([0.8, None, 0.6], 0.9, quorum=2), tier2=["dear"], label=True)
    assert met.tier1 == pytest.approx(0.7) and met.values == ((0.8,), (0.6,))


@pytest.mark.parametrize("strategy", ["claim-vote", "dawid-skene"])
def test_a_voting_run_is_refused_naming_the_setting_and_the_fix(strategy: str) -> None:
    with pytest.raises(ConfigError, match=r"ragqa\.aggregation\.strategy to one of mean, median") as info:
        CascadeItem.of(_result([0.2, 0.9], 0.1, strategy=strategy), tier2=["dear"], label=True)
    assert info.value.key == "ragqa.aggregation.strategy"
    assert strategy in str(info.value) and "sample 's'" in str(info.value)


def _voting_fit_settings(srv: FakeOpenAIServer, tmp_path: Path, strategy: str) -> Path:
    """A cascade panel of three judges on the fake server (each scripted) aggregated by ``strategy``."""
    srv.reset()
    for judge in FIT_JUDGES:
        srv.script(judge, ragqa_responder())
    config = tmp_path / "application.yaml"
    lines = [f"aggregation: {{strategy: {strategy}}}", "cache: {enabled: false}"]
    lines.append("jury: {cascade: {enabled: true, tier-2: [dear]}}")
    config.write_text(
        application_yaml(FIT_JUDGES, base_url=srv.base_url, api_key="sk-test-0123456789", ragqa=lines), encoding="utf-8"
    )
    return config


def _chat_requests(srv: FakeOpenAIServer) -> int:
    return sum(len(srv.requests_for(judge, "/v1/chat/completions")) for judge in FIT_JUDGES)


@pytest.mark.parametrize("strategy", ["claim-vote", "dawid-skene"])
def test_a_voting_run_is_refused_before_any_judge_call_when_the_fit_is_asked(
    srv: FakeOpenAIServer, tmp_path: Path, strategy: str
) -> None:
    config, fit = _voting_fit_settings(srv, tmp_path, strategy), tmp_path / "fit.json"
    with pytest.raises(ConfigError, match=rf"aggregated by '{strategy}'.*ragqa\.aggregation\.strategy") as info:
        calibrate(LABELLED, ["faithfulness"], config=config, limit=4, n_resamples=20, progress=False, fit_cascade=fit)
    assert info.value.key == "ragqa.aggregation.strategy"
    assert _chat_requests(srv) == 0 and not fit.exists()
    result = run_cli("calibrate", LABELLED, "--config", config, "--limit", "4", "--fit-cascade", fit, "--no-progress")
    assert result.returncode == 2, result.stderr
    assert "ragqa.aggregation.strategy" in result.stderr and "Traceback" not in result.stderr
    assert _chat_requests(srv) == 0 and not fit.exists()


def test_the_median_fit_differs_from_the_mean_fit_where_the_strategies_disagree() -> None:
    # tier 1 has an outlier: its mean sits near the threshold, its median far above it
    rows = [_result([0.1, 0.9, 0.95], 0.9, strategy=s) for s in ("mean", "median")]
    mean, median = (CascadeItem.of(r, tier2=["dear"], label=True, threshold=0.5) for r in rows)
    rule = CascadeRule(spread=None, margin=0.2, split=False, interval=False)
    assert (mean.tier1, median.tier1) == (pytest.approx(0.65), 0.9)
    assert escalation(mean.values, mean.tier1, 0.5, "higher", rule) == "margin"  # 0.65 is within 0.2 of 0.5
    assert escalation(median.values, median.tier1, 0.5, "higher", rule) is None  # 0.9 is not


def test_the_fit_in_memory_is_the_fit_the_file_holds(tmp_path: Path) -> None:
    right = [CascadeItem.of(_result([0.9, 0.95], 0.9), tier2=["dear"], label=True) for _ in range(8)]
    near = [CascadeItem.of(_result([0.55, 0.56], 0.0), tier2=["dear"], label=False) for _ in range(2)]
    reached = fit_cascade(right + near, threshold=0.5, target=1.0, data="d.jsonl (label)")
    wrong = [CascadeItem.of(_result([0.1, 0.2], 0.0), tier2=["dear"], label=True)]  # both tiers fail a pass
    unreached = fit_cascade(wrong, threshold=0.5, target=1.0)  # no rule reaches it: escalate everything
    assert reached.reached and not unreached.reached and math.isinf(unreached.rule.margin)
    for fit in (reached, unreached):
        path = write_fit(fit, tmp_path / "fit.json")
        assert fit_body(fit) == json.loads(path.read_text(encoding="utf-8"))
        assert read_fit(path)[0] == CascadeRule.of(fit_body(fit))


@pytest.mark.filterwarnings("ignore::ragqa.thresholds.UndecidedWarning")  # 12 samples: a wide interval
@pytest.mark.slow
def test_calibrate_returns_the_fit_it_wrote(tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(CASCADE_PANEL_YAML, encoding="utf-8")
    path = tmp_path / "cascade-fit.json"
    data = ROOT / "examples" / "datasets" / "begin_wow_labelled.jsonl"
    result = calibrate(
        data, ["faithfulness"], config=config, limit=12, n_resamples=20, progress=False, fit_cascade=path
    )
    assert result.cascade_fit is not None and result.cascade_fit["format"] == "ragqa-cascade-fit/1"
    assert result.cascade_fit == json.loads(path.read_text(encoding="utf-8"))


def test_a_fit_file_and_a_results_header_give_the_same_rule() -> None:
    body = {"spread": 0.2, "margin": 0.05, "split": False, "interval": False}
    header = Cascade.from_header({"tier2": ["dear"], **body, "thresholds": {"faithfulness": 0.7}})
    assert header.rule == CascadeRule.of(body) == CascadeRule(spread=0.2, margin=0.05, split=False, interval=False)
    assert CascadeRule.of({"spread": None, "margin": 0, "split": True}) == CascadeRule(spread=None, margin=0.0)
    with pytest.raises(ValueError, match="margin must be >= 0"):
        CascadeRule.of({"spread": None, "margin": -1, "split": True})
    with pytest.raises(KeyError):
        CascadeRule.of({"spread": None, "split": True})


def _random_items(seed: int, n: int) -> list[CascadeItem]:
    """Labelled items with 1 to 4 tier-1 judges of 1 to 3 repeats, NaN values, unscored items, both directions,
    per-item thresholds or the fit's, and values and aggregates on the grid's boundaries: 0.5 + k * 0.025 lies
    exactly a margin of the grid from 0.5 for some k, and two such values exactly a spread of it apart."""
    rng = random.Random(seed)
    grid = [0.5 + k * 0.025 for k in range(-20, 21)]
    items = []
    for _ in range(n):
        repeats = rng.randint(1, 3)
        values = tuple(
            tuple(
                math.nan if rng.random() < 0.08 else (rng.choice(grid) if rng.random() < 0.5 else rng.random())
                for _ in range(repeats)
            )
            for _ in range(rng.randint(1, 4))
        )
        finite = [x for v in values for x in v if math.isfinite(x)]
        if not finite or rng.random() < 0.05:
            tier1 = math.nan
        else:
            tier1 = rng.choice(grid) if rng.random() < 0.5 else sum(finite) / len(finite)
        items.append(
            CascadeItem(
                values=values,
                tier1=tier1,
                full=rng.random(),
                label=None if rng.random() < 0.05 else rng.random() < 0.6,
                tier2_calls=rng.randint(0, 4),
                direction="lower" if rng.random() < 0.3 else "higher",
                threshold=None if rng.random() < 0.5 else rng.choice([0.25, 0.5, 0.75]),
            )
        )
    return items


@pytest.mark.slow
def test_each_rule_of_the_grid_escalates_what_escalation_escalates() -> None:
    """The fit reads each item once (``_facts``) and decides per rule (``_escalates``): escalation()'s decision.

    On every rule the fit tries (spread, margin, split; the interval check on), items where each check
    decides, values exactly on a margin or spread boundary included (``<=`` against ``<`` is seen).
    """
    items = [i if i.threshold is not None else dataclasses.replace(i, threshold=0.5) for i in _random_items(0, 40)]
    reasons = set()
    for item in items:
        fact = _facts(item)
        for spread, margin, split in itertools.product(SPREADS, MARGINS, (False, True)):
            rule = CascadeRule(spread=spread, margin=margin, split=split, interval=True)
            reason = escalation(item.values, item.tier1, item.threshold, item.direction, rule)
            assert _escalates(fact, spread, margin, split) == (reason is not None), (item, rule)
            reasons.add(reason)
            if reason == "margin" and abs(item.tier1 - 0.5) == margin:
                reasons.add("on the margin")
            if spread is not None and fact.reading.width == spread and not fact.always:
                reasons.add("on the spread")
    assert reasons >= {None, "unscored", "split", "spread", "margin", "interval", "on the margin", "on the spread"}


class _Read(_Facts):
    """What ``_facts`` read of an item, with the item itself (for escalation() in the test's ``_escalates``)."""

    item: CascadeItem


@pytest.mark.slow
def test_the_fit_is_the_one_escalation_per_item_and_rule_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit with escalation() deciding each item under each rule, as before ``_facts``: the same fit, bit for bit."""
    items = _random_items(1, 40)
    fast = fit_cascade(items, threshold=0.5)

    def read(item: CascadeItem) -> _Read:
        fact = _Read(*_facts(item))
        fact.item = item
        return fact

    def by_escalation(fact: _Read, spread: float | None, margin: float, split: bool) -> bool:
        rule = CascadeRule(spread=spread, margin=margin, split=split, interval=True)
        item = fact.item
        return escalation(item.values, item.tier1, item.threshold, item.direction, rule) is not None

    monkeypatch.setattr(cascade_fit, "_facts", read)
    monkeypatch.setattr(cascade_fit, "_escalates", by_escalation)
    assert fit_cascade(items, threshold=0.5) == fast
    # and the fit's figures are its rule's (a rule of the grid), counted here from escalation() alone
    assert fast.reached and fast.rule.margin <= MARGINS[-1]
    used = [dataclasses.replace(i, threshold=i.threshold or 0.5) for i in items if i.label is not None]
    up = [escalation(i.values, i.tier1, i.threshold, i.direction, fast.rule) is not None for i in used]
    cuts = [i.threshold or 0.5 for i in used]
    verdicts = [passes(i.full if u else i.tier1, c, i.direction) for i, u, c in zip(used, up, cuts, strict=True)]
    right = [v == i.label for v, i in zip(verdicts, used, strict=True)]
    assert (fast.n, fast.agreement, fast.escalation_rate) == (len(used), sum(right) / len(used), sum(up) / len(used))
    escalated_calls = sum(i.tier2_calls for i, u in zip(used, up, strict=True) if u)
    assert fast.tier2_share == escalated_calls / sum(i.tier2_calls for i in used)
