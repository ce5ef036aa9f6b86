"""Claim-level voting for noise sensitivity, context recall and context precision's per-context verdicts.

A scripted world: the response says r1..r3, the reference g1, g2; each judge's verdict on a
(text, item) pair is the truth table's, flipped where the judge errs. Where no item is flipped by
more than one of three judges, the majority is the truth, so the voted aggregate must equal the
score of a judge that never errs.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.metrics.base import Metric, MetricContext
from ragqa.metrics.context_precision import ContextPrecision
from ragqa.metrics.context_recall import ContextRecall
from ragqa.metrics.noise_sensitivity import NoiseSensitivity
from ragqa.prompts.base import Prompt
from ragqa.report import Report
from ragqa.run.estimate import estimate_pairs
from ragqa.schema import Sample
from ragqa.testing import FunctionJudge, make_sample

ANSWER = ["r1", "r2", "r3"]
REFERENCE = ["g1", "g2"]
CONTEXTS = ["c1 text", "c2 text", "c3 text"]
JOINED = "\n".join(CONTEXTS)

TRUTH: dict[tuple[str, str], int] = {
    # response statements against the reference: r1 right, r2 and r3 wrong
    ("REF", "r1"): 1,
    # response statements against each context: r2 comes from c1, r3 from c3
    ("c1 text", "r1"): 1,
    ("c1 text", "r2"): 1,
    ("c3 text", "r3"): 1,
    # reference statements against each context: c1 relevant, c2 and c3 not
    ("c1 text", "g1"): 1,
    # reference statements against the joined contexts (context recall): g1 found, g2 not
    (JOINED, "g1"): 1,
    # usefulness of each context (context precision)
    ("useful", "c1 text"): 1,
    ("useful", "c3 text"): 1,
}


def _judge(judge_id: str, flips: frozenset[tuple[str, str]] = frozenset()) -> FunctionJudge:
    """A judge that answers from :data:`TRUTH`, wrong exactly on ``flips``."""

    def verdict(text: str, item: str) -> int:
        return TRUTH.get((text, item), 0) ^ int((text, item) in flips)

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": ANSWER if data.answer == "RESPONSE" else REFERENCE}
        if prompt.name == "nli":
            return {
                "verdicts": [
                    {"statement": s, "reason": "scripted", "verdict": verdict(data.context, s)} for s in data.statements
                ]
            }
        if prompt.name == "attribution":
            return {
                "classifications": [
                    {"statement": s, "reason": "scripted", "attributed": verdict(data.context, s)} for s in REFERENCE
                ]
            }
        if prompt.name == "context_usefulness":
            return {"reason": "scripted", "verdict": verdict("useful", data.context)}
        raise AssertionError(f"unexpected prompt {prompt.name}")

    return FunctionJudge(judge_id, answer)


def _sample(**fields: Any) -> Sample:
    base: dict[str, Any] = {
        "id": "s0",
        "user_input": "Q?",
        "response": "RESPONSE",
        "reference": "REF",
        "retrieved_contexts": CONTEXTS,
    }
    return make_sample(**{**base, **fields})


METRICS: list[Metric] = [
    NoiseSensitivity(),
    NoiseSensitivity(mode="irrelevant"),
    NoiseSensitivity(counting="promptfoo"),
    ContextRecall(),
    ContextPrecision(),
]

FLIPS = [
    frozenset({("REF", "r2"), ("c2 text", "r1"), ("c1 text", "g1"), (JOINED, "g2"), ("useful", "c1 text")}),
    frozenset({("c1 text", "r2"), ("c3 text", "g2"), (JOINED, "g1"), ("useful", "c2 text")}),
    frozenset({("REF", "r1"), ("c2 text", "g1"), ("c3 text", "r3"), ("useful", "c3 text")}),
]
"""Three judges that each err on different items: every item's majority is the truth."""


