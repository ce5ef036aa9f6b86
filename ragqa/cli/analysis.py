"""Commands over finished runs: ``ragqa report``, ``ragqa compare``, ``ragqa calibrate``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragqa.cli._common import (
    _clean_errors,
    _ConfigOption,
    _fail,
    _is_ci,
    _ProfileOption,
    _profiles,
    _stderr,
    _stdout,
    app,
    parse_thresholds,
)
from ragqa.errors import ConfigError
from ragqa.languages import check_language
from ragqa.run.progress import RunProgress, choose_mode


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
    html_path: Annotated[
        Path | None, typer.Option("--html", help="Also write the comparison as a self-contained HTML page here.")
    ] = None,
) -> None:
    """Compare two runs: mean delta per metric and judge with a paired bootstrap CI, flips, judge failures."""
    import json

    from ragqa.compare import compare_files, exit_code
    from ragqa.render.atomic import replace_text
    from ragqa.render.comparison import comparison_html, comparison_renderable
    from ragqa.run.outputs import check_output_path

    with _clean_errors():
        if json_path is not None:
            check_output_path(json_path, option="--json")
        if html_path is not None:
            check_output_path(html_path, option="--html")
        comparison = compare_files(a, b, thresholds=parse_thresholds(threshold or []), tolerance=tolerance)
    with _clean_errors():  # a full disk: exit 5
        if json_path is not None:
            replace_text(json_path, json.dumps(comparison.to_json(), ensure_ascii=False, indent=2) + "\n")
        if html_path is not None:
            replace_text(html_path, comparison_html(comparison))
    _stdout().print(comparison_renderable(comparison))
    for option, path in (("--json", json_path), ("--html", html_path)):
        if path is not None:
            _stderr().print(f"wrote {option} {path}")
    raise typer.Exit(exit_code(comparison))


@app.command(
    "merge",
    epilog="Exit codes: 0 merged; 2 the parts do not make one run (a gap, an overlap, an unfinished part, parts of "
    "different runs), nothing written.",
)
def merge_command(
    parts: Annotated[list[Path], typer.Argument(help="The parts: results files of ragqa evaluate --shard K/N --out.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The merged results file (.jsonl or .parquet).")],
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", help="The dataset the parts were made from, to write the records in its order."),
    ] = None,
) -> None:
    """Join the parts of a sharded run (--shard K/N) into one run's results file; refuses gaps and overlaps."""
    from ragqa.run.merge import dataset_ids, merge_results
    from ragqa.run.outputs import check_output_path

    with _clean_errors():
        check_output_path(out, option="--out")
        ids = dataset_ids(dataset, parts) if dataset is not None else None
        merged = merge_results(parts, out, dataset_ids=ids)
    order = "dataset order" if merged.dataset_order else "part by part (give --dataset for dataset order)"
    _stderr().print(
        f"merged {merged.parts} part(s): {merged.records} result(s) of {merged.samples} sample(s), {order}; "
        f"wrote --out {merged.path}",
        markup=False,
        highlight=False,
    )


@app.command("report")
def report_command(
    results: Annotated[
        Path,
        typer.Argument(
            help="A results file written by ragqa evaluate --out (results.jsonl, results.parquet or a parts directory)."
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the report; .html (or .json, .csv...).")
    ],
    language: Annotated[
        str, typer.Option("--language", help="Report language: en, ru or an installed language pack's code.")
    ] = "en",
    threshold: Annotated[
        list[str] | None, typer.Option("--threshold", help="metric=value: mark samples below it. Repeatable.")
    ] = None,
) -> None:
    """Rebuild the report of a run from its results file; the drill-down shows inputs when the dataset is readable."""
    from ragqa.run.replay import report_from_results, write_report

    try:
        check_language(language)
    except ConfigError as exc:
        _fail(f"--language: {exc}")
    with _clean_errors():
        chosen = parse_thresholds(threshold or [])
        report, note = report_from_results(results, thresholds=chosen)
        written = write_report(report, output, language=language, thresholds=chosen)
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
    fit_cascade: Annotated[
        Path | None,
        typer.Option(
            "--fit-cascade",
            help="Also fit the cascade's escalation rule (ragqa.jury.cascade enabled: every tier scores every "
            "sample) and write it here, for ragqa.jury.cascade.fit.",
        ),
    ] = None,
    cascade_target: Annotated[
        float | None,
        typer.Option(
            "--cascade-target",
            min=0.0,
            max=1.0,
            help="Agreement with the labels the fitted cascade must keep (default: the full panel's, less 0.01).",
        ),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the on-disk judge cache.")] = False,
    progress: Annotated[
        bool,
        typer.Option(
            "--progress/--no-progress",
            help="Show the scoring's progress on stderr, with rate and ETA (as ragqa evaluate).",
        ),
    ] = True,
) -> None:
    """Score DATASET and report each judge's and the panel's agreement with human labels, with 95% CIs.

    Before the first judge call it prints the run's estimate (judge calls, prompt tokens) on
    stderr, as ``ragqa evaluate`` does, then shows the scoring's progress.
    """
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
            progress=RunProgress(choose_mode(progress, ci=_is_ci()), show_estimate=True),
            fit_cascade=fit_cascade,
            cascade_target=cascade_target,
        )
    stdout = _stdout()
    for table in calibration_table(result):
        stdout.print(table)
    fit = result.cascade_fit
    if fit is not None:
        spread = "off" if fit["spread"] is None else fit["spread"]
        stdout.print(
            f"cascade rule fitted on {fit['n']} labelled item(s) of {fit['data']}: spread {spread}, "
            f"margin {fit['margin']}, split {'on' if fit['split'] else 'off'} · agreement with the labels "
            f"{fit['agreement']:.3f} (full panel {fit['full_agreement']:.3f}, target {fit['target']:.3f}) · "
            f"tier-2 share {fit['tier2_share']:.3f}" + ("" if fit["reached"] else " · target not reached: escalate all")
        )
        _stderr().print(f"wrote --fit-cascade {fit_cascade}")
    if json_out is not None:
        from ragqa.render.atomic import replace_text

        replace_text(json_out, result.model_dump_json(indent=2) + "\n")
        _stderr().print(f"wrote --json {json_out}")
