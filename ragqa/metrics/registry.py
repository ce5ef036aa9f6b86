"""The metric registry: built-in metrics, metrics registered in code, and metrics of installed packages.

A metric is usable by name (in ``application.yaml``'s ``ragqa.metrics``, ``--metrics``, promptfoo
files and :func:`ragqa.evaluate`) once it is in :data:`ragqa.metrics.METRICS`. Three ways in:

- ragqa's own metrics, listed once in :mod:`ragqa.metrics`;
- :func:`register_metric`, a class decorator for code that is imported before the run;
- an installed package's entry point in the group ``ragqa.metrics`` (``name = "module:Class"`` in
  its ``pyproject.toml`` under ``[project.entry-points."ragqa.metrics"]``), loaded the first time
  a name is not found among the others or the whole list is asked for (``ragqa metrics``), so a run
  of built-in metrics never pays for the look-up.

A name is taken once: a built-in name cannot be registered again by another class, and a package
whose metric cannot be loaded does not stop runs that do not use it; asking for that name then
raises a :class:`~ragqa.errors.ConfigError` with the package's error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

from ragqa.errors import ConfigError
from ragqa.metrics.base import Metric

__all__ = ["ENTRY_POINT_GROUP", "MetricRegistry"]

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "ragqa.metrics"
"""The entry-point group installed packages declare their metrics in."""

M = TypeVar("M", bound=type[Metric])


class MetricRegistry(Mapping[str, type[Metric]]):
    """Metric classes by registry name (``cls.name``), built-ins first, in registration order.

    Args:
        builtins: ragqa's own metric classes, in the order ``ragqa metrics`` lists them.
    """

    def __init__(self, builtins: Iterable[type[Metric]]) -> None:
        """Hold the built-ins; nothing installed is looked up yet."""
        self._classes: dict[str, type[Metric]] = {}
        self._broken: dict[str, str] = {}
        self._plugins_loaded = False
        for cls in builtins:
            self.register(cls)

    def register(self, cls: M) -> M:
        """Make ``cls`` usable by its ``name``; returns it, so this works as a class decorator.

        Raises:
            TypeError: when ``cls`` is not a :class:`~ragqa.metrics.base.Metric` subclass.
            ConfigError: (key ``ragqa.metrics``) when it has no ``name`` or another class has
                that name.
        """
        if not (isinstance(cls, type) and issubclass(cls, Metric)):
            raise TypeError(f"{cls!r} is not a ragqa Metric subclass; subclass ragqa.metrics.Metric")
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise ConfigError(f"metric class {cls.__qualname__} has no name; set the class attribute name = '...'")
        taken = self._classes.get(name)
        if taken is not None and taken is not cls:
            raise ConfigError(
                f"metric name {name!r} of {cls.__module__}.{cls.__qualname__} is taken by "
                f"{taken.__module__}.{taken.__qualname__}; give the metric another name",
                key="ragqa.metrics",
            )
        self._classes[name] = cls
        return cls

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        from importlib.metadata import entry_points  # only when a name is not built in

        for entry in entry_points(group=ENTRY_POINT_GROUP):
            where = f"entry point {entry.name!r} = {entry.value!r}"
            if entry.dist is not None:
                where += f" of package {entry.dist.name}"
            try:
                loaded = entry.load()
                if getattr(loaded, "name", None) != entry.name:
                    raise ConfigError(
                        f"the class's name is {getattr(loaded, 'name', None)!r}, not {entry.name!r}; "
                        "make the entry point's name the metric's name"
                    )
                self.register(loaded)
            except Exception as exc:  # a broken package must not stop runs that do not use it
                self._broken[entry.name] = f"{where} could not be loaded: {exc}"
                log.warning("metric %s", self._broken[entry.name])

    def __getitem__(self, name: str) -> type[Metric]:
        """The class of ``name``.

        Raises:
            KeyError: for a name no metric has.
            ConfigError: for the name of an installed metric that could not be loaded.
        """
        cls = self._classes.get(name)
        if cls is None:
            self._load_plugins()
            cls = self._classes.get(name)
        if cls is None:
            if name in self._broken:
                raise ConfigError(self._broken[name], key="ragqa.metrics")
            raise KeyError(name)
        return cls

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is a metric's name (installed packages are looked up for an unknown one)."""
        if name in self._classes:
            return True
        self._load_plugins()
        return name in self._classes

    def __iter__(self) -> Iterator[str]:
        """Every name: built-ins in order, then registered and installed ones."""
        self._load_plugins()
        return iter(list(self._classes))

    def __len__(self) -> int:
        """How many metrics (installed ones included)."""
        self._load_plugins()
        return len(self._classes)

    def __repr__(self) -> str:
        return f"MetricRegistry({list(self._classes)!r})"