def _run(judges: list[FunctionJudge], metrics: Sequence[Metric], samples: list[Sample], **options: Any) -> Report:
    options = {"call_plan": "ragas", **options}
    return asyncio.run(PanelEvaluator(judges, list(metrics), options=PanelOptions(**options)).evaluate(samples))


def _plain(metric: Metric, sample: Sample, judge: FunctionJudge) -> float:
    return asyncio.run(metric.score(sample, judge, MetricContext())).value


def test_identical_judges_claim_vote_equals_mean_equals_each_judge() -> None:
    sample = _sample()
    voted = _run([_judge(j) for j in "abc"], METRICS, [sample], strategy="claim-vote")
    mean = _run([_judge(j) for j in "abc"], METRICS, [sample])
    for metric in METRICS:
        alone = _plain(metric, sample, _judge("x"))
        v = next(r for r in voted.results if r.metric == metric.key)
        m = next(r for r in mean.results if r.metric == metric.key)
        assert [o.score.value for o in v.judges if o.score] == [alone] * 3, metric.key
        assert [o.score.value for o in m.judges if o.score] == [alone] * 3, metric.key
        assert v.aggregate.value == alone, metric.key
        assert m.aggregate.value == pytest.approx(alone, rel=1e-15), metric.key  # the mean of 3 equal floats, rounded
        assert v.aggregate.strategy == "claim-vote"


def test_the_vote_is_per_item_so_the_majority_of_erring_judges_scores_like_the_truth() -> None:
    sample = _sample()
    judges = [_judge(j, f) for j, f in zip("abc", FLIPS, strict=True)]
    report = _run(judges, METRICS, [sample], strategy="claim-vote")
    mean = _run([_judge(j, f) for j, f in zip("abc", FLIPS, strict=True)], METRICS, [sample])
    moved = 0
    for metric in METRICS:
        truth = _plain(metric, sample, _judge("truth"))
        result = next(r for r in report.results if r.metric == metric.key)
        assert result.aggregate.value == pytest.approx(truth), metric.key
        # every judge's own score stays next to the voted one, and the mean is that of those scores
        own = [o.score.value for o in result.judges if o.score]
        plain_mean = next(r for r in mean.results if r.metric == metric.key).aggregate.value
        if metric.key != "context_recall":  # the mean path classifies the reference in one attribution call
            assert math.fsum(own) / 3 == pytest.approx(plain_mean), metric.key
        moved += abs(plain_mean - truth) > 1e-9
    assert moved >= 2  # the mean of the erring judges misses the truth where the vote does not


def test_one_extraction_per_sample_and_the_estimate_counts_it_once() -> None:
    samples = [_sample(id="s0"), _sample(id="s1")]
    judges = [_judge(j, f) for j, f in zip("abc", FLIPS, strict=True)]
    metrics: list[Metric] = [NoiseSensitivity(), ContextRecall(), ContextPrecision()]
    _run(judges, metrics, samples, strategy="claim-vote", extractor="b")
    # the response's and the reference's statements, once per sample, by the extractor only
    assert [len(j.calls_to("statements")) for j in judges] == [0, 4, 0]
    assert all(not j.calls_to("attribution") for j in judges)
    # context precision extracts nothing: each judge judges each context itself
    assert [len(j.calls_to("context_usefulness")) for j in judges] == [6, 6, 6]
    made = sum(len(j.calls) for j in judges)
    pairs = [(s, m) for s in samples for m in metrics]
    voted = estimate_pairs(pairs, 3, claim_vote=True)
    assert voted.calls == made
    # per sample: noise 2N+3 = 9 per judge less the 2 shared extractions, recall 1 NLI per judge
    # (its reference statements are noise's), precision N
    assert made == 2 * (3 * (9 - 2) + 2 + 3 * 1 + 3 * 3)
    assert voted.panel_calls == 2 * 2


