"""ragqa's pytest plugin (registered through the ``pytest11`` entry point: installing ragqa is enough).

It is import-light (pytest, the standard library and :mod:`ragqa.run.loop`; no HTTP client,
container or renderer is imported until a test uses ragqa) and does nothing unless a test uses
its fixtures, so suites that never touch ragqa (ragqa's own included) pay nothing.

Command-line options (also settable in the ini file as ``ragqa_config`` / ``ragqa_profile``):

- ``--ragqa-config PATH``: the ``application.yaml`` (default ``./application.yaml``, which may be
  absent: then ragqa's defaults and the profiles, e.g. the built-in ``local``); profile files
  ``application-<name>.yaml`` are looked up beside it.
- ``--ragqa-profile a,b``: active profiles (default: ``RAGQA_PROFILES_ACTIVE``).
- ``--ragqa-results PATH``: write one JSON line per ragqa assertion: the panel result in the one
  record shape of :func:`ragqa.render.records.result_record`, plus the test's verdict fields.
- ``--ragqa-repeats N``: every judge scores every assertion N times with independent calls, and
  its score is reduced over them (:mod:`ragqa.repeats`); default ``ragqa.repeats`` (1).
- ``--ragqa-on-undecided fail|pass|warn`` (ini ``ragqa_on_undecided``; else ``ragqa.on-undecided``
  of the settings; default ``fail``): what an assertion does when the sample's interval across
  judges x repeats contains the threshold (see :mod:`ragqa.assertions`).
- ``--ragqa-exit-code`` (ini ``ragqa_exit_code = true``): when every failed test failed on ragqa,
  the session exits as ``ragqa test`` would for the same verdicts: 1 a threshold missed, 2 a
  configuration or sample error, 3 incomplete (judges failed), 4 undecided, in the one precedence
  of :func:`ragqa.run.exit_codes.decide_exit_code`; without it, pytest's own codes.

Fixtures:

- ``ragqa_environ`` (session): the variables used for ``${VAR}`` placeholders; ``None`` = the
  process environment. Override it to inject e.g. the fake server's URL.
- ``ragqa_container`` (session): the :class:`~ragqa.container.Container` built with
  ``create_container``; closed at the end of the session.
- ``ragqa_thresholds`` (session): ``ragqa.thresholds`` from the settings (by metric spec).
- ``ragqa_evaluator``: the panel evaluator, narrowed by the ``ragqa`` marker.
- ``ragqa_panel``: a :class:`RagqaHelper` with ``assert_metric`` (async) and ``check_metric`` (sync)
  bound to the evaluator, which also records scores for the reports; ``judge_thresholds=`` adds
  per-judge gates. ``ragqa`` is its former name, still working (it hides the package in the test).

Marker: ``@pytest.mark.ragqa(judges=[...], profile="...", policy=..., repeats=3, reducer="median",
on_undecided=...)`` picks judges of the panel (ids or shell-style patterns such as ``"openai/*"``),
a profile (instead of ``--ragqa-profile``), the default policy and the ``on_undecided`` of the
``ragqa`` helper, and the repeats and their reducer (instead of ``--ragqa-repeats`` and the
settings) for one test.

Reports: a metric x judge table at the end of the session; per-test scores as JUnit XML
properties (``ragqa:<metric>:aggregate``, ``ragqa:<metric>:judge:<id>``, ...; the property list of
:func:`ragqa.render.junit.result_properties`, shared with ``ragqa test``); the JSONL file.

Every assertion goes through the run layer (:mod:`ragqa.run.check`), as ``ragqa test``'s cases do:
the same sample validator, threshold resolution, verdict and exit-code decision. The helper lives
in :mod:`ragqa.pytest_plugin.helper`, the session's records and table in
:mod:`ragqa.pytest_plugin.summary`.

Panel work runs on a :class:`ragqa.run.loop.LoopThread` owned by the session, so plain and async
tests (on any pytest-asyncio loop scope) share one container. Every fixture is a plain (sync)
fixture: plain ``def`` tests need no async plugin. An ``async def`` test that uses ragqa and that
no plugin runs (pytest-asyncio missing, or in strict mode without a marker) fails with the fix
(``asyncio_mode = auto``) instead of pytest's bare "not natively supported".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragqa.pytest_plugin.helper import RagqaHelper, attach_to_allure, results_line, select_judges
from ragqa.pytest_plugin.summary import (
    EXIT_ATTRIBUTE,
    STATE,
    _Reporter,
    _State,
    parse_properties,
    session_exit_code,
    summary_table,
)
from ragqa.run.loop import LoopThread

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.thresholds import OnUndecided

__all__ = ["RagqaHelper", "attach_to_allure", "parse_properties", "results_line", "select_judges", "summary_table"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--ragqa-config``, ``--ragqa-profile``, ``--ragqa-results``, ... (and ini twins)."""
    group = parser.getgroup("ragqa", "ragqa: LLM-as-judge metrics across a panel of judges")
    group.addoption(
        "--ragqa-config",
        dest="ragqa_config",
        default=None,
        metavar="PATH",
        help="application.yaml of the judge panel (default: ./application.yaml)",
    )
    group.addoption(
        "--ragqa-profile",
        dest="ragqa_profile",
        default=None,
        metavar="A,B",
        help="comma-separated settings profiles (default: RAGQA_PROFILES_ACTIVE)",
    )
    group.addoption(
        "--ragqa-results",
        dest="ragqa_results",
        default=None,
        metavar="PATH",
        help="write one JSON line per ragqa assertion (every judge's score, reason and failure)",
    )
    group.addoption(
        "--ragqa-repeats",
        dest="ragqa_repeats",
        default=None,
        type=int,
        metavar="N",
        help="judge every assertion N times per judge; scores are reduced over the repeats (default: ragqa.repeats)",
    )
    group.addoption(
        "--ragqa-on-undecided",
        dest="ragqa_on_undecided",
        default=None,
        choices=("fail", "pass", "warn"),
        help="an assertion whose interval contains its threshold: fail (default), pass, or warn (pass with a warning)",
    )
    parser.addini("ragqa_config", "application.yaml of the judge panel (default: ./application.yaml)", default=None)
    parser.addini("ragqa_profile", "comma-separated settings profiles", default=None)
    group.addoption(
        "--ragqa-exit-code",
        dest="ragqa_exit_code",
        action="store_true",
        default=None,
        help="when every failed test failed on ragqa, exit as ragqa test would: 1 failed, 2 bad sample or "
        "settings, 3 incomplete (judges failed), 4 undecided",
    )
    parser.addini("ragqa_on_undecided", "fail, pass or warn: what an undecided assertion does", default=None)
    parser.addini(
        "ragqa_exit_code", "true: exit with ragqa's exit codes (see --ragqa-exit-code)", type="bool", default=False
    )


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``ragqa`` marker and reset the results file (controller process only)."""
    config.addinivalue_line(
        "markers",
        "ragqa(judges=None, profile=None, policy=None, repeats=None, reducer=None, on_undecided=None): pick "
        "judges (ids or patterns) or a settings profile for this test, the default panel policy and on_undecided "
        "of the `ragqa` fixture, and how many times each judge scores (repeats) and how its repeats are reduced "
        "(mean, median, mode)",
    )
    raw = config.getoption("ragqa_results", default=None)
    path = Path(config.invocation_params.dir, raw) if raw else None
    if path is not None and not _is_worker(config):
        from ragqa.errors import ConfigError
        from ragqa.run.outputs import check_output_path

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            check_output_path(path, option="--ragqa-results")
        except (OSError, ConfigError) as exc:
            raise pytest.UsageError(f"--ragqa-results {raw}: {exc}") from exc
        path.write_text("", encoding="utf-8")
    state = _State(results_path=path)
    config.stash[STATE] = state
    config.pluginmanager.register(_Reporter(state), "ragqa-reporter")


_ASYNC_MARKERS = ("asyncio", "anyio", "trio")
"""Markers with which another plugin runs an ``async def`` test."""


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    """Fail an ``async def`` test that uses ragqa's fixtures and that no plugin will run, saying how to fix it.

    pytest itself only says ``async def functions are not natively supported``. A test is left to
    the other plugins when it carries an ``asyncio``/``anyio``/``trio`` marker, or when
    pytest-asyncio runs in ``asyncio_mode = auto``. Plain tests are untouched.
    """
    import inspect

    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return
    if not any(name.startswith("ragqa") for name in pyfuncitem.fixturenames):
        return
    if any(pyfuncitem.get_closest_marker(marker) for marker in _ASYNC_MARKERS):
        return
    config = pyfuncitem.config
    has_asyncio = config.pluginmanager.hasplugin("asyncio")
    if has_asyncio and str(config.getini("asyncio_mode")) == "auto":
        return
    plugin = (
        "pytest-asyncio is installed but in strict mode"
        if has_asyncio
        else "pytest-asyncio is not installed (pip install 'ragqa[pytest]')"
    )
    pytest.fail(
        f"{pyfuncitem.name} is an async test, but no plugin runs it: {plugin}. Add the line "
        "'asyncio_mode = auto' to the [pytest] section of pytest.ini (or mark the test "
        "@pytest.mark.asyncio), or make it a plain def test calling ragqa.check_metric(...), which "
        "needs no plugin.",
        pytrace=False,
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Give a failed ragqa assertion a short, readable line in pytest's short test summary, and its exit code.

    pytest shows the exception's qualified name and the first line of its message, cut to the
    terminal width (``ragqa.assertions.MetricAssertionError: faithfulness FA...``); this replaces
    that line with the bare :meth:`~ragqa.assertions.MetricVerdict.headline`. The full message with every
    judge's row stays in the failure's traceback section.

    The report of a test that failed on ragqa gets the exit code ``ragqa test`` would give it
    (:data:`~ragqa.pytest_plugin.summary.EXIT_ATTRIBUTE`): the verdict's
    (:func:`ragqa.run.check.exit_code_of`), or 2 for a configuration or sample error.
    """
    outcome: Any = yield
    excinfo = call.excinfo
    if excinfo is None:
        return
    from ragqa.errors import ConfigError, SampleError

    if isinstance(excinfo.value, ConfigError | SampleError):
        setattr(outcome.get_result(), EXIT_ATTRIBUTE, 2)
        return
    from ragqa.assertions import MetricAssertionError

    if not isinstance(excinfo.value, MetricAssertionError):
        return
    from ragqa.run.check import exit_code_of

    report = outcome.get_result()
    setattr(report, EXIT_ATTRIBUTE, int(exit_code_of([excinfo.value.verdict])))
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        crash.message = excinfo.value.verdict.headline()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """With ``--ragqa-exit-code`` (ini ``ragqa_exit_code``), exit with ragqa's code when every failure is ragqa's.

    pytest exits 1 for any failed test; ``ragqa test`` and ``ragqa evaluate`` tell a missed
    threshold (1) from bad input (2), judges that failed (3) and an undecided gate (4), in one
    precedence (:func:`ragqa.pytest_plugin.summary.session_exit_code`). A session with another
    failure (a test's own ``assert``, an error) keeps pytest's code, and so does every session
    without the option.
    """
    config = session.config
    if not (config.getoption("ragqa_exit_code", default=None) or config.getini("ragqa_exit_code")):
        return
    state = config.stash.get(STATE, None)
    if state is None or exitstatus != pytest.ExitCode.TESTS_FAILED:
        return
    code = session_exit_code(state.exit_codes)
    if code is not None:
        session.exitstatus = int(code)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Print the metric x judge table when any ragqa assertion ran."""
    state = config.stash.get(STATE, None)
    if state is None or not state.rows:
        return
    terminalreporter.write_sep("=", "ragqa: mean score per metric and judge")
    for line in summary_table(state.rows):
        terminalreporter.write_line(line)
    if state.results_path is not None:
        terminalreporter.write_line(f"ragqa results: {state.results_path}")


# --- fixtures -----------------------------------------------------------------------------------


def _split(text: str | Sequence[str] | None) -> tuple[str, ...]:
    if text is None:
        return ()
    parts = text.split(",") if isinstance(text, str) else list(text)
    return tuple(p.strip() for p in parts if p.strip())


def _config_path(config: pytest.Config) -> Path:
    raw = config.getoption("ragqa_config", default=None) or config.getini("ragqa_config")
    if not raw:
        return Path("application.yaml")
    path = Path(str(raw))
    if not path.is_absolute() and not config.getoption("ragqa_config", default=None):
        path = config.rootpath / path  # ini values are relative to the rootdir
    return path


def _profiles(config: pytest.Config) -> tuple[str, ...]:
    return _split(config.getoption("ragqa_profile", default=None) or config.getini("ragqa_profile") or None)


class _Pool:
    """Containers by profile set for one session, and the loop they run on; closed at the end."""

    def __init__(self, path: Path, environ: Mapping[str, str] | None, loop: LoopThread) -> None:
        self.path = path
        self.environ = environ
        self.containers: dict[tuple[str, ...], Container] = {}
        self.loop = loop

    def get(self, profiles: tuple[str, ...]) -> Container:
        """The session's container for ``profiles``, created on first use (``ConfigError`` as ``create_container``)."""
        if profiles not in self.containers:
            from ragqa.container import create_container

            # the implicit ./application.yaml may be absent (defaults plus profiles, e.g. the built-in local)
            config = None if self.path == Path("application.yaml") else self.path
            self.containers[profiles] = create_container(config, profiles, environ=self.environ)
        return self.containers[profiles]

    def close(self) -> None:
        """Close every container on the session's loop, in creation order, and forget them."""
        from ragqa.container import close_container

        containers, self.containers = list(self.containers.values()), {}
        for container in containers:
            self.loop.run(close_container(container))


