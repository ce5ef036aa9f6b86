"""``--workers N|MIN:MAX``: the check of the option (no cluster), and a pool that grows while batches wait.

The growth test needs the ``ray`` extra and a loopback cluster; it counts the requests the fake
server holds, never the wall time.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragqa.cli import app
from ragqa.errors import ConfigError
from ragqa.run.engine import parse_workers

DATASET = str(Path(__file__).resolve().parents[2] / "examples" / "datasets" / "it_helpdesk.jsonl")


@pytest.mark.parametrize(
    ("given", "expected"), [(None, (3, 3)), (4, (4, 4)), ("4", (4, 4)), ("1:4", (1, 4)), (" 2:2 ", (2, 2))]
)
def test_workers_is_a_count_or_a_range(given: int | str | None, expected: tuple[int, int]) -> None:
    assert parse_workers(given, 3) == expected


@pytest.mark.parametrize("given", ["0", "3:2", "0:2", "a", "2:", ":2", "1:2:3", "-1"])
def test_a_bad_workers_value_names_the_option_and_the_fix(given: str) -> None:
    with pytest.raises(ConfigError, match=r"give a number of workers \(4\) or a range MIN:MAX \(2:8\)"):
        parse_workers(given, 2)


@pytest.mark.parametrize("given", ["0", "3:2", "two"])
def test_the_cli_exits_2_on_a_bad_workers_value_before_anything_runs(given: str, tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = ["evaluate", DATASET, "--profile", "local", "--engine", "ray", "--workers", given, "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert f"--workers {given!r}: give a number of workers (4) or a range MIN:MAX (2:8)" in result.output
    assert not out.exists() and not Path(f"{out}.partial").exists()


BATCH = 5


@pytest.mark.slow
def test_a_min_max_pool_starts_one_worker_and_adds_one_while_batches_wait(
    cluster: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One worker scores one batch at a time, so it never has more than ``BATCH`` of judge a's
    requests parked at the server: more than that proves a second worker joined."""
    from _ray_cluster import JUDGE_KEY, office_samples, two_judges_yaml

    from ragqa.container import close_container, create_container
    from ragqa.run.loop import run_sync
    from ragqa.run.plan import make_plan, plan_output
    from ragqa.run.ray_engine import RayEngine
    from ragqa.run.runner import Runner
    from ragqa.testing import fake_openai_server, ragqa_responder

    (tmp_path / "application.yaml").write_text(two_judges_yaml("{max-in-flight: 64}"), encoding="utf-8")
    out = tmp_path / "r.jsonl"
    engine = RayEngine(workers=2, min_workers=1, batch_size=BATCH)
    finished: list[Any] = []
    with fake_openai_server(api_key=JUDGE_KEY) as server:
        for judge in ("judge-a", "judge-b"):
            server.script(judge, ragqa_responder())
        server.hold("judge-a")
        monkeypatch.setenv("FAKE_URL", server.base_url)
        container = create_container(tmp_path / "application.yaml")
        plan = make_plan(container.settings(), metrics=["faithfulness"], dataset="offices", outputs=[plan_output(out)])

        def score() -> None:
            try:
                finished.append(run_sync(Runner(plan, container, engine=engine).arun(office_samples(40))))
            finally:
                run_sync(close_container(container))

        thread = threading.Thread(target=score)
        thread.start()
        guard = time.monotonic() + 600  # only keeps a broken pool from hanging the suite
        while server.parked <= BATCH and thread.is_alive() and time.monotonic() < guard:
            time.sleep(0.05)
        parked = server.parked
        server.release("judge-a")
        thread.join()
    assert parked > BATCH  # two workers were scoring at once
    [result] = finished
    assert engine.peak_workers == 2
    assert [s.n_scored for s in result.report.summaries] == [40]
    rows = out.read_text(encoding="utf-8").splitlines()[1:]
    assert len(rows) == 40  # every (sample, metric) exactly once
