"""The run plan: what one run scores, how it judges success, and where results go, as data.

A :class:`RunPlan` is built once per run by :func:`make_plan` from the user's words (CLI options,
:func:`ragqa.evaluate` arguments) and the settings, and every check that needs no judge happens
here: metric specs are parsed and built, thresholds are resolved against the run's metrics (a
typo is an error), and every output path and its format are checked. A :class:`RunPlan` is
then executed by :class:`ragqa.run.runner.Runner`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragqa.errors import ConfigError
from ragqa.jury.probe import parse_probes
from ragqa.languages import check_language
from ragqa.metrics.base import Metric
from ragqa.render.parquet import ParquetPartsRenderer, part_files, require_pyarrow
from ragqa.render.registry import RENDERERS, Renderer, renderer_for
from ragqa.repeats import REDUCERS
from ragqa.run.outputs import check_output_path
from ragqa.run.results_file import complete_lines, partial_path
from ragqa.run.shard import Shard, parse_shard
from ragqa.run.spec import MetricSpec, parse_metric_specs, resolve_thresholds, spec_of
from ragqa.run.validate import Limits
from ragqa.thresholds import OnUndecided, parse_on_undecided

if TYPE_CHECKING:
    from ragqa.evaluation import PanelOptions
    from ragqa.settings import Settings

__all__ = [
    "MetricLike",
    "OnInvalid",
    "Output",
    "RunPlan",
    "build_metrics",
    "check_judge_free",
    "check_kept_results",
    "make_plan",
    "panel_overrides",
    "plan_output",
    "with_overrides",
]

OnInvalid = Literal["raise", "skip"]
"""What an invalid (sample, metric) does: ``raise`` stops the run before any call, ``skip`` leaves it out."""

MetricLike = str | MetricSpec | Metric
"""A metric as a user names it: ``"faithfulness"``, ``"noise_sensitivity(mode=irrelevant)"``, a spec or an object."""


@dataclass(frozen=True)
class Output:
    """One output file and the renderer that writes it.

    Attributes:
        path: the file (checked writable before any call).
        renderer: the format (:func:`ragqa.render.registry.renderer_for` of the suffix, or forced).
        option: the option that named it (``--out``, ``--junit-xml``), for messages.
    """

    path: Path
    renderer: Renderer
    option: str = "--out"

    @property
    def streams(self) -> bool:
        """True for a results file (JSON Lines, Parquet, parts): records and header, streamed and resumable."""
        return self.renderer.name in RESULTS_FORMATS


def _plan_parts(directory: Path, option: str) -> Output:
    """A parts directory's output, after checking it can hold parts (created when missing)."""
    if not directory.is_dir():
        check_output_path(directory, option=option)  # its folder exists and takes files
    require_pyarrow(f"{option} {directory}")
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{option} {directory}: cannot create the folder ({exc.strerror})", key=option) from None
    check_output_path(directory / "part-00000.parquet", option=option)  # the folder takes files
    return Output(directory, ParquetPartsRenderer(), option)


RESULTS_FORMATS = frozenset({"jsonl", "parquet", ParquetPartsRenderer.name})
"""Renderer names of the results files: records and header, written by :class:`ragqa.run.stream.ResultStream`."""


def plan_output(path: str | Path, *, option: str = "--out", fmt: str | None = None) -> Output:
    """Check an output path and pick its renderer, before any judge call.

    A path ending in ``/`` (created here when missing), or a directory that already holds
    parts, is a directory of Parquet parts (:mod:`ragqa.render.parquet`); another existing
    directory is refused, so ``--out .`` never fills a folder with parts by mistake. A Parquet
    output needs pyarrow, checked here.

    Args:
        path: the file (or parts directory) the user asked for.
        option: the option that named it, for messages.
        fmt: a renderer name to use whatever the suffix (``junit`` for ``--junit-xml``).

    Raises:
        ConfigError: when the path is a directory without parts and without a final ``/``, its
            folder is missing or not writable, or no renderer writes its suffix (never a silent JSONL).
        MissingExtraError: a Parquet output without pyarrow (names ``pip install 'ragqa[ray]'``).
    """
    text = str(path)
    if fmt is None and (text.endswith(("/", os.sep)) or part_files(Path(text))):
        return _plan_parts(Path(text), option)
    checked = check_output_path(path, option=option)
    renderer = RENDERERS[fmt] if fmt is not None else renderer_for(checked, option=option)
    if renderer.name == "parquet":
        require_pyarrow(f"{option} {checked}")
    return Output(checked, renderer, option)


