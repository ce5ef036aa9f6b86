"""Scoring promptfoo-style cases across the panel, and the ``ragqa test`` run with its exit code.

Everything the user can get wrong is checked before the first judge call: the ``--junit-xml``
path, every file, the settings, every case's sample against its metric and the panel, and every
threshold. Scoring runs on ragqa's loop thread (:mod:`ragqa.run.loop`), and the exit code is an
:class:`~ragqa.run.exit_codes.ExitCode`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ragqa.errors import ConfigError, RagqaError, SampleError
from ragqa.promptfoo.loading import PromptfooCase, PromptfooSuite, load_suite, split_settings_files
from ragqa.promptfoo.mapping import FIELD_HINTS
from ragqa.promptfoo.results import CaseResult
from ragqa.run.exit_codes import ExitCode
from ragqa.run.plan import panel_overrides, with_overrides
from ragqa.thresholds import parse_on_undecided

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.thresholds import OnUndecided

__all__ = ["CaseResult", "arun_suite", "check_suite", "exit_code", "run_promptfoo_file", "run_promptfoo_files"]


def _sample_problem(case: PromptfooCase, problem: SampleError) -> SampleError:
    """A panel's validation problem, told in the file's terms (where the missing field comes from)."""
    value = getattr(case.sample, problem.field, None) if problem.field is not None else None
    if problem.field is None:  # the panel's problem (no embedding model): keep its message, not its prefix
        message = str(problem).removeprefix(f"metric {problem.metric!r}: ")
    elif (isinstance(value, str) and value.strip()) or (isinstance(value, list) and value):
        # present but unusable (a bad regex, a context over ragqa.limits): keep what is wrong
        prefix = str(SampleError("", sample_id=problem.sample_id, field=problem.field, metric=problem.metric))
        message = f"{case.type}: {str(problem).removeprefix(prefix)}"
    else:
        hint = FIELD_HINTS.get(problem.field, problem.field)
        given = " (ragqa scores given outputs and calls no provider)" if problem.field == "response" else ""
        message = f"{case.type} needs {hint}{given}"
    return SampleError(
        message, sample_id=f"{case.where} ({case.test_name})", field=problem.field, metric=case.metric.key
    )


def check_suite(evaluator: PanelEvaluator, suite: PromptfooSuite, thresholds: Mapping[str, float]) -> list[float]:
    """Check every case against the panel (sample fields, embedding models) and resolve its threshold.

    Each case is planned and validated as an assertion is, through the run layer
    (:func:`ragqa.run.check.check_plan`, :meth:`ragqa.run.check.SampleRunner.problems`: the one
    validator of every run, with the size guards of ``ragqa.limits``); no judge is called. The
    threshold is the assertion's, else the configured one matched by spec, else promptfoo's
    default for the type, else the metric's (:func:`ragqa.run.spec.resolve_threshold`).

    Args:
        evaluator: the panel.
        suite: the loaded file.
        thresholds: ``ragqa.thresholds`` of the settings, by metric spec.

    Returns:
        The threshold of each case, in order.

    Raises:
        SampleError: a case cannot be scored by this panel: one problem as it is, several listed
            in one message (each names the assertion's place, the field and where it comes from).
        ConfigError: a case has no threshold, or a bad one (the key names the place).
    """
    from ragqa.run.check import SampleRunner, check_plan

    limits: list[float] = []
    problems: list[SampleError] = []
    for case in suite.cases:
        try:
            plan = check_plan(evaluator, case.metric, threshold=case.threshold, configured=thresholds,
                              default=case.default_threshold)  # fmt: skip
        except ConfigError as exc:
            key = f"{case.where}.threshold" if exc.key == "threshold" else exc.key
            raise ConfigError(f"{case.where} ({case.test_name}): {exc}", key=key) from exc
        limits.append(plan.thresholds[case.metric.key])
        problems.extend(_sample_problem(case, p) for p in SampleRunner(plan, evaluator).problems(case.sample))
    if len(problems) == 1:
        raise problems[0]
    if problems:
        listed = "\n".join(f"  - {p}" for p in problems)
        raise SampleError(f"{len(problems)} assertions cannot be scored; nothing was scored:\n{listed}")
    return limits


async def _score_cases(
    evaluator: PanelEvaluator,
    suite: PromptfooSuite,
    limits: Sequence[float],
    max_concurrent: int,
    on_undecided: OnUndecided = "fail",
) -> list[CaseResult]:
    """Score checked cases concurrently (at most ``max_concurrent`` at once); results in file order.

    Each case's threshold is a gate (:func:`ragqa.thresholds.gate`) on the sample's aggregate with
    its interval across judges x repeats (:func:`ragqa.uncertainty.sample_interval`): undecided
    when the interval contains the threshold, then ``on_undecided`` decides.
    """
    from ragqa.run.check import SampleRunner, check_plan

    slots = asyncio.Semaphore(max_concurrent)

    async def one(case: PromptfooCase, limit: float) -> CaseResult:
        async with slots:
            started = time.perf_counter()
            plan = check_plan(evaluator, case.metric, threshold=limit, on_undecided=on_undecided)
            verdict = await SampleRunner(plan, evaluator).verdict(case.sample, policy=case.policy, validated=True)
            return CaseResult(case=case, verdict=verdict, seconds=time.perf_counter() - started)

    return list(await asyncio.gather(*(one(c, lim) for c, lim in zip(suite.cases, limits, strict=True))))


async def arun_suite(
    evaluator: PanelEvaluator,
    suite: PromptfooSuite,
    *,
    thresholds: Mapping[str, float] | None = None,
    max_concurrent: int = 8,
    on_undecided: OnUndecided = "fail",
) -> list[CaseResult]:
    """Check every case with :func:`check_suite`, then score them across the panel.

    Args:
        evaluator: the panel.
        suite: the loaded file.
        thresholds: ``ragqa.thresholds`` by metric spec.
        max_concurrent: cases scored at once (judge calls are further bounded per provider).
        on_undecided: what an undecided case counts as: ``fail`` (default), ``pass`` or ``warn``.

    Returns:
        One result per case, in file order.

    Raises:
        SampleError, ConfigError: as :func:`check_suite`, before the first judge call.
    """
    limits = check_suite(evaluator, suite, thresholds or {})
    return await _score_cases(evaluator, suite, limits, max_concurrent, on_undecided)


def exit_code(results: Sequence[CaseResult]) -> ExitCode:
    """The exit code of scored cases: 3 one was incomplete, else 1 one failed, else 4 one was undecided, else 0.

    The one decision of every run (:func:`ragqa.run.check.exit_code_of`,
    :func:`ragqa.run.exit_codes.decide_exit_code`): ``INCOMPLETE`` (3) when an assertion could not
    be decided because judges failed; else ``THRESHOLD`` (1) when one failed outright; else
    ``UNDECIDED`` (4) when one's interval contains its threshold and ``on_undecided`` is ``fail``;
    else ``OK`` (0). An incomplete assertion outranks a failed one, as a pair without an aggregate
    outranks a missed threshold in ``ragqa evaluate``: the run must be made again before it means anything.
    """
    from ragqa.run.check import exit_code_of

    return exit_code_of(r.verdict for r in results) if results else ExitCode.OK


def run_promptfoo_file(
    path: str | Path,
    *,
    container: Container,
    junit_xml: str | Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    close: bool = True,
    repeats: int | None = None,
    reducer: str | None = None,
    on_undecided: str | None = None,
) -> int:
    """Run one promptfoo-style file with the container's panel (see :func:`run_promptfoo_files`)."""
    return run_promptfoo_files(
        [path],
        container=container,
        junit_xml=junit_xml,
        out=out,
        err=err,
        close=close,
        repeats=repeats,
        reducer=reducer,
        on_undecided=on_undecided,
    )


def run_promptfoo_files(
    paths: Sequence[str | Path],
    *,
    container: Container,
    junit_xml: str | Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    close: bool = True,
    repeats: int | None = None,
    reducer: str | None = None,
    on_undecided: str | None = None,
) -> int:
    """Run promptfoo-style files with the container's panel; print results; maybe write JUnit XML.

    The ``junit_xml`` path, every file, the settings and every case (fields, embedding models,
    thresholds) are checked before the first judge call, so invalid input costs nothing.

    Args:
        paths: the test files; the cases of each file run concurrently, the files one after another.
        container: the ragqa container (its judges, embedders and settings are used).
        junit_xml: where to write JUnit XML, one testsuite per file (``None``: not written); its
            folder must exist.
        out: where results go (default ``sys.stdout``).
        err: where ``error: ...`` lines go (default ``out`` when given, else ``sys.stderr``).
        close: close the container's clients at the end (on the loop that used them).
        repeats: times every judge scores every case (default ``ragqa.repeats``); each judge's
            score is reduced over its repeats (:mod:`ragqa.repeats`) before the assertion.
        reducer: ``mean``, ``median`` or ``mode`` (default ``ragqa.repeat-reducer``).
        on_undecided: what an assertion whose interval contains its threshold counts as:
            ``fail``, ``pass`` or ``warn`` (default: ``ragqa.on-undecided``, ``fail``).

    Returns:
        The :class:`~ragqa.run.exit_codes.ExitCode`: 0 every assertion passed; 1 an assertion
        failed; 2 bad path, file, settings or data (one ``error:`` line, no judge called); 3 an
        assertion could not be decided because judges failed (and none failed outright), or no
        assertion ran (every one skipped, :data:`~ragqa.promptfoo.mapping.SKIPPED_TYPES`); 4 an
        assertion is undecided (its interval contains its threshold) and nothing worse happened;
        130 interrupted.
    """
    from ragqa.container import close_container
    from ragqa.promptfoo.output import junit_suite, print_results, tally
    from ragqa.run.loop import run_sync
    from ragqa.run.outputs import check_output_path

    stream = out if out is not None else sys.stdout
    errors = err if err is not None else (out if out is not None else sys.stderr)

    def closed() -> None:
        if close:
            with contextlib.suppress(RagqaError):  # settings that failed to load built no client
                run_sync(close_container(container))

    try:
        if junit_xml is not None:
            check_output_path(junit_xml, option="--junit-xml")
        settings = container.settings()
        tests, skipped = split_settings_files(paths)
        for path in skipped:
            print(f"note: skipped {path}: a ragqa settings file, not a test file (pass it with --config)", file=errors)
        suites = [load_suite(p, metric_options=settings.ragqa.metric_options) for p in tests]
        thresholds = dict(settings.ragqa.thresholds)
        undecided = parse_on_undecided(on_undecided) if on_undecided is not None else settings.ragqa.on_undecided
        panel = panel_overrides(repeats=repeats, reducer=reducer)
        evaluator = container.evaluator(options=with_overrides(container.panel_options(), panel))
        limits = [check_suite(evaluator, suite, thresholds) for suite in suites]
    except RagqaError as exc:
        print(f"error: {exc}", file=errors)
        closed()
        return ExitCode.USAGE

    async def main() -> list[tuple[list[CaseResult], float]]:
        runs = []
        try:
            for suite, suite_limits in zip(suites, limits, strict=True):
                started = time.perf_counter()
                results = await _score_cases(evaluator, suite, suite_limits, 8, undecided)
                runs.append((results, time.perf_counter() - started))
        finally:
            if close:
                await close_container(container)
        return runs

    try:
        runs = run_sync(main())
    except KeyboardInterrupt:
        print("interrupted: no result was written", file=errors)
        return ExitCode.INTERRUPTED
    judges = ", ".join(j.id for j in evaluator.judges) or "(none)"
    for suite, (results, seconds) in zip(suites, runs, strict=True):
        for note in suite.notes:
            print(f"note: {note}", file=stream)
        print(f"ragqa test {suite.path.name}: {len(suite.cases)} assertion(s), panel: {judges}", file=stream)
        print_results(results, suite, stream, seconds)
    every = [r for results, _ in runs for r in results]
    if len(suites) > 1:
        print(f"total: {tally(every)}", file=stream)
    if junit_xml is not None:
        from ragqa.render.junit import write_junit

        write_junit(
            junit_xml, [junit_suite(s.path.stem, results) for s, (results, _) in zip(suites, runs, strict=True)]
        )
        print(f"JUnit XML: {junit_xml}", file=stream)
    if not every:
        print("incomplete: no assertion ran (each was skipped or none was given), so nothing was decided (exit 3)",
              file=stream)  # fmt: skip
        return ExitCode.INCOMPLETE
    code = exit_code(every)
    if code == ExitCode.INCOMPLETE:
        print("incomplete: judges failed, so some assertions could not be decided (exit 3)", file=stream)
    elif code == ExitCode.UNDECIDED:
        print(
            "undecided: some assertions' intervals contain their thresholds; add judges or repeats, "
            "or pass --on-undecided pass|warn (exit 4)",
            file=stream,
        )
    elif any(r.verdict.undecided for r in every) and undecided == "warn":
        print("warning: some assertions are undecided and were counted as passed (--on-undecided warn)", file=errors)
    return code
