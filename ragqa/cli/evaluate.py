"""``ragqa evaluate``: options become a run plan; the run layer validates, estimates, streams and resumes it."""

from __future__ import annotations

import asyncio
import shlex
import signal
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ragqa.errors import ConfigError
from ragqa.languages import check_language
from ragqa.render import suffix_help
from ragqa.run.exit_codes import ExitCode
from ragqa.run.progress import RunProgress, choose_mode

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.run.estimate import RunEstimate
    from ragqa.run.outcome import RunResult
    from ragqa.run.runner import Runner
    from ragqa.schema import Sample
from ragqa.cli._common import (
    _EXIT_CODES_HELP,
    _clean_errors,
    _ConfigOption,
    _configure_logging,
    _container,
    _escape,
    _fail,
    _is_ci,
    _ProfileOption,
    _stderr,
    _stdout,
    app,
    parse_thresholds,
)


def _resume_command() -> str:
    """The command line that continues this run: the same arguments plus ``--resume``."""
    args = list(sys.argv[1:])
    if "--resume" not in args:
        args.append("--resume")
    return shlex.join(["ragqa", *args])


async def _run(runner: Runner, samples: Iterable[Sample], container: Container) -> RunResult:
    """Run on ragqa's loop; on the way out cancel what still runs, then close the container's clients.

    The loop serves only this command, so every other task on it belongs to this run: calls
    shared between metrics keep running when their awaiters are cancelled (Ctrl-C), and must be
    cancelled before their HTTP clients close, or they fail noisily after the run.
    """
    from ragqa.container import close_container

    try:
        return await runner.arun(samples)
    finally:
        current = asyncio.current_task()
        leftover = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
        for task in leftover:
            task.cancel()
        await asyncio.gather(*leftover, return_exceptions=True)
        await close_container(container)


