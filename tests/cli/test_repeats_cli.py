"""``ragqa evaluate --repeats`` as a user runs it (in process: tests/_cli.py), with the fake OpenAI server as judges.

Requests are counted at the fake server: "3x the requests", "no request" (a warm cache) and
"only the missing pairs, three times each" (resume) are counts, not timings.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import APPLICATION_YAML, JUDGES, N_SAMPLES, chat_requests, ragqa, records

from ragqa.testing import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
CALLS_PER_SAMPLE = 2  # faithfulness: statements, then one batched verdicts call


def _without(value: Any, keys: frozenset[str]) -> Any:
    """``value`` with every ``keys`` entry removed at any depth."""
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


UNTIMED = frozenset({"latency_s"})
SCORES_ONLY = frozenset({"latency_s", "usage"})  # a cache hit spends no call, so usage differs


def _cached(work: Path) -> None:
    """``cached.yaml`` beside the run's settings: the same panel with the disk cache on."""
    cache = "  cache: {enabled: true, directory: cache}\n"
    (work / "cached.yaml").write_text(APPLICATION_YAML + cache, encoding="utf-8")


@pytest.mark.slow
def test_one_repeat_writes_todays_records(srv: FakeOpenAIServer, work: Path) -> None:
    plain = ragqa(srv, work, "--out", "plain.jsonl")
    assert plain.returncode == 0, plain.stderr
    one = ragqa(srv, work, "--out", "one.jsonl", "--repeats", "1")
    assert one.returncode == 0, one.stderr
    (h0, rows0), (h1, rows1) = records(work / "plain.jsonl"), records(work / "one.jsonl")
    assert _without(rows1, UNTIMED) == _without(rows0, UNTIMED)
    assert "repeats" not in h1 and h1["config_fingerprint"] == h0["config_fingerprint"]
    assert "repeat" not in one.stderr.split("estimate:")[1].splitlines()[0]
    lines = (work / "one.jsonl").read_text(encoding="utf-8").splitlines()
    assert not any('"repeats"' in line for line in lines)


@pytest.mark.slow
def test_three_repeats_make_three_times_the_requests_and_record_every_repeat(srv: FakeOpenAIServer, work: Path) -> None:
    result = ragqa(srv, work, "--out", "three.jsonl", "--repeats", "3")
    assert result.returncode == 0, result.stderr
    expected = N_SAMPLES * len(JUDGES) * CALLS_PER_SAMPLE * 3
    assert chat_requests(srv) == expected
    assert f"x 2 judge(s) x 3 repeat(s): at most {expected} judge call(s)" in result.stderr
    header, rows = records(work / "three.jsonl")
    assert header["repeats"] == 3
    for row in rows:
        for judge in row["judges"]:
            assert [r["index"] for r in judge["repeats"]] == [0, 1, 2]
            assert judge["usage"]["calls"] == sum(r["usage"]["calls"] for r in judge["repeats"])
            assert judge["usage"]["calls"] == CALLS_PER_SAMPLE * 3


def test_max_calls_counts_the_repeats(srv: FakeOpenAIServer, work: Path) -> None:
    single = N_SAMPLES * len(JUDGES) * CALLS_PER_SAMPLE
    result = ragqa(srv, work, "--repeats", "3", "--max-calls", str(single))
    assert result.returncode == 2, result.stderr
    assert f"at most {3 * single} judge call(s)" in result.stderr and "--max-calls" in result.stderr
    assert chat_requests(srv) == 0


@pytest.mark.slow
def test_a_warm_cache_replays_all_three_repeats_without_a_request(srv: FakeOpenAIServer, work: Path) -> None:
    _cached(work)
    cold = ragqa(srv, work, "--config", "cached.yaml", "--repeats", "3", "--out", "cold.jsonl")
    assert cold.returncode == 0, cold.stderr
    assert chat_requests(srv) == N_SAMPLES * len(JUDGES) * CALLS_PER_SAMPLE * 3
    srv.clear_requests()
    warm = ragqa(srv, work, "--config", "cached.yaml", "--repeats", "3", "--out", "warm.jsonl")
    assert warm.returncode == 0, warm.stderr
    assert chat_requests(srv) == 0
    (_, cold_rows), (_, warm_rows) = records(work / "cold.jsonl"), records(work / "warm.jsonl")
    assert _without(warm_rows, SCORES_ONLY) == _without(cold_rows, SCORES_ONLY)
    assert all(len(j["repeats"]) == 3 for row in warm_rows for j in row["judges"])


