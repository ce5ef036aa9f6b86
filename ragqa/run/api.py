"""The one-call Python API: :func:`evaluate` and :func:`aevaluate` (exported as ``ragqa.evaluate``).

Both run the same :class:`~ragqa.run.runner.Runner` as ``ragqa evaluate``: samples validated once,
thresholds resolved against the run, outputs checked before the first call, results streamed to a
``.jsonl`` output and resumable. The coroutine always runs on ragqa's own loop thread
(:mod:`ragqa.run.loop`), so :func:`evaluate` works in a notebook (inside a running loop) and one
container's HTTP clients stay valid from one call to the next.
"""

from __future__ import annotations

import inspect
import logging
import warnings
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragqa.errors import ConfigError
from ragqa.run.engine import make_engine
from ragqa.run.exit_codes import ExitCode
from ragqa.run.loop import default_loop, run_sync
from ragqa.run.outcome import RunResult
from ragqa.run.plan import MetricLike, OnInvalid, make_plan, panel_overrides, plan_output
from ragqa.run.progress import RunProgress, choose_mode
from ragqa.run.runner import Engine, Runner
from ragqa.schema import Sample
from ragqa.thresholds import UndecidedWarning

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.report import Report
    from ragqa.run.estimate import RunEstimate

__all__ = ["IncompleteRunWarning", "aevaluate", "evaluate", "samples_from_data"]

log = logging.getLogger(__name__)


def samples_from_data(data: Any, *, column_map: Mapping[str, str] | None = None) -> tuple[list[Sample], str]:
    """Turn what a user passes as data into samples, with the guards of :mod:`ragqa.datasets`.

    Args:
        data: a path (``str`` or :class:`~pathlib.Path`) to a JSONL, JSON, CSV or Parquet file; a
            list of dicts and/or :class:`~ragqa.schema.Sample` objects; a dict of equal-length columns
            (RAGAS's ``Dataset.from_dict`` shape, or a Hugging Face ``Dataset``); a pandas
            DataFrame (one row per sample, RAGAS column names); or a ``ray.data.Dataset`` (its rows,
            read through :meth:`iter_rows`, located as ``index N`` in errors).
        column_map: ``{dataset_column: sample_field}`` renames (files, dicts and DataFrames).

    Returns:
        ``(samples, name)``: the samples in order and how the results header names them.

    Raises:
        DatasetError: for a bad file, record or field (line / index, field and fix), or a dict
            whose columns are not lists of one length.
        TypeError: for data of another kind.
    """
    from ragqa.datasets import load_dataset, samples_from_columns, samples_from_records

    if isinstance(data, str | Path):
        return load_dataset(data, column_map=column_map), str(data)
    if type(data).__module__.startswith("ray.data") and hasattr(data, "iter_rows"):  # without importing Ray
        samples = samples_from_records(data.iter_rows(), column_map=column_map)
        return samples, f"a Ray Dataset of {len(samples)} row(s)"
    if isinstance(data, Mapping) or (hasattr(data, "column_names") and hasattr(data, "to_dict")):
        columns = data if isinstance(data, Mapping) else data.to_dict()  # a dict, or a Hugging Face Dataset
        samples = samples_from_columns(columns, column_map=column_map)
        return samples, f"{len(samples)} sample(s) from a dict of columns"
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # a pandas DataFrame, without importing pandas
        records = data.to_dict("records")
        return samples_from_records(records, column_map=column_map), f"a DataFrame of {len(records)} row(s)"
    if isinstance(data, Sequence) and not isinstance(data, bytes):
        records = []
        for i, item in enumerate(data):
            if isinstance(item, Sample):
                records.append(item.model_dump(mode="python", exclude_none=True))
            elif isinstance(item, Mapping):
                records.append(dict(item))
            else:
                raise TypeError(f"data item {i} is {type(item).__name__}; give dicts or ragqa.Sample objects")
        return samples_from_records(records, column_map=column_map), f"{len(records)} record(s) from Python"
    raise TypeError(
        f"data is {type(data).__name__}; give a path (.jsonl, .json, .csv, .parquet), a list of dicts or Samples, "
        "a dict of columns, a pandas DataFrame or a ray.data.Dataset"
    )