@app.command(epilog=_EXIT_CODES_HELP)
def evaluate(
    dataset: Annotated[Path, typer.Argument(help="Samples: .jsonl, .json, .csv or .parquet (RAGAS field names).")],
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            "-m",
            help="Comma-separated metrics, e.g. faithfulness,noise_sensitivity(mode=irrelevant). "
            "Default: ragqa.metrics of the settings.",
        ),
    ] = None,
    profile: _ProfileOption = None,
    config: _ConfigOption = None,
    out: Annotated[  # text, not Path: a final "/" (a directory of Parquet parts) must survive
        list[str] | None,
        typer.Option(
            "--out",
            "-o",
            help=f"Write results here; the suffix picks the format: {suffix_help()}, or one an installed "
            "package adds (entry-point group ragqa.renderers), or DIR/ (ending in /) for a directory of Parquet "
            "parts. Repeatable. Results stream to <file>.partial as they are made (resumable).",
        ),
    ] = None,
    junit_xml: Annotated[
        Path | None, typer.Option("--junit-xml", help="Write JUnit XML here (a testcase per sample and metric).")
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the run recorded in the --out file's .partial (or the finished results file): score only "
            "missing pairs.",
        ),
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Start over although the --out file's .partial holds an earlier run's results (they are deleted); "
            "without it such a run stops with exit code 2.",
        ),
    ] = False,
    retry_failed: Annotated[
        bool,
        typer.Option(
            "--retry-failed",
            help="With --resume: ask again every judge whose kept outcome is a failure; scored outcomes are kept.",
        ),
    ] = False,
    column_map: Annotated[
        str | None,
        typer.Option("--column-map", help="Rename dataset columns: column=field,... (e.g. q=user_input)."),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="Dataset format: auto (by extension), jsonl, json, csv or parquet.")
    ] = "auto",
    language: Annotated[
        str | None,
        typer.Option(
            "--language",
            help="Prompt and report language: en, ru or an installed language pack's code (default: settings).",
        ),
    ] = None,
    aggregation: Annotated[
        str | None,
        typer.Option(
            "--aggregation", help="Aggregate of the panel: mean, median, min, max, majority, claim-vote or dawid-skene."
        ),
    ] = None,
    quorum: Annotated[
        int | None, typer.Option("--quorum", min=1, help="Judges with a score needed for an aggregate.")
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(
            "--deadline",
            help="Wall-clock budget of the run, e.g. 10m or 90s (default: ragqa.run.deadline). Calls still "
            "running then end as JudgeTimeout failures and the run reports what it has.",
        ),
    ] = None,
    call_plan: Annotated[
        str | None,
        typer.Option(
            "--call-plan",
            help="How metrics ask the judges: batched (one call per step for all contexts) or ragas (RAGAS's "
            "calls, one per item); default: ragqa.call-plan (batched).",
        ),
    ] = None,
    repeats: Annotated[
        int | None,
        typer.Option(
            "--repeats",
            min=1,
            help="Judge every (sample, metric) N times per judge with independent calls; each judge's score is "
            "reduced over its repeats (--reducer). Default: ragqa.repeats (1).",
        ),
    ] = None,
    reducer: Annotated[
        str | None,
        typer.Option(
            "--reducer",
            help="How a judge's repeats become its score: mean, median, or mode (binary metrics); "
            "default: ragqa.repeat-reducer (mean).",
        ),
    ] = None,
    probe: Annotated[
        list[str] | None,
        typer.Option(
            "--probe",
            help="A bias probe beside the scores: order re-judges context precision and faithfulness on a "
            "share of the samples (ragqa.probe.order.share) with the contexts reversed, and reports each "
            "judge's position consistency (docs/panel.md). Never changes a score.",
        ),
    ] = None,
    confidence: Annotated[
        float | None,
        typer.Option(
            "--confidence",
            help="Level of the confidence intervals on every aggregate and judge mean, between 0 and 1 "
            "(default: ragqa.confidence, 0.95).",
        ),
    ] = None,
    cascade_audit: Annotated[
        bool,
        typer.Option(
            "--cascade-audit",
            help="With ragqa.jury.cascade: every tier scores every sample, and the report shows how often the "
            "cascade's verdicts agree with the full panel's and the share of tier-2 calls it would have made.",
        ),
    ] = False,
    on_invalid: Annotated[
        str,
        typer.Option(
            "--on-invalid", help="Invalid (sample, metric) pairs: raise (stop before any judge call) or skip them."
        ),
    ] = "raise",
    threshold: Annotated[
        list[str] | None,
        typer.Option(
            "--threshold",
            "--fail-under",
            help="metric=value: exit 1 when the metric's aggregate mean is worse (below for higher-is-better "
            "metrics, above for lower-is-better). Repeatable. Overrides ragqa.thresholds.",
        ),
    ] = None,
    on_undecided: Annotated[
        str | None,
        typer.Option(
            "--on-undecided",
            help="A threshold inside the aggregate's confidence interval (undecided): fail (exit 4), pass, or warn "
            "(pass with a warning); default: ragqa.on-undecided (fail).",
        ),
    ] = None,
    allow_incomplete: Annotated[
        bool,
        typer.Option(
            "--allow-incomplete", help="Judge failures that leave pairs without an aggregate: warn, not exit 3."
        ),
    ] = False,
    max_calls: Annotated[
        int | None,
        typer.Option("--max-calls", min=1, help="Refuse the run (exit 2) when the estimated judge calls exceed N."),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not use the on-disk cache (judge calls and embeddings).")
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="K/N: score only part K of N (a stable split by sample id), e.g. one job of a CI matrix; "
            "join the parts with ragqa merge.",
        ),
    ] = None,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            help="local (this process) or ray: score on a Ray cluster, one panel per worker, provider limits "
            "held across it (pip install 'ragqa[ray]'; docs/scale.md).",
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            "--address",
            help="With --engine ray: auto or ray://host:port of a cluster to join "
            "(default: a local cluster on 127.0.0.1).",
        ),
    ] = None,
    workers: Annotated[
        str | None,
        typer.Option(
            "--workers",
            help="With --engine ray: panel workers, one CPU each: N, or MIN:MAX to start MIN and add workers "
            "up to MAX while batches wait (default: this machine's CPUs).",
        ),
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option("--batch-size", help="With --engine ray: samples per batch handed to a worker (default 64)."),
    ] = None,
    progress: Annotated[
        bool,
        typer.Option(
            "--progress/--no-progress",
            help="Show progress on stderr, with rate and ETA: a bar on a terminal, a line every ~10% elsewhere.",
        ),
    ] = True,
    max_failures: Annotated[int, typer.Option("--max-failures", min=0, help="Judge failures listed in full.")] = 5,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="More log output (-vv: debug).")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only errors in the log output.")] = False,
    log_level: Annotated[
        str | None, typer.Option("--log-level", help="Log level: debug, info, warning, error or critical.")
    ] = None,
) -> None:
    """Score DATASET with every metric across the judge panel; print per-judge and aggregate tables."""
    from ragqa.aggregate import PANEL_STRATEGIES
    from ragqa.datasets import parse_column_map
    from ragqa.run.engine import make_engine
    from ragqa.run.loop import default_loop
    from ragqa.run.plan import make_plan, panel_overrides, plan_output
    from ragqa.run.runner import Runner

    _configure_logging(verbose, quiet, log_level)
    if fmt not in ("auto", "jsonl", "json", "csv", "parquet"):
        _fail(f"--format {fmt!r}: use auto, jsonl, json, csv or parquet")
    if language is not None:
        try:
            check_language(language)
        except ConfigError as exc:
            _fail(f"--language: {exc}")
    if aggregation is not None and aggregation not in PANEL_STRATEGIES:
        _fail(f"--aggregation {aggregation!r}: use one of {', '.join(PANEL_STRATEGIES)}")
    if on_invalid not in ("raise", "skip"):
        _fail(f"--on-invalid {on_invalid!r}: use raise or skip")
    if call_plan is not None and call_plan not in ("batched", "ragas"):
        _fail(f"--call-plan {call_plan!r}: use batched or ragas")
    if confidence is not None and not 0.0 < confidence < 1.0:
        _fail(f"--confidence {confidence!r}: use a level between 0 and 1, e.g. 0.95")

    err = _stderr()
    progress_bar = RunProgress(choose_mode(progress, ci=_is_ci()))

    def on_estimate(estimate: RunEstimate) -> None:
        prepared = runner.prepared
        if prepared is not None and (prepared.kept or prepared.retry):
            err.print(f"resuming: {len(prepared.kept)} result(s) kept from {runner.resumed_from}")
            if prepared.retry:
                failed = sum(len(outcomes) for outcomes in prepared.failed_judges().values())
                err.print(
                    f"--retry-failed: asking {failed} failed judge outcome(s) of {len(prepared.retry)} result(s) again"
                )
        elif plan.resume and runner.resumed_from is None and plan.journal is not None:
            err.print(f"--resume: no results in {plan.journal.path} or its .partial yet; starting a new run")
        err.print(str(estimate))
        progress_bar.start(estimate)

    with _clean_errors():
        scorer = make_engine(engine, address=address, workers=workers, batch_size=batch_size)
        user_thresholds = parse_thresholds(threshold or [])
        outputs = [plan_output(p, option="--out") for p in out or []]
        if junit_xml is not None:
            outputs.append(plan_output(junit_xml, option="--junit-xml", fmt="junit"))
        samples = _dataset(dataset, parse_column_map(column_map) if column_map else None, fmt)
        container = _container(config, profile)
        panel = panel_overrides(
            language=language,
            aggregation=aggregation,
            quorum=quorum,
            deadline_s=_parse_deadline(deadline) if deadline is not None else None,
            call_plan=call_plan,
            repeats=repeats,
            reducer=reducer,
            confidence=confidence,
            cascade_audit=cascade_audit,
            probe=probe,
        )
        plan = make_plan(
            container.settings(),
            metrics=metrics,
            thresholds=user_thresholds,
            on_invalid=on_invalid,  # type: ignore[arg-type]
            allow_incomplete=allow_incomplete,
            max_calls=max_calls,
            resume=resume,
            retry_failed=retry_failed,
            overwrite=overwrite,
            outputs=outputs,
            dataset=str(dataset),
            panel=panel,
            no_cache=no_cache,
            on_undecided=on_undecided,
            shard=shard,
        )
    runner = Runner(
        plan, container, on_estimate=on_estimate, on_progress=progress_bar.advance, keep_results=False, engine=scorer
    )
    _interrupt_on_sigterm()
    try:
        with _clean_errors():
            result = default_loop().run(_run(runner, samples, container))
    except KeyboardInterrupt:
        progress_bar.stop()
        _interrupted(runner)
    finally:
        progress_bar.stop()
    _report(result, max_failures=max_failures)
    raise typer.Exit(result.exit_code)