@pytest.fixture(scope="session")
def ragqa_environ() -> Mapping[str, str] | None:
    """Variables for ``${VAR}`` placeholders and overrides; ``None`` means the process environment.

    Override this fixture in a ``conftest.py`` to point the panel at a fake server.
    """
    return None


@pytest.fixture(scope="session")
def _ragqa_loop() -> Iterator[LoopThread]:
    loop = LoopThread()
    yield loop
    loop.stop()


@pytest.fixture(scope="session")
def _ragqa_pool(
    request: pytest.FixtureRequest, ragqa_environ: Mapping[str, str] | None, _ragqa_loop: LoopThread
) -> Iterator[_Pool]:
    pool = _Pool(_config_path(request.config), ragqa_environ, _ragqa_loop)
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def ragqa_container(request: pytest.FixtureRequest, _ragqa_pool: _Pool) -> Container:
    """The session's container, from ``--ragqa-config`` and ``--ragqa-profile`` (closed at session end).

    Settings are loaded here, so a configuration error fails the first test that uses ragqa with
    the key and the fix.
    """
    container = _ragqa_pool.get(_profiles(request.config))
    container.settings()
    return container


@pytest.fixture(scope="session")
def ragqa_thresholds(request: pytest.FixtureRequest) -> dict[str, float]:
    """``ragqa.thresholds`` of the settings, by metric spec (``faithfulness``, ``noise_sensitivity(mode=irrelevant)``).

    Empty when no settings file exists and no profile is given (a suite that overrides
    ``ragqa_evaluator`` needs no settings at all).
    """
    if not _config_path(request.config).exists() and not _profiles(request.config):
        return {}
    container: Container = request.getfixturevalue("ragqa_container")
    return dict(container.settings().ragqa.thresholds)