@dataclass(frozen=True)
class RunPlan:
    """Everything one run needs besides the samples and the judges.

    Attributes:
        metrics: the metrics, built, in order (keys unique).
        thresholds: ``{metric key: threshold}`` for metrics of the run (resolved, in range).
        on_invalid: ``raise`` (default) or ``skip`` invalid (sample, metric) pairs.
        allow_incomplete: when True, pairs left without an aggregate because judges failed are a
            warning, not exit code 3 (a run that scored nothing is still incomplete).
        max_calls: refuse the run (exit 2) when the estimated judge calls exceed this; ``None`` =
            no cap.
        resume: continue the run recorded in the ``.partial`` file of :attr:`journal` (or in the
            finished JSON Lines output): scores only missing pairs.
        overwrite: start over even though :attr:`journal`'s ``.partial`` file holds results of an
            earlier run (they are deleted); without it, and without ``resume``, such a run is refused.
        retry_failed: with ``resume``, also ask again every judge whose outcome in the kept
            results is a failure; the judges that scored keep their outcomes exactly.
        outputs: the output files.
        limits: input-size guards.
        dataset: how the samples are named in the results header (a path, or a description).
        panel: overrides of :class:`ragqa.evaluation.PanelOptions` (``strategy``, ``quorum``,
            ``language``, ``repeats``, ``reducer``, ``confidence``...) applied to the configured evaluator.
        no_cache: True to run without the on-disk judge cache even when it is enabled.
        on_undecided: what a threshold gate whose confidence interval contains the threshold
            counts as: ``fail`` (exit 4 when nothing else is wrong), ``pass`` or ``warn``.
        shard: score only this shard of the samples (:mod:`ragqa.run.shard`); ``None`` = all.
        cascade_fit: the run is the audit run of a cascade fit (``ragqa calibrate --fit-cascade``):
            its aggregation must be one the fit rebuilds (:data:`ragqa.aggregate.STRATEGIES`, no
            vote per statement), refused by :func:`ragqa.run.panel.build_evaluator` before any judge call.
    """

    metrics: tuple[Metric, ...]
    thresholds: Mapping[str, float] = field(default_factory=dict)
    on_invalid: OnInvalid = "raise"
    allow_incomplete: bool = False
    max_calls: int | None = None
    resume: bool = False
    retry_failed: bool = False
    overwrite: bool = False
    outputs: tuple[Output, ...] = ()
    limits: Limits = field(default_factory=Limits)
    dataset: str = ""
    panel: Mapping[str, Any] = field(default_factory=dict)
    no_cache: bool = False
    on_undecided: OnUndecided = "fail"
    shard: Shard | None = None
    cascade_fit: bool = False

    @property
    def reliability_thresholds(self) -> dict[str, float]:
        """``{metric key: threshold}`` of the per-item reliability section (:mod:`ragqa.jury.reliability`).

        The run's threshold of each metric, else the metric's own ``default_threshold`` (faithfulness
        0.8, hallucination 0.2, ...); a metric with neither is left out (its section says so). Only
        the reliability section reads these: the run's gate and exit code use :attr:`thresholds`.
        """
        out: dict[str, float] = {}
        for metric in self.metrics:
            value = self.thresholds.get(metric.key, metric.default_threshold)
            if value is not None:
                out[metric.key] = float(value)
        return out

    @property
    def specs(self) -> tuple[MetricSpec, ...]:
        """The metrics as specs (name and the options that change the score), in order."""
        return tuple(spec_of(m) for m in self.metrics)

    @property
    def stream(self) -> Output | None:
        """The JSON Lines output that results stream to and resume from (the first one), if any."""
        return next((o for o in self.outputs if o.streams), None)

    @property
    def journal(self) -> Output | None:
        """The output whose ``<path>.partial`` the results stream to while the run goes.

        The JSON Lines output (:attr:`stream`) when there is one, else the first output (an
        HTML-only run keeps its results in ``report.html.partial`` as JSON Lines), else ``None``:
        a run without outputs keeps nothing on disk.
        """
        return self.stream or (self.outputs[0] if self.outputs else None)

    def resume_sources(self) -> list[Path]:
        """Where ``resume`` looks for results, in order: the journal's ``.partial``, then a finished ``.jsonl``.

        A file without one complete line holds nothing yet (a run stopped, or a disk filled,
        before its header was written) and is left out, as if it were not there; so is a file
        that does not exist. Empty without outputs.
        """
        journal = self.journal
        if journal is None:
            return []
        sources = [partial_path(journal.path)] + ([journal.path] if journal.streams else [])
        return [source for source in sources if _holds_results(source)]


