"""What reaches the terminal: escape sequences from data are shown as text, and lines off a terminal do not wrap.

A sample id or a judge's error body holding ``ESC[2J`` used to clear the user's screen (rich
passes ``ESC`` through), and the report piped to a file wrapped at 120 columns in the middle of an
item (``it-012 (0.830`` / ``-> 0.030)``).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import ragqa
from ragqa.cli import app
from ragqa.render.terminal import printable
from ragqa.testing import FakeOpenAIServer
from ragqa.testing.wire import Fault

ENV = {"NO_COLOR": "1", "CI": "true", "RAGQA_PROFILES_ACTIVE": None}
NO_JUDGE_PANEL = "spring: {ai: {chat-models: {list: []}}}\n"


def test_printable_shows_control_characters_and_keeps_text() -> None:
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("\x9b31m\x07\x00\x7f") == "\\x9b31m\\x07\\x00\\x7f"
    assert printable("rtl\u202eevil\u2066") == "rtl\\u202eevil\\u2066"
    assert printable("line\u2028sep") == "line\\u2028sep"
    assert printable("tab\tand\nnewline, кириллица, 漢字, emoji 🙂") == "tab\tand\nnewline, кириллица, 漢字, emoji 🙂"


def test_an_escape_in_a_sample_id_and_in_a_judge_error_reaches_the_terminal_as_text(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        config = tmp_path / "application.yaml"
        config.write_text(
            f"""
spring:
  ai:
    retry: {{max-attempts: 1}}
    openai: {{base-url: "{server.base_url}", api-key: test}}
    chat-models: {{list: [{{id: judge-a}}]}}
""",
            encoding="utf-8",
        )
        body = json.dumps({"error": {"message": "bad request \x1b]0;owned\x07 \x1b[2J", "type": "invalid"}})
        server.inject("judge-a", Fault(status=400, body=body), times=10)
        data = tmp_path / "data.jsonl"
        row = {"id": "evil\x1b[2J", "user_input": "q", "response": "It opens at nine.", "retrieved_contexts": ["c"]}
        data.write_text(json.dumps(row) + "\n", encoding="utf-8")
        result = CliRunner().invoke(
            app, ["evaluate", str(data), "-c", str(config), "-m", "faithfulness", "--no-progress"], env=ENV
        )
    output = result.output
    assert result.exit_code == 3, output
    assert "\x1b" not in output and "\x07" not in output
    assert "evil\\x1b[2J" in output  # the id, shown
    assert "\\x1b]0;owned\\x07" in " ".join(output.split())  # the judge's error body, shown


def test_a_dataset_error_naming_an_escaped_id_is_shown_as_text(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "x\x1b[31m", "user_input": "q", "response": 3}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["evaluate", str(data), "--profile", "local", "--no-progress"], env=ENV)
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.output and "x\\x1b[31m" in result.output


def test_output_off_a_terminal_does_not_wrap_inside_an_item(tmp_path: Path) -> None:
    config = tmp_path / "application.yaml"
    config.write_text(NO_JUDGE_PANEL, encoding="utf-8")
    ids = [f"sample-with-a-long-id-{i:03d}" for i in range(12)]
    base = [{"id": i, "response": "nine", "reference": "nine"} for i in ids]
    new = [{"id": i, "response": "ten", "reference": "nine"} for i in ids]
    ragqa.evaluate(base, ["exact_match"], config=config, out=tmp_path / "a.jsonl")
    ragqa.evaluate(new, ["exact_match"], config=config, out=tmp_path / "b.jsonl")
    result = CliRunner().invoke(
        app, ["compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--threshold", "exact_match=0.5"]
    )
    assert result.exit_code == 1, result.output
    [flips] = [line for line in result.output.splitlines() if ids[0] in line]
    assert len(flips) > 120  # one line, however long
    assert all(f"{i} (1.000 -> 0.000)" in flips for i in ids[:3])
