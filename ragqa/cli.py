"""The ``ragqa`` command line: ``evaluate``, ``metrics``, ``config show``, ``--version``.

Exit codes:

- ``0``: the run finished (judge failures are reported, they do not change the exit code);
- ``1``: a metric missed its threshold (``--threshold`` / ``--fail-under``, or ``ragqa.thresholds``);
- ``2``: a usage, configuration or dataset error (one clean message on stderr, no traceback).

``evaluate`` reads the settings and the dataset and checks every sample against every metric
before the first judge call; it runs the whole evaluation under one ``asyncio.run`` and closes the
container's clients at the end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from ragqa.errors import ConfigError, SampleError

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric
    from ragqa.report import Report
    from ragqa.schema import PanelResult, Sample

__all__ = ["app", "check_thresholds", "main", "parse_metric_list", "parse_thresholds"]

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

EXIT_OK = 0
"""The run finished; every threshold (if any) passed."""
EXIT_THRESHOLD = 1
"""At least one metric's aggregate missed its threshold."""
EXIT_USAGE = 2
"""Bad command line, settings or dataset; nothing was scored."""

_CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")

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


def _fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr and exit with :data:`EXIT_USAGE`."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {message}", markup=True)
    raise typer.Exit(EXIT_USAGE)


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


def parse_metric_list(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Parse ``--metrics`` text: ``faithfulness,noise_sensitivity(mode=irrelevant)``.

    Commas inside parentheses separate options, not metrics. Option values are read as YAML
    scalars (``3`` is an int, ``true`` a bool).

    Returns:
        ``[(name, options), ...]`` in the order given.

    Raises:
        ConfigError: for an empty list or an option without ``=`` (key ``--metrics``).
    """
    import yaml

    items: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    out: list[tuple[str, dict[str, Any]]] = []
    for item in (i.strip() for i in items):
        if not item:
            continue
        match = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:\((.*)\))?", item)
        if match is None:
            raise ConfigError(f"bad metric {item!r} in --metrics; write name or name(option=value)", key="--metrics")
        options: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in (match.group(2) or "").split(","))):
            key, sep, raw = part.partition("=")
            if not sep:
                raise ConfigError(
                    f"bad option {part!r} of metric {match.group(1)!r}; write option=value", key="--metrics"
                )
            options[key.strip().replace("-", "_")] = yaml.safe_load(raw.strip())
        out.append((match.group(1), options))
    if not out:
        raise ConfigError("--metrics names no metric; e.g. --metrics faithfulness,hallucination", key="--metrics")
    return out


def parse_thresholds(values: Sequence[str]) -> dict[str, float]:
    """Parse ``--threshold metric=value`` entries (each may hold several, comma separated).

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


def _build_metrics(
    specs: Sequence[tuple[str, dict[str, Any]]], configured: Mapping[str, Mapping[str, Any]]
) -> list[Metric]:
    from ragqa.metrics import build_metric

    return [build_metric(name, {**dict(configured.get(name) or {}), **options}) for name, options in specs]


def _is_ci() -> bool:
    return any(os.environ.get(name, "").strip().lower() not in ("", "0", "false") for name in _CI_VARIABLES)


class _Progress:
    """A rich progress bar on a terminal; otherwise plain ``scored N/M`` lines on stderr every ~10%."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self._bar: Any = None
        self._task: Any = None
        self._started = time.perf_counter()
        self._next_line = 0
        self._rich = enabled and sys.stderr.isatty() and not _is_ci()
        self._plain = enabled and not self._rich

    def __enter__(self) -> _Progress:
        if self._rich:
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
            self._bar.__enter__()
            self._task = self._bar.add_task("scoring", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)

    def advance(self, _result: PanelResult) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
        elif self._plain and (self.done >= self._next_line or self.done == self.total):
            step = max(1, self.total // 10)
            self._next_line = self.done + step
            elapsed = time.perf_counter() - self._started
            print(f"scored {self.done}/{self.total} (sample x metric) in {elapsed:.1f} s", file=sys.stderr, flush=True)


def _problems_error(problems: Sequence[SampleError]) -> SampleError:
    shown = "\n".join(f"  - {p}" for p in problems[:10])
    more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
    return SampleError(
        f"{len(problems)} problem(s) in the dataset; nothing was scored (fix the samples, or pass "
        f"--on-invalid skip to score only the valid ones):\n{shown}{more}"
    )


def _check_samples(samples: Sequence[Sample], metrics: Sequence[Metric]) -> None:
    """Check every sample against every metric's required fields before any judge is built.

    Raises:
        SampleError: listing the first problems (sample id or line, field, metric, fix).
    """
    from ragqa.evaluation import validate_samples

    problems = validate_samples(samples, metrics)
    if problems:
        raise _problems_error(problems)


async def _run_evaluation(
    container: Container,
    samples: Sequence[Sample],
    metrics: Sequence[Metric],
    overrides: Mapping[str, Any],
    progress_enabled: bool,
) -> tuple[Report, PanelEvaluator]:
    """Build the judges on the running loop, validate again with the panel, score, and close the container."""
    from ragqa.container import close_container
    from ragqa.evaluation import PanelEvaluator

    try:
        configured = container.evaluator()
        options = dataclasses.replace(configured.options, **overrides)
        evaluator = PanelEvaluator(configured.judges, metrics, embedders=configured.embedders, options=options)
        problems = evaluator.validate(samples, metrics)
        if problems and options.on_invalid == "raise":
            raise _problems_error(problems)
        with _Progress(len(samples) * len(metrics), enabled=progress_enabled) as progress:
            report = await evaluator.evaluate(samples, metrics=metrics, on_result=progress.advance)
        return report, evaluator
    finally:
        await close_container(container)


@app.command()
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
        Path | None, typer.Option("--out", "-o", help="Write per-sample, per-judge results as JSONL here.")
    ] = None,
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
    on_invalid: Annotated[
        str,
        typer.Option("--on-invalid", help="Invalid samples: raise (stop before any judge call) or skip them."),
    ] = "raise",
    threshold: Annotated[
        list[str] | None,
        typer.Option(
            "--threshold",
            "--fail-under",
            help="metric=value: exit 1 when the metric's aggregate mean is worse (below for higher-is-better "
            "metrics, above for lower-is-better). Repeatable. Adds to ragqa.thresholds.",
        ),
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show progress on stderr.")] = True,
    max_failures: Annotated[int, typer.Option("--max-failures", min=0, help="Judge failures listed in full.")] = 5,
) -> None:
    """Score DATASET with every metric across the judge panel; print per-judge and aggregate tables."""
    from ragqa.aggregate import STRATEGIES
    from ragqa.datasets import load_dataset, parse_column_map, write_results_jsonl
    from ragqa.render import render_report

    if fmt not in ("auto", "jsonl", "json", "csv"):
        _fail(f"--format {fmt!r}: use auto, jsonl, json or csv")
    if language is not None and language not in ("en", "ru"):
        _fail(f"--language {language!r}: use en or ru")
    if aggregation is not None and aggregation not in STRATEGIES:
        _fail(f"--aggregation {aggregation!r}: use one of {', '.join(STRATEGIES)}")
    if on_invalid not in ("raise", "skip"):
        _fail(f"--on-invalid {on_invalid!r}: use raise or skip")

    with _clean_errors():
        cli_thresholds = parse_thresholds(threshold or [])
        metric_specs = parse_metric_list(metrics) if metrics is not None else None
        samples = load_dataset(
            dataset,
            column_map=parse_column_map(column_map) if column_map else None,
            fmt=fmt,  # type: ignore[arg-type]
        )
        container = _container(config, profile)
        settings = container.settings()
        chosen = (
            _build_metrics(metric_specs, settings.ragqa.metric_options)
            if metric_specs is not None
            else list(container.metrics())
        )
        if on_invalid == "raise":
            _check_samples(samples, chosen)
        overrides: dict[str, Any] = {"on_invalid": on_invalid}
        if language is not None:
            overrides["language"] = language
        if aggregation is not None:
            overrides["strategy"] = aggregation
        if quorum is not None:
            overrides["quorum"] = quorum
        report, evaluator = asyncio.run(_run_evaluation(container, samples, chosen, overrides, progress))

    stdout = Console() if sys.stdout.isatty() else Console(width=120)
    render_report(report, stdout, language=evaluator.options.language, max_failures=max_failures)
    if out is not None:
        n = write_results_jsonl(report, out)
        Console(stderr=True).print(f"wrote {n} result line(s) to {out}", highlight=False)
    thresholds = {**settings.ragqa.thresholds, **cli_thresholds}
    if thresholds and check_thresholds(report, thresholds, stdout):
        raise typer.Exit(EXIT_THRESHOLD)


def check_thresholds(report: Report, thresholds: Mapping[str, float], console: Console) -> bool:
    """Print one line per thresholded metric; return True when any missed its threshold."""
    from ragqa.assertions import passes

    failed = False
    known = {s.metric for s in report.summaries} | {s.metric.split("(", 1)[0] for s in report.summaries}
    unknown = sorted(set(thresholds) - known)
    if unknown:
        console.print(f"[yellow]thresholds for metrics not in this run ignored: {', '.join(unknown)}[/]")
    for summary in report.summaries:
        limit = thresholds.get(summary.metric, thresholds.get(summary.metric.split("(", 1)[0]))
        if limit is None:
            continue
        ok = passes(summary.aggregate_mean, limit, summary.direction)
        sign = ">=" if summary.direction == "higher" else "<="
        shown = "n/a" if summary.aggregate_mean != summary.aggregate_mean else f"{summary.aggregate_mean:.3f}"
        status = "[green]PASS[/]" if ok else "[bold red]FAIL[/]"
        console.print(f"{status} {summary.metric}: aggregate mean {shown}, needs {sign} {limit:g}", highlight=False)
        failed = failed or not ok
    return failed


@app.command("metrics")
def list_metrics() -> None:
    """List every metric: required fields, range, direction, judge calls per sample, description."""
    from ragqa.metrics import METRICS
    from ragqa.render import DIRECTION_LABELS

    table = Table(title="ragqa metrics", title_justify="left", show_lines=False)
    table.add_column("metric", no_wrap=True, style="bold")
    table.add_column("required fields")
    table.add_column("range", no_wrap=True)
    table.add_column("direction", no_wrap=True)
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


from ragqa.promptfoo import register as _register_test  # noqa: E402 - `ragqa test` lives with its runner

_register_test(app)


def main() -> None:
    """Run the CLI (the ``ragqa`` console script and ``python -m ragqa``); exits with the exit code."""
    app()