def _marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("ragqa")
    return dict(marker.kwargs) if marker is not None else {}


@pytest.fixture
def ragqa_evaluator(request: pytest.FixtureRequest, ragqa_container: Container) -> PanelEvaluator:
    """The panel evaluator for this test: the container's, narrowed by ``@pytest.mark.ragqa``.

    The marker's ``repeats`` and ``reducer`` (else ``--ragqa-repeats``, else the settings) set how
    many times each judge scores and how its repeats are reduced.

    Raises:
        ConfigError: for ``repeats`` below 1 or an unknown ``reducer``.
    """
    from ragqa.run.plan import panel_overrides, with_overrides

    kwargs = _marker_kwargs(request)
    container = ragqa_container
    profile = kwargs.get("profile")
    if profile:
        pool: _Pool = request.getfixturevalue("_ragqa_pool")
        container = pool.get(_split(profile))
        container.settings()
    repeats = kwargs.get("repeats", request.config.getoption("ragqa_repeats", default=None))
    overrides = panel_overrides(repeats=repeats, reducer=kwargs.get("reducer"))
    evaluator: PanelEvaluator = (
        container.evaluator(options=with_overrides(container.panel_options(), overrides))
        if overrides
        else container.evaluator()
    )
    judges = _split(kwargs.get("judges"))
    return select_judges(evaluator, judges, container=container) if judges else evaluator