@pytest.mark.slow
def test_resume_scores_the_missing_pairs_with_every_repeat_and_refuses_other_repeats(
    srv: FakeOpenAIServer, work: Path
) -> None:
    full = ragqa(srv, work, "--out", "full.jsonl", "--repeats", "3")
    assert full.returncode == 0, full.stderr
    lines = (work / "full.jsonl").read_text(encoding="utf-8").splitlines()
    kept = 3
    (work / "results.jsonl.partial").write_text("\n".join(lines[: 1 + kept]) + "\n", encoding="utf-8")

    for other in (["--repeats", "2"], []):
        refused = ragqa(srv, work, "--out", "results.jsonl", "--resume", *other)
        assert refused.returncode == 2, refused.stderr
        assert "made with 3 repeat(s)" in refused.stderr

    srv.clear_requests()
    resumed = ragqa(srv, work, "--out", "results.jsonl", "--resume", "--repeats", "3")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {kept} result(s) kept" in resumed.stderr
    assert chat_requests(srv) == (N_SAMPLES - kept) * len(JUDGES) * CALLS_PER_SAMPLE * 3
    (h_full, rows_full), (h_res, rows_res) = records(work / "full.jsonl"), records(work / "results.jsonl")
    assert _without(rows_res, UNTIMED) == _without(rows_full, UNTIMED)
    assert h_res["repeats"] == 3 and h_res["config_fingerprint"] == h_full["config_fingerprint"]


@pytest.mark.slow
def test_another_reducer_changes_the_fingerprint_and_a_bad_one_is_refused(srv: FakeOpenAIServer, work: Path) -> None:
    ragqa(srv, work, "--out", "full.jsonl", "--repeats", "3")
    lines = (work / "full.jsonl").read_text(encoding="utf-8").splitlines()
    (work / "results.jsonl.partial").write_text("\n".join(lines[:2]) + "\n", encoding="utf-8")
    other = ragqa(srv, work, "--out", "results.jsonl", "--resume", "--repeats", "3", "--reducer", "median")
    assert other.returncode == 2 and "another configuration" in other.stderr
    srv.clear_requests()
    bad = ragqa(srv, work, "--repeats", "3", "--reducer", "average")
    assert bad.returncode == 2 and "mean, median, mode" in bad.stderr
    zero = ragqa(srv, work, "--repeats", "0")
    assert zero.returncode == 2
    assert chat_requests(srv) == 0


@pytest.mark.slow
def test_local_profile_example_with_three_repeats(srv: FakeOpenAIServer, work: Path) -> None:
    shutil.copyfile(ROOT / "examples/datasets/it_helpdesk.jsonl", work / "data.jsonl")
    (work / "application.yaml").unlink()  # no settings file: ragqa's defaults and the built-in local profile
    one = ragqa(srv, work, "--profile", "local", "--out", "one.jsonl")
    three = ragqa(srv, work, "--profile", "local", "--repeats", "3", "--out", "three.jsonl")
    assert one.returncode == 0, one.stderr
    assert three.returncode == 0, three.stderr
    (_, rows1), (header, rows3) = records(work / "one.jsonl"), records(work / "three.jsonl")
    assert header["repeats"] == 3 and len(rows3) == 60 * 2
    for row1, row3 in zip(rows1, rows3, strict=True):
        assert row3["aggregate"] == row1["aggregate"]
        for judge1, judge3 in zip(row1["judges"], row3["judges"], strict=True):
            # the local judge is deterministic: three real repeats, one score, zero variance
            assert [r["score"] for r in judge3["repeats"]] == [judge1["score"]] * 3
            assert judge3["score"] == judge1["score"] and judge3["details"] == judge1["details"]
