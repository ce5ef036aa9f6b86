"""The house goes one way: no import cycle and no import from a lower layer to a higher one.

The graph is built from the source with ``ast``, counting every import: module-level ones, those
inside functions and those under ``TYPE_CHECKING``. A layer is a "room" of ``ragqa/`` (a top-level
module or a package); ``LAYERS`` lists them from the ground floor up, following the flow of the
design (errors and pure helpers, shapes, data, judges, metrics, renderers, evaluation, wiring, the
run layer, entry points). Inside a room only cycles are checked.

Today's exceptions are listed in ``ALLOWED_UPWARD`` and ``ALLOWED_CYCLE_EDGES``; a listed arrow that
no longer exists fails the test too, so the lists only shrink as the moves land.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "ragqa"

LAYERS: list[set[str]] = [
    {"errors", "messages", "_math", "_pairwise", "_heap", "_plugins", "languages", "score_details", "_ids", "_version"},
    {"schema", "thresholds", "verdicts"},
    {
        "uncertainty",
        "interpretation",
        "report",
        "agreement",
        "agreement_stream",
        "settings",
        "datasets",
        "prompts",
        "aggregate",
        "repeats",
        "usage",
    },
    {"judges"},
    {"cache", "metrics", "jury"},
    {"render", "evaluation"},
    {"factory", "schemas"},
    {"container"},
    {"run"},
    {"assertions", "calibration", "testing", "compare"},
    {"promptfoo", "pytest_plugin"},
    {"cli", "__main__"},
    {"__init__"},
]
"""Rooms of ``ragqa/`` from the ground floor up; a room may import its own floor and those below."""

ALLOWED_UPWARD: set[tuple[str, str]] = set()
"""(importer, imported) module pairs that run upward today and are still to be moved."""

ALLOWED_CYCLE_EDGES: set[tuple[str, str]] = set()
"""(importer, imported) arrows that close an import cycle today and are still to be cut."""


def module_name(path: Path, root: Path = ROOT) -> str:
    """``ragqa/run/spec.py`` -> ``ragqa.run.spec``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _graph_of(root: Path) -> dict[str, frozenset[str]]:
    return {name: frozenset(targets) for name, targets in import_graph(root).items()}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Map every module of ``root`` to the modules of ``root`` it imports, anywhere in its source."""
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    packages = {module_name(p, root) for p in root.rglob("__init__.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if name in packages else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = package.split(".")
                    base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base for alias in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def room(module: str) -> str:
    """The room of a module: ``ragqa.run.spec`` -> ``run``; ``ragqa`` itself -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def floor(module: str) -> int:
    """The floor (index in ``LAYERS``) of a module's room.

    Raises:
        KeyError: when the room is in no layer (a new top-level module must be placed in ``LAYERS``).
    """
    name = room(module)
    for index, rooms in enumerate(LAYERS):
        if name in rooms:
            return index
    raise KeyError(f"room {name!r} of {module} is in no layer: add it to LAYERS in tests/test_layers.py")


def upward_edges(graph: Mapping[str, Iterable[str]]) -> set[tuple[str, str]]:
    """Every arrow from a lower floor to a higher one."""
    return {(a, b) for a, targets in graph.items() for b in targets if floor(a) < floor(b)}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, 1972), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def without(graph: Mapping[str, Iterable[str]], edges: set[tuple[str, str]]) -> dict[str, set[str]]:
    """A copy of ``graph`` without ``edges``."""
    return {a: {b for b in targets if (a, b) not in edges} for a, targets in graph.items()}


def test_every_room_has_a_layer() -> None:
    graph = _graph_of(ROOT)
    for module in graph:
        floor(module)


def test_no_import_runs_upward() -> None:
    new = upward_edges(_graph_of(ROOT)) - ALLOWED_UPWARD
    assert not new, "imports from a lower layer to a higher one:\n" + "\n".join(f"  {a} -> {b}" for a, b in sorted(new))


def test_no_import_cycle() -> None:
    found = cycles(without(_graph_of(ROOT), ALLOWED_CYCLE_EDGES))
    assert not found, "import cycles:\n" + "\n".join("  " + " <-> ".join(c) for c in found)


def test_allow_lists_hold_only_arrows_that_still_exist() -> None:
    graph = _graph_of(ROOT)
    edges = {(a, b) for a, targets in graph.items() for b in targets}
    stale = (ALLOWED_UPWARD | ALLOWED_CYCLE_EDGES) - edges
    assert not stale, "remove these moved arrows from the allow-lists:\n" + "\n".join(
        f"  {a} -> {b}" for a, b in sorted(stale)
    )


def test_a_planted_upward_import_and_cycle_are_found(tmp_path: Path) -> None:
    package = tmp_path / "ragqa"
    (package / "run").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "run" / "__init__.py").write_text("")
    (package / "errors.py").write_text("def f():\n    from ragqa.run import loop\n")
    (package / "run" / "loop.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import stream\n"
    )
    (package / "run" / "stream.py").write_text("from ragqa.run.loop import x\n")
    graph = import_graph(package)
    assert upward_edges(graph) == {("ragqa.errors", "ragqa.run.loop")}
    assert cycles(graph) == [["ragqa.run.loop", "ragqa.run.stream"]]


@pytest.mark.parametrize("name", ["ragqa.nowhere"])
def test_a_room_without_a_layer_is_refused(name: str) -> None:
    with pytest.raises(KeyError, match="add it to LAYERS"):
        floor(name)


# --- the tests' own house: a test module imports shared helpers, never another test module ---------

TESTS = Path(__file__).resolve().parent


def imports_of_test_modules(root: Path) -> list[str]:
    """Every ``module: import`` where a module under ``root`` imports a ``test_*`` module of ``root``.

    Shared helpers and fixtures go in ``factories.py``, ``_cli.py``, ``_records.py``, ... or a
    ``conftest.py`` (``tests/README.md``); a test module imported by another one runs its module-scope
    code twice and ties the two modules' fixtures together.
    """
    test_modules = {path.stem for path in root.rglob("test_*.py")}
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [f"{node.module or ''}.{alias.name}" for alias in node.names]
            else:
                continue
            if any(part in test_modules for name in names for part in name.split(".")):
                found.append(f"{path.relative_to(root)}: {ast.unparse(node)}")
    return found


def test_no_test_module_imports_another() -> None:
    found = imports_of_test_modules(TESTS)
    assert not found, "test modules importing test modules (move the shared code to a helper):\n" + "\n".join(
        f"  {line}" for line in found
    )


def test_a_planted_test_module_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "cli").mkdir()
    (tmp_path / "test_a.py").write_text("from factories import x\nimport test_ab\n")
    (tmp_path / "test_ab.py").write_text("from _cli import run_cli\n")
    (tmp_path / "cli" / "test_b.py").write_text("from test_a import helper\nfrom tests import factories\n")
    (tmp_path / "_helper.py").write_text("def f():\n    from tests.cli.test_b import y\n")
    assert imports_of_test_modules(tmp_path) == [
        "_helper.py: from tests.cli.test_b import y",
        "cli/test_b.py: from test_a import helper",
        "test_a.py: import test_ab",
    ]
