"""Metric specs as data: one parser and one formatter for every entry point.

A metric is named on the command line, in ``application.yaml``, in pytest helpers and in
promptfoo-style files as ``name`` or ``name(option=value, ...)``, e.g.
``noise_sensitivity(mode=irrelevant)``. :class:`MetricSpec` is that text as data; it is parsed here
and nowhere else, and its ``str`` is the metric's result key (:attr:`ragqa.metrics.base.Metric.key`
for the options that change a score). Thresholds are resolved against the metrics of a run here
too, so a typo in a threshold is an error before any judge call, never a silently disabled gate.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragqa.errors import ConfigError

if TYPE_CHECKING:
    from ragqa.metrics.base import Metric

__all__ = ["MetricSpec", "parse_metric_specs", "resolve_threshold", "resolve_thresholds", "spec_of"]

_SPEC = re.compile(r"\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*", re.DOTALL)


def _split_top_level(text: str) -> list[str]:
    """Split ``text`` on commas that are not inside parentheses."""
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
    return items


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


@dataclass(frozen=True, eq=False)
class MetricSpec:
    """A metric's registry name and construction options.

    Attributes:
        name: the registry name (``faithfulness``); see :data:`ragqa.metrics.METRICS`.
        options: ``(option, value)`` pairs in the order given; option names use ``snake_case``.

    Two specs are equal when their names and option mappings are equal (order does not matter).
    """

    name: str
    options: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, name: str, options: Mapping[str, Any] | None = None) -> MetricSpec:
        """Build a spec from a name and an options mapping (``kebab-case`` keys become ``snake_case``)."""
        return cls(name.strip(), tuple((str(k).strip().replace("-", "_"), v) for k, v in (options or {}).items()))

    @classmethod
    def parse(cls, text: str, *, source: str = "metric") -> MetricSpec:
        """Parse ``name`` or ``name(option=value, ...)``; values are read as YAML scalars.

        Args:
            text: the spec text, e.g. ``noise_sensitivity(mode=irrelevant, counting=promptfoo)``.
            source: where the text came from (``--metrics``, ``ragqa.thresholds``...), named in errors.

        Returns:
            The spec (``3`` is an int, ``true`` a bool, anything else a string).

        Raises:
            ConfigError: when the text is not of that form (key ``source``).
        """
        import yaml

        match = _SPEC.fullmatch(text)
        if match is None:
            raise ConfigError(f"bad metric {text.strip()!r} in {source}; write name or name(option=value)", key=source)
        options: list[tuple[str, Any]] = []
        for part in filter(None, (p.strip() for p in _split_top_level(match.group(2) or ""))):
            key, sep, raw = part.partition("=")
            if not sep or not key.strip():
                raise ConfigError(
                    f"bad option {part!r} of metric {match.group(1)!r} in {source}; write option=value", key=source
                )
            try:
                value = yaml.safe_load(raw.strip())
            except yaml.YAMLError:
                value = raw.strip()
            options.append((key.strip().replace("-", "_"), value))
        return cls(match.group(1), tuple(options))

    @property
    def kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments of the metric's constructor."""
        return dict(self.options)

    def build(self, defaults: Mapping[str, Mapping[str, Any]] | None = None) -> Metric:
        """Construct the metric: ``defaults[name]`` (``ragqa.metric-options``) overlaid by this spec's options.

        Raises:
            ConfigError: for an unknown name (with the closest names) or options the metric rejects.
        """
        from ragqa.metrics import build_metric

        configured = dict((defaults or {}).get(self.name) or {})
        return build_metric(self.name, {**configured, **self.kwargs})

    def matches(self, other: MetricSpec) -> bool:
        """True when ``other`` has this spec's name and every option this spec names, with equal values."""
        theirs = other.kwargs
        return self.name == other.name and all(k in theirs and theirs[k] == v for k, v in self.options)

    def __str__(self) -> str:
        """``name`` or ``name(option=value, ...)``, the form :meth:`parse` reads back."""
        if not self.options:
            return self.name
        return f"{self.name}({', '.join(f'{k}={_format_value(v)}' for k, v in self.options)})"

    def __eq__(self, other: object) -> bool:
        """Equal names and equal option mappings."""
        if not isinstance(other, MetricSpec):
            return NotImplemented
        return self.name == other.name and self.kwargs == other.kwargs

    def __hash__(self) -> int:
        """Hash of the name and the sorted option names and values (as text)."""
        return hash((self.name, tuple(sorted((k, repr(v)) for k, v in self.options))))


def parse_metric_specs(text: str | Iterable[str], *, source: str = "--metrics") -> list[MetricSpec]:
    """Parse a metric list: ``faithfulness,noise_sensitivity(mode=irrelevant)`` or a list of such items.

    Commas inside parentheses separate options, not metrics.

    Returns:
        The specs in the order given.

    Raises:
        ConfigError: for an empty list or a malformed item (key ``source``).
    """
    items = _split_top_level(text) if isinstance(text, str) else [i for t in text for i in _split_top_level(t)]
    specs = [MetricSpec.parse(item, source=source) for item in items if item.strip()]
    if not specs:
        raise ConfigError(f"{source} names no metric; e.g. faithfulness,hallucination", key=source)
    return specs


