"""promptfoo's deterministic and text-similarity assertions: mapping, scoring without judge calls, and a mixed file."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli

from ragqa.container import create_container
from ragqa.errors import ConfigError
from ragqa.evaluation import PanelEvaluator
from ragqa.promptfoo import ASSERTION_TYPES, arun_suite, load_suite, run_promptfoo_file
from ragqa.testing import ScriptedJudge
from ragqa.testing.server import FakeOpenAIServer, ragqa_responder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "promptfoo"

EXPECTED = {
    "equals": ("string_match(mode=equals)", 1.0),
    "contains": ("string_match(mode=contains)", 1.0),
    "icontains": ("string_match(mode=icontains)", 1.0),
    "starts-with": ("string_match(mode=starts_with)", 1.0),
    "regex": ("string_match(mode=regex)", 1.0),
    "not-equals": ("string_match(mode=equals, negate=true)", 1.0),
    "not-contains": ("string_match(mode=contains, negate=true)", 1.0),
    "not-icontains": ("string_match(mode=icontains, negate=true)", 1.0),
    "not-starts-with": ("string_match(mode=starts_with, negate=true)", 1.0),
    "not-regex": ("string_match(mode=regex, negate=true)", 1.0),
    "levenshtein": ("levenshtein_distance", 5.0),
    "rouge-n": ("rouge_score(rouge_type=rouge1, mode=recall)", 0.75),
    "bleu": ("bleu_score(variant=promptfoo)", 0.5),
}


def write(tmp_path: Path, output: str, asserts: str) -> Path:
    path = tmp_path / "checks.yaml"
    path.write_text(f"tests:\n  - description: t\n    output: {output!r}\n    assert:\n{asserts}", encoding="utf-8")
    return path


def test_each_type_maps_to_its_metric_and_promptfoo_default_threshold(tmp_path: Path) -> None:
    asserts = "".join(f"      - type: {kind}\n        value: 'x'\n" for kind in EXPECTED)
    suite = load_suite(write(tmp_path, "x", asserts))
    assert {c.type: (c.metric.key, c.default_threshold) for c in suite.cases} == EXPECTED
    assert all(c.sample.reference == "x" and c.sample.response == "x" for c in suite.cases)
    assert set(EXPECTED) <= set(ASSERTION_TYPES)


@pytest.mark.parametrize("kind", ["not-levenshtein", "not-rouge-n", "not-bleu"])
def test_negating_a_thresholded_type_is_refused_clearly(tmp_path: Path, kind: str) -> None:
    with pytest.raises(ConfigError, match=f"'{kind}' is not supported: .* only the string checks are negated"):
        load_suite(write(tmp_path, "x", f"      - type: {kind}\n        value: 'x'\n"))


async def test_scores_pass_and_fail_without_a_judge_call(tmp_path: Path) -> None:
    asserts = """\
      - {type: equals, value: 'Paris'}
      - {type: contains, value: 'Paris'}
      - {type: not-contains, value: 'Paris'}
      - {type: icontains, value: 'PARIS'}
      - {type: starts-with, value: 'The'}
      - {type: regex, value: '^Paris'}
      - {type: not-regex, value: '^Paris'}
      - {type: levenshtein, value: 'The capital of France is Paris'}
      - {type: levenshtein, value: 'The capital of France is Paris', threshold: 0}
      - {type: rouge-n, value: 'the capital of France is Paris'}
      - {type: bleu, value: 'The capital of France is Paris.'}
"""
    suite = load_suite(write(tmp_path, "The capital of France is Paris.", asserts))
    judges = [ScriptedJudge("j1", {}), ScriptedJudge("j2", {})]
    results = await arun_suite(PanelEvaluator(judges), suite)
    assert all(judge.calls == [] for judge in judges)
    passed = [(r.case.type, r.verdict.passed) for r in results]
    assert passed == [
        ("equals", False),
        ("contains", True),
        ("not-contains", False),
        ("icontains", True),
        ("starts-with", True),
        ("regex", False),
        ("not-regex", True),
        ("levenshtein", True),  # 1 edit (the full stop) <= 5, promptfoo's default
        ("levenshtein", False),  # 1 > 0: a threshold of 0 is 0 (promptfoo would read it as 5)
        ("rouge-n", True),
        ("bleu", True),
    ]
    assert results[7].verdict.result.aggregate.value == 1.0
    assert results[9].verdict.result.aggregate.value == pytest.approx(1.0)  # every reference word is in the output


def test_a_bad_regex_is_exit_2_before_scoring(tmp_path: Path) -> None:
    path = write(tmp_path, "abc", "      - {type: regex, value: '(unclosed'}\n")
    container = create_container(EXAMPLES / "application.yaml", environ={"RAGQA_FAKE_URL": "http://127.0.0.1:9"})
    out = io.StringIO()
    assert run_promptfoo_file(path, container=container, out=out) == 2
    assert "not a valid regular expression" in out.getvalue()


# --- the example file, as a user runs it, against the fake server --------------------------------


@pytest.fixture(scope="module")
def fake_url() -> Iterator[str]:
    with FakeOpenAIServer() as server:
        for judge in ("judge-a", "judge-b", "judge-c"):
            server.script(judge, ragqa_responder(support_threshold=0.85))
        yield server.base_url


def test_the_mixed_example_file_runs_every_assertion(fake_url: str) -> None:
    proc = run_cli(
        "test", "--config", EXAMPLES / "application.yaml", EXAMPLES / "string_checks.yaml",
        env={"RAGQA_FAKE_URL": fake_url},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "10 passed, 0 failed of 10 assertion(s) in 1 test(s) from string_checks.yaml" in proc.stdout
    assert "context-faithfulness  [faithfulness] aggregate 1.000 >= 0.8" in proc.stdout
    assert "levenshtein  [levenshtein_distance] aggregate 7.000 <= 10" in proc.stdout
    assert "not-contains  [string_match(mode=contains, negate=true)] aggregate 1.000 >= 1" in proc.stdout