class IncompleteRunWarning(RuntimeWarning):
    """A run returned results without an aggregate: nothing was scored, or judges failed on some pairs.

    The CLI exits 3 for such a run (``ragqa.run.exit_codes``); from Python the report is returned
    and this warning says so, naming how many pairs lack an aggregate and why to look at
    ``report.results``' failures. Turn it into an error with ``warnings.simplefilter("error",
    IncompleteRunWarning)`` where a silent partial run must fail.
    """


def _warn_if_incomplete(result: RunResult) -> None:
    """Warn (:class:`IncompleteRunWarning`) when the CLI would have exited 3 for ``result`` as incomplete."""
    if result.exit_code is not ExitCode.INCOMPLETE:
        return
    report = result.report
    scored = any(s.n_scored for s in report.summaries)
    what = (
        f"{len(result.incomplete)} (sample, metric) pair(s) have no aggregate because judges failed"
        if scored
        else "nothing was scored: no (sample, metric) pair has an aggregate"
    )
    warnings.warn(
        f"incomplete run: {what}; see the judges' failures in report.results (the CLI exits 3 here)",
        IncompleteRunWarning,
        stacklevel=2,
    )


def _warn_if_undecided(result: RunResult) -> None:
    """Warn (:class:`~ragqa.thresholds.UndecidedWarning`) for each threshold inside its metric's interval.

    The CLI exits 4 for such a run when nothing else is wrong (``on-undecided: fail``); from
    Python the report is returned and this warning names each undecided gate.
    """
    for verdict in result.verdicts:
        if verdict.undecided:
            warnings.warn(f"{verdict} (see docs/cli.md#undecided-gates)", UndecidedWarning, stacklevel=3)


async def _run(
    data: Any,
    metrics: Sequence[MetricLike] | str | None,
    *,
    config: str | Path | None,
    profile: str | Sequence[str] | None,
    thresholds: Mapping[str, float] | None,
    out: str | Path | Sequence[str | Path] | None,
    column_map: Mapping[str, str] | None,
    on_invalid: OnInvalid,
    allow_incomplete: bool,
    max_calls: int | None,
    resume: bool,
    no_cache: bool,
    panel: Mapping[str, Any],
    retry_failed: bool = False,
    overwrite: bool = False,
    container: Container | None,
    keep_results: bool = True,
    shard: str | None = None,
    engine: Engine | None = None,
    progress: bool | RunProgress | None = None,
    cascade_fit: bool = False,
) -> Report:
    from ragqa.container import close_container, create_container

    samples: Iterable[Sample]
    if not keep_results and isinstance(data, str | Path) and Path(data).suffix.lower() in (".jsonl", ".ndjson"):
        from ragqa.run.source import JsonlSamples

        samples, name = JsonlSamples(data, column_map=column_map), str(data)
        for _ in samples:  # every loading check, before settings or judges
            pass
    else:
        samples, name = samples_from_data(data, column_map=column_map)
    owned = container is None
    if container is None:
        profiles = [p.strip() for p in profile.split(",")] if isinstance(profile, str) else list(profile or ())
        if config is not None and not Path(config).is_file():
            raise ConfigError(f"settings file {config} does not exist", key="config")
        container = create_container(config, [p for p in profiles if p])
    try:
        paths = [] if out is None else [out] if isinstance(out, str | Path) else list(out)
        plan = make_plan(
            container.settings(),
            metrics=metrics,
            thresholds=thresholds,
            threshold_source="thresholds",
            on_invalid=on_invalid,
            allow_incomplete=allow_incomplete,
            max_calls=max_calls,
            resume=resume,
            retry_failed=retry_failed,
            overwrite=overwrite,
            outputs=[plan_output(p, option="out") for p in paths],
            dataset=name,
            panel=panel,
            no_cache=no_cache,
            shard=shard,
            cascade_fit=cascade_fit,
        )
        shown = progress if isinstance(progress, RunProgress) else RunProgress(choose_mode(progress), transient=False)

        def on_estimate(estimate: RunEstimate) -> None:
            log.info("%s", estimate)
            shown.start(estimate)

        runner = Runner(
            plan,
            container,
            on_estimate=on_estimate,
            on_progress=shown.advance,
            keep_results=keep_results,
            engine=engine,
        )
        try:
            result = await runner.arun(samples)
        finally:
            shown.stop()
        _warn_if_incomplete(result)
        _warn_if_undecided(result)
        return result.report
    finally:
        if owned:
            await close_container(container)


