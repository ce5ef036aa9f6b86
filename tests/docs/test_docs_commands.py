"""Every shell command in the docs runs, as a user would, and exits as the docs say: the docs stay true.

The commands come from the fenced ``bash`` / ``sh`` / ``shell`` / ``console`` blocks of
``README.md``, ``docs/**/*.md`` and ``examples/**/README.md`` (see ``docs_blocks``), one test case
per command, named ``file:line``. Each runs with ``bash -c`` in a sandbox copy of the repository
with fixtures for the placeholder files the docs name (see ``docs_sandbox`` for the mapping), with
this venv's ``ragqa`` and ``python`` first on ``PATH`` (its optional extras hidden, as after the
README's ``pip install -e .``; ``ragqa`` runs forked from an interpreter that has already imported
it, which saves each command its start and imports, see ``docs_forkserver``), and with every
non-local judge sent to ragqa's fake OpenAI-compatible server, which answers as the offline local
judge would; the one command that needs a real provider is skipped, so nothing is meant to leave
the machine.

A command must exit with the code its block declares (``<!-- docs-test: exit=1 -->``; 0 by
default) and print no Python traceback. Blocks that cannot run in a test say why with
``<!-- docs-test: skip=REASON -->``; a benchmark runs with its small-size option
(``<!-- docs-test: args=... -->``). Each doc file runs in its own sandbox, its commands in
order; files run side by side (see :class:`DocsRunner`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from docs_blocks import REPO, DocCommand, all_commands, commands_in, split_chain
from docs_forkserver import ForkServer
from docs_sandbox import (
    FAKE_KEY,
    GOLDEN_IDS,
    HIDDEN_EXTRAS,
    SANDBOX_VARIANT,
    SITE,
    build_sandbox,
    command_env,
    hide_extras,
    script_for,
)

from ragqa.testing import FakeOpenAIServer, local_judge_responder

COMMANDS = all_commands()
HANG_GUARD_S = 600  # only stops a hung command from blocking the suite; not a speed check
WORKERS = 2  # doc files run side by side; the commands of one file run in order


@dataclass(frozen=True)
class Outcome:
    """What one command did: exit code, output, and the models it asked on the fake server."""

    returncode: int
    stdout: str
    stderr: str
    models: frozenset[str]


class DocsRunner:
    """Runs the docs' commands: each doc file in its own sandbox, its commands in order.

    Doc files run side by side on :data:`WORKERS` threads, each in a fresh copy of a template
    sandbox, so one page's outputs cannot disturb another's. A command that an earlier file
    already runs (the same script in the same kind of sandbox) is not run again: it waits for
    that run. Files start in order and only wait on earlier ones, so the waits cannot deadlock.
    """

    def __init__(self, tmp: pytest.TempPathFactory, server: FakeOpenAIServer, commands: list[DocCommand]) -> None:
        self._tmp = tmp
        self._server = server
        self._lock = threading.Lock()
        self._templates: dict[str, Path] = {}
        self._forkservers: dict[str, ForkServer] = {}
        self._sandboxes: dict[str, Path] = {}
        self._futures: dict[str, Future[Outcome]] = {}
        owner: dict[tuple[str, str, bool], str] = {}
        by_file: dict[str, list[tuple[DocCommand, str, str]]] = {}
        for command in commands:
            script = script_for(command)
            if command.skip is not None or script is None or missing_extras(command):
                continue
            key = (SANDBOX_VARIANT.get(command.path, "default"), script, command.overrides)
            by_file.setdefault(command.path, []).append((command, script, owner.setdefault(key, command.id)))
            self._futures[command.id] = Future()
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="docs-test")
        for path, jobs in by_file.items():
            self._pool.submit(self._run_file, path, jobs)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        for forkserver in self._forkservers.values():
            forkserver.close()

    def sandbox(self, path: str) -> Path:
        """The sandbox of the doc file ``path`` (made on first use)."""
        variant = SANDBOX_VARIANT.get(path, "default")
        with self._lock:
            if variant not in self._templates:
                template = build_sandbox(self._tmp.mktemp(f"template-{variant}"), variant)
                self._templates[variant] = template.parent
                self._forkservers[variant] = ForkServer(
                    command_env(template, self._server.base_url), sorted(template.glob("examples/datasets/*.jsonl"))
                )
            if path not in self._sandboxes:
                dest = self._tmp.mktemp("docs-" + path.replace("/", "-"))
                shutil.copytree(self._templates[variant], dest, symlinks=True, dirs_exist_ok=True)
                self._sandboxes[path] = dest / "repo"
            return self._sandboxes[path]

    def outcome(self, command: DocCommand) -> Outcome:
        """Wait for ``command``'s run and return what it did."""
        return self._futures[command.id].result()

    def _run_file(self, path: str, jobs: list[tuple[DocCommand, str, str]]) -> None:
        for command, script, owner in jobs:
            future = self._futures[command.id]
            try:
                if owner != command.id:
                    future.set_result(self._futures[owner].result())
                else:
                    future.set_result(self._run(self.sandbox(path), command, script))
            except BaseException as exc:  # handed to the test that waits for it
                future.set_exception(exc)

    def env(self, sandbox: Path, path: str, *, overrides: bool = True, api_key: str = FAKE_KEY) -> dict[str, str]:
        """The environment of a command of the doc file ``path`` run in ``sandbox`` (made by :meth:`sandbox`).

        :func:`docs_sandbox.command_env`, with the ``ragqa`` shim of the sandbox kind's zygote
        first on ``PATH``: ``ragqa`` runs forked from an interpreter that has imported it (see
        :mod:`docs_forkserver`).
        """
        env = command_env(sandbox, self._server.base_url, overrides=overrides, api_key=api_key)
        shim = self._forkservers[SANDBOX_VARIANT.get(path, "default")].shim_dir
        env["PATH"] = os.pathsep.join([str(shim), env["PATH"]])
        return env

    def _run(self, sandbox: Path, command: DocCommand, script: str) -> Outcome:
        key = "sk-or-docs-test-" + command.id.replace("/", "-").replace(":", "-")
        env = self.env(sandbox, command.path, overrides=command.overrides, api_key=key)
        proc = subprocess.run(
            ["bash", "-c", script],
            cwd=sandbox,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
        mine = frozenset(r.model for r in self._server.requests if r.headers.get("authorization") == f"Bearer {key}")
        return Outcome(proc.returncode, proc.stdout, proc.stderr, mine)


def missing_extras(command: DocCommand) -> list[str]:
    """The modules of ``command.needs`` that this environment cannot import (its optional extras)."""
    return [name for name in command.needs if importlib.util.find_spec(name) is None]


@pytest.fixture(scope="module")
def docs_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.script("*", local_judge_responder())
        yield server


@pytest.fixture(scope="module")
def runner(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, docs_server: FakeOpenAIServer
) -> Iterator[DocsRunner]:
    selected = [
        item.callspec.params["command"]
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.originalname == "test_documented_command_runs"
    ]
    docs_runner = DocsRunner(tmp_path_factory, docs_server, selected)
    yield docs_runner
    docs_runner.close()


def _converter_reproduces_the_dataset(sandbox: Path, outcome: Outcome) -> None:
    # docs: "scripts/convert_trulens.py ... reproduces the file byte for byte"
    name = "examples/datasets/it_helpdesk.jsonl"
    assert (sandbox / name).read_bytes() == (REPO / name).read_bytes()


def _judges_were_called_over_http(sandbox: Path, outcome: Outcome) -> None:
    # every judge of the repository's OpenRouter panel went to the fake server (the overrides work)
    panel = yaml.safe_load((sandbox / "application.yaml").read_text(encoding="utf-8"))
    judges = {entry["id"] for entry in panel["spring"]["ai"]["chat-models"]["list"]}
    assert judges and outcome.models == judges


def _resume_of_a_finished_run_asks_nothing(sandbox: Path, outcome: Outcome) -> None:
    # docs: --resume scores only what is missing; after the finished run above nothing is
    assert outcome.models == frozenset()


AFTER: dict[str, Callable[[Path, Outcome], None]] = {
    "scripts/convert_trulens.py": _converter_reproduces_the_dataset,
    "traces.csv --metrics faithfulness": _judges_were_called_over_http,
    "--out results.jsonl --resume": _resume_of_a_finished_run_asks_nothing,
}
"""Extra checks of a command's effect, keyed by a substring of the command."""


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_documented_command_runs(command: DocCommand, runner: DocsRunner) -> None:
    if command.skip is not None:
        pytest.skip(f"marked in the docs: {command.skip}")
    if missing := missing_extras(command):
        pytest.skip(f"needs {', '.join(missing)}, an optional extra that is not installed (docs-test: needs=)")
    script = script_for(command)
    assert script is not None, (
        f"{command.id} only creates or installs into a virtual environment, which cannot run in a test: "
        "put <!-- docs-test: skip=REASON --> before its block"
    )
    outcome = runner.outcome(command)
    shown = (
        f"$ {script}\n--- exit {outcome.returncode}\n"
        f"--- stdout\n{outcome.stdout[-3000:]}\n--- stderr\n{outcome.stderr[-3000:]}"
    )
    assert outcome.returncode == command.exit_code, f"expected exit {command.exit_code}\n{shown}"
    assert "Traceback (most recent call last)" not in outcome.stdout + outcome.stderr, shown
    for needle, check in AFTER.items():
        if needle in command.command:
            check(runner.sandbox(command.path), outcome)


FORKED_OR_FRESH = (
    "ragqa --version",
    "ragqa metrics | head -4",
    "ragqa evaluate no-such.jsonl --profile local",
    "cd eval && ragqa evaluate golden.jsonl --profile local --no-progress --out ../out.jsonl"
    " --threshold faithfulness=0.99",
    "ragqa report out.jsonl -o out.html && wc -c < out.html",
)
"""Commands run both ways by the next test, in order: printing, piping, failing before any judge
call, scoring and writing (missing a threshold: exit 1) from another folder, reading the file back."""


def _timeless(value: object) -> object:
    """``value`` (a results record) without what differs between two runs: ids, clocks, durations."""
    if isinstance(value, dict):
        return {
            k: _timeless(v)
            for k, v in value.items()
            if not re.search(r"^run_id$|_at$|time|wall|second|elapsed|duration|latency|cpu", k)
        }
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _untimed(text: str) -> str:
    return re.sub(r"\d+(\.\d+)?( ?(s|ms)\b|/s)", "N", text)


def test_the_forked_ragqa_runs_as_a_fresh_one(runner: DocsRunner) -> None:
    # the docs' ragqa commands run forked from a zygote (docs_forkserver): same exit codes, output and files
    sandbox = runner.sandbox("forked-or-fresh")
    shim_first = runner.env(sandbox, "forked-or-fresh")
    fresh = command_env(sandbox, "http://127.0.0.1:9")
    assert shutil.which("ragqa", path=shim_first["PATH"]) != shutil.which("ragqa", path=fresh["PATH"])
    seen: dict[str, list[tuple[int, str, str, list[object]]]] = {"forked": [], "fresh": []}
    for way, env in (("forked", shim_first), ("fresh", fresh)):
        (sandbox / "out.jsonl").unlink(missing_ok=True)
        for script in FORKED_OR_FRESH:
            proc = subprocess.run(["bash", "-c", script], cwd=sandbox, env=env, capture_output=True, text=True)
            written = sandbox / "out.jsonl"
            lines = written.read_text(encoding="utf-8").splitlines() if written.exists() else []
            records = [_timeless(json.loads(line)) for line in lines]
            seen[way].append((proc.returncode, _untimed(proc.stdout), _untimed(proc.stderr), records))
    assert [code for code, *_ in seen["fresh"]] == [0, 0, 2, 1, 0]
    assert seen["forked"] == seen["fresh"]
    assert len(seen["fresh"][-1][3]) > len(GOLDEN_IDS)  # the header and a record per sample and metric


def test_the_docs_have_commands_and_the_after_checks_match_one() -> None:
    assert len(COMMANDS) >= 10
    for needle in AFTER:
        assert any(needle in c.command for c in COMMANDS), f"no docs command contains {needle!r}"


def test_markers_and_blocks_are_parsed(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# Title\n\n"
        "```bash\n"
        "# a comment line\n"
        "$ ragqa metrics   # trailing comment\n"
        "ragqa evaluate a.jsonl \\\n"
        "  --profile local\n"
        "```\n\n"
        "## Failing\n\n"
        "<!-- docs-test: exit=0,1 -->\n"
        "<!-- docs-test: args=--calls 5 -->\n"
        "```sh\n"
        "python bench.py\n"
        "ragqa evaluate b.jsonl --threshold faithfulness=0.99\n"
        "```\n\n"
        "```console\n"
        "$ ragqa --version\n"
        "ragqa 0.1.0\n"
        "```\n\n"
        "<!-- docs-test: skip=needs a GPU -->\n"
        "```text\n"
        "not a shell block\n"
        "```\n",
        encoding="utf-8",
    )
    found = commands_in(doc, tmp_path)
    assert [(c.line, c.command, c.exit_code, c.args, c.section) for c in found] == [
        (5, "ragqa metrics   # trailing comment", 0, "", "Title"),
        (6, "ragqa evaluate a.jsonl --profile local", 0, "", "Title"),
        (15, "python bench.py", 0, "--calls 5", "Failing"),
        (16, "ragqa evaluate b.jsonl --threshold faithfulness=0.99", 1, "--calls 5", "Failing"),
        (20, "ragqa --version", 0, "", "Failing"),
    ]
    assert script_for(found[0]) == "ragqa metrics"
    assert all(c.overrides for c in found)
    assert script_for(found[2]) == "python bench.py --calls 5"


def test_an_option_the_smoke_arguments_give_again_is_dropped_so_equal_runs_are_one_script() -> None:
    # argparse keeps an option's last value: the documented value never reached the run
    def script(command: str, args: str) -> str | None:
        return script_for(DocCommand("docs/x.md", 1, command, args=args))

    smoke = "--samples 2 --concurrency 4"
    assert script("python b.py", smoke) == script("python b.py --samples 40", smoke) == f"python b.py {smoke}"
    assert (
        script("python b.py --samples=40 --concurrency 16 64 --plans a b", smoke) == f"python b.py --plans a b {smoke}"
    )
    assert (
        script("nice python b.py --offset -1 --samples 9 2>&1", "--offset 3")
        == "nice python b.py --samples 9 2>&1 --offset 3"
    )
    assert script("python b.py --samplesx 3 -s 4 --samples", smoke) == f"python b.py --samplesx 3 -s 4 {smoke}"
    assert script("cd x && python b.py --samples 40", smoke) == f"cd x && python b.py {smoke}"


def test_setup_steps_are_dropped_and_unknown_markers_refused(tmp_path: Path) -> None:
    chain = DocCommand("README.md", 1, "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && ragqa x")
    assert script_for(chain) == "ragqa x"
    quoted = "python -c \"print('x && y')\""
    assert split_chain(f"cd a && {quoted} && ls") == ["cd a", quoted, "ls"]
    assert script_for(DocCommand("README.md", 1, "pip install -c constraints.txt -e '.[embeddings]'  # why")) is None
    doc = tmp_path / "doc.md"
    doc.write_text("<!-- docs-test: exits=1 -->\n```bash\nragqa metrics\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="unknown docs-test directive 'exits'"):
        commands_in(doc, tmp_path)
    doc.write_text("<!-- docs-test: exit=0,1 -->\n```bash\nragqa metrics\n```\n", encoding="utf-8")
    with pytest.raises(ValueError, match="gives 2 codes for a block of 1"):
        commands_in(doc, tmp_path)


def test_a_quoted_string_may_span_lines_and_overrides_can_be_turned_off(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- docs-test: overrides=off -->\n"
        "```bash\n"
        'python -c "\n'
        "import sys  # a comment inside the string is code\n"
        "for a in sys.argv:\n"
        "    print('valid')\n"
        '" results.jsonl   # a real comment\n'
        "cd examples/pytest_suite && pytest  # don't count this quote\n"
        "```\n",
        encoding="utf-8",
    )
    first, second = commands_in(doc, tmp_path)
    assert (first.line, second.line) == (3, 8)
    code = "\nimport sys  # a comment inside the string is code\nfor a in sys.argv:\n    print('valid')\n"
    assert first.command == f'python -c "{code}" results.jsonl   # a real comment'
    assert script_for(first) == f'python -c "{code}" results.jsonl'
    assert script_for(second) == "cd examples/pytest_suite && pytest"
    assert not first.overrides and not second.overrides


def test_the_sandbox_hides_the_optional_extras_as_an_absent_install_would(tmp_path: Path) -> None:
    # the docs' commands run as after `pip install -e .`: no MiniLM, so the local embedder hashes
    (tmp_path / "repo").mkdir()
    hide_extras(tmp_path / SITE)
    code = (
        "import importlib.util, sys\n"
        "from ragqa.judges.local import LocalEmbedder\n"
        "names = sys.argv[1:]\n"
        "print([importlib.util.find_spec(n) for n in names], LocalEmbedder('e').method)\n"
        "for n in names:\n"
        "    try:\n"
        "        __import__(n)\n"
        "    except ImportError:\n"
        "        print('ImportError', n)\n"
    )
    env = command_env(tmp_path / "repo", "http://127.0.0.1:9")
    env["PYTHONPATH"] += os.pathsep + str(REPO)  # this checkout's ragqa (the sandbox here has no copy)
    done = subprocess.run(
        [sys.executable, "-c", code, *HIDDEN_EXTRAS], env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines() == [
        f"{[None] * len(HIDDEN_EXTRAS)} hashing",
        *(f"ImportError {n}" for n in HIDDEN_EXTRAS),
    ]


def test_a_block_that_needs_an_extra_names_it_and_is_skipped_without_it(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "<!-- docs-test: needs=json, surely_not_installed_xyz -->\n```bash\nragqa metrics\n```\n\n"
        "```bash\nragqa --version\n```\n",
        encoding="utf-8",
    )
    needing, plain = commands_in(doc, tmp_path)
    assert needing.needs == ("json", "surely_not_installed_xyz") and plain.needs == ()
    assert missing_extras(needing) == ["surely_not_installed_xyz"] and missing_extras(plain) == []
    parquet = [c for c in COMMANDS if "--out results.parquet" in c.command]
    assert parquet and all(c.needs == ("pyarrow",) for c in parquet)  # the README's install has no pyarrow
