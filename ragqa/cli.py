"""The ``ragqa`` command line: evaluate, metrics, config show, report, compare, test and ``--version``.

A thin adapter over the run layer (:mod:`ragqa.run`): options become a
:class:`~ragqa.run.plan.RunPlan`, one :class:`~ragqa.run.runner.Runner` validates, estimates,
streams, resumes and decides the exit code, and :mod:`ragqa.run.loop` drives the event loop.

Exit codes (:class:`ragqa.run.exit_codes.ExitCode`), for ``ragqa evaluate``:

- ``0``: every (sample, metric) was scored and every threshold passed;
- ``1``: a metric's aggregate missed its threshold (``--threshold`` / ``ragqa.thresholds``);
- ``2``: bad usage, settings or data, found before any judge call (one message, no traceback);
- ``3``: the run is incomplete: judges failed so some (sample, metric) has no aggregate, or
  nothing was scored (``--allow-incomplete`` makes the first a warning);
- ``130``: interrupted (Ctrl-C or SIGTERM); finished results were kept and the resume command is printed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from ragqa.errors import ConfigError, SampleError
from ragqa.run.exit_codes import ExitCode

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.run.estimate import RunEstimate
    from ragqa.run.outcome import RunResult
    from ragqa.run.runner import Runner
    from ragqa.schema import PanelResult, Sample

__all__ = ["app", "main", "parse_thresholds"]

_EXIT_CODES_HELP = (
    "Exit codes: 0 all scored and thresholds met; 1 a threshold missed; 2 bad usage, settings or data "
    "(before any judge call); 3 incomplete (judges failed, or nothing scored); 130 interrupted (results kept)."
)

app = typer.Typer(
    name="ragqa",
    help="Score RAG and LLM-agent answers with LLM-as-judge metrics across a panel of judge models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
config_app = typer.Typer(help="Inspect the resolved settings.", no_args_is_help=True)
app.add_typer(config_app, name="config")

_CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")
_LOG_LEVELS = ("debug", "info", "warning", "error", "critical")

_ProfileOption = Annotated[
    str | None,
    typer.Option("--profile", "-p", help="Active profiles, comma separated (default: RAGQA_PROFILES_ACTIVE)."),
]
_ConfigOption = Annotated[
    Path | None, typer.Option("--config", "-c", help="The application.yaml (default: ./application.yaml).")
]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"ragqa {version('ragqa')}")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
            typer.echo("ragqa (not installed)")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", callback=_version, is_eager=True)
    ] = False,
) -> None:
    """Score RAG and LLM-agent answers with LLM-as-judge metrics across a panel of judge models."""


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with :attr:`ExitCode.USAGE`."""
    _stderr().print(f"[bold red]error:[/] {message}", markup=True)
    raise typer.Exit(ExitCode.USAGE)


@contextmanager
def _clean_errors() -> Iterator[None]:
    """Turn ragqa's user-fixable errors (settings, samples, datasets) into one message and exit 2."""
    try:
        yield
    except (ConfigError, SampleError) as exc:
        _fail(_escape(str(exc)))


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _profiles(profile: str | None) -> list[str]:
    return [p.strip() for p in (profile or "").split(",") if p.strip()]


def _container(config: Path | None, profile: str | None) -> Container:
    from ragqa.container import create_container

    if config is not None and not config.is_file():
        raise ConfigError(f"settings file {config} does not exist; pass --config path/to/application.yaml")
    return create_container(config, _profiles(profile))


def _configure_logging(verbose: int, quiet: bool, log_level: str | None) -> None:
    """``-v`` INFO, ``-vv`` DEBUG, ``-q`` ERROR, ``--log-level`` wins; default WARNING, on stderr."""
    if log_level is not None:
        if log_level.lower() not in _LOG_LEVELS:
            _fail(f"--log-level {log_level!r}: use one of {', '.join(_LOG_LEVELS)}")
        level = getattr(logging, log_level.upper())
    elif quiet:
        level = logging.ERROR
    else:
        level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s", force=True)


def parse_thresholds(values: Sequence[str]) -> dict[str, float]:
    """Parse ``--threshold metric=value`` entries (each may hold several, comma separated).

    The metric part is a spec (``noise_sensitivity(mode=relevant)``), resolved against the run's
    metrics by :func:`ragqa.run.spec.resolve_thresholds`.

    Raises:
        ConfigError: when an entry is not ``metric=number``.
    """
    out: dict[str, float] = {}
    for value in values:
        for part in filter(None, (p.strip() for p in re.split(r",(?![^()]*\))", value))):
            metric, sep, raw = part.rpartition("=")
            try:
                if not sep or not metric.strip():
                    raise ValueError
                out[metric.strip()] = float(raw)
            except ValueError:
                raise ConfigError(
                    f"bad threshold {part!r}; write metric=value, e.g. --threshold faithfulness=0.8", key="--threshold"
                ) from None
    return out


