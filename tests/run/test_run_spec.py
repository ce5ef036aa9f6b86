import pytest

from ragqa.errors import ConfigError
from ragqa.metrics import build_metric
from ragqa.run import MetricSpec, check_output_path, parse_metric_specs, resolve_thresholds, spec_of


def test_parse_and_format_round_trip_the_metric_key():
    spec = MetricSpec.parse("noise_sensitivity(mode=irrelevant, counting=promptfoo)")
    assert spec.name == "noise_sensitivity"
    assert spec.kwargs == {"mode": "irrelevant", "counting": "promptfoo"}
    assert str(spec) == "noise_sensitivity(mode=irrelevant, counting=promptfoo)"
    metric = spec.build()
    assert spec_of(metric) == spec
    assert str(spec_of(metric)) == metric.key


def test_values_are_yaml_scalars_and_kebab_options_become_snake():
    spec = MetricSpec.parse("response_relevancy(strictness=3, some-flag=true)")
    assert spec.kwargs == {"strictness": 3, "some_flag": True}
    assert str(spec) == "response_relevancy(strictness=3, some_flag=true)"


def test_equality_ignores_option_order_and_hashes_alike():
    a = MetricSpec.parse("noise_sensitivity(mode=irrelevant, counting=ragas)")
    b = MetricSpec.parse("noise_sensitivity(counting=ragas, mode=irrelevant)")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1


def test_list_splits_on_top_level_commas_only():
    specs = parse_metric_specs("faithfulness, noise_sensitivity(mode=irrelevant, counting=promptfoo),hallucination")
    assert [str(s) for s in specs] == [
        "faithfulness",
        "noise_sensitivity(mode=irrelevant, counting=promptfoo)",
        "hallucination",
    ]


@pytest.mark.parametrize("text", ["", " , ", "faith fulness", "noise_sensitivity(mode)"])
def test_bad_lists_are_config_errors_naming_the_source(text):
    with pytest.raises(ConfigError) as err:
        parse_metric_specs(text, source="--metrics")
    assert err.value.key == "--metrics"


def test_build_overlays_configured_options_under_the_spec():
    spec = MetricSpec.parse("noise_sensitivity(mode=irrelevant)")
    metric = spec.build({"noise_sensitivity": {"mode": "relevant", "counting": "promptfoo"}})
    assert metric.key == "noise_sensitivity(mode=irrelevant, counting=promptfoo)"


def _run():
    return [
        build_metric("faithfulness"),
        build_metric("noise_sensitivity", {"mode": "relevant"}),
        build_metric("noise_sensitivity", {"mode": "irrelevant"}),
    ]


def test_thresholds_key_by_result_key_and_the_specific_one_wins():
    got = resolve_thresholds(
        {"faithfulness": 0.8, "noise_sensitivity": 0.3, "noise_sensitivity(mode=irrelevant)": 0.1}, _run()
    )
    assert got == {
        "faithfulness": 0.8,
        "noise_sensitivity(mode=relevant)": 0.3,
        "noise_sensitivity(mode=irrelevant)": 0.1,
    }


def test_a_threshold_typo_is_an_error_with_a_hint():
    with pytest.raises(ConfigError, match="Did you mean faithfulness") as err:
        resolve_thresholds({"faithfullness": 0.99}, _run())
    assert err.value.key == "--threshold"


def test_a_threshold_for_a_metric_not_in_the_run():
    with pytest.raises(ConfigError, match="not a metric of this run"):
        resolve_thresholds({"hallucination": 0.2}, _run())
    assert resolve_thresholds({"hallucination": 0.2}, _run(), source="ragqa.thresholds", require_in_run=False) == {}
    with pytest.raises(ConfigError, match="unknown metric") as err:
        resolve_thresholds({"halucination": 0.2}, _run(), source="ragqa.thresholds", require_in_run=False)
    assert err.value.key == "ragqa.thresholds.halucination"


@pytest.mark.parametrize("value", [1.5, -0.1, float("nan"), float("inf")])
def test_thresholds_outside_the_range_are_errors(value):
    with pytest.raises(ConfigError):
        resolve_thresholds({"faithfulness": value}, _run())


