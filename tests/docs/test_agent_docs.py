"""The agent metric pages: their worked examples are what the code computes; ``ragqa metrics`` lists the metrics."""

from __future__ import annotations

from pathlib import Path

from _cli import run_cli

from ragqa.datasets import load_dataset
from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalJudge
from ragqa.messages import ToolCall
from ragqa.metrics import AgentGoalAccuracy
from ragqa.metrics.tool_call_accuracy import tool_call_accuracy_score
from ragqa.metrics.topic_adherence import topic_adherence_score

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs" / "metrics"


def _page(name: str) -> str:
    return (PAGES / f"{name}.md").read_text(encoding="utf-8")


def test_tool_call_accuracy_worked_example() -> None:
    page = _page("tool_call_accuracy")
    weather = ToolCall(name="weather_check", args={"location": "New York"})
    convert = ToolCall(name="temperature_conversion", args={"temperature_fahrenheit": 75})
    same = tool_call_accuracy_score([weather, convert], [weather, convert])
    swapped = tool_call_accuracy_score([weather, convert], [convert, weather])
    flexible = tool_call_accuracy_score([weather, convert], [convert, weather], strict_order=False)
    assert (same, swapped, flexible) == (1.0, 0.0, 1.0)
    assert "the score\nis **1.0**" in page and "it is **0.0** in strict order and\n**1.0**" in page
    partial = tool_call_accuracy_score(
        [
            ToolCall(name="search", args={"query": "python", "limit": 5}),
            ToolCall(name="filter", args={"type": "recent"}),
        ],
        [
            ToolCall(name="search", args={"query": "python", "limit": 10}),
            ToolCall(name="filter", args={"type": "recent"}),
        ],
    )
    assert f"**{partial}**" in page


def test_topic_adherence_worked_example() -> None:
    page = _page("topic_adherence")
    answered, on_topic = [True, False, True], [True, False, False]
    for mode in ("precision", "recall", "f1"):
        assert f"**{topic_adherence_score(answered, on_topic, mode)!r}**" in page, mode


async def test_agent_goal_accuracy_worked_example_on_the_shipped_dataset() -> None:
    page = _page("agent_goal_accuracy")
    samples = {s.id: s for s in load_dataset(ROOT / "examples/datasets/agent_conversations.jsonl")}
    assert samples["agent-01"].reference == "A table is booked at Golden Dragon for 8:00pm."
    assert '"A table is booked at Golden Dragon for 8:00pm."' in page
    report = await PanelEvaluator([LocalJudge("local")], [AgentGoalAccuracy()]).evaluate(
        [samples["agent-01"], samples["agent-05"]]
    )
    assert [r.aggregate.value for r in report.results] == [1.0, 0.0]
    assert "so the score is **1.0**" in page and "`agent-05`" in page and "scores 0.0" in page


def test_ragqa_metrics_lists_the_agent_metrics() -> None:
    result = run_cli("metrics", cwd=ROOT)
    assert result.returncode == 0, result.stderr
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") > 5}
    assert "0 (no judge)" in rows["tool_call_accuracy"] and "messages," in rows["tool_call_accuracy"]
    assert " 2 " in rows["agent_goal_accuracy"]
    assert "T + 2" in rows["topic_adherence"]
    for name in ("tool_call_accuracy", "agent_goal_accuracy", "topic_adherence"):
        assert (PAGES / f"{name}.md").exists()
        assert f"metrics/{name}.md" in (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