def _holds_results(source: Path) -> bool:
    """Whether ``source`` may hold results: JSON Lines with a complete line, a Parquet file, a directory of parts."""
    if source.is_dir():
        return bool(part_files(source))
    if source.suffix.lower() == ".parquet":
        return source.is_file()
    return complete_lines(source) > 0


def build_metrics(metrics: Sequence[MetricLike] | str, defaults: Mapping[str, Mapping[str, Any]]) -> list[Metric]:
    """Build the run's metrics from names, spec strings, specs or metric objects.

    Args:
        metrics: ``"faithfulness,hallucination"``, or a list of names, spec strings, specs or objects.
        defaults: ``ragqa.metric-options``, overlaid by each spec's own options.

    Raises:
        ConfigError: for an empty list, a malformed spec, an unknown metric (did-you-mean), bad
            options, or two metrics with the same key.
        TypeError: for an item that is none of these.
    """
    items: list[MetricLike] = [metrics] if isinstance(metrics, str) else list(metrics)
    built: list[Metric] = []
    for item in items:
        if isinstance(item, Metric):
            built.append(item)
        elif isinstance(item, MetricSpec):
            built.append(item.build(defaults))
        elif isinstance(item, str):
            built.extend(spec.build(defaults) for spec in parse_metric_specs(item, source="metrics"))
        else:
            raise TypeError(f"a metric is a name, a spec string, a MetricSpec or a Metric, not {item!r}")
    if not built:
        raise ConfigError("no metric given; e.g. metrics=['faithfulness']", key="metrics")
    keys = [m.key for m in built]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ConfigError(f"metric {', '.join(repeated)} is given twice; name each metric once", key="metrics")
    return built


def check_judge_free(metrics: Sequence[Metric]) -> None:
    """Refuse metrics that need a judge in a run whose panel has none (``spring.ai.chat-models.list: []``).

    Judge-free metrics (text similarity, tool-call accuracy, semantic similarity) are scored
    without a judge; any other metric would have every score missing.

    Raises:
        ConfigError: naming the metrics that need a judge, the setting and the fixes.
    """
    from ragqa.metrics import METRICS

    judged = [m.key for m in metrics if m.needs_judge]
    if judged:
        free = ", ".join(name for name, cls in METRICS.items() if not cls.needs_judge)
        verb = "needs" if len(judged) == 1 else "need"
        raise ConfigError(
            f"{', '.join(judged)} {verb} a judge, but the panel is empty (spring.ai.chat-models.list: []); "
            "add judges to that list, delete the empty list to use the model of spring.ai.openai.chat, "
            f"run with --profile local (offline judges), or choose judge-free metrics only ({free})",
            key="spring.ai.chat-models.list",
        )


def panel_overrides(
    *,
    language: str | None = None,
    aggregation: str | None = None,
    quorum: int | None = None,
    deadline_s: float | None = None,
    call_plan: str | None = None,
    repeats: int | None = None,
    reducer: str | None = None,
    confidence: float | None = None,
    cascade_audit: bool | None = None,
    probe: str | Sequence[str] | None = None,
) -> dict[str, Any]:
    """The :class:`~ragqa.evaluation.PanelOptions` fields a caller overrides (``None`` = the settings' value).

    Args:
        language: ``en`` or ``ru``.
        aggregation: the aggregation strategy (``mean``... ``claim-vote``, ``dawid-skene``).
        quorum: judges with a score needed for an aggregate (>= 1).
        deadline_s: wall-clock budget of the run in seconds (> 0).
        call_plan: ``batched`` or ``ragas`` (see ``docs/call-plan.md``).
        repeats: times every judge scores every (sample, metric) (>= 1; :mod:`ragqa.repeats`).
        reducer: how a judge's repeats become its score: ``mean``, ``median`` or ``mode``.
        confidence: level of the report's confidence intervals, in (0, 1) (see ``docs/uncertainty.md``).
        cascade_audit: every tier of the cascade scores every item, and the report compares the
            cascade's verdicts with the full panel's (``docs/jury.md``); ``None`` or False: off.
        probe: bias probes to make (``"order"``; :mod:`ragqa.jury.probe`); an empty list or ``None``
            keeps ``ragqa.probe.enabled``.

    Returns:
        ``{field: value}`` for the arguments given; checked by :func:`make_plan`.
    """
    given = {
        "language": language,
        "strategy": aggregation,
        "quorum": quorum,
        "deadline_s": deadline_s,
        "call_plan": call_plan,
        "repeats": repeats,
        "reducer": reducer,
        "confidence": confidence,
        "cascade_audit": cascade_audit or None,
        "probes": probe if probe else None,
    }
    return {k: v for k, v in given.items() if v is not None}