def test_output_paths_are_checked_without_writing(tmp_path):
    assert check_output_path(tmp_path / "r.jsonl", option="--out") == tmp_path / "r.jsonl"
    assert not (tmp_path / "r.jsonl").exists()
    with pytest.raises(ConfigError, match="is a directory") as err:
        check_output_path(tmp_path, option="--out")
    assert err.value.key == "--out"
    with pytest.raises(ConfigError, match="does not exist"):
        check_output_path(tmp_path / "missing" / "r.jsonl", option="--junit-xml")


def test_junit_writer_counts_failures_and_errors(tmp_path):
    import xml.etree.ElementTree as ET

    from ragqa.render.junit import JUnitCase, JUnitSuite, write_junit

    cases = [
        JUnitCase("a", "ragqa.x", 0.5, [("ragqa:faithfulness:aggregate", "0.9000")], output="ok"),
        JUnitCase("b", "ragqa.x", 0.25, failure=("below 0.8", "judge j1: 0.5")),
        JUnitCase("c", "ragqa.x", error=("every judge failed", "timeout")),
    ]
    path = tmp_path / "junit.xml"
    write_junit(path, [JUnitSuite("suite", cases)])
    root = ET.parse(path).getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "1", "1")
    assert root.find("testsuite/testcase/properties/property").get("value") == "0.9000"
    assert not (tmp_path / "junit.xml.partial").exists()


def test_records_round_trip_with_nan_failures_and_usage():
    import json
    import math

    from ragqa.render.records import read_result_record, result_record
    from ragqa.schema import Aggregate, JudgeFailure, JudgeOutcome, MetricScore, PanelResult, Usage

    result = PanelResult(
        sample_id="s1",
        metric="noise_sensitivity(mode=relevant)",
        direction="lower",
        judges=[
            JudgeOutcome(
                judge_id="a",
                score=MetricScore(value=0.25, reason="r", details={"v": [1, 0]}),
                usage=Usage(calls=2, prompt_tokens=10, cost=0.5),
                latency_s=0.1,
            ),
            JudgeOutcome(judge_id="b", score=MetricScore(value=math.nan, reason="no statements")),
            JudgeOutcome(
                judge_id="c",
                failure=JudgeFailure(
                    judge_id="c",
                    metric="noise_sensitivity(mode=relevant)",
                    sample_id="s1",
                    step="nli",
                    error_type="JudgeTimeout",
                    message="timed out",
                ),
            ),
        ],
        aggregate=Aggregate(
            value=0.25, strategy="mean", spread=0.0, n_ok=1, n_nan=1, n_failed=1, quorum=1, quorum_met=True
        ),
    )
    record = json.loads(json.dumps(result_record(result), allow_nan=False))
    again = read_result_record(record)
    assert result_record(again) == record
    assert math.isnan(again.judges[1].score.value) and again.judges[2].failure.step == "nli"


def test_renderers_are_picked_by_suffix_and_unknown_ones_are_refused(tmp_path):
    import json
    import xml.etree.ElementTree as ET

    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics import build_metric
    from ragqa.render import RenderOptions, renderer_for
    from ragqa.run import run_sync
    from ragqa.testing import ScriptedJudge, make_sample

    judge = ScriptedJudge(
        "j",
        {
            "statements": [{"statements": ["a", "b"]}],
            "nli": [
                {
                    "verdicts": [
                        {"statement": "a", "reason": "r", "verdict": 1},
                        {"statement": "b", "reason": "r", "verdict": 0},
                    ]
                }
            ],
        },
    )
    sample = make_sample(id="s1", user_input="q", response="a. b.", retrieved_contexts=["ctx"])
    report = run_sync(PanelEvaluator([judge], [build_metric("faithfulness")]).evaluate([sample]))
    for name in ("out.json", "out.jsonl", "out.xml"):
        renderer_for(tmp_path / name).write(report, tmp_path / name, RenderOptions(thresholds={"faithfulness": 0.8}))
    assert json.loads((tmp_path / "out.json").read_text())["results"][0]["aggregate"]["value"] == 0.5
    assert json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])["metric"] == "faithfulness"
    assert ET.parse(tmp_path / "out.xml").getroot().get("failures") == "1"
    with pytest.raises(ConfigError, match=r"no output format writes '\.txt'"):
        renderer_for(tmp_path / "out.txt")


def test_an_unknown_metric_option_names_the_valid_ones():
    with pytest.raises(ConfigError, match=r"Did you mean mode for 'mod'.*Options: mode, counting") as err:
        MetricSpec.parse("noise_sensitivity(mod=irrelevant)").build()
    assert err.value.key == "ragqa.metric-options.noise_sensitivity"
