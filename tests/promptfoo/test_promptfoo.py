"""promptfoo-style files: loading and mapping, scoring across a panel, JUnit XML, and `ragqa test` as a user runs it."""

from __future__ import annotations

import io
import math
import os
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import CliResult, interruptible, run_cli

from ragqa.container import create_container
from ragqa.errors import ConfigError, SampleError
from ragqa.evaluation import PanelEvaluator
from ragqa.promptfoo import arun_suite, check_suite, junit_suite, load_suite, render_templates, run_promptfoo_file
from ragqa.prompts.base import Prompt
from ragqa.render.junit import write_junit
from ragqa.schema import ContextChunk
from ragqa.testing import FunctionJudge
from ragqa.testing.server import FakeOpenAIServer, ragqa_responder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "promptfoo"
STRICTNESS = {"judge-a": 0.85, "judge-b": 0.6, "judge-c": 0.88}  # off the local judge's supports 0.8 and 0.9


def write(tmp_path: Path, text: str, name: str = "tests.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- loading: the seed examples as written ------------------------------------------------------


def test_noise_sensitivity_page_examples_map_to_samples() -> None:
    suite = load_suite(EXAMPLES / "noise_sensitivity.yaml")
    assert suite.n_tests == 4 and len(suite.cases) == 4
    assert any("'providers' ignored" in n for n in suite.notes)
    basic, configured, chunked, legacy = suite.cases
    assert basic.metric.key == "noise_sensitivity(mode=relevant, counting=promptfoo)"
    assert basic.threshold == 0.2 and basic.sample.reference == "Paris is the capital of France"
    assert basic.sample.retrieved_contexts == ["Paris is the capital of France. Berlin is the capital of Germany."]

    assert configured.threshold == 0.1
    assert configured.sample.noise_context == "Rome is famous for pasta. Madrid has great weather."
    assert configured.sample.user_input == "What is the capital of France?"
    assert configured.test_name == "test 2: What is the capital of France?"

    # '{{contextChunks}}' keeps the var's list; labelled chunks replace the plain context
    assert chunked.metric.key == "noise_sensitivity(mode=irrelevant, counting=promptfoo)"
    assert chunked.sample.context_chunks is not None
    assert [c.relevant for c in chunked.sample.context_chunks] == [True, False, True, False]
    assert isinstance(chunked.sample.context_chunks[0], ContextChunk)
    assert chunked.sample.retrieved_contexts is None
    assert chunked.sample.response is not None and chunked.sample.response.startswith("Python is a high-level")

    assert legacy.threshold == 0.1 and legacy.sample.noise_context is None


def test_context_faithfulness_page_examples_map_to_samples() -> None:
    suite = load_suite(EXAMPLES / "context_faithfulness.yaml")
    full, configured, transformed = suite.cases
    assert full.metric.key == "faithfulness" and full.threshold == 0.9
    assert full.sample.retrieved_contexts == ["Paris is the capital and largest city of France."]
    assert full.sample.reference is None  # faithfulness does not use the value
    assert configured.sample.retrieved_contexts == ["Paris is the capital of France."]
    # contextTransform 'output.context' on a mapping output; the answer becomes the response
    assert transformed.sample.retrieved_contexts == ["Paris is the capital and largest city of France."]
    assert transformed.sample.response == "Paris is the capital of France."


def test_default_test_vars_and_asserts_merge_first() -> None:
    suite = load_suite(EXAMPLES / "rag_checks.yaml")
    assert [c.type for c in suite.cases] == [
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "answer-relevance",
        "noise-sensitivity",
        "ragqa:hallucination",
    ]
    assert all(len(c.sample.retrieved_contexts or []) == 2 for c in suite.cases)
    response = "You can return an item for a refund within 30 days of purchase."
    assert all(c.sample.response == response for c in suite.cases)
    keys = [c.metric.key for c in suite.cases]
    assert keys[1] == "context_recall" and keys[3] == "response_relevancy" and keys[5] == "hallucination"
    noise = suite.cases[4]
    assert noise.threshold is None and noise.default_threshold == 0.2 and noise.policy == "all"


def test_render_templates_keeps_types_and_fills_strings() -> None:
    vars_ = {"chunks": [{"text": "a", "relevant": True}], "q": "why?", "n": {"k": 3}}
    assert render_templates("{{ chunks }}", vars_, "x") == vars_["chunks"]
    assert render_templates({"a": ["Q: {{q}} ({{n.k}})"]}, vars_, "x") == {"a": ["Q: why? (3)"]}
    with pytest.raises(ConfigError, match=r"template \{\{missing\}\} names no var"):
        render_templates("{{missing}}", vars_, "tests[0].assert[0].config")


def test_file_references_are_read_relative_to_the_file(tmp_path: Path) -> None:
    write(tmp_path, "Paris is the capital of France.", "context.txt")
    write(tmp_path, "- text: Paris is in France.\n  relevant: true\n", "chunks.yaml")
    path = write(
        tmp_path,
        """
tests:
  - vars: {query: "Capital?", context: "file://context.txt", contextChunks: "file://chunks.yaml"}
    output: Paris.
    assert:
      - {type: context-faithfulness}
      - {type: noise-sensitivity, value: "file://context.txt", config: {mode: irrelevant}}
""",
    )
    faith, noise = load_suite(path).cases
    assert faith.sample.context_chunks == [ContextChunk(text="Paris is in France.", relevant=True)]
    assert noise.sample.reference == "Paris is the capital of France."


QC = "{query: q, context: c}"
CF = "{type: context-faithfulness}"


def one_test(vars_: str, assertion: str, output: str = "output: o, ") -> str:
    return f"tests: [{{vars: {vars_}, {output}assert: [{assertion}]}}]"


@pytest.mark.parametrize(
    ("text", "error", "match"),
    [
        ("tests: []", ConfigError, "has no tests"),
        (one_test(QC, "{type: context-faithfulnes}"), ConfigError, "Did you mean"),
        (one_test(QC, "{type: noise-sensitivity, value: r, config: {mode: x}}"), ConfigError, "mode"),
        (one_test("{query: q, contextChunks: [{text: t}]}", CF), ConfigError, "relevant: bool"),
        (one_test(QC, "{type: context-faithfulness, threshold: high}"), ConfigError, "threshold must be a number"),
        (one_test(QC, "{type: context-faithfulness, config: {policy: most}}"), ConfigError, "unknown policy"),
        (one_test(QC, "{type: 'ragqa:faithfulness('}"), ConfigError, "write name or name"),
        (one_test(QC, "{type: 'ragqa:faithfulness', config: {mode: x}}"), ConfigError, "bad options"),
        (
            one_test(
                "{query: q}", "{type: context-faithfulness, contextTransform: 'docs.map(d => d)'}", "output: {a: 1}, "
            ),
            ConfigError,
            "no JavaScript",
        ),
        ("tests: {a: 1}", ConfigError, "must be a list"),
        ("tests: [", ConfigError, "not valid YAML"),
    ],
)
def test_invalid_files_are_rejected_with_the_place(
    tmp_path: Path, text: str, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        load_suite(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "field", "match"),
    [
        (one_test(QC, CF, output=""), "response", "the test's `output`"),
        (one_test("{query: q}", CF), "retrieved_contexts", "vars.context"),
        (one_test("{context: c}", CF), "user_input", "vars.query"),
        (one_test(QC, "{type: noise-sensitivity}"), "reference", "the assertion's `value`"),
    ],
)
def test_missing_data_is_a_sample_error_naming_the_place_before_any_call(
    tmp_path: Path, text: str, field: str, match: str
) -> None:
    suite = load_suite(write(tmp_path, text))
    judge = sentence_judge("j", {})
    with pytest.raises(SampleError, match=match) as err:
        check_suite(PanelEvaluator([judge], []), suite, {})
    assert err.value.field == field
    assert str(err.value).startswith("sample tests[0].assert[0] (test 1")
    assert judge.calls == []


def test_every_invalid_case_is_listed_at_once(tmp_path: Path) -> None:
    text = "tests: [{vars: {query: q}, output: o, assert: [{type: context-faithfulness}, {type: context-recall}]}]"
    with pytest.raises(SampleError, match="2 assertions cannot be scored") as err:
        check_suite(PanelEvaluator([sentence_judge("j", {})], []), load_suite(write(tmp_path, text)), {})
    assert "tests[0].assert[0]" in str(err.value) and "tests[0].assert[1]" in str(err.value)


def test_thresholds_resolve_through_the_one_resolver(tmp_path: Path) -> None:
    text = one_test(
        QC, "{type: context-faithfulness}, {type: noise-sensitivity, value: r}, {type: 'ragqa:hallucination'}"
    )
    suite = load_suite(write(tmp_path, text))
    ev = PanelEvaluator([sentence_judge("j", {})], [])
    assert check_suite(ev, suite, {}) == [0.0, 0.2, 0.2]  # promptfoo's defaults, then the metric's own
    configured = {"faithfulness": 0.7, "noise_sensitivity(mode=relevant)": 0.1, "hallucination": 0.3}
    assert check_suite(ev, suite, configured) == [0.7, 0.1, 0.3]
    with pytest.raises(ConfigError, match="Did you mean faithfulness"):
        check_suite(ev, suite, {"faithfulnes": 0.7})
    bad = load_suite(write(tmp_path, one_test(QC, "{type: context-faithfulness, threshold: 1.5}")))
    with pytest.raises(ConfigError, match=r"tests\[0\].assert\[0\] .*outside the metric's range") as err:
        check_suite(ev, bad, {})
    assert err.value.key == "tests[0].assert[0].threshold"


def test_metric_options_of_the_settings_apply_under_the_assertions_own(tmp_path: Path) -> None:
    text = one_test(QC, "{type: 'ragqa:noise_sensitivity(mode=irrelevant)', value: r}")
    (case,) = load_suite(write(tmp_path, text), metric_options={"noise_sensitivity": {"counting": "promptfoo"}}).cases
    assert case.metric.key == "noise_sensitivity(mode=irrelevant, counting=promptfoo)"
    (plain,) = load_suite(write(tmp_path, text)).cases
    assert plain.metric.key == "noise_sensitivity(mode=irrelevant)"


async def test_samples_are_validated_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ragqa.metrics import Faithfulness

    seen: list[str | None] = []
    original = Faithfulness.validate

    def counting(self: Faithfulness, sample: Any) -> None:
        seen.append(sample.id)
        original(self, sample)

    monkeypatch.setattr(Faithfulness, "validate", counting)
    text = "tests: [{vars: {query: q, context: c}, output: o, assert: [{type: context-faithfulness}]}]"
    await arun_suite(PanelEvaluator([sentence_judge("j", {})], []), load_suite(write(tmp_path, text)))
    assert seen == ["test 1: q"]


# --- scoring in-process with function judges -----------------------------------------------------


def sentence_answers(support: dict[str, int]) -> Any:
    """Split answers at '. ' and support the statements as listed in ``support`` (default 1)."""

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": [s.strip() for s in data.answer.replace("\n", " ").split(". ") if s.strip()]}
        return {
            "verdicts": [
                {"statement": s, "reason": "r", "verdict": support.get(s.rstrip("."), 1)} for s in data.statements
            ]
        }

    return answer


def sentence_judge(judge_id: str, support: dict[str, int]) -> FunctionJudge:
    """A judge answering with :func:`sentence_answers`."""
    return FunctionJudge(judge_id, sentence_answers(support))


async def test_arun_suite_scores_with_thresholds_direction_and_settings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
tests:
  - description: partly supported
    vars: {query: "Capital?", context: "Paris is the capital of France."}
    output: "Paris is the capital of France. It has 2.2 million residents."
    assert:
      - {type: context-faithfulness, threshold: 0.8}
      - {type: context-faithfulness}
      - {type: ragqa:hallucination}
""",
    )
    suite = load_suite(path)
    ev = PanelEvaluator(
        [sentence_judge("strict", {"It has 2.2 million residents": 0}), sentence_judge("lenient", {})], []
    )
    strict_fail, default_pass, halluc = await arun_suite(ev, suite, thresholds={"hallucination": 0.6})
    assert strict_fail.verdict.result.by_judge() == {"strict": 0.5, "lenient": 1.0}
    # 0.5 and 1.0 straddle 0.8 and their interval [0, 1] contains it: undecided, which fails by default
    assert not strict_fail.verdict.passed and strict_fail.verdict.threshold == 0.8 and strict_fail.verdict.undecided
    assert default_pass.verdict.passed and default_pass.verdict.threshold == 0.0  # promptfoo's default
    assert halluc.verdict.threshold == 0.6 and halluc.verdict.direction == "lower"
    assert math.isclose(halluc.verdict.result.aggregate.value, 0.25) and halluc.verdict.passed

    junit = tmp_path / "junit.xml"
    write_junit(junit, [junit_suite("tests", [strict_fail, default_pass, halluc])])
    root = ET.parse(junit).getroot()
    assert root.get("tests") == "3" and root.get("failures") == "1"
    cases = list(root.iter("testcase"))
    assert [c.get("name") for c in cases] == [
        "[1] partly supported :: context-faithfulness",
        "[1] partly supported :: context-faithfulness",
        "[1] partly supported :: ragqa:hallucination",
    ]
    failure = cases[0].find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "policy 'aggregate' needs the mean aggregate >= 0.8; it is 0.750; "
        "undecided: 0.750 [0.000, 1.000] against 0.8, add samples or repeats"
    )
    assert "strict   0.500     FAIL" in (failure.text or "")
    props = {p.get("name"): p.get("value") for p in cases[0].iter("property")}
    assert props["ragqa:faithfulness:judge:strict"] == "0.5000"
    assert props["ragqa:faithfulness:judge:lenient"] == "1.0000"
    assert props["ragqa:faithfulness:threshold"] == "0.8"
    assert props["ragqa:faithfulness:policy"] == "aggregate"
    assert props["ragqa:faithfulness:passed"] == "false"
    assert cases[1].find("failure") is None and cases[1].find("system-out") is not None


async def test_missing_embedder_is_a_data_error_before_any_call(tmp_path: Path) -> None:
    path = write(tmp_path, "tests: [{vars: {query: q}, output: o, assert: [{type: answer-relevance}]}]")
    judge = sentence_judge("j", {})
    with pytest.raises(SampleError, match="embedding model"):
        await arun_suite(PanelEvaluator([judge], []), load_suite(path))
    assert judge.calls == []


def test_run_promptfoo_file_exit_2_on_missing_output(tmp_path: Path) -> None:
    container = create_container(EXAMPLES / "application.yaml", environ={"RAGQA_FAKE_URL": "http://127.0.0.1:9"})
    out = io.StringIO()
    path = write(tmp_path, "tests: [{vars: {query: q, context: c}, assert: [{type: context-faithfulness}]}]")
    assert run_promptfoo_file(path, container=container, out=out) == 2
    assert "the test's `output` (or vars.response / vars.output)" in out.getvalue()
    assert "ragqa scores given outputs" in out.getvalue()


SKIPPING = """
tests:
  - vars: {query: q, context: c}
    output: 'Paris is in France.'
    assert:
      - {type: is-json}
      - {type: context-faithfulness}
      - {type: javascript, value: 'output.length < 9'}
      - {type: g-eval, value: 'The answer is helpful'}
      - {type: contains, value: Paris}
      - {type: not-is-json}
"""


def test_types_ragqa_does_not_run_are_skipped_with_a_note_and_the_rest_runs(tmp_path: Path) -> None:
    suite = load_suite(write(tmp_path, SKIPPING))
    assert [(c.type, c.assertion_index) for c in suite.cases] == [("context-faithfulness", 2), ("contains", 5)]
    assert suite.notes == [
        "tests[0].assert[0]: assertion type 'is-json' skipped: a text or format check of promptfoo's that ragqa "
        "does not implement",
        "tests[0].assert[2]: assertion type 'javascript' skipped: it runs code (JavaScript, Python, Ruby or a "
        "webhook), which ragqa never executes",
        "tests[0].assert[3]: assertion type 'g-eval' skipped: a model-graded check ragqa does not implement; "
        "llm-rubric or ragqa:<metric> grade with the panel",
        "tests[0].assert[5]: assertion type 'not-is-json' skipped: a text or format check of promptfoo's that "
        "ragqa does not implement",
    ]


@pytest.mark.parametrize(
    ("text", "code", "said"),
    [  # one assertion left runs and passes: 0; nothing left to run: 3, nothing was decided
        (
            "tests: [{output: 'Paris', assert: [{type: is-json}, {type: contains, value: Paris}]}]",
            0,
            ["note: tests[0].assert[0]: assertion type 'is-json' skipped", "1 assertion(s)"],
        ),
        (
            "tests: [{output: '{}', assert: [{type: is-json}, {type: latency, threshold: 10}]}]",
            3,
            ["note: tests[0].assert[1]: assertion type 'latency' skipped", "incomplete: no assertion ran"],
        ),
    ],
)
def test_skipped_assertions_are_noted_and_a_file_with_nothing_to_run_exits_3(
    tmp_path: Path, text: str, code: int, said: list[str]
) -> None:
    container = create_container(EXAMPLES / "application.yaml", environ={"RAGQA_FAKE_URL": "http://127.0.0.1:9"})
    out = io.StringIO()
    assert run_promptfoo_file(write(tmp_path, text), container=container, out=out) == code
    for line in said:
        assert line in out.getvalue()


def test_run_promptfoo_file_exit_2_on_bad_file(tmp_path: Path) -> None:
    container = create_container(EXAMPLES / "application.yaml", environ={"RAGQA_FAKE_URL": "http://127.0.0.1:9"})
    out = io.StringIO()
    code = run_promptfoo_file(
        write(tmp_path, "tests: [{vars: {query: q}, assert: [{type: nope}]}]"), container=container, out=out
    )
    assert code == 2
    assert "error: tests[0].assert[0]: assertion type 'nope' is not supported" in out.getvalue()


# --- `ragqa test` against the fake server, in process (tests/_cli.py); Ctrl-C in a real process -----------

def responder(judge: str) -> Any:
    """The ragqa responder a user's server runs, with this judge's support threshold."""
    return ragqa_responder(support_threshold=STRICTNESS[judge])


@pytest.fixture(scope="module")
def fake_url() -> Iterator[str]:
    with FakeOpenAIServer() as server:
        for judge in STRICTNESS:
            server.script(judge, responder(judge))
        yield server.base_url


def ragqa_test(fake_url: str, *args: str | Path) -> CliResult:
    """``ragqa test --config examples/promptfoo/application.yaml ARGS...`` in process (``tests/_cli.py``)."""
    return run_cli("test", "--config", EXAMPLES / "application.yaml", *args, env={"RAGQA_FAKE_URL": fake_url})


def test_ragqa_test_runs_the_seed_examples_as_written(fake_url: str, tmp_path: Path) -> None:
    files = {"noise_sensitivity": 4, "context_faithfulness": 3, "rag_checks": 6}
    junit = tmp_path / "junit.xml"
    proc = ragqa_test(fake_url, *(EXAMPLES / f"{name}.yaml" for name in files), "--junit-xml", str(junit))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name, n in files.items():
        assert f"{n} passed, 0 failed of {n} assertion(s) in" in proc.stdout
        assert f"from {name}.yaml" in proc.stdout
    assert "total: 13 passed, 0 failed of 13 assertion(s)" in proc.stdout
    assert proc.stdout.count("PASS  [") == 13
    assert "note: 'providers' ignored" in proc.stdout
    assert "judge-a 0.000, judge-b 0.000, judge-c 0.000" in proc.stdout  # every judge's score on each line
    root = ET.parse(junit).getroot()
    assert root.get("tests") == "13" and root.get("failures") == "0"
    assert [(s.get("name"), s.get("tests")) for s in root.iter("testsuite")] == [(k, str(v)) for k, v in files.items()]


def test_ragqa_test_failures_exit_1_with_per_judge_scores_and_junit(fake_url: str, tmp_path: Path) -> None:
    junit = tmp_path / "failing.xml"
    proc = ragqa_test(fake_url, EXAMPLES / "failing.yaml", "--junit-xml", str(junit))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "0 passed, 2 failed of 2 assertion(s)" in out
    # the noise-sensitivity page's worked example: 1 incorrect claim of 2 = 0.5 > 0.2
    assert "FAIL  [1] distracted by JavaScript :: noise-sensitivity" in out
    assert "aggregate 0.500 <= 0.2" in out
    assert "1 of 2 response statements are incorrect: JavaScript is also popular." in out
    # judges disagree on the reworded capital statement; none supports the population
    assert "judge-a 0.000, judge-b 0.500, judge-c 0.000" in out
    assert "unsupported: It has 2.2 million residents." in out
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert len(cases) == 2 and all(c.find("failure") is not None for c in cases)


def test_junit_xml_directory_is_exit_2_before_any_judge_call(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        for judge in STRICTNESS:
            server.script(judge, responder(judge))
        proc = ragqa_test(server.base_url, EXAMPLES / "failing.yaml", "--junit-xml", str(tmp_path))
        assert server.requests == []
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        f"error: --junit-xml {tmp_path} is a directory; give a file path such as {tmp_path / 'junit.xml'}"
    ]
    assert proc.stdout == ""


def test_every_judge_failing_is_exit_3_incomplete_with_junit_errors(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    with FakeOpenAIServer() as server:
        for judge in STRICTNESS:
            server.script(judge, lambda request: "Sure! The answer looks fine to me.")
        proc = ragqa_test(server.base_url, EXAMPLES / "context_faithfulness.yaml", "--junit-xml", str(junit))
        assert server.requests  # the judges were asked, and answered garbage
    assert proc.returncode == 3, proc.stdout + proc.stderr
    out = proc.stdout
    assert "0 passed, 0 failed, 3 incomplete (judges failed) of 3 assertion(s)" in out
    assert out.count("INCOMPLETE  [") == 3
    assert "judge-a excluded, judge-b excluded, judge-c excluded" in out
    assert "incomplete: judges failed" in out
    root = ET.parse(junit).getroot()
    assert root.get("errors") == "3" and root.get("failures") == "0"
    assert all(c.find("error") is not None for c in root.iter("testcase"))


async def test_an_incomplete_assertion_outranks_a_failure(tmp_path: Path) -> None:
    from ragqa.promptfoo import exit_code

    sentences = sentence_answers({"Berlin is in France": 0})

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if "unanswerable" in str(data):
            return "Sure! The answer looks fine to me."  # not JSON: this judge fails on this sample
        return sentences(prompt, data)

    path = write(
        tmp_path,
        """
defaultTest: {vars: {query: q, context: c}, assert: [{type: context-faithfulness, threshold: 0.5}]}
tests:
  - {description: passes, output: "Paris is in France."}
  - {description: undecided, output: "unanswerable."}
  - {description: fails, output: "Berlin is in France."}
""",
    )
    passed, undecided, failed = await arun_suite(PanelEvaluator([FunctionJudge("j", answer)], []), load_suite(path))
    assert passed.verdict.passed and failed.verdict.decided and not failed.verdict.passed
    assert not undecided.verdict.decided
    assert exit_code([passed]) == 0
    assert exit_code([passed, undecided]) == 3
    assert exit_code([undecided, failed, passed]) == 3  # one precedence for every entry point: 3 > 1 > 4
    assert exit_code([failed, passed]) == 1


def test_ctrl_c_while_judges_hang_is_exit_130(tmp_path: Path) -> None:
    import signal

    with FakeOpenAIServer() as server:
        server.hang("*", times=100, seconds=math.inf)  # no answer comes before the signal, however slow
        env = dict(os.environ)
        env["RAGQA_FAKE_URL"] = server.base_url
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        env.pop("RAGQA_PROFILES_ACTIVE", None)
        cmd = [sys.executable, "-m", "ragqa", "test", "--config", str(EXAMPLES / "application.yaml")]
        proc = subprocess.Popen(
            [*cmd, str(EXAMPLES / "failing.yaml")],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=interruptible,
        )
        try:
            while not server.requests:  # wait until a judge call is in flight (the server hangs it)
                assert proc.poll() is None, proc.communicate()
                threading.Event().wait(0.05)
            proc.send_signal(signal.SIGINT)
            stdout, stderr = proc.communicate(timeout=600)  # a hang guard, not a speed check
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, stdout + stderr
    assert "interrupted" in stderr and "Traceback" not in stderr


def test_a_settings_file_among_the_test_files_is_skipped_with_a_note(tmp_path):
    from ragqa.promptfoo.loading import split_settings_files

    settings = tmp_path / "application.yaml"
    settings.write_text("spring:\n  ai: {}\nragqa:\n  language: en\n", encoding="utf-8")
    tests = tmp_path / "checks.yaml"
    tests.write_text("tests:\n  - vars: {query: q}\n", encoding="utf-8")
    assert split_settings_files([settings, tests]) == ([tests], [settings])
    assert split_settings_files([settings]) == ([settings], [])  # alone, loading reports it