def with_overrides(options: PanelOptions, panel: Mapping[str, Any]) -> PanelOptions:
    """``options`` with the caller's overrides (:func:`panel_overrides`) applied, after checking them.

    Raises:
        ConfigError: for an override out of range (a language, call plan, aggregation, quorum,
            repeats or reducer that does not exist), naming its option.
    """
    _check_panel(panel)
    return dataclasses.replace(options, **dict(panel))


def _check_panel(panel: Mapping[str, Any]) -> None:
    from ragqa.aggregate import PANEL_STRATEGIES

    if "language" in panel:
        try:
            check_language(panel["language"])
        except ConfigError as exc:
            raise ConfigError(str(exc), key="--language") from None
    if "call_plan" in panel and panel["call_plan"] not in ("batched", "ragas"):
        raise ConfigError(f"call plan {panel['call_plan']!r}: use batched or ragas", key="--call-plan")
    if "strategy" in panel and panel["strategy"] not in PANEL_STRATEGIES:
        raise ConfigError(
            f"aggregation {panel['strategy']!r}: use one of {', '.join(PANEL_STRATEGIES)}", key="--aggregation"
        )
    quorum = panel.get("quorum")
    if quorum is not None and (isinstance(quorum, bool) or not isinstance(quorum, int) or quorum < 1):
        raise ConfigError(f"quorum {quorum!r}: use an integer >= 1", key="--quorum")
    repeats = panel.get("repeats")
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1):
        raise ConfigError(f"repeats {repeats!r}: use an integer >= 1", key="--repeats")
    if "reducer" in panel and panel["reducer"] not in REDUCERS:
        raise ConfigError(f"reducer {panel['reducer']!r}: use one of {', '.join(REDUCERS)}", key="--reducer")
    confidence = panel.get("confidence")
    if confidence is not None and (
        isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 < confidence < 1
    ):
        raise ConfigError(f"confidence {confidence!r}: use a level between 0 and 1, e.g. 0.95", key="--confidence")
    if "probes" in panel:
        try:
            parse_probes(panel["probes"])
        except ValueError as exc:
            raise ConfigError(f"--probe: {exc}", key="--probe") from None
    deadline = panel.get("deadline_s")
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, int | float) or deadline <= 0):
        raise ConfigError(f"deadline {deadline!r}: use a number of seconds > 0", key="--deadline")


