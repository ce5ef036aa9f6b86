"""What ``ragqa test`` shows and writes: one line per assertion, summaries, and JUnit suites."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from ragqa.assertions import format_score
from ragqa.render.terminal import printable

if TYPE_CHECKING:
    from ragqa.assertions import MetricVerdict
    from ragqa.promptfoo.loading import PromptfooSuite
    from ragqa.promptfoo.running import CaseResult
    from ragqa.render.junit import JUnitSuite

__all__ = ["counts", "junit_suite", "print_results"]


def counts(results: Sequence[CaseResult]) -> tuple[int, int, int]:
    """``(passed, failed, undecided)``: undecided cases failed only because judges failed."""
    passed = sum(1 for r in results if r.verdict.passed)
    undecided = sum(1 for r in results if not r.verdict.decided)
    return passed, len(results) - passed - undecided, undecided


def tally(results: Sequence[CaseResult]) -> str:
    """``P passed, F failed[, U undecided (judges failed)] of N assertion(s)``."""
    passed, failed, undecided = counts(results)
    extra = f", {undecided} undecided (judges failed)" if undecided else ""
    return f"{passed} passed, {failed} failed{extra} of {len(results)} assertion(s)"


def _judges_line(verdict: MetricVerdict) -> str:
    return ", ".join(
        f"{o.judge_id} {'excluded' if o.score is None else format_score(o.score.value, against=verdict.threshold)}"
        for o in verdict.result.judges
    )


def _label(verdict: MetricVerdict) -> str:
    if verdict.passed:
        return "PASS"
    return "FAIL" if verdict.decided else "UNDECIDED"


def print_results(results: Sequence[CaseResult], suite: PromptfooSuite, out: TextIO, seconds: float) -> None:
    """Print one line per assertion with every judge's score, the full message of each that did not pass, a summary.

    Each line is ``PASS|FAIL|UNDECIDED  [test] name :: type  [metric key] aggregate A >= T  |  judge s, ...``
    (scores with 3 decimals, ``unscored`` for NaN, ``excluded`` for a judge that failed).
    """
    for r in results:
        v = r.verdict
        cmp = ">=" if v.direction == "higher" else "<="
        print(
            f"{_label(v)}  {r.case.name}  [{v.result.metric}] "
            f"aggregate {format_score(v.result.aggregate.value, against=v.threshold)} {cmp} {v.threshold:g}  "
            f"|  {_judges_line(v)}",
            file=out,
        )
        if not v.passed:
            for line in v.message().splitlines():
                print(f"      {printable(line)}", file=out)  # judges' reasons and error bodies are data
    print(f"\n{tally(results)} in {suite.n_tests} test(s) from {suite.path.name} ({seconds:.2f} s)", file=out)


def junit_suite(name: str, results: Sequence[CaseResult]) -> JUnitSuite:
    """One JUnit ``testsuite`` for a file, one ``testcase`` per assertion, for :func:`ragqa.render.junit.write_junit`.

    A testcase is named ``[test] name :: type`` with classname ``promptfoo.<name>`` and carries
    :func:`ragqa.render.junit.result_properties` (threshold, policy and verdict included). A failed
    assertion has a ``failure`` (message: the verdict's one-line reason; text: the per-judge
    message); an undecided one (judges failed) an ``error`` instead; a passing one has the message
    as ``system-out``.

    Args:
        name: the suite's name (the file's stem).
        results: the file's scored cases, in order.
    """
    from ragqa.render.junit import JUnitCase, JUnitSuite, result_properties

    cases = []
    for r in results:
        v = r.verdict
        detail = (v.why, v.message())
        cases.append(
            JUnitCase(
                name=r.case.name,
                classname=f"promptfoo.{name}",
                time_s=r.seconds,
                properties=result_properties(v.result, threshold=v.threshold, policy=v.policy.label, passed=v.passed),
                failure=detail if not v.passed and v.decided else None,
                error=detail if not v.decided else None,
                output=v.message() if v.passed else None,
            )
        )
    return JUnitSuite(name, cases)