def _dataset(path: Path, column_map: Mapping[str, str] | None, fmt: str) -> Iterable[Sample]:
    """The samples of ``path``: a JSON Lines file is read one line at a time on each pass, never held.

    A JSON Lines file is not read here: the run checks it in full (every record, repeated ids) in
    its one pass before any judge is built (:func:`ragqa.run.prepared.check_samples`); it must
    exist. Other formats are loaded whole, and checked, here.

    Raises:
        DatasetError: for a bad file or record (a missing JSON Lines file, or another format's problems).
    """
    from ragqa.datasets import load_dataset
    from ragqa.errors import DatasetError
    from ragqa.run.source import JsonlSamples

    if fmt == "jsonl" or (fmt == "auto" and path.suffix.lower() in (".jsonl", ".ndjson")):
        if not path.is_file():
            raise DatasetError(f"{path}: no such file; check the path")
        return JsonlSamples(path, column_map=column_map)
    return load_dataset(path, column_map=column_map, fmt=fmt)  # type: ignore[arg-type]


def _interrupt_on_sigterm() -> None:
    """Treat SIGTERM (a cancelled CI job) like Ctrl-C: cancel the calls, keep the results, print the resume command."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, interrupt)


def _interrupted(runner: Runner) -> NoReturn:
    """Say what was kept and how to resume; exit 130."""
    err = _stderr()
    stream = runner.stream
    if stream is not None:
        err.print(
            f"interrupted: {stream.count} result(s) kept in {stream.partial}. Resume with:\n  {_resume_command()}"
        )
    elif runner.plan.journal is not None:
        err.print("interrupted before the first judge call; nothing was scored")
    else:
        err.print("interrupted: no output was given (--out results.jsonl), so no result was kept")
    raise typer.Exit(ExitCode.INTERRUPTED)


def _parse_deadline(text: str) -> float:
    """``--deadline`` as seconds (Spring duration syntax: ``90s``, ``10m``; a bare number is milliseconds).

    Raises:
        ConfigError: when the text is not a positive duration (key ``--deadline``).
    """
    from pydantic import TypeAdapter, ValidationError

    from ragqa.settings import PositiveDuration

    try:
        return float(TypeAdapter(PositiveDuration).validate_python(text).total_seconds())
    except ValidationError:
        raise ConfigError(
            f"--deadline {text!r}: give a positive duration such as 90s or 10m", key="--deadline"
        ) from None


def _report(result: RunResult, *, max_failures: int) -> None:
    """Print the report (cache counts on its usage line), threshold verdicts, outputs and incompleteness."""
    from ragqa.render import render_report

    report = result.report
    stdout = _stdout()
    render_report(report, stdout, language=result.language, max_failures=max_failures)
    err = _stderr()
    if result.resumed:
        err.print(f"{result.resumed} result(s) were kept from the interrupted run, not scored again")
    for option, path in result.written:
        err.print(f"wrote {option} {path}")
    for verdict in result.verdicts:
        style = "bold yellow" if verdict.undecided else ("green" if verdict.passed else "bold red")
        word, rest = str(verdict).split(" ", 1)
        stdout.print(f"[{style}]{word}[/] {_escape(rest)}", highlight=False)
        if verdict.flaky:
            shown = ", ".join(verdict.flaky[:max_failures]) + (
                f" and {len(verdict.flaky) - max_failures} more" if len(verdict.flaky) > max_failures else ""
            )
            stdout.print(
                f"  flaky {verdict.metric}: {len(verdict.flaky)} sample(s) with judges or repeats on both sides of "
                f"{verdict.threshold:g}: {_escape(shown)}",
                highlight=False,
            )
        if verdict.undecided and verdict.on_undecided == "warn":
            err.print(
                f"[yellow]warning:[/] {_escape(verdict.metric)} is undecided; counted as pass (--on-undecided warn)"
            )
    if result.incomplete:
        kind = "warning" if result.exit_code != ExitCode.INCOMPLETE else "incomplete"
        err.print(
            f"[yellow]{kind}:[/] {len(result.incomplete)} (sample, metric) pair(s) have no aggregate because "
            "judges failed (see the judge failures above)"
            + ("" if kind == "warning" else "; exit 3 (pass --allow-incomplete to accept)"),
            markup=True,
        )
    elif result.exit_code == ExitCode.INCOMPLETE:
        err.print("[yellow]incomplete:[/] nothing was scored; exit 3", markup=True)