def make_plan(
    settings: Settings,
    *,
    metrics: Sequence[MetricLike] | str | None = None,
    thresholds: Mapping[str, float] | None = None,
    threshold_source: str = "--threshold",
    on_invalid: OnInvalid = "raise",
    allow_incomplete: bool = False,
    max_calls: int | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    outputs: Sequence[Output] = (),
    dataset: str = "",
    panel: Mapping[str, Any] | None = None,
    no_cache: bool = False,
    overwrite: bool = False,
    on_undecided: str | None = None,
    shard: str | Shard | None = None,
    cascade_fit: bool = False,
) -> RunPlan:
    """Build and check a run plan; no judge is built or called.

    Args:
        settings: the loaded settings (``ragqa.metrics``, ``metric-options``, ``thresholds``, ``limits``).
        metrics: the run's metrics (default: ``ragqa.metrics``).
        thresholds: the user's thresholds ``{spec text: value}``; each must match a metric of
            the run. They override ``ragqa.thresholds`` (which may name metrics of other runs,
            but not unknown metrics).
        threshold_source: how the user's thresholds are named in errors.
        on_invalid: ``raise`` or ``skip``.
        allow_incomplete: see :attr:`RunPlan.allow_incomplete`.
        max_calls: the call cap (default: ``ragqa.limits.max-calls``).
        resume: see :attr:`RunPlan.resume`; needs an output.
        retry_failed: see :attr:`RunPlan.retry_failed`; needs ``resume``.
        outputs: checked outputs (:func:`plan_output`).
        dataset: the dataset's name for the results header.
        panel: PanelOptions overrides.
        no_cache: run without the judge cache.
        overwrite: see :attr:`RunPlan.overwrite`.
        on_undecided: ``fail``, ``pass`` or ``warn`` (default: ``ragqa.on-undecided``).
        shard: ``"K/N"`` to score only shard K of N (:func:`ragqa.run.shard.parse_shard`).
        cascade_fit: see :attr:`RunPlan.cascade_fit`.

    Raises:
        ConfigError: for any problem above, a metric that needs a judge when the panel has none
            (:func:`check_judge_free`), or a ``.partial`` file of an earlier run that neither
            ``resume`` nor ``overwrite`` accounts for (:func:`check_kept_results`), before any
            judge call.
    """
    if on_invalid not in ("raise", "skip"):
        raise ConfigError(f"on_invalid {on_invalid!r}: use raise or skip", key="--on-invalid")
    if resume and overwrite:
        raise ConfigError(
            "--resume keeps an earlier run's results and --overwrite deletes them; give one", key="--overwrite"
        )
    _check_panel(panel or {})
    built = build_metrics(metrics if metrics is not None else settings.ragqa.metrics, settings.ragqa.metric_options)
    if settings.spring.ai.chat_models.empty_panel:
        check_judge_free(built)
    resolved = resolve_thresholds(settings.ragqa.thresholds, built, source="ragqa.thresholds", require_in_run=False)
    resolved.update(resolve_thresholds(thresholds or {}, built, source=threshold_source, require_in_run=True))
    paths = [o.path.resolve() for o in outputs]
    if len(set(paths)) != len(paths):
        raise ConfigError("the same output file is named twice; give each output its own path", key="--out")
    plan = RunPlan(
        metrics=tuple(built),
        thresholds=resolved,
        on_invalid=on_invalid,
        allow_incomplete=allow_incomplete,
        max_calls=max_calls if max_calls is not None else settings.ragqa.limits.max_calls,
        resume=resume,
        retry_failed=retry_failed,
        outputs=tuple(outputs),
        limits=Limits.from_settings(settings),
        dataset=dataset,
        panel=dict(panel or {}),
        no_cache=no_cache,
        overwrite=overwrite,
        on_undecided=(parse_on_undecided(on_undecided) if on_undecided is not None else settings.ragqa.on_undecided),
        shard=parse_shard(shard),
        cascade_fit=cascade_fit,
    )
    if resume and plan.journal is None:
        raise ConfigError("--resume needs an output to resume from, e.g. --out results.jsonl", key="--resume")
    check_kept_results(plan)
    if retry_failed and not resume:
        raise ConfigError(
            "--retry-failed re-asks the failed judges of a kept results file; use it with --resume",
            key="--retry-failed",
        )
    return plan


def check_kept_results(plan: RunPlan) -> None:
    """Refuse a run that would delete results an earlier run paid for.

    The ``.partial`` file of :attr:`RunPlan.journal` is an earlier run's results when that run
    was interrupted or failed to write its outputs. A new run without ``resume`` would start it
    afresh, so unless ``overwrite`` says so, it stops here. A partial file that holds no result
    (empty, or a header only) is nothing to keep.

    Raises:
        ConfigError: naming the file, how many results it holds and the two fixes (``--resume``
            or ``--overwrite``; key ``--overwrite``).
    """
    if plan.journal is None or plan.resume or plan.overwrite:
        return
    partial = partial_path(plan.journal.path)
    held = complete_lines(partial) - 1  # the first line is the header
    if held > 0:
        raise ConfigError(
            f"{partial} holds {held} result(s) of an earlier run that did not finish; continue it with --resume "
            "(only the missing pairs are scored), or pass --overwrite to delete them and start over "
            "(from Python: resume=True or overwrite=True)",
            key="--overwrite",
        )