@pytest.fixture
def ragqa_panel(
    request: pytest.FixtureRequest,
    ragqa_evaluator: PanelEvaluator,
    ragqa_thresholds: dict[str, float],
    _ragqa_loop: LoopThread,
) -> RagqaHelper:
    """A :class:`RagqaHelper` bound to this test's evaluator.

    ``await ragqa_panel.assert_metric("faithfulness", sample)`` in async tests;
    ``ragqa_panel.check_metric("faithfulness", sample)`` in plain ones. The package stays
    reachable as ``ragqa`` in the test (``ragqa.MetricAssertionError``).
    """
    state = request.config.stash.get(STATE, None)
    marker = _marker_kwargs(request)
    return RagqaHelper(
        ragqa_evaluator,
        thresholds=ragqa_thresholds,
        policy=marker.get("policy") or "aggregate",
        node=request.node,
        results_path=state.results_path if state is not None else None,
        loop=_ragqa_loop,
        on_undecided=_on_undecided(request, marker.get("on_undecided")),
    )


@pytest.fixture
def ragqa(ragqa_panel: RagqaHelper) -> RagqaHelper:
    """The former name of :func:`ragqa_panel`, kept working: the same helper.

    A test that takes it has a local ``ragqa`` that hides the package (``ragqa.Sample`` is then
    an ``AttributeError``); prefer ``ragqa_panel``.
    """
    return ragqa_panel


def _on_undecided(request: pytest.FixtureRequest, marked: object) -> OnUndecided:
    """The marker's ``on_undecided``, else ``--ragqa-on-undecided``, else the ini, else ``ragqa.on-undecided``.

    The settings are read only when a settings file or a profile exists (as :func:`ragqa_thresholds`).

    Raises:
        ragqa.errors.ConfigError: for a value other than ``fail``, ``pass`` or ``warn``.
    """
    from ragqa.thresholds import parse_on_undecided

    config = request.config
    if marked is not None:
        return parse_on_undecided(str(marked), key="@pytest.mark.ragqa(on_undecided=...)")
    option = config.getoption("ragqa_on_undecided", default=None)
    if option:
        return parse_on_undecided(str(option), key="--ragqa-on-undecided")
    ini = config.getini("ragqa_on_undecided")
    if ini:
        return parse_on_undecided(str(ini), key="ragqa_on_undecided")
    if not _config_path(config).exists() and not _profiles(config):
        return "fail"
    container: Container = request.getfixturevalue("ragqa_container")
    return container.settings().ragqa.on_undecided
