"""The order bias probe (``--probe order``): position consistency per judge, and no score moved by it.

A scripted judge that favours the first context (only the first line of the joined contexts
supports a statement; only context 1 is useful) must show low consistency and be flagged; an
order-invariant judge must show 1.0 and not be flagged. The run's own scores with the probe equal
those without it, the probe's calls are counted in the estimate and the usage, its prompts have
cache keys of their own, and a warm re-run gives the same figures from the cache with no call.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _records import untimed
from dependency_injector import providers

import ragqa
from ragqa.cache import CachingJudge, JudgeCache
from ragqa.container import Container, create_container
from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.jury.probe import (
    OrderProbeOptions,
    parse_probes,
    probe_calls,
    probe_selects,
    probed_metrics,
    reversed_contexts,
)
from ragqa.metrics.base import Metric
from ragqa.metrics.context_precision import ContextPrecision
from ragqa.metrics.faithfulness import Faithfulness
from ragqa.metrics.hallucination import Hallucination
from ragqa.prompts.base import Prompt
from ragqa.render.console import report_to_text
from ragqa.render.probe import probe_texts
from ragqa.report import Report
from ragqa.run.plan import make_plan
from ragqa.run.runner import Runner
from ragqa.schema import ContextChunk, OrderProbeResult, Sample, Usage
from ragqa.testing import CountingJudge, FunctionJudge, make_sample
from ragqa.usage import record_usage

CONTEXTS = ["alpha is the first letter", "gamma is unrelated", "beta is the second letter"]
RESPONSE = "alpha is first. beta is second"


def _answers(*, first_only: bool) -> Callable[[Prompt[Any, Any], Any], Any]:
    """Answers that support a statement when its first word is in a context (``first_only``: the first one).

    Every answer records one call of 10 prompt and 2 completion tokens, as an HTTP judge would.
    """

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        record_usage(Usage(calls=1, prompt_tokens=10, completion_tokens=2))
        if prompt.name == "statements":
            return {"statements": [s.strip() for s in data.answer.split(".") if s.strip()]}
        if prompt.name == "nli":
            lines = data.context.split("\n")
            seen = lines[:1] if first_only else lines
            verdicts = [int(any(s.split()[0] in line for line in seen)) for s in data.statements]
            return {
                "verdicts": [
                    {"statement": s, "reason": "-", "verdict": v}
                    for s, v in zip(data.statements, verdicts, strict=True)
                ]
            }
        if prompt.name == "context_usefulness_batch":
            return {
                "verdicts": [
                    {
                        "context": c.number,
                        "reason": "-",
                        "verdict": int(c.number == 1) if first_only else int("letter" in c.text),
                    }
                    for c in data.contexts
                ]
            }
        if prompt.name == "context_usefulness":
            return {"reason": "-", "verdict": int("letter" in data.context)}
        raise AssertionError(f"unexpected prompt {prompt.name}")

    return answer


def _judge(judge_id: str, *, first_only: bool) -> FunctionJudge:
    """A judge answering with :func:`_answers`."""
    return FunctionJudge(judge_id, _answers(first_only=first_only))


def _samples(n: int = 20) -> list[Sample]:
    """``n`` samples with texts of their own (so no two share a cache key), all shaped alike."""
    return [
        make_sample(
            id=f"s{i}",
            user_input=f"Which letters, {i}?",
            response=RESPONSE,
            reference="alpha, beta",
            retrieved_contexts=[f"{c} ({i})" for c in CONTEXTS],
        )
        for i in range(n)
    ]


def _panel() -> list[FunctionJudge]:
    return [_judge("biased", first_only=True), _judge("fair", first_only=False)]


def _evaluate(options: PanelOptions, samples: list[Sample] | None = None, judges: Any = None) -> Report:
    metrics: list[Metric] = [Faithfulness(), ContextPrecision()]
    evaluator = PanelEvaluator(judges if judges is not None else _panel(), metrics, options=options)
    return asyncio.run(evaluator.evaluate(samples if samples is not None else _samples()))


def _scores(report: Report) -> list[Any]:
    """Every result without timings: scores, reasons, details, usage, repeats, aggregates."""
    return [untimed(result.model_dump(mode="json")) for result in report.results]


def _by_judge(probe: OrderProbeResult) -> dict[str, Any]:
    return {j.judge_id: j for j in probe.judges}


# -- selection and reversal ---------------------------------------------------------------------------


def test_selection_is_seeded_by_sample_id_and_near_the_share() -> None:
    ids = [f"id-{i}" for i in range(2000)]
    picked = [i for i in ids if probe_selects(i, 0.2, seed=7)]
    assert picked == [i for i in reversed(ids) if probe_selects(i, 0.2, seed=7)][::-1]  # order plays no part
    assert 0.17 < len(picked) / len(ids) < 0.23
    assert picked != [i for i in ids if probe_selects(i, 0.2, seed=8)]  # another seed, other samples
    assert all(probe_selects(i, 1.0) for i in ids)


def test_reversed_contexts_reverse_retrieved_contexts_or_chunks_and_skip_what_cannot_change() -> None:
    sample = make_sample(user_input="q", response="r", retrieved_contexts=["a", "b", "c"])
    flipped = reversed_contexts(sample)
    assert flipped is not None and flipped.retrieved_contexts == ["c", "b", "a"]
    assert sample.retrieved_contexts == ["a", "b", "c"]  # the original is untouched
    chunks = Sample(
        user_input="q",
        response="r",
        context_chunks=[ContextChunk(text="a", relevant=True), ContextChunk(text="b", relevant=False)],
    )
    turned = reversed_contexts(chunks)
    assert turned is not None and turned.contexts() == ["b", "a"]
    assert reversed_contexts(make_sample(user_input="q", response="r", retrieved_contexts=["only"])) is None
    assert reversed_contexts(make_sample(user_input="q", response="r", retrieved_contexts=["x", "y", "x"])) is None


def test_probed_metrics_and_their_calls_per_judge() -> None:
    metrics: list[Metric] = [Faithfulness(), Hallucination(), ContextPrecision(), ContextPrecision(mode="response")]
    assert [m.key for m in probed_metrics(metrics, "batched")] == [
        "faithfulness",
        "context_precision",
        "context_precision(mode=response)",
    ]
    assert [m.key for m in probed_metrics(metrics, "ragas")] == ["faithfulness"]  # per-context prompts: no order
    sample = _samples(1)[0]
    everyone = OrderProbeOptions(share=1.0)
    assert probe_calls(sample, metrics, "batched", everyone) == 3
    assert probe_calls(sample, metrics, "ragas", everyone) == 1
    one = make_sample(id="s0", user_input="q", response="r", retrieved_contexts=["only"])
    assert probe_calls(one, metrics, "batched", everyone) == 0


def test_bad_probe_names_and_ranges_are_refused() -> None:
    assert parse_probes("order") == ("order",) and parse_probes(["order", "order"]) == ("order",)
    assert parse_probes(None) == ()
    with pytest.raises(ValueError, match="unknown probe 'position'"):
        parse_probes("position")
    with pytest.raises(ValueError, match="share"):
        OrderProbeOptions(share=0.0)
    with pytest.raises(ValueError, match="change rate"):
        OrderProbeOptions(max_change_rate=1.0)


# -- the figures ------------------------------------------------------------------------------------


def test_a_judge_that_favours_the_first_context_is_inconsistent_and_flagged() -> None:
    report = _evaluate(PanelOptions(probes=("order",), order_probe=OrderProbeOptions(share=1.0)))
    probe = report.order_probe
    assert probe is not None
    assert probe.n_selected == probe.n_samples == 20
    assert probe.metrics == ["faithfulness", "context_precision"]
    biased, fair = _by_judge(probe)["biased"], _by_judge(probe)["fair"]
    # faithfulness: statement 1 ("alpha") was supported by the first context, statement 2 ("beta") was not;
    # reversed, "beta" comes first: both verdicts change on every sample
    faith = {m.metric: m for m in biased.metrics}["faithfulness"]
    assert (faith.n_samples, faith.n_items, faith.n_changed, faith.consistency) == (20, 40, 40, 0.0)
    # context precision: only context 1 useful; reversed, the third context is "1": contexts 1 and 3 change
    precision = {m.metric: m for m in biased.metrics}["context_precision"]
    assert (precision.n_items, precision.n_changed, precision.n_samples_changed) == (60, 40, 20)
    assert biased.n_items == 100 and biased.n_changed == 80
    assert biased.consistency == pytest.approx(0.2)
    assert biased.flagged
    assert fair.n_items == 100 and fair.n_changed == 0 and fair.consistency == 1.0 and not fair.flagged
    assert all(m.consistency == 1.0 for m in fair.metrics)
    assert probe.flagged == ["biased"]
    text = report_to_text(report)
    assert "Order bias probe: 20 of 20 selected sample(s)" in text
    assert "biased: consistency 0.20 (80 of 100 verdicts changed)" in text
    assert "fair: consistency 1.00 (0 of 100 verdicts changed)" in text
    assert "! biased: its verdicts depend on the order of the contexts (more than 10 % changed)" in text
    assert "! fair" not in text


def test_the_flag_rate_is_a_setting() -> None:
    lenient = OrderProbeOptions(share=1.0, max_change_rate=0.9)
    probe = _evaluate(PanelOptions(probes=("order",), order_probe=lenient)).order_probe
    assert probe is not None and probe.flagged == []  # 80 % changed is below 90 %


@pytest.mark.slow
def test_the_probe_changes_no_score_on_either_plan_with_voting_and_repeats() -> None:
    for options in (
        PanelOptions(),
        PanelOptions(call_plan="ragas"),
        PanelOptions(strategy="claim-vote"),
        PanelOptions(repeats=2),
    ):
        plain = _evaluate(options)
        probed = _evaluate(PanelOptions(**{**options.__dict__, "probes": ("order",)}))
        assert plain.order_probe is None and probed.order_probe is not None
        assert _scores(probed) == _scores(plain), options
        assert [s.model_dump(exclude={"usage", "judges"}) for s in probed.summaries] == [
            s.model_dump(exclude={"usage", "judges"}) for s in plain.summaries
        ]


def test_probe_calls_are_counted_apart_from_the_metrics_and_in_the_run_usage() -> None:
    plain = _evaluate(PanelOptions())
    options = OrderProbeOptions(share=0.5, seed=3)
    probed = _evaluate(PanelOptions(probes=("order",), order_probe=options))
    probe = probed.order_probe
    assert probe is not None
    selected = [s for s in _samples() if probe_selects(s.label, 0.5, seed=3)]
    assert probe.n_selected == probe.n_samples == len(selected) > 0
    # per probed sample and judge: the NLI call with the contexts reversed and the batched usefulness
    # call; the statements come from the shared judge's memory
    assert probe.usage.calls == len(selected) * 2 * 2
    assert all(j.usage.calls == len(selected) * 2 for j in probe.judges)
    assert [s.usage for s in probed.summaries] == [s.usage for s in plain.summaries]  # no metric pays for it
    assert probed.usage.calls == plain.usage.calls + probe.usage.calls
    assert probed.usage.prompt_tokens == plain.usage.prompt_tokens + 10 * probe.usage.calls


def test_with_the_ragas_plan_context_precision_is_not_probed_and_says_why() -> None:
    probe = _evaluate(
        PanelOptions(call_plan="ragas", probes=("order",), order_probe=OrderProbeOptions(share=1.0))
    ).order_probe
    assert probe is not None and probe.metrics == ["faithfulness"]
    assert any("ragas call plan" in note for note in probe.notes)
    assert _by_judge(probe)["biased"].consistency == 0.0
    assert probe.usage.calls == 20 * 2  # one NLI call per sample and judge


def test_claim_vote_probes_the_extractors_statements() -> None:
    probe = _evaluate(
        PanelOptions(strategy="claim-vote", probes=("order",), order_probe=OrderProbeOptions(share=1.0))
    ).order_probe
    assert probe is not None
    assert _by_judge(probe)["fair"].consistency == 1.0 and _by_judge(probe)["biased"].flagged
    assert probe.usage.calls == 20 * 2 * 2  # no statement extraction asked again


def test_a_failed_judge_is_not_probed_and_a_failing_probe_call_is_counted_not_raised() -> None:
    def broken(prompt: Prompt[Any, Any], data: Any) -> Any:
        raise ragqa.errors.JudgeOutputError("down", step=prompt.name)

    calls = {"nli": 0}
    fair = _answers(first_only=False)

    def flaky(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "nli":
            calls["nli"] += 1
            if calls["nli"] > 1:  # the run's call answers, the probe's reversed one fails
                raise ragqa.errors.JudgeOutputError("flaky", step="nli")
        return fair(prompt, data)

    report = _evaluate(
        PanelOptions(probes=("order",), order_probe=OrderProbeOptions(share=1.0)),
        samples=_samples(1),
        judges=[FunctionJudge("broken", broken), FunctionJudge("flaky", flaky)],
    )
    probe = report.order_probe
    assert probe is not None
    assert _by_judge(probe)["broken"].n_items == 0 and _by_judge(probe)["broken"].metrics == []
    flaky_rows = {m.metric: m for m in _by_judge(probe)["flaky"].metrics}
    assert flaky_rows["faithfulness"].n_failed == 1 and flaky_rows["faithfulness"].n_items == 0
    assert flaky_rows["context_precision"].consistency == 1.0
    assert report.results[0].judges[1].score is not None  # the run's own score stands


# -- cache: own keys, warm re-run -------------------------------------------------------------------


def _cached_run(directory: Path, probe: bool) -> tuple[Report, list[CountingJudge], dict[str, int]]:
    counted = [CountingJudge(j) for j in _panel()]
    cache = JudgeCache(directory)
    try:
        options = PanelOptions(probes=("order",) if probe else (), order_probe=OrderProbeOptions(share=0.5))
        evaluator = PanelEvaluator(
            [CachingJudge(j, cache) for j in counted], [Faithfulness(), ContextPrecision()], options=options
        )
        report = asyncio.run(evaluator.evaluate(_samples()))
        return report, counted, {"hits": cache.hits, "misses": cache.misses}
    finally:
        cache.close()


def test_probe_prompts_have_their_own_cache_keys_and_a_warm_rerun_makes_no_call(tmp_path: Path) -> None:
    plain, cold, _ = _cached_run(tmp_path, probe=False)
    main_calls = sum(j.calls for j in cold)
    assert main_calls == 20 * 2 * 3  # statements, NLI, usefulness per sample and judge
    probed, after, stats = _cached_run(tmp_path, probe=True)
    probe = probed.order_probe
    assert probe is not None and probe.n_samples > 0
    # the run's own calls are all cache hits; only the probe's prompts are new (other text, other key)
    assert sum(j.calls for j in after) == probe.n_samples * 2 * 2 == stats["misses"]
    assert [r.aggregate for r in probed.results] == [r.aggregate for r in plain.results]
    warm, again, warm_stats = _cached_run(tmp_path, probe=True)
    assert sum(j.calls for j in again) == 0 and warm_stats["misses"] == 0
    assert warm.order_probe is not None
    assert warm.order_probe.model_dump(exclude={"judges": {"__all__": {"usage"}}, "usage": True}) == probe.model_dump(
        exclude={"judges": {"__all__": {"usage"}}, "usage": True}
    )
    assert [r.aggregate for r in warm.results] == [r.aggregate for r in plain.results]


# -- through the run layer: settings, estimate, results header, Python API ---------------------------


def _container(probe_settings: dict[str, Any] | None = None) -> Container:
    environ = {}
    if probe_settings:
        environ = {f"RAGQA__RAGQA__PROBE__{k.upper()}": v for k, v in probe_settings.items()}
    container = create_container(None, [], environ=environ)
    container.judges.override(providers.Object(_panel()))
    container.embedders.override(providers.Object([]))
    return container


def test_the_api_reports_the_probe_counts_it_in_the_estimate_and_writes_it_in_the_results_header(
    tmp_path: Path,
) -> None:
    out = tmp_path / "results.jsonl"
    records = [s.model_dump(exclude_none=True) for s in _samples()]
    container = _container({"order__share": "0.5", "order__seed": "3"})
    plain = ragqa.evaluate(records, ["faithfulness", "context_precision"], container=_container(), progress=False)
    report = ragqa.evaluate(
        records, ["faithfulness", "context_precision"], container=container, probe="order", out=out, progress=False
    )
    probe = report.order_probe
    assert probe is not None and probe.share == 0.5 and probe.seed == 3 and probe.flagged == ["biased"]
    assert [r.aggregate for r in report.results] == [r.aggregate for r in plain.results]
    header = json.loads(out.read_text().splitlines()[0])
    assert header["probe"]["judges"][0]["judge_id"] == "biased" and header["probe"]["judges"][0]["flagged"]
    assert header["probe"]["n_samples"] == probe.n_samples
    plain_header = tmp_path / "plain.jsonl"
    ragqa.evaluate(records, ["faithfulness"], container=_container(), out=plain_header, progress=False)
    assert "probe" not in json.loads(plain_header.read_text().splitlines()[0])  # unchanged without the probe

    plan = make_plan(container.settings(), metrics=["faithfulness", "context_precision"], panel={"probes": ("order",)})
    runner = Runner(plan, container)
    prepared = runner.prepare(_samples())
    estimate = runner.estimate(prepared, runner.build())
    assert estimate.probe_calls == probe.usage.calls == probe.n_samples * 2 * 2
    assert estimate.calls == plain.usage.calls + probe.usage.calls == report.usage.calls
    assert "order-probe call(s)" in str(estimate)


def test_the_settings_can_turn_the_probe_on_for_every_run() -> None:
    records = [s.model_dump(exclude_none=True) for s in _samples(4)]
    report = ragqa.evaluate(
        records, ["faithfulness"], container=_container({"enabled": "[order]", "order__share": "1"}), progress=False
    )
    assert report.order_probe is not None and report.order_probe.n_samples == 4


def test_an_unknown_probe_is_a_config_error_naming_the_option() -> None:
    with pytest.raises(ConfigError, match="--probe: unknown probe 'position'; the probes are: order") as caught:
        ragqa.evaluate(
            [s.model_dump(exclude_none=True) for s in _samples(1)],
            "faithfulness",
            container=_container(),
            probe="position",
        )
    assert caught.value.key == "--probe"


def test_probe_texts_are_empty_without_a_probe_and_show_nan_as_no_comparison() -> None:
    assert probe_texts(None) == []
    empty = OrderProbeResult(share=0.2, seed=0, max_change_rate=0.1)
    assert probe_texts(empty)[0][1] == "title"
    report = _evaluate(PanelOptions(probes=("order",), order_probe=OrderProbeOptions(share=1.0)), samples=_samples(1))
    assert report.order_probe is not None
    russian = probe_texts(report.order_probe, language="ru")
    assert "согласованность" in russian[1][0]
    assert not math.isnan(report.order_probe.judges[0].consistency)


@pytest.mark.slow
def test_a_bug_in_a_probe_call_is_counted_and_a_hung_one_ends_at_the_run_deadline() -> None:
    fair = _answers(first_only=False)
    seen: dict[str, int] = {}

    async def odd(prompt: Prompt[Any, Any], data: Any) -> Any:
        seen[prompt.name] = seen.get(prompt.name, 0) + 1
        if seen[prompt.name] > 1 and prompt.name == "nli":
            raise RuntimeError("a bug")  # not a judge error: still no crash
        if seen[prompt.name] > 1 and prompt.name == "context_usefulness_batch":
            await asyncio.Event().wait()  # hangs until the deadline cancels it
        return fair(prompt, data)

    report = _evaluate(
        PanelOptions(probes=("order",), order_probe=OrderProbeOptions(share=1.0), deadline_s=0.5),
        samples=_samples(1),
        judges=[FunctionJudge("odd", odd)],
    )
    probe = report.order_probe
    assert probe is not None
    rows = {m.metric: m for m in probe.judges[0].metrics}
    assert rows["faithfulness"].n_failed == 1 and rows["context_precision"].n_failed == 1
    assert probe.judges[0].n_items == 0 and math.isnan(probe.judges[0].consistency)
    assert all(o.ok for r in report.results for o in r.judges)  # the run's scores were made before the probe