def _evaluation(a: Mapping[str, Any], *, cascade_fit: bool = False) -> Coroutine[Any, Any, Report]:
    """The run of :func:`evaluate` / :func:`aevaluate` as a coroutine, from their parameters by name.

    Both pass ``dict(locals())``, so this is the one place the public options become a run;
    :func:`calibration_run` adds ``cascade_fit`` (:attr:`~ragqa.run.plan.RunPlan.cascade_fit`).
    """
    return _run(
        a["data"],
        a["metrics"],
        config=a["config"],
        profile=a["profile"],
        thresholds=a["thresholds"],
        out=a["out"],
        column_map=a["column_map"],
        on_invalid=a["on_invalid"],
        allow_incomplete=a["allow_incomplete"],
        max_calls=a["max_calls"],
        resume=a["resume"],
        retry_failed=a["retry_failed"],
        no_cache=a["no_cache"],
        panel=panel_overrides(
            language=a["language"],
            aggregation=a["aggregation"],
            quorum=a["quorum"],
            deadline_s=a["deadline_s"],
            call_plan=a["call_plan"],
            repeats=a["repeats"],
            reducer=a["reducer"],
            confidence=a["confidence"],
            cascade_audit=a["cascade_audit"],
            probe=a["probe"],
        ),
        container=a["container"],
        keep_results=a["keep_results"],
        overwrite=a["overwrite"],
        shard=a["shard"],
        engine=make_engine(a["engine"], address=a["address"], workers=a["workers"], batch_size=a["batch_size"]),
        progress=a["progress"],
        cascade_fit=cascade_fit,
    )


def calibration_run(
    data: Any, metrics: Sequence[MetricLike] | str | None, *, cascade_fit: bool, **options: Any
) -> Coroutine[Any, Any, Report]:
    """The run of ``aevaluate(data, metrics, **options)`` as a coroutine, for :mod:`ragqa.calibration`.

    The same run as :func:`aevaluate`'s (``options`` are its keywords, the others at their
    defaults); with ``cascade_fit`` the run is the audit run of a cascade fit, and a voting
    aggregation is refused before any judge call (:attr:`~ragqa.run.plan.RunPlan.cascade_fit`)
    rather than by the fit after scoring. Await it on ragqa's loop (``default_loop().arun``) or
    run it with :func:`~ragqa.run.loop.run_sync`, as :func:`aevaluate` and :func:`evaluate` do.

    Raises:
        TypeError: for a keyword :func:`aevaluate` does not take.
    """
    arguments = inspect.signature(aevaluate).bind(data, metrics, **options)
    arguments.apply_defaults()
    return _evaluation(arguments.arguments, cascade_fit=cascade_fit)


