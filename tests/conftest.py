"""Fixtures shared by ragqa's tests: the remote-call block for the whole suite, the fake server, a headless Chromium."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragqa.judges._guard import BLOCK_REMOTE_ENV
from ragqa.testing import FakeOpenAIServer, fake_openai_server


@pytest.fixture(scope="session", autouse=True)
def block_remote_calls() -> Iterator[None]:
    """No test reaches a real provider: any judge request to a non-loopback host fails before it is sent.

    Subprocesses started by tests (the CLI, ``ragqa test``) inherit the variable. The opt-in live
    tests (``tests/test_live.py``) turn it off for themselves.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(BLOCK_REMOTE_ENV, "1")
        yield


@pytest.fixture(scope="module")
def srv() -> Iterator[FakeOpenAIServer]:
    """One fake server per test module (a module may override it, e.g. to require an API key)."""
    with fake_openai_server() as server:
        yield server


@pytest.fixture
def reset_srv(srv: FakeOpenAIServer) -> None:
    """Give the test a clean server; modules opt in with ``pytest.mark.usefixtures("reset_srv")``."""
    srv.reset()


@pytest.fixture
def cluster() -> None:
    """The loopback two-CPU Ray cluster (``tests/_ray_cluster.py``), started by the first test that asks.

    It keeps running for the tests that follow and ask too; ``pytest_collection_modifyitems`` puts
    them one after another at the end, and ``pytest_runtest_teardown`` stops it after the last.
    Skips where the ``ray`` extra is not installed.
    """
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")
    import _ray_cluster  # imports ray: an optional extra

    _ray_cluster.start_cluster()


