"""The offline path imports only what it uses: no HTTP client, LLM SDK, template engine or statistics stack.

Start-up time is most of the README job (``ragqa evaluate ... --profile local``), so what the CLI
and a local-only panel import is pinned here as a set of modules, not as a timing: each check runs
a fresh interpreter and lists the heavy packages present in ``sys.modules``. A heavy package that
a path really needs is imported inside the function that uses it (or only for type checking).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = (
    "aiohttp",
    "diskcache",
    "httpx",
    "jinja2",
    "krippendorff",
    "langchain",
    "langchain_core",
    "langchain_openai",
    "numpy",
    "openai",
    "pandas",
    "razdel",
    "rouge_score",
    "sacrebleu",
    "scipy",
    "sqlite3",
    "statistics",
    "tenacity",
    "rich.markdown",
    "rich.progress",
    "rich.syntax",
    "rich.traceback",
)
"""Packages and modules the offline path must not import before it needs them."""

AGREEMENT = ("numpy", "krippendorff")
"""What the job's report needs once two judges have scored: the agreement figures (alpha, Spearman)."""

_LIST = (
    "import json, sys\n"
    "heavy = {heavy!r}\n"
    "def loaded():\n"
    "    return sorted(h for h in heavy if any(m == h or m.startswith(h + '.') for m in sys.modules))\n"
)


def _loaded(code: str) -> dict[str, list[str]]:
    """Run ``code`` (which prints one JSON object of checkpoints) in a fresh interpreter from the repo root."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RAGQA_PROFILES_ACTIVE", None)
    result = subprocess.run(
        [sys.executable, "-c", _LIST.format(heavy=HEAVY) + code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out: dict[str, list[str]] = json.loads(result.stdout.strip().splitlines()[-1])
    return out


def test_importing_the_cli_and_building_a_local_panel_imports_nothing_heavy() -> None:
    seen = _loaded(
        "import ragqa.cli\n"
        "cli = loaded()\n"
        "from ragqa.container import create_container\n"
        "c = create_container('application.yaml', ['local'])\n"
        "c.settings(); c.embedders(); c.judges(); c.metrics(); c.evaluator()\n"
        "print(json.dumps({'cli': cli, 'container': loaded()}))\n"
    )
    assert seen == {"cli": [], "container": []}


@pytest.mark.parametrize("entry", ["python -m ragqa", "ragqa"])
def test_the_readme_job_imports_only_the_agreement_stack(entry: str) -> None:
    # the whole README job, in process: only the agreement figures of its report need numpy
    run = (
        "import runpy; runpy.run_module('ragqa', run_name='__main__')"
        if entry == "python -m ragqa"
        else ("from ragqa.cli import main; main()")
    )
    seen = _loaded(
        "import atexit, io, contextlib\n"
        "atexit.register(lambda: print(json.dumps({'job': loaded()})))\n"
        "sys.argv = ['ragqa', 'evaluate', 'examples/datasets/it_helpdesk.jsonl', '--profile', 'local',"
        " '--no-progress']\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        {run}\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0, exc.code\n"
    )
    assert seen == {"job": sorted(AGREEMENT)}


def test_python_m_ragqa_turns_the_collector_back_on() -> None:
    # __main__ imports with the garbage collector off; main() must freeze start-up and re-enable it
    seen = _loaded(
        "import gc, runpy\n"
        "import ragqa.cli\n"
        "states = []\n"
        "ragqa.cli.app = lambda: states.append(gc.isenabled())\n"
        "gc.disable()\n"
        "ragqa.cli.main()\n"
        "print(json.dumps({'enabled': [str(s) for s in states], 'frozen': [str(gc.get_freeze_count() > 0)]}))\n"
    )
    assert seen == {"enabled": ["True"], "frozen": ["True"]}
