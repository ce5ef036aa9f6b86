"""The ``ragqa test`` command, added to the ``ragqa`` typer app by :func:`register`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ragqa.run.exit_codes import ExitCode

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add the ``test`` command to the ``ragqa`` typer app.

    ``ragqa test FILE.yaml... [--config application.yaml] [--profile a,b] [--junit-xml out.xml]``
    exits with :func:`ragqa.promptfoo.running.run_promptfoo_files`'s code: 0 every assertion
    passed, 1 an assertion failed, 2 bad usage, settings or data (before any judge call), 3 an
    assertion could not be decided because judges failed, 130 interrupted.
    """

    @app.command("test")
    def test_command(
        files: Annotated[
            list[Path],
            typer.Argument(metavar="FILE...", help="promptfoo-style files: tests: [{vars, output, assert: [...]}]."),
        ],
        config: Annotated[
            Path | None, typer.Option("--config", "-c", help="The application.yaml (default: ./application.yaml).")
        ] = None,
        profile: Annotated[
            str | None,
            typer.Option("--profile", "-p", help="Active profiles, comma separated (default: RAGQA_PROFILES_ACTIVE)."),
        ] = None,
        junit_xml: Annotated[
            Path | None,
            typer.Option("--junit-xml", help="Write JUnit XML to this file (one testcase per assertion)."),
        ] = None,
        repeats: Annotated[
            int | None,
            typer.Option(
                "--repeats",
                min=1,
                help="Judge every assertion N times per judge with independent calls; default: ragqa.repeats (1).",
            ),
        ] = None,
        reducer: Annotated[
            str | None,
            typer.Option(
                "--reducer",
                help="How a judge's repeats become its score: mean, median or mode; default: ragqa.repeat-reducer.",
            ),
        ] = None,
    ) -> None:
        """Run promptfoo-style assertions (noise-sensitivity, context-faithfulness, ...) across the judge panel.

        Exit codes: 0 passed, 1 an assertion failed, 2 bad input (before any judge call), 3 judges
        failed so an assertion could not be decided, 130 interrupted.
        """
        from ragqa.container import create_container
        from ragqa.promptfoo.running import run_promptfoo_files

        if config is not None and not config.is_file():
            typer.echo(
                f"error: settings file {config} does not exist; pass --config path/to/application.yaml", err=True
            )
            raise typer.Exit(ExitCode.USAGE)
        profiles = [p.strip() for p in (profile or "").split(",") if p.strip()]
        container = create_container(config, profiles)
        code = run_promptfoo_files(
            files, container=container, junit_xml=junit_xml, err=sys.stderr, repeats=repeats, reducer=reducer
        )
        raise typer.Exit(code)
