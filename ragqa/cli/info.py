"""``ragqa init``, ``ragqa metrics`` and ``ragqa config show``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from ragqa.metrics.base import CallPlan
from ragqa.cli._common import (
    _clean_errors,
    _ConfigOption,
    _container,
    _escape,
    _fail,
    _ProfileOption,
    _stderr,
    app,
    config_app,
)

INIT_FILE = Path("application.yaml")
"""Where ``ragqa init`` writes: ``application.yaml`` in the current folder, which every command reads."""


@app.command("init")
def init(
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing application.yaml.")] = False,
) -> None:
    """Write a commented application.yaml here: the OpenRouter judge panel reading OPENROUTER_API_KEY, to edit.

    It is the file ragqa already uses, built in, where no application.yaml exists: the retry
    block, the OpenRouter connection with ``${OPENROUTER_API_KEY}``, the panel of four judges, the
    embedding models and ragqa's own keys (commented, with their defaults). An existing file is
    kept unless ``--force`` is given (exit 2).
    """
    from ragqa.render.atomic import replace_text
    from ragqa.settings import builtin_base

    if INIT_FILE.exists() and not force:
        _fail(f"{INIT_FILE} already exists here; edit it, or pass --force to replace it with a fresh one")
    try:
        replace_text(INIT_FILE, builtin_base().read_text(encoding="utf-8"))
    except OSError as exc:
        _fail(_escape(f"cannot write {INIT_FILE.resolve()}: {exc.strerror or exc}"))
    _stderr().print(
        f"wrote {INIT_FILE}: the OpenRouter panel of 4 judges. Next: set OPENROUTER_API_KEY, check the panel "
        "with `ragqa config show`, then `ragqa evaluate DATA.jsonl` (add --profile local for the offline judges)",
        markup=False,
    )


@app.command("metrics")
def list_metrics(
    call_plan: Annotated[
        str,
        typer.Option("--call-plan", help="Count judge calls for this call plan: batched (the default) or ragas."),
    ] = "batched",
) -> None:
    """List every metric: required fields, range, direction, default threshold, judge calls per sample, description.

    Judge calls per sample are those of the call plan given (``ragqa.call-plan``; N is the number
    of contexts); ``docs/call-plan.md`` has both plans side by side.
    """
    from ragqa.metrics import METRICS
    from ragqa.metrics.base import CALL_PLANS
    from ragqa.render import DIRECTION_LABELS

    if call_plan not in CALL_PLANS:
        _fail(f"--call-plan {call_plan!r}: use batched or ragas")
    plan: CallPlan = "batched" if call_plan == "batched" else "ragas"

    table = Table(title="ragqa metrics", title_justify="left", show_lines=False)
    table.add_column("metric", no_wrap=True, style="bold")
    table.add_column("required fields")
    table.add_column("range", no_wrap=True)
    table.add_column("direction", no_wrap=True)
    table.add_column("default threshold", justify="right")
    table.add_column(f"judge calls / sample ({call_plan})")
    table.add_column("description")
    for name, cls in METRICS.items():
        low, high = cls.value_range
        calls = cls.calls_formula(plan) if cls.needs_judge else "0 (no judge)"
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
