"""``--engine ray --out results.parquet``: the driver writes the workers' records as Parquet, as one process does.

A separate module from ``test_ray_engine``; it runs on the Ray tests' one loopback cluster (the ``cluster``
fixture of ``tests/conftest.py``), where the ``ray`` extra is installed and slow tests run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install -c constraints.txt -e '.[ray]')")

from _cli import run_cli  # noqa: E402
from _ray_cluster import HelpdeskRuns  # noqa: E402
from _records import untimed  # noqa: E402

from ragqa.render.parquet import part_files  # noqa: E402
from ragqa.run.stream import read_results  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
JOB = ("evaluate", ROOT / "examples" / "datasets" / "it_helpdesk.jsonl", "--profile", "local", "--no-progress")


def test_a_ray_run_writes_parquet_and_parts_with_the_records_of_one_process(
    cluster: None, helpdesk_on_ray: HelpdeskRuns, tmp_path: Path
) -> None:
    ray_run = ("--engine", "ray", "--workers", "2", "--batch-size", "16")
    # two runs: a run's first --out is its results file (with the header); a second one is a rendered copy
    single = run_cli(*JOB, *ray_run, "--out", tmp_path / "ray.parquet")
    parts = run_cli(*JOB, *ray_run, "--out", f"{tmp_path / 'parts'}/")
    assert helpdesk_on_ray.local.exit_code == 0, helpdesk_on_ray.local.output
    for result in (single, parts):
        assert result.returncode == 0, result.stderr
    assert len(part_files(tmp_path / "parts")) == 1
    local_header, expected = read_results(helpdesk_on_ray.directory / "local.jsonl")  # one process's run
    for written in (tmp_path / "ray.parquet", tmp_path / "parts"):
        header, records = read_results(written)
        assert list(records) == list(expected)  # every pair once, in dataset order
        assert untimed(list(records.values())) == untimed(list(expected.values()))
        assert (header.config_fingerprint, header.dataset_fingerprint, header.intervals) == (
            local_header.config_fingerprint,
            local_header.dataset_fingerprint,
            local_header.intervals,
        )
