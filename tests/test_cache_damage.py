"""A damaged judge cache is a warning and misses, never a crash nor a judge failure, and changes no score.

The damage is real: the cache's SQLite file is truncated to half its size (as ``truncate -s 50%``
does) or has pages overwritten with noise, and the run goes through ``ragqa evaluate`` (a
subprocess) or ``ragqa.evaluate``. Only the run-level check of a lookup that fails mid-run patches
``diskcache`` to raise what SQLite raises for a damaged page, so every lookup of that run fails.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

import diskcache
import pytest
from _cli import CliResult, run_cli

import ragqa
from ragqa.cache import JudgeCache
from ragqa.prompts.nli import NLIOutput, StatementVerdict

ROOT = Path(__file__).resolve().parents[1]
IT_HELPDESK = ROOT / "examples/datasets/it_helpdesk.jsonl"
RECORDS = [json.loads(line) for line in IT_HELPDESK.read_text(encoding="utf-8").splitlines()[:8]]
METRICS = ["faithfulness", "context_precision"]


def _answer(i: int) -> NLIOutput:
    return NLIOutput(verdicts=[StatementVerdict(statement=f"s{i}", reason="r", verdict=i % 2)])


def _filled(directory: Path, n: int) -> None:
    cache = JudgeCache(directory)
    for i in range(n):
        assert cache.store(f"k{i}", _answer(i))
    cache.close()


def _damaged_copies(directory: Path) -> list[Path]:
    return sorted(directory.parent.glob(f"{directory.name}.damaged-*"))


def _cache_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "ragqa.cache" and r.levelno == logging.WARNING]


@pytest.mark.slow
def test_a_truncated_cache_is_moved_aside_and_started_empty_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    directory = tmp_path / "cache"
    _filled(directory, 3000)
    db = directory / "cache.db"
    os.truncate(db, db.stat().st_size // 2)
    with pytest.raises(sqlite3.DatabaseError):  # what the cache met before it guarded its files
        diskcache.Cache(str(directory)).close()

    cache = JudgeCache(directory)
    assert [cache.load(f"k{i}", NLIOutput) for i in range(10)] == [None] * 10
    assert (cache.hits, cache.misses) == (0, 10)
    [aside] = _damaged_copies(directory)
    assert cache.moved_to == aside and (aside / "cache.db").is_file()  # the damaged file is kept for a look
    [warning] = _cache_warnings(caplog)
    assert "was damaged (DatabaseError: database disk image is malformed" in warning
    assert f"moved to {aside}" in warning and "no score changes" in warning
    assert cache.store("k1", _answer(1)) and cache.load("k1", NLIOutput) == _answer(1)  # the new cache works
    cache.close()


@pytest.mark.slow
def test_a_damaged_page_is_a_miss_then_the_cache_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    directory = tmp_path / "cache"
    _filled(directory, 3000)
    db = directory / "cache.db"
    size = db.stat().st_size
    with db.open("r+b") as file:  # noise over three pages three quarters in: the header and schema survive
        file.seek(size * 3 // 4)
        file.write(os.urandom(3 * 4096))

    cache = JudgeCache(directory)  # opens: the damage is only met by the keys on those pages
    assert cache.moved_to is None
    loaded = [cache.load(f"k{i}", NLIOutput) for i in range(3000)]
    first_miss = loaded.index(None)
    assert all(answer == _answer(i) for i, answer in enumerate(loaded[:first_miss]))
    assert loaded[first_miss:] == [None] * (3000 - first_miss)  # the damaged cache was moved aside: all misses
    assert cache.hits == first_miss and cache.misses == 3000 - first_miss
    assert cache.moved_to is not None and _damaged_copies(directory) == [cache.moved_to]
    [warning] = _cache_warnings(caplog)
    assert "found while reading a judge answer" in warning
    cache.close()


def test_a_lookup_that_fails_mid_run_is_a_miss_and_no_judge_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(f"ragqa:\n  cache: {{enabled: true, directory: {tmp_path / 'cache'}}}\n", encoding="utf-8")
    plain = ragqa.evaluate(RECORDS, metrics=METRICS, profile="local", config=config)

    get = diskcache.Cache.get
    lookups: list[Any] = []

    def damaged_page(self: diskcache.Cache, key: Any, *args: Any, **kwargs: Any) -> Any:
        lookups.append(key)
        if len(lookups) == 3:  # the third lookup meets the damaged page
            raise sqlite3.DatabaseError("database disk image is malformed")
        return get(self, key, *args, **kwargs)

    monkeypatch.setattr(diskcache.Cache, "get", damaged_page)
    caplog.clear()
    report = ragqa.evaluate(RECORDS, metrics=METRICS, profile="local", config=config)
    assert [f for r in report.results for f in r.failures] == []  # no DatabaseError outcome
    assert _scores(report) == _scores(plain)
    assert report.cache is not None and report.cache.hits >= 2 and report.cache.misses > 0
    assert len(_cache_warnings(caplog)) == 1 and len(_damaged_copies(tmp_path / "cache")) == 1


def _scores(report: ragqa.Report) -> dict[tuple[str, str], dict[str, float]]:
    return {(r.sample_id, r.metric): r.by_judge() for r in report.results}


@pytest.mark.slow
def test_ragqa_evaluate_with_a_truncated_cache_completes_with_one_warning_and_the_same_scores(tmp_path: Path) -> None:
    """The fault matrix's row: ``truncate -s 50% cache.db``, run again: exit 1 and a traceback before."""
    (tmp_path / "application.yaml").write_text("ragqa:\n  cache: {enabled: true, directory: cache}\n", encoding="utf-8")
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")

    def run(out: str) -> CliResult:
        return run_cli(
            "evaluate", "data.jsonl", "--profile", "local", "-m", ",".join(METRICS), "--out", out, cwd=tmp_path
        )

    cold = run("cold.jsonl")
    assert cold.returncode == 0, cold.stderr
    db = tmp_path / "cache" / "cache.db"
    os.truncate(db, db.stat().st_size // 2)
    damaged = run("damaged.jsonl")
    assert damaged.returncode == 0, damaged.stderr
    assert "Traceback" not in damaged.stderr
    warnings = [line for line in damaged.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1 and "ragqa.cache" in warnings[0] and "was damaged" in warnings[0], damaged.stderr
    assert _results(tmp_path / "damaged.jsonl") == _results(tmp_path / "cold.jsonl")
    assert len(_damaged_copies(tmp_path / "cache")) == 1
    warm = run("warm.jsonl")  # the rebuilt cache serves the next run
    assert warm.returncode == 0 and "WARNING" not in warm.stderr, warm.stderr
    assert _results(tmp_path / "warm.jsonl") == _results(tmp_path / "cold.jsonl")


def _results(path: Path) -> list[Any]:
    """Every record's scores, reasons and details, without timings and usage (a cache hit makes no call)."""

    def untimed(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: untimed(v) for k, v in value.items() if k not in ("latency_s", "usage")}
        if isinstance(value, list):
            return [untimed(v) for v in value]
        return value

    return [untimed(json.loads(line)) for line in path.read_text(encoding="utf-8").split("\n")[1:] if line]
