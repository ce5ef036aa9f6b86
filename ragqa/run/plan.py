"""The run plan: what one run scores, how it judges success, and where results go, as data.

A :class:`RunPlan` is built once per run by :func:`make_plan` from the user's words (CLI options,
:func:`ragqa.evaluate` arguments) and the settings, and every check that needs no judge happens
here: metric specs are parsed and built, thresholds are resolved against the run's metrics (a
typo is an error), and every output path and its format are checked. A :class:`RunPlan` is
then executed by :class:`ragqa.run.runner.Runner`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ragqa.errors import ConfigError
from ragqa.metrics.base import Metric
from ragqa.render.registry import RENDERERS, Renderer, renderer_for
from ragqa.run.outputs import check_output_path
from ragqa.run.shard import Shard, parse_shard
from ragqa.run.spec import MetricSpec, parse_metric_specs, resolve_thresholds, spec_of
from ragqa.run.validate import Limits

if TYPE_CHECKING:
    from ragqa.settings import Settings

__all__ = [
    "MetricLike",
    "OnInvalid",
    "Output",
    "RunPlan",
    "build_metrics",
    "check_judge_free",
    "make_plan",
    "panel_overrides",
    "plan_output",
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
        """True for JSON Lines: written record by record as the run goes, and resumable."""
        return self.renderer.name == "jsonl"


def plan_output(path: str | Path, *, option: str = "--out", fmt: str | None = None) -> Output:
    """Check an output path and pick its renderer, before any judge call.

    Args:
        path: the file the user asked for.
        option: the option that named it, for messages.
        fmt: a renderer name to use whatever the suffix (``junit`` for ``--junit-xml``).

    Raises:
        ConfigError: when the path is a directory, its folder is missing or not writable, or no
            renderer writes its suffix (never a silent JSONL).
    """
    checked = check_output_path(path, option=option)
    renderer = RENDERERS[fmt] if fmt is not None else renderer_for(checked, option=option)
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
        resume: continue the run recorded in the JSON Lines output (scores only missing pairs).
        outputs: the output files.
        limits: input-size guards.
        dataset: how the samples are named in the results header (a path, or a description).
        panel: overrides of :class:`ragqa.evaluation.PanelOptions` (``strategy``, ``quorum``,
            ``language``) applied to the configured evaluator.
        no_cache: True to run without the on-disk judge cache even when it is enabled.
        shard: score only this shard of the samples (:mod:`ragqa.run.shard`); ``None`` = all.
    """

    metrics: tuple[Metric, ...]
    thresholds: Mapping[str, float] = field(default_factory=dict)
    on_invalid: OnInvalid = "raise"
    allow_incomplete: bool = False
    max_calls: int | None = None
    resume: bool = False
    outputs: tuple[Output, ...] = ()
    limits: Limits = field(default_factory=Limits)
    dataset: str = ""
    panel: Mapping[str, Any] = field(default_factory=dict)
    no_cache: bool = False
    shard: Shard | None = None

    @property
    def specs(self) -> tuple[MetricSpec, ...]:
        """The metrics as specs (name and the options that change the score), in order."""
        return tuple(spec_of(m) for m in self.metrics)

    @property
    def stream(self) -> Output | None:
        """The JSON Lines output that results stream to and resume from (the first one), if any."""
        return next((o for o in self.outputs if o.streams), None)


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
) -> dict[str, Any]:
    """The :class:`~ragqa.evaluation.PanelOptions` fields a caller overrides (``None`` = the settings' value).

    Args:
        language: ``en`` or ``ru``.
        aggregation: the aggregation strategy (``mean``...).
        quorum: judges with a score needed for an aggregate (>= 1).
        deadline_s: wall-clock budget of the run in seconds (> 0).
        call_plan: ``batched`` or ``ragas`` (see ``docs/call-plan.md``).

    Returns:
        ``{field: value}`` for the arguments given; checked by :func:`make_plan`.
    """
    given = {
        "language": language,
        "strategy": aggregation,
        "quorum": quorum,
        "deadline_s": deadline_s,
        "call_plan": call_plan,
    }
    return {k: v for k, v in given.items() if v is not None}


def _check_panel(panel: Mapping[str, Any]) -> None:
    from ragqa.aggregate import PANEL_STRATEGIES

    if "language" in panel and panel["language"] not in ("en", "ru"):
        raise ConfigError(f"language {panel['language']!r}: use en or ru", key="--language")
    if "call_plan" in panel and panel["call_plan"] not in ("batched", "ragas"):
        raise ConfigError(f"call plan {panel['call_plan']!r}: use batched or ragas", key="--call-plan")
    if "strategy" in panel and panel["strategy"] not in PANEL_STRATEGIES:
        raise ConfigError(
            f"aggregation {panel['strategy']!r}: use one of {', '.join(PANEL_STRATEGIES)}", key="--aggregation"
        )
    quorum = panel.get("quorum")
    if quorum is not None and (isinstance(quorum, bool) or not isinstance(quorum, int) or quorum < 1):
        raise ConfigError(f"quorum {quorum!r}: use an integer >= 1", key="--quorum")
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
    outputs: Sequence[Output] = (),
    dataset: str = "",
    panel: Mapping[str, Any] | None = None,
    no_cache: bool = False,
    shard: str | Shard | None = None,
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
        resume: see :attr:`RunPlan.resume`; needs a JSON Lines output.
        outputs: checked outputs (:func:`plan_output`).
        dataset: the dataset's name for the results header.
        panel: PanelOptions overrides.
        no_cache: run without the judge cache.
        shard: ``"K/N"`` to score only shard K of N (:func:`ragqa.run.shard.parse_shard`).

    Raises:
        ConfigError: for any problem above, or a metric that needs a judge when the panel has
            none (:func:`check_judge_free`), before any judge call.
    """
    if on_invalid not in ("raise", "skip"):
        raise ConfigError(f"on_invalid {on_invalid!r}: use raise or skip", key="--on-invalid")
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
        outputs=tuple(outputs),
        limits=Limits(
            max_contexts_per_sample=settings.ragqa.limits.max_contexts_per_sample,
            max_text_chars=settings.ragqa.limits.max_text_chars,
        ),
        dataset=dataset,
        panel=dict(panel or {}),
        no_cache=no_cache,
        shard=parse_shard(shard),
    )
    if resume and plan.stream is None:
        raise ConfigError("--resume needs a JSON Lines output to resume from, e.g. --out results.jsonl", key="--resume")
    return plan
