"""``--engine ray`` on a local two-CPU cluster listening on loopback only (needs the ``ray`` extra).

One cluster (the ``cluster`` fixture of ``tests/conftest.py``) serves every Ray test (it takes 10-20 s to start
here). Every test compares with what one process writes or what the fake server counted, never with a hard-coded
number of its own.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")

import httpx  # noqa: E402
import openai  # noqa: E402
from _ray_cluster import JUDGE_KEY, HelpdeskRuns, asked_modes, cli, office_samples, start_cluster  # noqa: E402
from _records import exact_summaries, untimed  # noqa: E402
from factories import application_yaml  # noqa: E402

import ragqa  # noqa: E402
from ragqa.container import close_container, create_container  # noqa: E402
from ragqa.errors import ConfigError  # noqa: E402
from ragqa.run.loop import run_sync  # noqa: E402
from ragqa.run.plan import make_plan, plan_output  # noqa: E402
from ragqa.run.ray_engine import LOOPBACK, RayEngine, shipped_environ  # noqa: E402
from ragqa.run.ray_limits import ClusterLimiter, ClusterLimits  # noqa: E402
from ragqa.run.runner import Runner  # noqa: E402
from ragqa.settings import ProviderLimits  # noqa: E402
from ragqa.testing import FakeOpenAIServer, fake_openai_server, ragqa_responder  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "examples" / "datasets" / "it_helpdesk.jsonl"


def _results(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header, *rows = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return header, rows


_LATENCY = re.compile(rb'"latency_s": [^,}]+')


def _untimed_lines(path: Path) -> list[bytes]:
    """The result lines of a results file as bytes, each ``latency_s`` (a clock reading) replaced by 0."""
    return [_LATENCY.sub(b'"latency_s": 0', line) for line in path.read_bytes().splitlines(keepends=True)[1:]]


def _without_wall_time(text: str) -> str:
    return "\n".join(line.split(" · wall time")[0] for line in text.splitlines())


def test_a_ray_run_writes_what_one_process_writes(cluster: None, helpdesk_on_ray: HelpdeskRuns) -> None:
    local, spread, directory = helpdesk_on_ray.local, helpdesk_on_ray.ray, helpdesk_on_ray.directory
    assert local.exit_code == 0, local.output
    assert spread.exit_code == local.exit_code, spread.output
    head1, rows1 = _results(directory / "local.jsonl")
    head2, rows2 = _results(directory / "ray.jsonl")
    for key in ("run_id", "started_at"):
        head1.pop(key), head2.pop(key)
    assert head2 == head1
    assert len(rows2) == len(rows1) == 2 * 60
    assert [untimed(r) for r in rows2] == [untimed(r) for r in rows1]  # score, reason, details
    # the workers made the lines the driver appended (compact rows): the same bytes, latencies aside
    assert _untimed_lines(directory / "ray.jsonl") == _untimed_lines(directory / "local.jsonl")
    assert helpdesk_on_ray.asked == ["lines"]
    assert len({(r["sample_id"], r["metric"]) for r in rows2}) == len(rows2)  # every pair exactly once
    assert _without_wall_time(spread.stdout) == _without_wall_time(local.stdout)  # the same report


@pytest.fixture(scope="module")
def api_on_ray() -> tuple[ragqa.Report, ragqa.Report]:
    """``ragqa.evaluate`` of the shipped dataset in one process and on the cluster, for two tests.

    Its tests ask for ``cluster`` too (the name that orders the cluster's users).
    """
    start_cluster()
    local = ragqa.evaluate(str(DATASET), profile="local")
    return local, ragqa.evaluate(str(DATASET), profile="local", engine="ray", workers=2, batch_size=8)


def test_the_python_api_gives_the_same_report_on_ray(
    cluster: None, api_on_ray: tuple[ragqa.Report, ragqa.Report]
) -> None:
    local, spread = api_on_ray
    assert [untimed(r.model_dump(mode="json")) for r in spread.results] == [
        untimed(r.model_dump(mode="json")) for r in local.results
    ]
    assert [s.aggregate_mean for s in spread.summaries] == [s.aggregate_mean for s in local.summaries]


def test_a_ray_run_without_a_results_file_sends_only_summary_rows_and_gives_the_same_summaries(
    cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = asked_modes(monkeypatch)
    local = ragqa.evaluate(str(DATASET), profile="local", keep_results=False)
    spread = ragqa.evaluate(str(DATASET), profile="local", engine="ray", workers=2, batch_size=8, keep_results=False)
    assert asked == ["rows"]
    assert spread.n_samples == local.n_samples == 60 and not spread.results_kept
    figures = [json.dumps(untimed(json.loads(exact_summaries(r.summaries)))) for r in (spread, local)]
    assert figures[0] == figures[1]  # every figure, bit for bit, but the judges' latencies (clock readings)


def test_a_resumed_ray_run_scores_only_the_missing_pairs(
    cluster: None, helpdesk_on_ray: HelpdeskRuns, tmp_path: Path
) -> None:
    first = helpdesk_on_ray.ray  # a whole Ray run of the dataset
    assert first.exit_code == 0, first.output
    whole = (helpdesk_on_ray.directory / "ray.jsonl").read_text(encoding="utf-8").splitlines()
    kept = whole[:-30]  # the header and 90 results: 30 pairs are missing
    out = tmp_path / "r.jsonl"
    Path(f"{out}.partial").write_text("\n".join(kept) + "\n", encoding="utf-8")
    base = ["evaluate", str(DATASET), "--profile", "local", "--engine", "ray", "--workers", "1"]  # one batch of 15
    again = cli(*base, "--out", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "resuming: 90 result(s) kept" in again.stderr
    assert "estimate: 30 (sample, metric) pair(s)" in again.stderr
    assert [untimed(json.loads(x)) for x in out.read_text(encoding="utf-8").splitlines()[1:]] == [
        untimed(json.loads(x)) for x in whole[1:]
    ]


LIMITED_YAML = application_yaml(
    ("judge-a", "judge-b"),
    api_key="${JUDGE_API_KEY}",
    backoff=False,
    ragqa=["default-limits: {rps: 20, max-in-flight: 16}"],
)


@pytest.fixture
def keyed_server() -> Iterator[FakeOpenAIServer]:
    """The fake server for judges a and b, answering after 0.8 s: at rps 20, 16 requests in flight."""
    with fake_openai_server(api_key=JUDGE_KEY, latency_s=0.8) as server:
        for judge in ("judge-a", "judge-b"):
            server.script(judge, ragqa_responder())
        yield server


@pytest.fixture
def prompt_server() -> Iterator[FakeOpenAIServer]:
    """The fake server for judges a and b, answering at once (a test that must wait holds the answers)."""
    with fake_openai_server(api_key=JUDGE_KEY) as server:
        for judge in ("judge-a", "judge-b"):
            server.script(judge, ragqa_responder())
        yield server


def _most_in_one_second(times: list[float]) -> int:
    times = sorted(times)
    return max(bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times))


def test_provider_limits_hold_across_the_cluster(
    cluster: None, keyed_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker starts 20 request chains at once (10 samples, two judges): twice the cap in flight and
    more than the rate allows in the first second, unless the limits are shared (80 requests: 4 s at rps 20)."""
    (tmp_path / "application.yaml").write_text(LIMITED_YAML, encoding="utf-8")
    monkeypatch.setenv("FAKE_URL", keyed_server.base_url)  # read by the settings: shipped to the workers
    container = create_container(tmp_path / "application.yaml")
    plan = make_plan(container.settings(), metrics=["faithfulness"], dataset="offices")
    engine = RayEngine(workers=2, batch_size=10)
    try:
        result = run_sync(Runner(plan, container, engine=engine).arun(office_samples(20)))
    finally:
        run_sync(close_container(container))
    assert [s.n_scored for s in result.report.summaries] == [20]
    calls = keyed_server.requests
    assert len(calls) == 20 * 2 * 2  # statements and verdicts, two judges
    assert {r.headers["authorization"] for r in calls} == {f"Bearer {JUDGE_KEY}"}  # from the workers' own env
    assert keyed_server.stats["peak_in_flight"] <= 16  # the server's own count
    assert _most_in_one_second([r.t for r in calls]) <= 21  # rps 20: at most 21 starts in any 1 s window
    [stats] = engine.limits_stats.values()
    assert stats["tokens"] >= len(calls) and stats["peak_in_flight"] <= 16
    assert_loopback_only()


KILLED_BATCH = 5


def test_a_worker_killed_mid_run_is_replaced_and_every_pair_is_written_once(
    cluster: None, prompt_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judge a's requests are parked at the server until both workers have a batch under way: a
    worker scores one batch at a time, so it never has more than ``KILLED_BATCH`` of them parked,
    and twice that many parked proves both are mid-batch. One is killed before any of its batch
    is answered, so its batches are run again by its replacement, whatever the machine's speed."""
    server = prompt_server
    (tmp_path / "application.yaml").write_text(LIMITED_YAML, encoding="utf-8")
    monkeypatch.setenv("FAKE_URL", server.base_url)
    container = create_container(tmp_path / "application.yaml")
    out = tmp_path / "r.jsonl"
    plan = make_plan(container.settings(), metrics=["faithfulness"], dataset="offices", outputs=[plan_output(out)])
    n = 4 * KILLED_BATCH  # two batches per worker: one scoring, one waiting (ray_pool.PER_ACTOR)
    finished: list[Any] = []

    def score() -> None:
        try:
            engine = RayEngine(workers=2, batch_size=KILLED_BATCH)
            finished.append(run_sync(Runner(plan, container, engine=engine).arun(office_samples(n))))
        finally:
            run_sync(close_container(container))

    stale = _panel_workers()  # a process of an earlier run's worker that has not exited yet is no victim
    server.hold("judge-a")
    thread = threading.Thread(target=score)
    thread.start()
    guard = time.monotonic() + 600  # only keeps a broken run from hanging the suite
    try:
        while server.parked < 2 * KILLED_BATCH and thread.is_alive() and time.monotonic() < guard:
            time.sleep(0.05)
        parked, workers = server.parked, _panel_workers() - stale
        if parked == 2 * KILLED_BATCH and len(workers) == 2:
            os.kill(min(workers), signal.SIGKILL)
    finally:
        server.release("judge-a")  # the victim's parked requests are answered to nobody
        thread.join()
    assert parked == 2 * KILLED_BATCH and len(workers) == 2  # both workers were mid-batch when one was killed
    [result] = finished
    assert [s.n_scored for s in result.report.summaries] == [n]
    _, rows = _results(out)
    assert sorted(r["sample_id"] for r in rows) == [f"s{i:03d}" for i in range(n)]  # every pair once
    assert len(server.requests) > n * 2 * 2  # the killed worker's batch was asked again


def _panel_workers() -> set[int]:
    """The live processes of the cluster's panel workers (``ray::PanelWorker``)."""
    return {pid for pid in _descendants(os.getpid()) if b"PanelWorker" in _cmdline(pid) and not _exited(pid)}


def _exited(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_worker_that_cannot_build_the_panel_stops_the_run_with_its_error(
    cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(
        LIMITED_YAML.replace("- {id: judge-b}", "- {id: judge-b, options: {model: '${JUDGE_MODEL_KEY}'}}")
    )
    monkeypatch.setenv("FAKE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("JUDGE_MODEL_KEY", "m")  # set after the cluster started, and never shipped (KEY)
    with pytest.raises(ConfigError, match="environment variable JUDGE_MODEL_KEY is not set"):
        ragqa.evaluate(office_samples(4), config=config, engine="ray", workers=1)


def test_no_secret_is_shipped_to_the_workers(tmp_path: Path) -> None:
    (tmp_path / "application.yaml").write_text(LIMITED_YAML, encoding="utf-8")
    environ = {
        "FAKE_URL": "http://127.0.0.1:9",
        "JUDGE_API_KEY": "sk-one",
        "RAGQA__RAGQA__LANGUAGE": "en",
        "UNRELATED": "x",
        "RAGQA_AUTH_TOKEN": "t",
    }
    shipped = shipped_environ(str(tmp_path / "application.yaml"), str(tmp_path), (), environ)
    assert shipped == {"FAKE_URL": "http://127.0.0.1:9", "RAGQA__RAGQA__LANGUAGE": "en"}


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    return inodes


def _address(hex_address: str) -> str:
    raw = bytes.fromhex(hex_address)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def assert_loopback_only() -> None:
    """Every TCP listener and UDP socket of the cluster's processes is bound to loopback."""
    pids = _descendants(os.getpid())
    inodes = _socket_inodes(pids)
    bound = []
    for table, listening in (("tcp", True), ("tcp6", True), ("udp", False), ("udp6", False)):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if inode in inodes and (state == "0A" or not listening):
                bound.append(_address(local.split(":")[0]))
    assert len(bound) >= 3, f"found only {bound} among the {len(pids)} processes of the cluster"
    assert set(bound) <= {LOOPBACK, "::ffff:127.0.0.1", "::1"}, bound


def test_nothing_of_the_cluster_listens_beyond_loopback(cluster: None) -> None:
    ray.get(ray.remote(lambda: 1).remote())  # a worker process is running
    assert_loopback_only()


class _InProcess:
    """The limiter actor's methods called in this loop, shaped like a Ray handle (``handle.take.remote(...)``)."""

    class _Method:
        def __init__(self, method: Any) -> None:
            self._method = method

        def remote(self, *args: Any) -> asyncio.Future[Any]:
            return asyncio.ensure_future(self._method(*args))

    def __init__(self, limits: ClusterLimits) -> None:
        for name in ("acquire", "release", "forget", "take", "hold", "stats"):
            setattr(self, name, self._Method(getattr(limits, name)))


async def test_two_workers_never_hold_more_permits_than_max_in_flight() -> None:
    handle = _InProcess(ClusterLimits())
    limits = ProviderLimits(max_in_flight=3)
    workers = [ClusterLimiter("p", limits, handle), ClusterLimiter("p", limits, handle)]
    held, peak, done = 0, 0, 0

    async def call(limiter: ClusterLimiter) -> None:
        nonlocal held, peak, done
        async with limiter.slot("judge"):
            held += 1
            peak = max(peak, held)
            await asyncio.sleep(0.01)
            held -= 1
        done += 1

    await asyncio.gather(*(call(workers[i % 2]) for i in range(40)))
    assert done == 40 and peak == 3  # the cap is reached and never passed, across both workers
    stats = await handle.stats.remote()  # type: ignore[attr-defined]
    assert stats["p"]["peak_in_flight"] <= 3


def _rate_limited(retry_after: str) -> openai.RateLimitError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(429, headers={"retry-after": retry_after}, request=request)
    return openai.RateLimitError("slow down", response=response, body=None)


async def test_a_429_seen_by_one_worker_holds_the_other() -> None:
    handle = _InProcess(ClusterLimits())
    limits = ProviderLimits(rps=100, max_in_flight=4)
    first, second = ClusterLimiter("p", limits, handle), ClusterLimiter("p", limits, handle)
    with pytest.raises(openai.RateLimitError):
        async with first.slot("judge"):
            raise _rate_limited("0.5")
    await asyncio.sleep(0)  # the report reaches the actor
    began = time.monotonic()
    async with second.slot("judge"):
        pass
    assert time.monotonic() - began >= 0.45  # held for the asked 0.5 s, less the time already gone


def test_retry_failed_is_refused_before_any_call(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = ["evaluate", str(DATASET), "--profile", "local", "--engine", "ray", "--out", str(out)]
    result = cli(*args, "--resume", "--retry-failed")
    assert result.exit_code == 2
    assert "--retry-failed asks again only the judges that failed" in result.output
    assert not out.exists() and not Path(f"{out}.partial").exists()


class _Watched(list[Any]):
    """Samples that note, when the runner's checking pass first reads them, what the engine has started."""

    def __init__(self, samples: list[Any], engine: RayEngine) -> None:
        super().__init__(samples)
        self.engine = engine
        self.seen: list[tuple[int, list[str]]] = []

    def __iter__(self) -> Iterator[Any]:
        if not self.seen:
            named = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)]
            self.seen.append((self.engine.running_workers, named))
        return super().__iter__()


def test_workers_start_before_the_checks_and_stop_when_a_sample_is_bad(cluster: None) -> None:
    rows = [json.loads(line) for line in DATASET.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows[3].pop("retrieved_contexts")  # faithfulness needs them: the checks stop the run
    container = create_container(None, ["local"])
    plan = make_plan(container.settings(), metrics=["faithfulness"], dataset="helpdesk")
    engine = RayEngine(workers=2, batch_size=8)
    samples = _Watched([ragqa.Sample.model_validate(r) for r in rows], engine)
    try:
        with pytest.raises(ragqa.InvalidSamples, match="retrieved_contexts"):
            run_sync(Runner(plan, container, engine=engine).arun(samples))
    finally:
        run_sync(close_container(container))
    [(workers, named)] = samples.seen
    assert workers == 2  # started before the checking pass read the first sample
    assert not [n for n in named if n.startswith("ragqa-limits")]  # local judges: nothing to limit, no limiter
    assert engine.running_workers == 0  # stopped with the run


def test_a_run_started_early_gives_one_process_results(
    cluster: None, api_on_ray: tuple[ragqa.Report, ragqa.Report]
) -> None:
    """The API's Ray run started its workers before the runner's checking pass (as every run does,
    see the test above): its results are one process's, object for object."""
    local, spread = (report.results for report in api_on_ray)
    assert [(r.sample_id, r.metric) for r in spread] == [(r.sample_id, r.metric) for r in local]
    for got, want in zip(spread, local, strict=True):  # the very objects: scores, reasons, details, failures
        assert got.aggregate == want.aggregate
        assert [(j.judge_id, j.score, j.failure) for j in got.judges] == [
            (j.judge_id, j.score, j.failure) for j in want.judges
        ]