def _is_ci() -> bool:
    return any(os.environ.get(name, "").strip().lower() not in ("", "0", "false") for name in _CI_VARIABLES)


class _Progress:
    """A rich progress bar on a terminal; otherwise plain ``scored N/M`` lines on stderr every ~10%.

    It starts when the run's estimate is known (:meth:`start`), i.e. just before the first call.
    """

    def __init__(self, *, enabled: bool) -> None:
        self.total = 0
        self.done = 0
        self._bar: Any = None
        self._task: Any = None
        self._started = time.perf_counter()
        self._next_line = 0
        self._rich = enabled and sys.stderr.isatty() and not _is_ci()
        self._plain = enabled and not self._rich

    def start(self, total: int) -> None:
        self.total = total
        self._started = time.perf_counter()
        if self._rich and total:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("scoring"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("sample x metric"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("scoring", total=total)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def advance(self, _result: PanelResult) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        elif self._plain and (self.done >= self._next_line or self.done == self.total):
            step = max(1, self.total // 10)
            self._next_line = self.done + step
            elapsed = time.perf_counter() - self._started
            print(f"scored {self.done}/{self.total} (sample x metric) in {elapsed:.1f} s", file=sys.stderr, flush=True)


def _resume_command() -> str:
    """The command line that continues this run: the same arguments plus ``--resume``."""
    args = list(sys.argv[1:])
    if "--resume" not in args:
        args.append("--resume")
    return shlex.join(["ragqa", *args])


async def _run(runner: Runner, samples: Sequence[Sample], container: Container) -> RunResult:
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
    dataset: Annotated[Path, typer.Argument(help="Samples: .jsonl, .json or .csv (RAGAS field names).")],
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
    out: Annotated[
        list[Path] | None,
        typer.Option(
            "--out",
            "-o",
            help="Write results here; the suffix picks the format: .jsonl (streamed as results are made, "
            "resumable), .json, .csv, .xml (JUnit). Repeatable.",
        ),
    ] = None,
    junit_xml: Annotated[
        Path | None, typer.Option("--junit-xml", help="Write JUnit XML here (a testcase per sample and metric).")
    ] = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Continue the run recorded in the --out .jsonl file: score only missing pairs."),
    ] = False,
    column_map: Annotated[
        str | None,
        typer.Option("--column-map", help="Rename dataset columns: column=field,... (e.g. q=user_input)."),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="Dataset format: auto (by extension), jsonl, json or csv.")
    ] = "auto",
    language: Annotated[
        str | None, typer.Option("--language", help="Prompt and report language: en or ru (default: settings).")
    ] = None,
    aggregation: Annotated[
        str | None,
        typer.Option("--aggregation", help="Aggregate of the panel: mean, median, min, max or majority."),
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
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the on-disk judge cache.")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress on stderr.")] = True,
    max_failures: Annotated[int, typer.Option("--max-failures", min=0, help="Judge failures listed in full.")] = 5,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="More log output (-vv: debug).")] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Only errors in the log output.")] = False,
    log_level: Annotated[
        str | None, typer.Option("--log-level", help="Log level: debug, info, warning, error or critical.")
    ] = None,
) -> None:
    """Score DATASET with every metric across the judge panel; print per-judge and aggregate tables."""
    from ragqa.aggregate import STRATEGIES
    from ragqa.datasets import load_dataset, parse_column_map
    from ragqa.run.loop import default_loop
    from ragqa.run.plan import make_plan, panel_overrides, plan_output
    from ragqa.run.runner import Runner

    _configure_logging(verbose, quiet, log_level)
    if fmt not in ("auto", "jsonl", "json", "csv"):
        _fail(f"--format {fmt!r}: use auto, jsonl, json or csv")
    if language is not None and language not in ("en", "ru"):
        _fail(f"--language {language!r}: use en or ru")
    if aggregation is not None and aggregation not in STRATEGIES:
        _fail(f"--aggregation {aggregation!r}: use one of {', '.join(STRATEGIES)}")
    if on_invalid not in ("raise", "skip"):
        _fail(f"--on-invalid {on_invalid!r}: use raise or skip")

    err = _stderr()
    progress_bar = _Progress(enabled=progress)

    def on_estimate(estimate: RunEstimate) -> None:
        prepared = runner.prepared
        if prepared is not None and prepared.kept:
            err.print(f"resuming: {len(prepared.kept)} result(s) kept from {runner.resumed_from}")
        elif plan.resume and runner.resumed_from is None and plan.stream is not None:
            err.print(f"--resume: no results in {plan.stream.path} or its .partial yet; starting a new run")
        err.print(str(estimate))
        progress_bar.start(estimate.pairs)

    with _clean_errors():
        user_thresholds = parse_thresholds(threshold or [])
        outputs = [plan_output(p, option="--out") for p in out or []]
        if junit_xml is not None:
            outputs.append(plan_output(junit_xml, option="--junit-xml", fmt="junit"))
        samples = load_dataset(
            dataset,
            column_map=parse_column_map(column_map) if column_map else None,
            fmt=fmt,  # type: ignore[arg-type]
        )
        container = _container(config, profile)
        panel = panel_overrides(
            language=language,
            aggregation=aggregation,
            quorum=quorum,
            deadline_s=_parse_deadline(deadline) if deadline is not None else None,
        )
        plan = make_plan(
            container.settings(),
            metrics=metrics,
            thresholds=user_thresholds,
            on_invalid=on_invalid,  # type: ignore[arg-type]
            allow_incomplete=allow_incomplete,
            max_calls=max_calls,
            resume=resume,
            outputs=outputs,
            dataset=str(dataset),
            panel=panel,
            no_cache=no_cache,
        )
    runner = Runner(plan, container, on_estimate=on_estimate, on_result=progress_bar.advance)
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
    elif runner.plan.stream is not None:
        err.print("interrupted before the first judge call; nothing was scored")
    else:
        err.print("interrupted: no .jsonl output was given (--out results.jsonl), so no result was kept")
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
    stdout = Console() if sys.stdout.isatty() else Console(width=120)
    render_report(report, stdout, language=result.language, max_failures=max_failures)
    err = _stderr()
    if result.resumed:
        err.print(f"{result.resumed} result(s) were kept from the interrupted run, not scored again")
    for option, path in result.written:
        err.print(f"wrote {option} {path}")
    for verdict in result.verdicts:
        style = "green" if verdict.passed else "bold red"
        word, rest = str(verdict).split(" ", 1)
        stdout.print(f"[{style}]{word}[/] {_escape(rest)}", highlight=False)
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


