"""``ragqa evaluate`` as a CI runs it, with the fake OpenAI server as its judges.

Streaming, interruption (SIGINT, SIGTERM and ``kill -9`` of a real ``python -m ragqa`` process),
``--resume`` and every exit code; the runs that need no signal run in process (``tests/_cli.py``). Requests are
counted at the fake server, so "no call was made" and "only the missing calls were made" are
facts, not timings.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import APPLICATION_YAML, JUDGES, N_SAMPLES, chat_requests, interruptible, ragqa, records
from _records import untimed
from factories import office_jsonl

from ragqa.testing import ChatRequest, FakeOpenAIServer, Fault, ragqa_responder

ROOT = Path(__file__).resolve().parents[2]


def _env(srv: FakeOpenAIServer) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("RAGQA")}
    environ.update({"CI": "true", "COLUMNS": "200", "NO_COLOR": "1", "FAKE_URL": srv.base_url})
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environ.get("PYTHONPATH")]))
    return environ


def _score_rows(stdout: str) -> list[list[str]]:
    """Judge and aggregate rows of the report: name, mean, scored, NaN, failed."""
    rows = [line.split() for line in stdout.splitlines() if line.startswith(("judge-", "aggregate ("))]
    return [row[:5] if row[0] != "aggregate" else row[:7] for row in rows]


def _wait_for_records(partial: Path, proc: subprocess.Popen[str], at_least: int) -> None:
    while proc.poll() is None:
        if partial.exists() and len(partial.read_text(encoding="utf-8").splitlines()) > at_least:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run ended before {at_least} result(s) were streamed: {proc.communicate()}")


def test_uninterrupted_run_streams_header_then_records_in_dataset_order(srv: FakeOpenAIServer, work: Path) -> None:
    # 0.6 lies below the aggregate's 95 % interval [0.677, 0.990] (0.8 would be inside it: undecided)
    result = ragqa(srv, work, "--out", "results.jsonl", "--threshold", "faithfulness=0.6")
    assert result.returncode == 0, result.stderr
    assert "PASS faithfulness: aggregate mean 0.833 [0.677, 0.990], needs >= 0.6" in result.stdout
    header, rows = records(work / "results.jsonl")
    assert header["metrics"] == ["faithfulness"] and header["judges"] == list(JUDGES)
    assert header["samples"] == N_SAMPLES and header["dataset"] == "data.jsonl"
    assert header["config_fingerprint"].startswith("sha256:") and "SECRET" not in json.dumps(header)
    assert [r["sample_id"] for r in rows] == [f"s{i:02d}" for i in range(1, N_SAMPLES + 1)]
    assert not (work / "results.jsonl.partial").exists()
    # the estimate is printed before any call: 12 samples x 2 judges x 2 calls (statements, nli)
    assert "at most 48 judge call(s)" in result.stderr
    assert chat_requests(srv) == 48


@pytest.fixture(scope="module")
def uninterrupted(srv: FakeOpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[Any]]:
    """The header and records of one uninterrupted run in a folder like ``work``: what a resumed run must equal."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    srv.reset()
    for judge in JUDGES:
        srv.script(judge, ragqa_responder())
    (folder / "application.yaml").write_text(APPLICATION_YAML, encoding="utf-8")
    (folder / "data.jsonl").write_text(office_jsonl(N_SAMPLES), encoding="utf-8")
    full = ragqa(srv, folder, "--out", "full.jsonl")
    assert full.returncode == 0, full.stderr
    return records(folder / "full.jsonl")


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_interrupted_run_keeps_results_and_resume_makes_only_the_missing_calls(
    srv: FakeOpenAIServer, uninterrupted: tuple[dict[str, Any], list[Any]], work: Path, how: str
) -> None:
    answer = ragqa_responder()

    def silent_after_the_third_sample(request: ChatRequest) -> dict[str, Any] | str | Fault:
        # the run is still busy whenever the signal comes, however fast or slow the machine is
        office = re.search(r"[Oo]ffice (\d+)\b", request.prompt)
        assert office is not None, request.prompt
        return answer(request) if int(office.group(1)) <= 3 else Fault(status=200, hang_s=math.inf)

    for judge in JUDGES:
        srv.script(judge, silent_after_the_third_sample)
    srv.clear_requests()

    out, partial = work / "results.jsonl", work / "results.jsonl.partial"
    out.write_text("an old run's results\n", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragqa", "evaluate", "data.jsonl", "--out", "results.jsonl"],
        cwd=work,
        env=_env(srv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    _wait_for_records(partial, proc, at_least=3)
    assert not out.exists()  # the old file was removed when the run started
    proc.send_signal(getattr(signal, how))
    _, stderr = proc.communicate(timeout=120)
    if how != "SIGKILL":  # Ctrl-C, or a cancelled CI job
        assert proc.returncode == 130, stderr
        assert "interrupted:" in stderr and "Resume with:" in stderr
        assert "ragqa evaluate data.jsonl --out results.jsonl --resume" in stderr
        assert "Traceback" not in stderr
    else:
        assert proc.returncode == -signal.SIGKILL

    lines = partial.read_text(encoding="utf-8").splitlines()
    complete = [json.loads(line) for line in lines if line.endswith("}")]  # a kill may cut the last line short
    assert complete[0]["ragqa_results"] == 1
    kept = {r["sample_id"] for r in complete[1:]}
    assert kept == {"s01", "s02", "s03"}  # every sample that could finish, and no other

    for judge in JUDGES:
        srv.script(judge, ragqa_responder())
    srv.clear_requests()
    resumed = ragqa(srv, work, "--out", "results.jsonl", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {len(kept)} result(s) kept" in resumed.stderr
    # only the missing samples were asked: 2 judges x 2 calls each
    assert chat_requests(srv) == (N_SAMPLES - len(kept)) * 2 * 2

    header, rows = records(out)
    full_header, full_rows = dict(uninterrupted[0]), uninterrupted[1]
    assert untimed(rows) == untimed(full_rows)
    for key in ("run_id", "started_at", "dataset"):
        header.pop(key), full_header.pop(key)
    assert header == full_header
    assert not partial.exists()


def test_resume_refuses_another_configuration_or_metric_list(srv: FakeOpenAIServer, work: Path) -> None:
    assert ragqa(srv, work, "--out", "results.jsonl").returncode == 0
    srv.clear_requests()
    other_metrics = ragqa(srv, work, "--out", "results.jsonl", "--resume", "-m", "faithfulness,hallucination")
    assert other_metrics.returncode == 2
    assert "written for metrics faithfulness" in other_metrics.stderr
    other_panel = ragqa(srv, work, "--out", "results.jsonl", "--resume", "--aggregation", "min")
    assert other_panel.returncode == 2 and "another configuration" in other_panel.stderr
    data = work / "data.jsonl"
    original = data.read_text(encoding="utf-8")
    data.write_text(original.replace("a garden", "a pond", 1), encoding="utf-8")
    other_data = ragqa(srv, work, "--out", "results.jsonl", "--resume")
    assert other_data.returncode == 2 and "made on other samples" in other_data.stderr
    data.write_text(original, encoding="utf-8")
    assert chat_requests(srv) == 0
    finished = ragqa(srv, work, "--out", "results.jsonl", "--resume")  # a finished run: nothing left to do
    assert finished.returncode == 0, finished.stderr
    assert chat_requests(srv) == 0 and "0 (sample, metric) pair(s)" in finished.stderr


def test_threshold_missed_exits_1(srv: FakeOpenAIServer, work: Path) -> None:
    # every third response is half unsupported: faithfulness mean = (8 * 1 + 4 * 0.5) / 12, with the
    # 95 % interval [0.677, 0.990] (clustered SE, t with 11 degrees of freedom): 1.0 lies above it
    missed = ragqa(srv, work, "--threshold", "faithfulness=1.0")
    assert missed.returncode == 1, missed.stderr
    assert "FAIL faithfulness: aggregate mean 0.833 [0.677, 0.990], needs >= 1" in missed.stdout
    inside = ragqa(srv, work, "--threshold", "faithfulness=0.9")  # inside the interval: undecided
    assert inside.returncode == 4, inside.stderr
    assert "UNDECIDED faithfulness: 0.833 [0.677, 0.990] against 0.9, add samples or repeats" in inside.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "."], "is a directory"),
        (["--out", "results.txt"], "no output format writes '.txt'"),
        (["--junit-xml", "missing/report.xml"], "does not exist"),
        (["--threshold", "faithfullness=0.99"], "Did you mean faithfulness?"),
        (["--threshold", "hallucination=0.2"], "not a metric of this run"),
        (["--max-calls", "47"], "more than the cap of 47"),
        (["-m", "faithfulnes"], "Did you mean faithfulness"),
        (["--quorum", "3"], "more than the 2 judge(s)"),
    ],
)
def test_bad_usage_exits_2_before_any_request(srv: FakeOpenAIServer, work: Path, args: list[str], message: str) -> None:
    result = ragqa(srv, work, *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr
    assert chat_requests(srv) == 0


def test_threshold_typo_in_settings_exits_2(srv: FakeOpenAIServer, work: Path) -> None:
    app = work / "application.yaml"
    app.write_text(app.read_text(encoding="utf-8") + "  thresholds: {faithfullness: 0.8}\n", encoding="utf-8")
    result = ragqa(srv, work)
    assert result.returncode == 2 and "Did you mean faithfulness?" in result.stderr
    assert "ragqa.thresholds" in result.stderr or "faithfullness" in result.stderr
    assert chat_requests(srv) == 0


def test_every_judge_failing_exits_3_and_allow_incomplete_does_not_turn_nothing_into_0(
    srv: FakeOpenAIServer, work: Path
) -> None:
    for judge in JUDGES:
        srv.fail(judge, times=10_000, status=404)
    result = ragqa(srv, work, "--out", "results.jsonl")
    assert result.returncode == 3, result.stderr
    assert "incomplete:" in result.stderr
    _, rows = records(work / "results.jsonl")
    assert len(rows) == N_SAMPLES and all(r["aggregate"]["value"] is None for r in rows)
    allowed = ragqa(srv, work, "--allow-incomplete")
    assert allowed.returncode == 3  # a run that scored nothing never exits 0


def test_allow_incomplete_turns_judge_failures_on_some_pairs_into_a_warning(srv: FakeOpenAIServer, work: Path) -> None:
    good = ragqa_responder()

    def down_on_sample_3(request: ChatRequest) -> dict[str, Any] | str | Fault:
        return Fault(status=404) if "office 3 " in request.prompt else good(request)

    for judge in JUDGES:
        srv.script(judge, down_on_sample_3)
    strict = ragqa(srv, work)
    assert strict.returncode == 3, strict.stderr
    assert "1 (sample, metric) pair(s) have no aggregate because judges failed" in strict.stderr
    allowed = ragqa(srv, work, "--allow-incomplete")
    assert allowed.returncode == 0, allowed.stderr
    assert "warning:" in allowed.stderr


def test_a_sample_with_10000_contexts_is_refused_by_the_cap_before_any_request(
    srv: FakeOpenAIServer, work: Path
) -> None:
    huge = {"id": "huge", "user_input": "Q?", "response": "A.", "reference": "A.", "retrieved_contexts": ["c"] * 10_000}
    (work / "data.jsonl").write_text(json.dumps(huge) + "\n", encoding="utf-8")
    result = ragqa(srv, work, "-m", "noise_sensitivity")
    assert result.returncode == 2, result.stderr
    assert "sample huge, field 'retrieved_contexts': 10000 contexts" in result.stderr
    assert "ragqa.limits.max-contexts-per-sample (100)" in result.stderr
    assert chat_requests(srv) == 0


def test_judge_cache_counts_and_no_cache(srv: FakeOpenAIServer, work: Path) -> None:
    app = work / "application.yaml"
    app.write_text(
        app.read_text(encoding="utf-8") + f"  cache: {{enabled: true, directory: {work / 'cache'}}}\n", encoding="utf-8"
    )
    first = ragqa(srv, work)
    assert first.returncode == 0, first.stderr
    assert "0 hit(s), 48 miss(es)" in first.stdout + first.stderr and chat_requests(srv) == 48
    srv.clear_requests()
    second = ragqa(srv, work)
    assert "48 hit(s), 0 miss(es)" in second.stdout + second.stderr and chat_requests(srv) == 0
    assert _score_rows(second.stdout) == _score_rows(first.stdout)  # the same scores (cache hits record no tokens)
    without = ragqa(srv, work, "--no-cache", "-q")
    assert without.returncode == 0 and "hit(s)" not in without.stdout + without.stderr and chat_requests(srv) == 48
