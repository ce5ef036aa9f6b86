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

Panel work runs on a :class:`ragqa.run.loop.LoopThread` owned by the session, so plain and async
tests (on any pytest-asyncio loop scope) share one container. Every fixture is a plain (sync)
fixture: plain ``def`` tests need no async plugin. An ``async def`` test that uses ragqa and that
no plugin runs (pytest-asyncio missing, or in strict mode without a marker) fails with the fix
(``asyncio_mode = auto``) instead of pytest's bare "not natively supported".
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragqa.run.loop import LoopThread

if TYPE_CHECKING:
    from ragqa.assertions import MetricVerdict, Policy
    from ragqa.container import Container
    from ragqa.evaluation import PanelEvaluator
    from ragqa.metrics.base import Metric
    from ragqa.schema import PanelResult, Sample
    from ragqa.thresholds import OnUndecided

__all__ = ["RagqaHelper", "parse_properties", "results_line", "select_judges", "summary_table"]

_PROPERTY_PREFIX = "ragqa:"  # ragqa.render.junit.PROPERTY_PREFIX, without importing the renderers at start-up


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--ragqa-config``, ``--ragqa-profile`` and ``--ragqa-results`` (and ini twins)."""
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
    parser.addini("ragqa_on_undecided", "fail, pass or warn: what an undecided assertion does", default=None)


@dataclass
class _Row:
    """One recorded assertion, rebuilt from a test report's properties (works across xdist workers)."""

    metric: str
    sample: str = "?"
    aggregate: float = math.nan
    passed: bool | None = None
    gate: str | None = None
    """``pass``, ``fail`` or ``undecided``, when recorded."""
    judges: dict[str, float | None] = field(default_factory=dict)
    """``None`` = the judge was excluded."""


@dataclass
class _State:
    rows: list[_Row] = field(default_factory=list)
    results_path: Path | None = None


_STATE = pytest.StashKey[_State]()


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
    config.stash[_STATE] = state
    config.pluginmanager.register(_Reporter(state), "ragqa-reporter")


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def parse_properties(properties: Sequence[tuple[str, object]]) -> list[_Row]:
    """Rebuild recorded assertions from a test's ``user_properties`` (pure).

    Each assertion is a block starting with ``ragqa:<metric>:sample``; then ``:aggregate``,
    ``:threshold``, ``:passed``, ``:gate`` and one ``:judge:<id>`` per judge (``excluded`` for
    failed judges).

    Returns:
        One row per assertion, in order.
    """
    rows: list[_Row] = []
    for name, value in properties:
        if not name.startswith(_PROPERTY_PREFIX):
            continue
        body = name[len(_PROPERTY_PREFIX) :]
        text = str(value)
        if body.endswith(":sample"):
            rows.append(_Row(metric=body[: -len(":sample")], sample=text))
            continue
        if not rows:
            continue
        row = rows[-1]
        metric, sep, judge = body.partition(":judge:")
        if sep and metric == row.metric:
            row.judges[judge] = None if text == "excluded" else _float(text)
        elif body == f"{row.metric}:aggregate":
            row.aggregate = _float(text)
        elif body == f"{row.metric}:passed":
            row.passed = text == "true"
        elif body == f"{row.metric}:gate":
            row.gate = text
    return rows


class _Reporter:
    """Collects ragqa scores from every test report (on the xdist controller too) for the summary."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Parse the ragqa properties of a finished test call."""
        if report.when == "call" and report.user_properties:
            self.state.rows.extend(parse_properties(report.user_properties))


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return "nan" if math.isnan(value) else f"{value:.3f}"