@app.command("metrics")
def list_metrics() -> None:
    """List every metric: required fields, range, direction, default threshold, judge calls per sample, description."""
    from ragqa.metrics import METRICS
    from ragqa.render import DIRECTION_LABELS

    table = Table(title="ragqa metrics", title_justify="left", show_lines=False)
    table.add_column("metric", no_wrap=True, style="bold")
    table.add_column("required fields")
    table.add_column("range", no_wrap=True)
    table.add_column("direction", no_wrap=True)
    table.add_column("default threshold", justify="right")
    table.add_column("judge calls / sample")
    table.add_column("description")
    for name, cls in METRICS.items():
        low, high = cls.value_range
        calls = cls.calls_per_sample if cls.needs_judge else "0 (no judge)"
        if cls.needs_embeddings:
            calls += " + embeddings"
        table.add_row(
            name,
            ", ".join(cls.required_fields),
            f"{low:g}..{high:g}",
            DIRECTION_LABELS[cls.direction],
            "-" if cls.default_threshold is None else f"{cls.default_threshold:g}",
            calls,
            cls.description,
        )
    (Console() if sys.stdout.isatty() else Console(width=160)).print(table)


@config_app.command("show")
def config_show(
    profile: _ProfileOption = None,
    config: _ConfigOption = None,
) -> None:
    """Print the resolved settings as YAML with every secret masked, then the resolved judge panel."""
    from ragqa.settings import render_settings

    with _clean_errors():
        settings = _container(config, profile).settings()
        typer.echo(render_settings(settings), nl=False)