@pytest.fixture(scope="session")
def helpdesk_on_ray(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The shipped dataset scored in one process and on the cluster, once for the tests that compare them.

    A :class:`_ray_cluster.HelpdeskRuns`; a test that asks for it asks for ``cluster`` too (that
    fixture's name is what orders the cluster's users and stops the cluster after the last).
    """
    pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")
    import _ray_cluster  # imports ray: an optional extra

    _ray_cluster.start_cluster()
    return _ray_cluster.helpdesk_runs(tmp_path_factory.mktemp("helpdesk"))


def find_chromium() -> str | None:
    """A Chromium to drive: ``RAGQA_CHROMIUM``, else Debian's ``chromium`` (or another Chromium on PATH)."""
    explicit = os.environ.get("RAGQA_CHROMIUM")
    if explicit:
        return explicit
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (Playwright driving the system browser; never downloaded)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the Python package playwright is not installed (pip install -e '.[dev]')")
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium found (apt-get install chromium, or set RAGQA_CHROMIUM to a Chromium binary)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, headless=True, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


SLOW_MODULES = frozenset(
    {
        "test_calibration",
        "test_call_plan",
        "test_cli",
        "test_cli_process",
        "test_cli_run",
        "test_docs_commands",
        "test_e2e_all_metrics",
        "test_html_layout",
        "test_html_report",
        "test_local_language_lists",
        "test_promptfoo",
        "test_promptfoo_example",
        "test_promptfoo_text",
        "test_pytest_plugin",
        "test_ray_engine",
        "test_startup_imports",
    }
)
"""Modules whose tests start processes (the CLI, pytest, a browser) or run whole datasets: each took
10 s or more in ``pytest -q --durations=0``. Single tests of other modules that take 0.4 s or more
carry ``@pytest.mark.slow`` themselves (see tests/README.md). ``pytest -q -m "not slow"`` leaves
them out; ``pytest -q`` (the README's command, which CI runs) runs everything."""


SLOW_TESTS = frozenset(
    {
        "test_progress::test_ragqa_evaluate_shows_progress_on_a_terminal",
        "test_progress::test_ragqa_evaluate_is_silent_off_a_terminal_unless_asked",
        "test_fake_server::test_the_process_runner_serves_ragqa_prompts_from_python_dash_m",
        "test_fake_server::test_the_module_entry_point_has_a_help_text",
        "test_local_judge_relevance::test_scores_do_not_depend_on_the_hash_seed",
    }
)
"""Single tests of otherwise quick modules that start a process (``module::test``, parameters left
off): the progress bar needs a pseudo-terminal, and a child whose stderr is a real pipe; the fake
server as ``python -m``; three interpreters with other hash seeds."""


RAY_MODULES = frozenset(
    {
        "test_ray_breakers",
        "test_ray_engine",
        "test_ray_inputs",
        "test_ray_results_parquet",
        "test_ray_shared_limits",
        "test_ray_workers",
    }
)
"""The Ray engine's modules: under xdist they run on one worker, so one Ray cluster at a time runs on
the machine."""

CLUSTER_FIXTURE = "cluster"
"""The fixture of the loopback Ray cluster (``tests/_ray_cluster.py``); its users run one after another."""


MINILM_MODULES = frozenset({"test_local_judge", "test_local_judge_relevance", "test_local_language_lists"})
"""The modules that load the MiniLM model (torch; 5-8 s of CPU the first time in a process, cached after):
under xdist they run on one worker, so one worker pays for it."""


def xdist_scope(nodeid: str) -> str:
    """The unit of work an xdist worker gets whole: the test's module, ``ray`` or ``minilm`` for those groups.

    A module stays on one worker, so its module-scoped fixtures (the fake server, a browser, the docs
    sandboxes, a ``pytest`` run of the example suite) are built once, as in a run without xdist.
    """
    module = nodeid.split("::", 1)[0]
    stem = Path(module).stem
    if stem in RAY_MODULES:
        return "ray"
    return "minilm" if stem in MINILM_MODULES else module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadfile`` (the ``addopts`` default) hand out :func:`xdist_scope` units, in order.

    xdist's own ``loadfile`` splits by file only; its ``loadgroup`` marks do not reach the scheduler
    under pytest 9.2, so the Ray modules are joined here. Any other ``--dist`` is xdist's own.
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # only reached under xdist, an optional plugin

    class ModuleScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

    return ModuleScheduling(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Stop the shared Ray cluster after a test that used it when the next test does not.

    Only a process that imported ``_ray_cluster`` (the fixture does, once ray is installed) can have
    started one: without the ray extra the fixture skips and there is nothing to stop.
    """
    yield
    started = sys.modules.get("_ray_cluster")
    if (
        started is not None
        and CLUSTER_FIXTURE in getattr(item, "fixturenames", ())
        and (nextitem is None or CLUSTER_FIXTURE not in getattr(nextitem, "fixturenames", ()))
    ):
        started.stop_cluster()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave the modules of :data:`SLOW_MODULES` uncollected when the ``-m`` expression can select none of their tests.

    Every test of such a module is marked ``slow`` (:func:`pytest_collection_modifyitems`), so under
    ``-m "not slow"`` collecting it (importing and rewriting the module in every xdist worker,
    seconds) only ends in deselecting it. The tests that run are the same; the summary's
    ``deselected`` count no longer includes them.
    """
    if collection_path.suffix == ".py" and collection_path.stem in SLOW_MODULES and _never_selects_slow(config):
        return True
    return None


def _never_selects_slow(config: pytest.Config) -> bool:
    """True when the ``-m`` expression is false for a ``slow`` test whatever other marks it carries.

    Evaluated with pytest's own parser of ``-m`` for every combination of the other mark names the
    expression uses; an expression this cannot read (marks with arguments, a pytest without that
    parser) counts as selecting: the modules are then collected and deselected as usual.
    """
    markexpr = str(config.getoption("markexpr", "") or "")
    names = sorted(set(re.findall(r"[A-Za-z_][\w.]*", markexpr)) - {"and", "or", "not", "slow"})
    if not markexpr or "=" in markexpr or len(names) > 6:
        return False
    try:
        from _pytest.mark.expression import Expression  # pytest's -m grammar; not public, hence the fallback

        expression = Expression.compile(markexpr)
        for values in itertools.product((False, True), repeat=len(names)):
            if expression.evaluate(_marks_matcher({**dict(zip(names, values, strict=True)), "slow": True})):
                return False
    except Exception:  # any doubt: collect, as pytest would
        return False
    return True


def _marks_matcher(marks: dict[str, bool]) -> Any:
    """A matcher for pytest's ``Expression.evaluate``: a test carrying exactly the true ``marks``."""

    def matcher(name: str, /, **kwargs: Any) -> bool:
        return marks.get(name, False)

    return matcher


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the slow tests; run the Ray cluster's users last, one after another; group the tests for xdist.

    Every test of :data:`SLOW_MODULES`, every one of :data:`SLOW_TESTS` and every user of the
    :data:`CLUSTER_FIXTURE` (it starts a Ray cluster) is marked ``slow``. The
    tests that use the :data:`CLUSTER_FIXTURE` move to the end, in their order, so one cluster serves
    them all (``pytest_runtest_teardown`` stops it after the last one). Under xdist the longest units
    come first, then the slow ones (:func:`_handout_order`): the scheduler
    (:func:`pytest_xdist_make_scheduler`) hands out modules in this order, so the long ones start
    early and the short ones fill in.
    """
    for item in items:
        name = getattr(item, "originalname", item.name)
        if (
            item.path.stem in SLOW_MODULES
            or f"{item.path.stem}::{name}" in SLOW_TESTS
            or CLUSTER_FIXTURE in getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.slow)
    users = [item for item in items if CLUSTER_FIXTURE in getattr(item, "fixturenames", ())]
    if users:
        chosen = set(users)
        items[:] = [item for item in items if item not in chosen] + users
    if hasattr(config, "workerinput"):  # an xdist worker: the controller hands out units in this order
        items.sort(key=_handout_order)


LONGEST_FIRST = ("test_docs_commands", "ray", "test_cli_run")
"""The longest units under xdist, longest first (CPU seconds per unit in ``pytest -q`` with a per-test
CPU log: the docs commands about 300, the Ray modules' cluster runs, the CLI killed and resumed):
started first, they do not leave one worker running alone at the end."""


def _handout_order(item: pytest.Item) -> tuple[int, bool]:
    """Sort key: the units of :data:`LONGEST_FIRST` in that order, then other slow tests, then the rest."""
    unit = Path(xdist_scope(item.nodeid)).stem
    rank = LONGEST_FIRST.index(unit) if unit in LONGEST_FIRST else len(LONGEST_FIRST)
    return rank, item.get_closest_marker("slow") is None
