"""The CLI's commands, options, messages and exit codes, run in process (``tests/_cli.py``) in the repository root.

What needs a real process (``python -m ragqa``) is in ``tests/cli/test_cli_process.py``.
"""

import json
from pathlib import Path

import pytest
from _cli import CliResult, run_cli

from ragqa.cli import parse_thresholds
from ragqa.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
IT_HELPDESK = "examples/datasets/it_helpdesk.jsonl"


def ragqa(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT) -> CliResult:
    return run_cli(*args, env=env, cwd=cwd)


def test_version() -> None:
    result = ragqa("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("ragqa ")


def test_metrics_lists_fields_range_direction_and_calls() -> None:
    result = ragqa("metrics")
    assert result.returncode == 0, result.stderr
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") > 5}
    assert "faithfulness" in rows and "hallucination" in rows
    assert "↑ higher is better" in rows["faithfulness"] and "0..1" in rows["faithfulness"]
    assert "↓ lower is better" in rows["hallucination"]
    assert "user_input, response," in rows["faithfulness"] and "2 (1 if no statements)" in rows["faithfulness"]
    assert " 0.8 │" in rows["faithfulness"] and " 0.2 │" in rows["hallucination"]  # default thresholds


def test_config_show_masks_secrets() -> None:
    result = ragqa("config", "show", env={"OPENROUTER_API_KEY": "sk-secret"})
    assert result.returncode == 0, result.stderr
    assert "sk-secret" not in result.stdout + result.stderr
    assert "api-key: '**********'" in result.stdout
    assert "anthropic/claude-4.5-sonnet" in result.stdout


def test_bad_dataset_line_exits_2_without_traceback(tmp_path: Path) -> None:
    dataset = tmp_path / "bad.jsonl"
    good = json.dumps({"user_input": "Q", "response": "A", "retrieved_contexts": ["c"]})
    dataset.write_text("\n".join([good] * 6 + ['{"user_input": "Q" "response": "A"}']) + "\n")
    result = ragqa("evaluate", str(dataset), "--profile", "local")
    assert result.returncode == 2
    assert "bad.jsonl line 7: not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_missing_field_is_reported_before_any_judge_is_built(tmp_path: Path) -> None:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(json.dumps({"id": "q1", "user_input": "Q", "response": "A"}) + "\n")
    # the seed panel needs OPENROUTER_API_KEY: the data problem is reported first, with no key set
    result = ragqa("evaluate", str(dataset), "--metrics", "faithfulness")
    assert result.returncode == 2
    assert "sample q1, field 'retrieved_contexts', metric 'faithfulness': missing" in result.stderr
    assert "OPENROUTER_API_KEY" not in result.stderr and "Traceback" not in result.stderr


def test_config_errors_exit_2(tmp_path: Path) -> None:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text(json.dumps({"user_input": "Q", "response": "A", "retrieved_contexts": ["c"]}) + "\n")
    unknown = ragqa("evaluate", str(dataset), "--metrics", "faithfulnes", "--profile", "local")
    assert unknown.returncode == 2 and "Did you mean faithfulness" in unknown.stderr
    no_key = ragqa("evaluate", str(dataset))
    assert no_key.returncode == 2 and "OPENROUTER_API_KEY" in no_key.stderr and "Traceback" not in no_key.stderr
    bad_option = ragqa("evaluate", str(dataset), "--aggregation", "avg")
    assert bad_option.returncode == 2 and "use one of mean, median, min, max, majority" in bad_option.stderr


def test_evaluate_shipped_dataset_offline_with_local_panel(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    result = ragqa("evaluate", IT_HELPDESK, "--profile", "local", "--out", str(out))
    assert result.returncode == 0, result.stderr
    header, *records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert header["ragqa_results"] == 1 and header["samples"] == 60
    assert header["metrics"] == ["faithfulness", "hallucination"] and header["dataset"] == IT_HELPDESK
    assert len(records) == 60 * 2
    assert [(r["sample_id"], r["metric"]) for r in records[:3]] == [
        ("it-001", "faithfulness"),
        ("it-001", "hallucination"),
        ("it-002", "faithfulness"),
    ]  # dataset order: sample, then metric
    assert {r["metric"] for r in records} == {"faithfulness", "hallucination"}
    assert len({r["sample_id"] for r in records}) == 60
    judge_ids = [j["judge_id"] for j in records[0]["judges"]]
    assert len(judge_ids) >= 2  # the local profile is a real multi-judge panel
    stdout = result.stdout
    assert f"60 sample(s) x 2 metric(s) x {len(judge_ids)} judge(s)" in stdout
    assert "faithfulness  ↑ higher is better" in stdout and "hallucination  ↓ lower is better" in stdout
    for judge_id in judge_ids:
        rows = [line for line in stdout.splitlines() if line.startswith(judge_id + " ")]
        assert len(rows) == 2  # one row per metric
        assert all(float(row.split()[1]) >= 0 for row in rows)
    aggregate_rows = [line.split() for line in stdout.splitlines() if line.startswith("aggregate (mean)")]
    assert len(aggregate_rows) == 2
    faithfulness, hallucination = (float(row[2]) for row in aggregate_rows)
    assert 0 < faithfulness < 1 and 0 < hallucination < 1
    assert "scored 120/120" in result.stderr  # plain progress lines outside a terminal
    assert f"wrote --out {out}" in result.stderr
    assert "estimate: 120 (sample, metric) pair(s) x 2 judge(s)" in result.stderr


def test_parse_thresholds() -> None:
    assert parse_thresholds(["faithfulness=0.8,hallucination=0.2", "noise_sensitivity(mode=relevant)=0.3"]) == {
        "faithfulness": 0.8,
        "hallucination": 0.2,
        "noise_sensitivity(mode=relevant)": 0.3,
    }
    with pytest.raises(ConfigError, match="write metric=value"):
        parse_thresholds(["faithfulness"])


def test_deadline_option_is_checked_before_any_call(tmp_path):
    dataset = str(ROOT / "examples" / "datasets" / "it_helpdesk.jsonl")
    bad = ragqa("evaluate", dataset, "--profile", "local", "--deadline", "0s", cwd=tmp_path)
    assert bad.returncode == 2 and "--deadline '0s': give a positive duration" in bad.stderr
    assert "Traceback" not in bad.stderr