def summary_table(rows: Sequence[_Row]) -> list[str]:
    """Render the metric x judge table (pure).

    Columns: metric, assertions, passed (with ``(u undecided)`` when u assertions were undecided,
    passed or not), then each judge's mean score over the assertions it scored (with ``(k excl)``
    when it was excluded k times), then the mean aggregate.

    Returns:
        The table's lines (empty when there are no rows).
    """
    if not rows:
        return []
    judges: dict[str, None] = {}
    metrics: dict[str, list[_Row]] = {}
    for row in rows:
        metrics.setdefault(row.metric, []).append(row)
        for j in row.judges:
            judges.setdefault(j, None)
    header = ["metric", "n", "passed", *judges, "aggregate"]
    table = [header]
    for metric, group in metrics.items():
        undecided = sum(1 for r in group if r.gate == "undecided")
        passed = f"{sum(1 for r in group if r.passed)}/{len(group)}"
        passed += f" ({undecided} undecided)" if undecided else ""
        cells = [metric, str(len(group)), passed]
        for j in judges:
            values = [r.judges[j] for r in group if j in r.judges]
            finite = [v for v in values if v is not None and not math.isnan(v)]
            excluded = sum(1 for v in values if v is None)
            cell = _fmt(math.fsum(finite) / len(finite)) if finite else ("nan" if values else "-")
            if excluded:
                cell += f" ({excluded} excl)"
            cells.append(cell)
        aggregates = [r.aggregate for r in group if not math.isnan(r.aggregate)]
        cells.append(_fmt(math.fsum(aggregates) / len(aggregates)) if aggregates else "nan")
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table]


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
    """Give a failed ragqa assertion a short, readable line in pytest's short test summary.

    pytest shows the exception's qualified name and the first line of its message, cut to the
    terminal width (``ragqa.assertions.MetricAssertionError: faithfulness FA...``); this replaces
    that line with the bare :meth:`~ragqa.assertions.MetricVerdict.headline`. The full message with every
    judge's row stays in the failure's traceback section.
    """
    outcome: Any = yield
    excinfo = call.excinfo
    if excinfo is None:
        return
    from ragqa.assertions import MetricAssertionError

    if not isinstance(excinfo.value, MetricAssertionError):
        return
    crash = getattr(outcome.get_result().longrepr, "reprcrash", None)
    if crash is not None:
        crash.message = excinfo.value.verdict.headline()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Print the metric x judge table when any ragqa assertion ran."""
    state = config.stash.get(_STATE, None)
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
        if profiles not in self.containers:
            from ragqa.container import create_container

            # the implicit ./application.yaml may be absent (defaults plus profiles, e.g. the built-in local)
            config = None if self.path == Path("application.yaml") else self.path
            self.containers[profiles] = create_container(config, profiles, environ=self.environ)
        return self.containers[profiles]

    def close(self) -> None:
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


def select_judges(evaluator: PanelEvaluator, patterns: Sequence[str]) -> PanelEvaluator:
    """A copy of ``evaluator`` over the judges whose ids match ``patterns`` (ids or shell patterns).

    The panel order is kept; metrics, embedders and options are shared.

    Raises:
        ValueError: when a pattern matches no judge (the message lists the panel).
    """
    from ragqa.evaluation import PanelEvaluator

    ids = [j.id for j in evaluator.judges]
    unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(i, p) for i in ids)]
    if unmatched:
        raise ValueError(
            f"@pytest.mark.ragqa(judges=...): {', '.join(map(repr, unmatched))} match no judge; "
            f"the panel is {', '.join(ids) or '(empty)'}"
        )
    chosen = [j for j in evaluator.judges if any(fnmatch.fnmatchcase(j.id, p) for p in patterns)]
    return PanelEvaluator(chosen, evaluator.metrics, embedders=evaluator.embedders, options=evaluator.options)


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
    return select_judges(evaluator, judges) if judges else evaluator


class RagqaHelper:
    """The ``ragqa`` fixture: assertions bound to the test's evaluator, recorded for the reports.

    Panel work runs on ``loop`` (the session's ragqa loop thread) when given, so the helper works
    in sync tests and in async tests on any event loop; without it, async methods run on the
    caller's loop and sync ones on ragqa's shared loop thread (:func:`ragqa.run.loop.run_sync`).

    Attributes:
        evaluator: the panel evaluator (narrowed by the marker).
        thresholds: configured thresholds by metric name or key.
        policy: the default policy (marker ``policy=``, else ``"aggregate"``).
        on_undecided: what an undecided assertion does: ``fail`` (default), ``pass`` or ``warn``.
        verdicts: every verdict recorded in this test, in order.
    """

    def __init__(
        self,
        evaluator: PanelEvaluator,
        *,
        thresholds: Mapping[str, float] | None = None,
        policy: Policy = "aggregate",
        node: pytest.Item | None = None,
        results_path: Path | None = None,
        loop: LoopThread | None = None,
        on_undecided: OnUndecided = "fail",
    ) -> None:
        """Bind the helper (``node`` receives the JUnit properties; ``results_path`` the JSONL lines)."""
        self.evaluator = evaluator
        self.thresholds = dict(thresholds or {})
        self.policy = policy
        self.on_undecided: OnUndecided = on_undecided
        self.verdicts: list[MetricVerdict] = []
        self._node = node
        self._results_path = results_path
        self._loop = loop

    def _score_metric(
        self, metric: Metric | str, sample: Sample, threshold: float | None, policy: Policy | None
    ) -> Coroutine[Any, Any, MetricVerdict]:
        """The :func:`ragqa.assertions.score_metric` call with this fixture's policy and thresholds."""
        from ragqa.assertions import score_metric

        return score_metric(
            self.evaluator,
            metric,
            sample,
            threshold=threshold,
            policy=policy if policy is not None else self.policy,
            thresholds=self.thresholds,
            on_undecided=self.on_undecided,
        )

    async def _verdict(
        self, metric: Metric | str, sample: Sample, threshold: float | None, policy: Policy | None
    ) -> MetricVerdict:
        coro = self._score_metric(metric, sample, threshold, policy)
        return await (self._loop.arun(coro) if self._loop is not None else coro)

    def _verdict_sync(
        self, metric: Metric | str, sample: Sample, threshold: float | None, policy: Policy | None
    ) -> MetricVerdict:
        from ragqa.run.loop import run_sync

        coro = self._score_metric(metric, sample, threshold, policy)
        return self._loop.run(coro) if self._loop is not None else run_sync(coro)

    def _judge_thresholds(self, judge_thresholds: Mapping[str, float] | None) -> Mapping[str, float]:
        """Per-judge thresholds checked against this test's panel, before any judge call."""
        from ragqa.assertions import check_judge_thresholds

        if judge_thresholds:
            check_judge_thresholds([j.id for j in self.evaluator.judges], judge_thresholds)
        return judge_thresholds or {}

    async def score(
        self,
        metric: Metric | str,
        sample: Sample,
        *,
        threshold: float | None = None,
        policy: Policy | None = None,
        judge_thresholds: Mapping[str, float] | None = None,
    ) -> MetricVerdict:
        """Score and record without raising on "fail" (see :func:`ragqa.assertions.score_metric`).

        ``judge_thresholds`` (``{"judge-a": 0.8}``) adds per-judge gates on top of the policy
        (:func:`ragqa.assertions.with_judge_thresholds`); an unknown judge id is a ``ConfigError``
        before any call.
        """
        from ragqa.assertions import with_judge_thresholds

        gates = self._judge_thresholds(judge_thresholds)
        verdict = with_judge_thresholds(await self._verdict(metric, sample, threshold, policy), gates)
        self._record(verdict)
        return verdict

    async def assert_metric(
        self,
        metric: Metric | str,
        sample: Sample,
        *,
        threshold: float | None = None,
        policy: Policy | None = None,
        judge_thresholds: Mapping[str, float] | None = None,
    ) -> PanelResult:
        """Assert that the panel passes ``metric`` on ``sample`` (async tests).

        See :func:`ragqa.assertions.assert_metric` for thresholds, direction and policies;
        ``judge_thresholds`` as in :meth:`score`.

        Raises:
            ragqa.assertions.MetricAssertionError: when the assertion fails.
        """
        __tracebackhide__ = True
        verdict = await self.score(
            metric, sample, threshold=threshold, policy=policy, judge_thresholds=judge_thresholds
        )
        return self._raise_on_fail(verdict)

    def check_metric(
        self,
        metric: Metric | str,
        sample: Sample,
        *,
        threshold: float | None = None,
        policy: Policy | None = None,
        judge_thresholds: Mapping[str, float] | None = None,
    ) -> PanelResult:
        """Synchronous twin of :meth:`assert_metric`, for plain tests.

        The panel runs on the session's loop thread, so this works in async tests too, where it
        blocks the test's loop until the panel is done (``await ragqa_panel.assert_metric(...)`` does not).

        Raises:
            ragqa.assertions.MetricAssertionError: when the assertion fails.
        """
        __tracebackhide__ = True
        from ragqa.assertions import with_judge_thresholds

        gates = self._judge_thresholds(judge_thresholds)
        verdict = with_judge_thresholds(self._verdict_sync(metric, sample, threshold, policy), gates)
        self._record(verdict)
        return self._raise_on_fail(verdict)

    @staticmethod
    def _raise_on_fail(verdict: MetricVerdict) -> PanelResult:
        __tracebackhide__ = True
        from ragqa.assertions import raise_on_fail

        return raise_on_fail(verdict)

    def _record(self, verdict: MetricVerdict) -> None:
        """Append the verdict's JUnit properties to the test and its line to the results file."""
        self.verdicts.append(verdict)
        result = verdict.result
        if self._node is not None:
            from ragqa.render.junit import result_properties

            self._node.user_properties.extend(
                result_properties(
                    result,
                    threshold=verdict.threshold,
                    policy=verdict.policy.label,
                    passed=verdict.passed,
                    gate=verdict.gate,
                )
            )
        if self._results_path is not None:
            line = results_line(verdict, test=self._node.nodeid if self._node is not None else None)
            with self._results_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        attach_to_allure(verdict, test=self._node.nodeid if self._node is not None else None)


def attach_to_allure(verdict: MetricVerdict, *, test: str | None = None) -> bool:
    """Attach a verdict to the running test's Allure result, when ``allure-pytest`` is installed.

    Two attachments per verdict, named ``ragqa <metric> on <sample>``: the panel table as text
    (:func:`ragqa.assertions.format_verdict`: each judge's score, pass/FAIL, reason and failed
    statements, the aggregate) and the per-judge record as JSON (:func:`results_line`: every
    judge's score, reason, details and failure, the aggregate, threshold and verdict). Without
    ``allure-pytest`` nothing happens; with it but without ``--alluredir`` Allure drops them.

    Returns:
        Whether Allure was there to take them.
    """
    try:
        import allure  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError:
        return False
    name = f"ragqa {verdict.result.metric} on {verdict.result.sample_id}"
    allure.attach(verdict.message(), name=f"{name}: panel", attachment_type=allure.attachment_type.TEXT)
    allure.attach(
        json.dumps(results_line(verdict, test=test), ensure_ascii=False, indent=2),
        name=f"{name}: judges",
        attachment_type=allure.attachment_type.JSON,
    )
    return True


def results_line(verdict: MetricVerdict, *, test: str | None) -> dict[str, Any]:
    """One ``--ragqa-results`` line: the panel result's record plus the test's verdict (pure).

    The shape is :func:`ragqa.render.records.result_record`'s (``sample_id``, ``metric``,
    ``direction``, ``aggregate``, ``judges``), so :func:`ragqa.render.records.read_result_record`
    reads a line back, plus ``test`` (the pytest node id, or ``None``), ``threshold``, ``policy``
    (``aggregate``, ``all``, ``at_least:k``), ``passed``, ``decided`` (False when only judge
    failures made it fail), ``gate`` (``pass``, ``fail`` or ``undecided``), ``interval`` (the
    sample's interval across judges x repeats, or ``None``), ``on_undecided`` and ``flaky``.
    """
    from ragqa.render.records import result_record

    return {
        "test": test,
        **result_record(verdict.result),
        "threshold": verdict.threshold,
        "policy": verdict.policy.label,
        "passed": verdict.passed,
        "decided": verdict.decided,
        "gate": verdict.gate,
        "interval": None if verdict.interval is None else verdict.interval.model_dump(mode="json"),
        "on_undecided": verdict.on_undecided,
        "flaky": verdict.flaky,
    }


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
    state = request.config.stash.get(_STATE, None)
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