@app.command(
    "compare",
    epilog="Exit codes: 0 no metric's aggregate regressed beyond --tolerance; 1 one did; 2 bad usage (a file "
    "that is not a ragqa results file, different metrics, no (sample, metric) pair in common).",
)
def compare(
    a: Annotated[Path, typer.Argument(help="Baseline results file (ragqa evaluate --out a.jsonl).")],
    b: Annotated[Path, typer.Argument(help="Candidate results file, compared with the baseline.")],
    threshold: Annotated[
        list[str] | None,
        typer.Option("--threshold", help="metric=value for pass/fail flips (default: the metric's default threshold)."),
    ] = None,
    tolerance: Annotated[
        float,
        typer.Option(
            "--tolerance",
            help="Regression when the 95% CI of the aggregate's mean delta lies beyond this, in the bad direction.",
        ),
    ] = 0.0,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the comparison as JSON here.")] = None,
) -> None:
    """Compare two runs: mean delta per metric and judge with a paired bootstrap CI, flips, judge failures."""
    import json

    from ragqa.compare import compare_files, exit_code
    from ragqa.render.atomic import replace_text
    from ragqa.render.comparison import comparison_renderable
    from ragqa.run.outputs import check_output_path

    with _clean_errors():
        if json_path is not None:
            check_output_path(json_path, option="--json")
        comparison = compare_files(a, b, thresholds=parse_thresholds(threshold or []), tolerance=tolerance)
    if json_path is not None:
        replace_text(json_path, json.dumps(comparison.to_json(), ensure_ascii=False, indent=2) + "\n")
    (Console() if sys.stdout.isatty() else Console(width=120)).print(comparison_renderable(comparison))
    if json_path is not None:
        _stderr().print(f"wrote --json {json_path}")
    raise typer.Exit(exit_code(comparison))


@app.command("report")
def report_command(
    results: Annotated[Path, typer.Argument(help="A results file written by ragqa evaluate --out results.jsonl.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the report; .html (or .json, .csv...).")
    ],
    language: Annotated[str, typer.Option("--language", help="Report language: en or ru.")] = "en",
    threshold: Annotated[
        list[str] | None, typer.Option("--threshold", help="metric=value: mark samples below it. Repeatable.")
    ] = None,
) -> None:
    """Rebuild the report of a run from its results file; the drill-down shows inputs when the dataset is readable."""
    from ragqa.render.html import report_from_results, write_report

    if language not in ("en", "ru"):
        _fail(f"--language {language!r}: use en or ru")
    with _clean_errors():
        report, note = report_from_results(results)
        written = write_report(report, output, language=language, thresholds=parse_thresholds(threshold or []))  # type: ignore[arg-type]
    err = _stderr()
    if note:
        err.print(note, markup=False, highlight=False)
    err.print(f"wrote -o {written}", markup=False, highlight=False)


@app.command()
def calibrate(
    dataset: Annotated[Path, typer.Argument(help="Labelled samples: .jsonl, .json or .csv; the label in metadata.")],
    label_field: Annotated[
        str, typer.Option("--label-field", help="The metadata key of the human label (higher = better).")
    ] = "human_score",
    metrics: Annotated[
        str | None, typer.Option("--metrics", "-m", help="Comma-separated metrics (default: ragqa.metrics).")
    ] = None,
    profile: _ProfileOption = None,
    config: _ConfigOption = None,
    pass_label: Annotated[
        float | None,
        typer.Option("--pass-label", help="Labels >= this pass (default: 1 for 0/1 labels, else the midpoint)."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Use only the first N samples.")] = None,
    resamples: Annotated[int, typer.Option("--resamples", min=10, help="Bootstrap resamples per interval.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the calibration as JSON here.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the on-disk judge cache.")] = False,
) -> None:
    """Score DATASET and report each judge's and the panel's agreement with human labels, with 95% CIs."""
    from ragqa.calibration import calibrate as run_calibration
    from ragqa.calibration import calibration_table

    with _clean_errors():
        if config is not None and not config.is_file():
            raise ConfigError(f"settings file {config} does not exist; pass --config path/to/application.yaml")
        if json_out is not None:
            from ragqa.run.outputs import check_output_path

            check_output_path(json_out, option="--json")
        result = run_calibration(
            dataset,
            metrics,
            label_field=label_field,
            pass_label=pass_label,
            limit=limit,
            config=config,
            profile=_profiles(profile),
            no_cache=no_cache,
            n_resamples=resamples,
            seed=seed,
        )
    stdout = Console() if sys.stdout.isatty() else Console(width=120)
    for table in calibration_table(result):
        stdout.print(table)
    if json_out is not None:
        from ragqa.render.atomic import replace_text

        replace_text(json_out, result.model_dump_json(indent=2) + "\n")
        _stderr().print(f"wrote --json {json_out}")


from ragqa.promptfoo import register as _register_test  # noqa: E402 - `ragqa test` lives with its runner

_register_test(app)


def main() -> None:
    """Run the CLI (the ``ragqa`` console script and ``python -m ragqa``); exits with the exit code."""
    app()
