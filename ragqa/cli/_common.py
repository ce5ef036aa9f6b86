"""The typer app, its shared options and the helpers every command uses (errors, settings, logging)."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console

from ragqa.errors import ConfigError, MissingExtraError, OutputError, SampleError
from ragqa.render.terminal import printable
from ragqa.run.exit_codes import ExitCode

if TYPE_CHECKING:
    from ragqa.container import Container


_EXIT_CODES_HELP = (
    "Exit codes: 0 all scored and thresholds met; 1 a threshold missed; 2 bad usage, settings or data "
    "(before any judge call); 3 incomplete (judges failed, or nothing scored); 4 undecided (a threshold inside the "
    "aggregate's confidence interval, see --on-undecided); 5 an output could not be written (results kept in the "
    ".partial file named); 130 interrupted (results kept)."
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


def _stdout() -> Console:
    """The console of a command's report: the terminal's width, else 120 columns with no wrapping of lines.

    Off a terminal (a pipe, a CI log) tables are laid out in 120 columns, and lines of text (the
    usage line, lists of samples) are never broken: a wrap would split an item such as
    ``it-012 (0.830 -> 0.030)`` over two lines.
    """
    return Console() if sys.stdout.isatty() else Console(width=120, soft_wrap=True)


def _fail(message: str) -> NoReturn:
    """Print ``error: message`` on stderr (control characters shown, not obeyed) and exit with :attr:`ExitCode.USAGE`.

    ``message`` is rich markup: pass text from data through :func:`_escape` (markup brackets).
    """
    _stderr().print(f"[bold red]error:[/] {printable(message)}", markup=True)
    raise typer.Exit(ExitCode.USAGE)


class _PrintableFormatter(logging.Formatter):
    """Log lines with control characters shown, not obeyed (a provider's error body may hold escapes)."""

    def format(self, record: logging.LogRecord) -> str:
        """The standard line, through :func:`~ragqa.render.terminal.printable` (newlines kept)."""
        return printable(super().format(record))


@contextmanager
def _clean_errors() -> Iterator[None]:
    """Turn ragqa's user-fixable errors into one message: settings, samples, datasets exit 2, outputs exit 5.

    An :class:`~ragqa.errors.OutputError` (a full disk) exits with :attr:`ExitCode.OUTPUT`; its
    message names the ``.partial`` file that keeps the results.
    """
    try:
        yield
    except (ConfigError, SampleError, MissingExtraError) as exc:
        _fail(_escape(str(exc)))
    except OutputError as exc:
        _stderr().print(f"[bold red]error:[/] {printable(_escape(str(exc)))}", markup=True)
        raise typer.Exit(ExitCode.OUTPUT) from None


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
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)


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
