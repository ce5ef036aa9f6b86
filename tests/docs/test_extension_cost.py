"""The extension costs counted in ``docs/extending.md`` stay true: each worked example is that many files.

The test reads the section "What an extension costs" of ``docs/extending.md``: every ``###``
heading ends with its count (``(1 file)``, ``(2 files)``), every ``python`` block under it opens
with ``# <module>.py``. It writes exactly those modules into a temporary folder, declares the
section's ``pyproject.toml`` entry points in a ``.dist-info`` beside them (what ``pip install``
of the package would leave), puts the folder on ``sys.path`` and runs every metric and the output
format by name through ``ragqa evaluate`` with the offline local judge, and the native judge
provider from the section's ``application.yaml`` against a stand-in of its server on 127.0.0.1.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from ragqa import languages
from ragqa.cli import app
from ragqa.errors import ConfigError
from ragqa.judges.local import HANDLERS
from ragqa.languages import check_language
from ragqa.metrics import METRICS
from ragqa.prompts import PROMPTS
from ragqa.prompts.statements import STATEMENTS, StatementsInput
from ragqa.render import registry as render_registry
from ragqa.render.registry import RENDERERS, renderer_for, suffix_help
from ragqa.settings import _providers as provider_registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
SECTION = "## What an extension costs: worked examples"
PACKAGE_MODULES = (
    "acme_attribution",
    "acme_politeness_prompt",
    "acme_politeness",
    "acme_budget",
    "acme_markdown",
    "acme_german",
    "acme_provider",
)

RUSSIAN_DIGESTS = ("1bb0e0166be38807", "713f10ceaca3540f", "0a448928e5b88063")
"""sha256 prefixes of the Russian rules, every prompt's Russian head, and the four claim-decomposition
heads, as rendered from the texts inline in the prompt modules before they moved to the pack."""

SAMPLES = [
    {
        "id": "polite",
        "user_input": "When can I return shoes?",
        "response": "You can return shoes within 30 days of purchase. Thank you for asking.",
        "retrieved_contexts": ["Shoes can be returned within 30 days of purchase."],
        "reference": "You can return shoes within 30 days of purchase.",
    },
    {
        "id": "blunt",
        "user_input": "Do you ship to Mars?",
        "response": "No. We ship to Europe only, by train, on Sundays, for free, with a gift and a sticker.",
        "retrieved_contexts": ["We ship to Europe only."],
        "reference": "No.",
    },
]


def worked_examples(text: str) -> dict[str, tuple[int, dict[str, str]]]:
    """``{heading: (count it states, {file name: source})}`` of the section, plus ``pyproject.toml``."""
    body = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    found: dict[str, tuple[int, dict[str, str]]] = {}
    heading, count = "", 0
    fence = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
    position = 0
    for match in fence.finditer(body):
        for line in body[position : match.start()].splitlines():
            head = re.match(r"^### (.+) \((\d+) files?\)$", line)
            if head:
                heading, count = head.group(1), int(head.group(2))
                found[heading] = (count, {})
        position = match.end()
        tag, source = match.group(1), match.group(2)
        if tag == "toml":
            found["pyproject"] = (0, {"pyproject.toml": source})
        elif tag == "yaml":
            found["application"] = (0, {"application.yaml": source})
        elif tag == "python":
            name = re.match(r"^# (\w+\.py)\n", source)
            assert name, f"a python block under {heading!r} does not start with '# <module>.py'"
            found[heading][1][name.group(1)] = source
    return found


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, tuple[int, dict[str, str]]]]:
    """The section's files written as an installed package ``acme`` (modules + entry points)."""
    examples = worked_examples(DOC.read_text(encoding="utf-8"))
    for _count, files in examples.values():
        for name, source in files.items():
            if name.endswith(".py"):
                (tmp_path / name).write_text(source, encoding="utf-8")
    info = tmp_path / "acme-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme\nVersion: 0.1\n", encoding="utf-8")
    groups = tomllib.loads(examples["pyproject"][1]["pyproject.toml"])["project"]["entry-points"]
    sections = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items()) for group, points in groups.items()]
    (info / "entry_points.txt").write_text("".join(sections), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in PACKAGE_MODULES:
        monkeypatch.delitem(sys.modules, module, raising=False)
    saved = (dict(METRICS._classes), dict(METRICS._broken), METRICS._plugins_loaded)
    saved_renderers, saved_handlers = dict(RENDERERS), dict(HANDLERS)
    METRICS._plugins_loaded = False
    monkeypatch.setattr(render_registry, "_installed_loaded", False)
    monkeypatch.setattr(languages, "_discovered", False)
    monkeypatch.setattr(languages, "_PACKS", dict(languages._PACKS))
    monkeypatch.setattr(languages, "_broken", {})
    for home in set(provider_registry.BUILTIN_PROVIDERS.values()):
        # the built-ins register when their module is first imported: if that happened during the
        # test, into the copy below, the registry put back would lack them for the rest of the process
        importlib.import_module(home)
    monkeypatch.setattr(provider_registry, "_PROVIDERS", dict(provider_registry._PROVIDERS))
    monkeypatch.setattr(provider_registry, "_broken", {})
    monkeypatch.setattr(provider_registry, "_installed_loaded", False)
    try:
        yield examples
    finally:
        METRICS._classes, METRICS._broken, METRICS._plugins_loaded = dict(saved[0]), dict(saved[1]), saved[2]
        RENDERERS.clear()
        RENDERERS.update(saved_renderers)
        HANDLERS.clear()
        HANDLERS.update(saved_handlers)
        for module in PACKAGE_MODULES:
            sys.modules.pop(module, None)
        for prompt in PROMPTS.values():  # forget what was rendered or read in the package's language
            prompt.__dict__.pop("_heads", None)
            prompt.instructions._read.pop("de", None)  # type: ignore[attr-defined]
            prompt.examples._read.pop("de", None)  # type: ignore[attr-defined]


def test_each_worked_example_has_the_files_its_heading_counts() -> None:
    examples = worked_examples(DOC.read_text(encoding="utf-8"))
    examples.pop("pyproject")
    examples.pop("application")
    counted = {heading: (count, sorted(files)) for heading, (count, files) in examples.items()}
    assert counted == {
        "A judged metric that reuses a prompt": (1, ["acme_attribution.py"]),
        "A judged metric with a new prompt": (2, ["acme_politeness.py", "acme_politeness_prompt.py"]),
        "A text metric": (1, ["acme_budget.py"]),
        "An output format": (1, ["acme_markdown.py"]),
        "A prompt language": (1, ["acme_german.py"]),
        "A native judge provider": (1, ["acme_provider.py"]),
    }
    assert all(count == len(files) for count, files in counted.values())


def test_every_worked_example_runs_by_name_through_ragqa_evaluate(
    installed: dict[str, tuple[int, dict[str, str]]], tmp_path: Path
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    table, records = tmp_path / "results.md", tmp_path / "results.jsonl"
    metrics = "response_attribution,politeness,word_budget"
    args = ["evaluate", str(data), "--profile", "local", "--metrics", metrics, "--out", str(table), "--language", "de"]
    result = CliRunner().invoke(app, [*args, "--out", str(records)])
    assert result.exit_code == 0, result.output

    scores = {}
    for line in records.read_text(encoding="utf-8").splitlines()[1:]:  # after the run's header
        record = json.loads(line)
        scores[(record["sample_id"], record["metric"])] = record["aggregate"]["value"]
    assert scores[("polite", "politeness")] == 1.0
    assert scores[("blunt", "politeness")] == 0.0
    assert scores[("polite", "word_budget")] == 1.0
    assert scores[("blunt", "word_budget")] == 0.0
    attributed = [scores[(s, "response_attribution")] for s in ("polite", "blunt")]
    assert all(0.0 <= v <= 1.0 for v in attributed) and not any(math.isnan(v) for v in attributed)
    assert attributed[0] > attributed[1]  # the polite answer is the one its context supports

    assert "Richter" in result.output  # the console's labels come from the German pack

    lines = table.read_text(encoding="utf-8").splitlines()
    assert lines[:2] == ["| metric | mean |", "|---|---|"]
    assert [row.split("|")[1].strip() for row in lines[2:]] == metrics.split(",")


def test_an_installed_output_format_is_found_by_suffix_and_listed(
    installed: dict[str, tuple[int, dict[str, str]]],
) -> None:
    assert ".md (markdown)" not in suffix_help()
    assert renderer_for("x.md").name == "markdown"
    assert ".md (markdown)" in suffix_help()
    with pytest.raises(ConfigError, match=r"no output format writes '\.nope'.*\.md"):
        renderer_for("x.nope")


def test_the_out_help_lists_every_registered_format() -> None:
    result = CliRunner().invoke(app, ["evaluate", "--help"], env={"COLUMNS": "400"})
    assert result.exit_code == 0
    for renderer in RENDERERS.values():
        for suffix in renderer.suffixes:
            assert suffix in result.output, suffix
    assert ".html" in result.output


def test_an_installed_language_pack_speaks_its_language_and_falls_back_to_english(
    installed: dict[str, tuple[int, dict[str, str]]],
) -> None:
    from acme_german import PACK  # the worked example, as installed

    assert check_language("de") == "de"
    data = StatementsInput(question="Wann?", answer="Innerhalb von 30 Tagen.")
    system, user = STATEMENTS.messages(data, "de")
    assert system.content == PACK["system"]
    assert user.content.startswith(PACK["instructions"]["statements"])
    assert "--------BEISPIELE-----------" in user.content and "Beispiel 1" in user.content
    english = STATEMENTS.messages(data, "en")[1].content
    assert "Please return the output in a JSON format" in user.content  # a header the pack leaves out
    assert user.content.split("--------BEISPIELE-----------")[1].count("Eingabe") == english.split(
        "--------EXAMPLES-----------"
    )[1].count("Input")  # the English examples, framed in German
    assert STATEMENTS.messages(data, "en")[0].content != PACK["system"]


def test_the_russian_pack_renders_exactly_what_the_prompts_held_before_the_pack() -> None:
    """Pinned hashes of every prompt's rendered head and rules in Russian, taken before the texts moved."""
    import hashlib

    from ragqa.prompts.base import system_rules
    from ragqa.prompts.claim_decomposition import claim_decomposition_prompt

    digest = hashlib.sha256(system_rules("ru").encode()).hexdigest()[:16]
    heads = hashlib.sha256("".join(PROMPTS[n]._head("ru") for n in sorted(PROMPTS)).encode()).hexdigest()[:16]
    levels = [(a, c) for a in ("low", "high") for c in ("low", "high")]
    claims = "".join(claim_decomposition_prompt(a, c)._head("ru") for a, c in levels)
    assert (digest, heads, hashlib.sha256(claims.encode()).hexdigest()[:16]) == RUSSIAN_DIGESTS


def test_a_broken_installed_format_or_language_stops_only_what_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    points = [
        EntryPoint(name="broken", value="acme_missing:Nope", group="ragqa.renderers"),
        EntryPoint(name="xx", value="acme_missing:PACK", group="ragqa.languages"),
    ]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda *, group: [p for p in points if p.group == group])
    monkeypatch.setattr(render_registry, "_installed_loaded", False)
    monkeypatch.setattr(render_registry, "_installed", {})
    monkeypatch.setattr(languages, "_discovered", False)
    monkeypatch.setattr(languages, "_broken", {})
    assert renderer_for("x.json").name == "json"  # a built-in suffix never loads installed formats
    with pytest.raises(ConfigError, match=r"output format 'broken' = 'acme_missing:Nope' could not be loaded"):
        renderer_for("x.nope")
    assert check_language("ru") == "ru"
    with pytest.raises(ConfigError, match=r"language pack 'xx' = 'acme_missing:PACK' could not be loaded"):
        check_language("xx")


class _AcmeServer(BaseHTTPRequestHandler):
    """A stand-in of the worked example's native server: ``POST /generate`` -> ``{"text": <JSON answer>}``.

    It answers the politeness prompt (polite when the data block holds "Thank you") and records
    every request body and its ``Authorization`` header.
    """

    calls: ClassVar[list[tuple[str, dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls.append((self.headers.get("Authorization", ""), body))
        polite = int("Thank you" in body["prompt"].rsplit("answer", 1)[-1])
        text = json.dumps({"reason": "native model", "polite": polite})
        payload = json.dumps({"text": text}).encode() if self.path == "/generate" else b"{}"
        self.send_response(200 if self.path == "/generate" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.slow
def test_an_installed_native_provider_scores_from_application_yaml(
    installed: dict[str, tuple[int, dict[str, str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AcmeServer)
    _AcmeServer.calls = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        config = installed["application"][1]["application.yaml"]
        assert "provider: myprov" in config
        port = server.server_address[1]
        (tmp_path / "application.yaml").write_text(
            config.replace("http://127.0.0.1:8700", f"http://127.0.0.1:{port}"), encoding="utf-8"
        )
        data = tmp_path / "data.jsonl"
        data.write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
        records = tmp_path / "results.jsonl"
        monkeypatch.chdir(tmp_path)
        args = ["evaluate", str(data), "--metrics", "politeness,word_budget", "--out", str(records)]
        result = CliRunner().invoke(app, args, env={"ACME_API_KEY": "sk-acme"})
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 0, result.output

    scores = {}
    for line in records.read_text(encoding="utf-8").splitlines()[1:]:
        record = json.loads(line)
        scores[(record["sample_id"], record["metric"])] = {j["judge_id"]: j["score"] for j in record["judges"]}
    assert scores[("polite", "politeness")] == {"acme-large": 1.0}
    assert scores[("blunt", "politeness")] == {"acme-large": 0.0}
    assert len(_AcmeServer.calls) == 2  # one politeness call per sample; word_budget asks no judge
    assert {auth for auth, _ in _AcmeServer.calls} == {"Bearer sk-acme"}
    assert {body["model"] for _, body in _AcmeServer.calls} == {"acme-large"}


def test_an_unknown_provider_in_application_yaml_stops_before_any_judge_call(
    installed: dict[str, tuple[int, dict[str, str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = installed["application"][1]["application.yaml"].replace("provider: myprov", "provider: myprovv")
    (tmp_path / "application.yaml").write_text(config, encoding="utf-8")
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(SAMPLES[0]) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["evaluate", str(data), "--metrics", "word_budget"], env={"ACME_API_KEY": "k"})
    assert result.exit_code != 0
    output = " ".join(result.output.split())
    assert "chat model 'acme-large' has an unknown provider 'myprovv'" in output
    assert "known providers: local, myprov, openai" in output