async def aevaluate(
    data: Any,
    metrics: Sequence[MetricLike] | str | None = None,
    *,
    config: str | Path | None = None,
    profile: str | Sequence[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    out: str | Path | Sequence[str | Path] | None = None,
    column_map: Mapping[str, str] | None = None,
    on_invalid: OnInvalid = "raise",
    allow_incomplete: bool = False,
    max_calls: int | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    no_cache: bool = False,
    language: str | None = None,
    aggregation: str | None = None,
    quorum: int | None = None,
    deadline_s: float | None = None,
    container: Container | None = None,
    call_plan: str | None = None,
    keep_results: bool = True,
    overwrite: bool = False,
    shard: str | None = None,
    repeats: int | None = None,
    reducer: str | None = None,
    engine: str | None = None,
    address: str | None = None,
    workers: int | str | None = None,
    batch_size: int | None = None,
    progress: bool | RunProgress | None = None,
    confidence: float | None = None,
    cascade_audit: bool = False,
    probe: str | Sequence[str] | None = None,
) -> Report:
    """Score ``data`` with ``metrics`` across the judge panel of the settings; the async form of :func:`evaluate`.

    The run happens on ragqa's loop thread; awaiting it from any event loop is safe, and
    cancelling the await cancels the run (finished results stay in the output's ``.partial`` file).
    Arguments, return value and errors are those of :func:`evaluate`.
    """
    arguments = dict(locals())  # exactly the parameters, as evaluate passes them too
    return await default_loop().arun(_evaluation(arguments))


def evaluate(
    data: Any,
    metrics: Sequence[MetricLike] | str | None = None,
    *,
    config: str | Path | None = None,
    profile: str | Sequence[str] | None = None,
    thresholds: Mapping[str, float] | None = None,
    out: str | Path | Sequence[str | Path] | None = None,
    column_map: Mapping[str, str] | None = None,
    on_invalid: OnInvalid = "raise",
    allow_incomplete: bool = False,
    max_calls: int | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    no_cache: bool = False,
    language: str | None = None,
    aggregation: str | None = None,
    quorum: int | None = None,
    deadline_s: float | None = None,
    container: Container | None = None,
    call_plan: str | None = None,
    keep_results: bool = True,
    overwrite: bool = False,
    shard: str | None = None,
    repeats: int | None = None,
    reducer: str | None = None,
    engine: str | None = None,
    address: str | None = None,
    workers: int | str | None = None,
    batch_size: int | None = None,
    progress: bool | RunProgress | None = None,
    confidence: float | None = None,
    cascade_audit: bool = False,
    probe: str | Sequence[str] | None = None,
) -> Report:
    """Score ``data`` with ``metrics`` across the judge panel of the settings, in one call.

    Example::

        report = ragqa.evaluate("examples/datasets/it_helpdesk.jsonl", metrics=["faithfulness"], profile="local")
        report.summary("faithfulness").aggregate_mean   # mean of the per-sample panel aggregates, 0..1

    Works in plain scripts and inside a running event loop (a notebook cell).

    Args:
        data: a path to a ``.jsonl``/``.json``/``.csv``/``.parquet`` dataset, a list of dicts or
            :class:`~ragqa.schema.Sample` objects, a dict of equal-length columns (RAGAS's
            ``Dataset.from_dict`` shape), a pandas DataFrame (RAGAS field names), or a
            ``ray.data.Dataset``.
        metrics: names (``"faithfulness"``), spec strings (``"noise_sensitivity(mode=irrelevant)"``),
            :class:`~ragqa.run.spec.MetricSpec` or metric objects; default ``ragqa.metrics``.
        config: the ``application.yaml`` (default: ``./application.yaml`` when present, else defaults).
        profile: active profiles (``"local"`` is the offline panel built into ragqa).
        thresholds: ``{metric: value}``; each must name a metric of the run (did-you-mean on
            typos). Checked against the aggregate means and written to JUnit outputs.
        out: one output path or several (``.jsonl``, ``.parquet``, ``.json``, ``.xml`` JUnit, a
            ``"dir/"`` ending in ``/`` for a directory of Parquet parts, and any format registered in
            :mod:`ragqa.render.registry`); the first results file (``.jsonl``, ``.parquet``, parts)
            gets the run's header.
        column_map: ``{dataset_column: sample_field}`` renames.
        on_invalid: ``raise`` (stop before any call, listing every problem) or ``skip`` the
            invalid (sample, metric) pairs (listed in ``report.skipped``).
        allow_incomplete: accepted for symmetry with the CLI (the report is returned either way).
        max_calls: refuse the run when the estimated judge calls exceed this (default
            ``ragqa.limits.max-calls``).
        resume: continue the run recorded in the first output's ``.partial`` file (results stream
            there as they are made, whatever the output's format) or in a finished results file
            (``.jsonl``, ``.parquet``, parts): only missing pairs are scored.
        retry_failed: with ``resume``, also ask again every judge whose kept outcome is a failure
            (a judge that was down or hung); the outcomes that scored are kept exactly.
        no_cache: run without the on-disk judge cache.
        language: ``en`` or ``ru`` (default ``ragqa.language``).
        aggregation: ``mean``, ``median``, ``min``, ``max`` or ``majority``; or ``claim-vote`` or
            ``dawid-skene``, a vote per statement (``docs/jury.md``).
        quorum: judges with a score needed for an aggregate.
        deadline_s: wall-clock budget of the run in seconds (default ``ragqa.run.deadline``); calls
            still running then end as ``JudgeTimeout`` failures.
        container: a container to use (and not close) instead of one made from ``config`` and ``profile``.
        call_plan: ``batched`` or ``ragas`` (default ``ragqa.call-plan``): one judge call per step for
            all contexts, questions or texts, or RAGAS's calls one per item (``docs/call-plan.md``);
            the scores have the same meaning, the call counts differ.
        keep_results: keep every result and sample in the report (default). ``False`` keeps only
            the per-metric summaries (the same numbers) and the results with a judge failure, so
            memory stays flat in the dataset's size; give a ``.jsonl`` ``out`` to keep the results
            on disk, and a ``.jsonl`` path as ``data`` to read it one line at a time. Outputs that
            render every result (``.json``, ``.csv``, JUnit, HTML) keep them anyway.
        overwrite: start over although the output's ``.partial`` file holds results of an
            earlier run that did not finish (they are deleted); without it, and without
            ``resume``, such a run raises :class:`~ragqa.errors.ConfigError`.
        shard: ``"K/N"`` to score only part K of N of the samples, split by id so that every
            machine agrees (:mod:`ragqa.run.shard`); join the parts' ``.jsonl`` outputs with
            :func:`ragqa.run.merge.merge_results` or ``ragqa merge``.
        repeats: how many times every judge scores every (sample, metric), with independent calls
            (default ``ragqa.repeats``, 1); each judge's score is then reduced over its repeats and
            every repeat is kept in :attr:`~ragqa.schema.JudgeOutcome.repeats` (:mod:`ragqa.repeats`).
        reducer: ``mean``, ``median`` or ``mode`` (binary metrics): how a judge's repeats become its
            score (default ``ragqa.repeat-reducer``, ``mean``).
        engine: ``local`` (default: this process) or ``ray``: score on a Ray cluster, one panel per
            worker, each provider's limits held across the cluster (``pip install 'ragqa[ray]'``;
            ``docs/scale.md``). The report, outputs and exit code are those of a local run.
        address: with ``engine="ray"``: ``auto`` or ``ray://host:port`` of a cluster to join;
            default: start a local cluster listening on 127.0.0.1 only.
        workers: with ``engine="ray"``: panel actors, one CPU each: a count, or ``"MIN:MAX"`` to start
            ``MIN`` and add actors up to ``MAX`` while batches wait (default: this machine's CPUs).
        batch_size: with ``engine="ray"``: samples per batch handed to a worker (default 64).
        progress: show progress with rate and ETA on stderr while the judges work. ``None``
            (default): a bar in a terminal, a line updated in place in a notebook, nothing
            otherwise (a script whose stderr is a file or a pipe); ``True``: also a plain line every
            ~10% where there is no terminal; ``False``: nothing. A
            :class:`~ragqa.run.progress.RunProgress` is used as given.
        confidence: level of the confidence intervals on every aggregate and judge mean, in (0, 1)
            (default ``ragqa.confidence``, 0.95; ``docs/uncertainty.md``).
        cascade_audit: with ``ragqa.jury.cascade`` enabled, every tier scores every sample (the full
            panel's scores) and each summary's ``cascade`` compares the cascade's pass/fail verdicts with
            the full panel's and gives the share of tier-2 calls it would have made (``docs/jury.md``).
        probe: bias probes beside the scores (``"order"``, default ``ragqa.probe.enabled``): the
            order probe re-judges context precision and faithfulness on a seeded share of the samples
            (``ragqa.probe.order.share``) with the contexts reversed and reports each judge's position
            consistency in :attr:`~ragqa.report.Report.order_probe`; it never changes a score, and its
            calls count in the estimate and the usage (``docs/panel.md``, "Order bias probe").

    Returns:
        The :class:`~ragqa.report.Report`: one result per (sample, metric) in dataset order
        (with ``keep_results=False``, only those with a judge failure), per-metric summaries,
        skipped pairs, wall time and cache counts.

    Raises:
        InvalidSamples: every problem of the samples (``on_invalid="raise"``), before any call.
        DatasetError: a bad file or record.
        ConfigError: bad settings, an unknown metric, a threshold typo, a bad output path or
            format, a run over ``max_calls`` (:class:`~ragqa.run.runner.TooManyCalls`), or a
            resume of another run, or an earlier run's ``.partial`` file without ``resume`` or
            ``overwrite``, or ``engine="ray"`` without Ray installed; all before any call.
        OutputError: an output could not be written (a full disk); the results made so far stay
            in the ``.partial`` file it names (its ``partial`` attribute), and ``resume=True`` goes on
            from it.
        TypeError: data or metrics of the wrong kind.
        KeyboardInterrupt: when interrupted; finished results stay in the output's ``.partial`` file.

    Warns:
        IncompleteRunWarning: when the CLI would exit 3 (nothing scored, or pairs without an
            aggregate because judges failed and ``allow_incomplete`` is False); the report is
            returned all the same.
    """
    arguments = dict(locals())  # exactly the parameters, as aevaluate passes them too
    return run_sync(_evaluation(arguments))