def test_the_mean_estimate_and_calls_are_unchanged() -> None:
    samples = [_sample()]
    judges = [_judge(j) for j in "abc"]
    metrics: list[Metric] = [NoiseSensitivity(), ContextRecall(), ContextPrecision()]
    _run(judges, metrics, samples)
    assert [len(j.calls_to("statements")) for j in judges] == [2, 2, 2]
    assert [len(j.calls_to("attribution")) for j in judges] == [1, 1, 1]
    made = sum(len(j.calls) for j in judges)
    assert estimate_pairs([(samples[0], m) for m in metrics], 3).calls == made == 3 * (9 + 1 + 3)


def test_labelled_chunks_vote_without_a_reference_extraction() -> None:
    chunks = [{"text": "c1 text", "relevant": True}, {"text": "c2 text", "relevant": False}]
    sample = _sample(retrieved_contexts=None, context_chunks=chunks)
    judges = [_judge(j, f) for j, f in zip("abc", FLIPS, strict=True)]
    metric = NoiseSensitivity(mode="irrelevant")
    report = _run(judges, [metric], [sample], strategy="claim-vote")
    assert report.results[0].aggregate.value == pytest.approx(_plain(metric, sample, _judge("truth")))
    assert [len(j.calls_to("statements")) for j in judges] == [1, 0, 0]
    assert metric.vote_steps(sample) == {"statements:response"}
    assert estimate_pairs([(sample, metric)], 3, claim_vote=True).calls == sum(len(j.calls) for j in judges)


@pytest.mark.slow
def test_dawid_skene_reports_reliability_for_the_new_metrics() -> None:
    samples = [_sample(id=f"s{i}") for i in range(4)]
    judges = [_judge(j, f) for j, f in zip("abc", FLIPS, strict=True)]
    metrics: list[Metric] = [NoiseSensitivity(), ContextRecall(), ContextPrecision()]
    report = _run(judges, metrics, samples, strategy="dawid-skene")
    for summary in report.summaries:
        assert summary.jury is not None, summary.metric
        assert [j.judge_id for j in summary.jury.judges] == ["a", "b", "c"]
        # every verdict of the sample's lists is a row: noise A + A x N + G x U, recall G, precision N
        rows = {"noise_sensitivity(mode=relevant)": 3 + 9 + 6, "context_recall": 2, "context_precision": 3}
        assert (summary.jury.n_samples, summary.jury.n_statements) == (4, 4 * rows[summary.metric])
        # the majority over the pooled verdicts is the truth here, scored by the metric's own formula
        truth = _plain(next(m for m in metrics if m.key == summary.metric), samples[0], _judge("truth"))
        assert summary.jury.majority_mean == pytest.approx(truth), summary.metric


def test_a_judge_that_fails_does_not_vote() -> None:
    def broken(prompt: Prompt[Any, Any], data: Any) -> Any:
        raise RuntimeError("down")

    sample = _sample()
    judges = [_judge("a", FLIPS[0]), _judge("b"), FunctionJudge("c", broken)]
    report = _run(judges, [ContextPrecision()], [sample], strategy="claim-vote", extractor="b")
    result = report.results[0]
    assert result.aggregate.n_failed == 1
    # a and b tie on c1 (a says 0, b says 1): the extractor b settles it
    assert result.aggregate.value == pytest.approx(_plain(ContextPrecision(), sample, _judge("truth")))


def test_the_local_judge_recalls_the_same_when_the_split_is_asked_apart() -> None:
    from ragqa.datasets import load_dataset
    from ragqa.judges.local import LocalJudge

    samples = load_dataset(Path(__file__).resolve().parents[2] / "examples" / "datasets" / "it_helpdesk.jsonl")[:12]
    judge = LocalJudge("local")
    for sample in samples:
        whole = asyncio.run(ContextRecall().score(sample, judge, MetricContext()))
        split = asyncio.run(ContextRecall().score(sample, judge, MetricContext(claim_vote=True)))
        assert split.value == whole.value, sample.id
        assert split.details["statements"] == whole.details["statements"]