def spec_of(metric: Metric) -> MetricSpec:
    """The spec of a constructed metric, read from its result key (options that change the score)."""
    return MetricSpec.parse(metric.key, source="metric key")


def _closest(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=3, cutoff=0.6)
    return f" Did you mean {', '.join(close)}?" if close else ""


def resolve_thresholds(
    thresholds: Mapping[str, float],
    metrics: Sequence[Metric],
    *,
    source: str = "--threshold",
    require_in_run: bool = True,
) -> dict[str, float]:
    """Key thresholds by the result key of each metric of the run they apply to.

    A threshold named ``faithfulness`` applies to every faithfulness metric of the run; one named
    ``noise_sensitivity(mode=irrelevant)`` only to metrics whose key has those options. A more
    specific threshold (more options) wins over a plainer one.

    Args:
        thresholds: ``{spec text: value}`` as given by the user.
        metrics: the metrics of the run.
        source: where the thresholds came from (``--threshold``, ``ragqa.thresholds``), named in errors.
        require_in_run: when True, a threshold for a known metric that is not in this run is an
            error; when False (thresholds from settings that cover several runs) it is ignored.

    Returns:
        ``{metric.key: threshold}`` for every metric of the run that has one.

    Raises:
        ConfigError: for a malformed key, an unknown metric name (with a did-you-mean hint), a
            threshold for a metric not in the run (when ``require_in_run``), a non-finite value, or
            a value outside the metric's range. Raised before any judge call.
    """
    from ragqa.metrics import METRICS

    run = [(m, spec_of(m)) for m in metrics]
    chosen: dict[str, tuple[int, float]] = {}
    for text, raw in thresholds.items():
        spec = MetricSpec.parse(text, source=source)
        key = f"{source}.{text}" if source.startswith("ragqa.") else source
        if spec.name not in METRICS:
            raise ConfigError(
                f"threshold for unknown metric {spec.name!r}.{_closest(spec.name, list(METRICS))} "
                f"Known: {', '.join(METRICS)}",
                key=key,
            )
        value = float(raw)
        if not math.isfinite(value):
            raise ConfigError(f"threshold for {text!r} must be a finite number, got {raw!r}", key=key)
        hits = [m for m, s in run if spec.matches(s)]
        if not hits:
            if require_in_run:
                in_run = [m.key for m, _ in run]
                raise ConfigError(
                    f"threshold for {text!r}, which is not a metric of this run."
                    f"{_closest(text, in_run + [m.name for m, _ in run])} This run: {', '.join(in_run) or 'none'}",
                    key=key,
                )
            continue
        for metric in hits:
            low, high = metric.value_range
            if not low <= value <= high:
                raise ConfigError(
                    f"threshold {value:g} for {text!r} is outside the metric's range {low:g}..{high:g}", key=key
                )
            rank = len(spec.options)
            if metric.key not in chosen or rank >= chosen[metric.key][0]:
                chosen[metric.key] = (rank, value)
    return {k: v for k, (_, v) in chosen.items()}


def resolve_threshold(
    metric: Metric,
    *,
    explicit: float | None = None,
    configured: Mapping[str, float] | None = None,
    default: float | None = None,
    source: str = "ragqa.thresholds",
) -> float:
    """The pass threshold of one metric: explicit, else configured, else a default.

    The order is: ``explicit`` (a ``threshold=`` argument or an assertion's ``threshold``); else the
    ``configured`` threshold whose spec matches the metric, as :func:`resolve_thresholds` matches
    it (a more specific spec wins; thresholds for other metrics are ignored); else ``default`` (an
    entry point's own default, e.g. promptfoo's for its assertion type); else the metric's
    :attr:`~ragqa.metrics.base.Metric.default_threshold`.

    Args:
        metric: the metric to be judged.
        explicit: a threshold given for this one check, in the metric's range.
        configured: ``{spec text: value}`` (``ragqa.thresholds``).
        default: the entry point's default, used before the metric's own.
        source: where ``configured`` came from, named in errors.

    Returns:
        The threshold, in the metric's ``value_range``.

    Raises:
        ConfigError: an explicit value that is not a finite number in the metric's range (key
            ``threshold``); a configured key that is malformed, names an unknown metric or holds a
            bad value (see :func:`resolve_thresholds`); or no threshold at all (key
            ``ragqa.thresholds.<name>``).
    """
    if explicit is not None:
        if isinstance(explicit, bool) or not isinstance(explicit, int | float) or not math.isfinite(explicit):
            raise ConfigError(
                f"threshold for {metric.key!r} must be a finite number, got {explicit!r}", key="threshold"
            )
        low, high = metric.value_range
        if not low <= explicit <= high:
            raise ConfigError(
                f"threshold {explicit:g} for {metric.key!r} is outside the metric's range {low:g}..{high:g}",
                key="threshold",
            )
        return float(explicit)
    if configured:
        found = resolve_thresholds(configured, [metric], source=source, require_in_run=False)
        if metric.key in found:
            return found[metric.key]
    for fallback in (default, metric.default_threshold):
        if fallback is not None:
            return float(fallback)
    raise ConfigError(
        f"no threshold for metric {metric.key!r}: pass threshold=... or set ragqa.thresholds.{metric.name}",
        key=f"ragqa.thresholds.{metric.name}",
    )
