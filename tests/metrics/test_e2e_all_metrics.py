"""Every RAG metric from the CLI with a panel of LLM judges over real HTTP (the fake server).

The judges answer like the offline local judge (``local_judge_responder``) but through the
OpenAI-compatible wire path, so graded support is lost and verdicts are binary, as from an LLM.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from _cli import run_cli
from factories import HTTP_PANEL_YAML

from ragqa.metrics import METRICS
from ragqa.testing import FakeOpenAIServer, fake_openai_server, local_judge_responder

ROOT = Path(__file__).resolve().parents[2]

APPLICATION_YAML = HTTP_PANEL_YAML + "ragqa:\n  metrics: [faithfulness]\n"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with fake_openai_server() as srv:
        srv.script("*", local_judge_responder())
        yield srv


def test_every_metric_runs_across_an_http_panel(server: FakeOpenAIServer, tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(APPLICATION_YAML, encoding="utf-8")
    lines = (ROOT / "examples/datasets/it_helpdesk.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    dataset = tmp_path / "three.jsonl"
    dataset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "results.jsonl"
    single_turn = [name for name, cls in METRICS.items() if "messages" not in cls.required_fields]  # agent: own test
    metrics = [*single_turn, "noise_sensitivity(mode=irrelevant)"]
    proc = run_cli(
        "evaluate", dataset, "-c", config, "-m", ",".join(metrics), "-o", out, "--no-progress",
        env={"FAKE_URL": server.base_url, "FAKE_API_KEY": "sk-test-not-secret"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header, *rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(header["metrics"]) == len(metrics)  # the results file starts with its run header
    assert len(rows) == 3 * len(metrics)
    keys = {row["metric"] for row in rows}
    assert "noise_sensitivity(mode=irrelevant)" in keys and "context_precision" in keys
    for row in rows:
        judges = {j["judge_id"]: j for j in row["judges"]}
        assert set(judges) == {"judge-a", "judge-b"}
        for j in judges.values():
            assert j["failure"] is None, (row["metric"], j["failure"])
        assert row["aggregate"]["n_ok"] + row["aggregate"]["n_nan"] == 2
    # every metric's table shows both judges and the aggregate
    for key in keys:
        assert key.split("(")[0] in proc.stdout
    assert proc.stdout.count("judge-a") >= len(metrics) and proc.stdout.count("aggregate (mean)") == len(metrics)
    # the embedder was called over HTTP with the configured dimensions
    embed_calls = [r for r in server.requests if r.path.endswith("/embeddings")]
    assert embed_calls and all(r.body.get("dimensions") == 64 for r in embed_calls)
