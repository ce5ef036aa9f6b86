"""A measured time or speed in the docs names the command that measured it, in the same section.

A line of ``README.md`` or ``docs/*.md`` (outside fenced blocks) states a measured time or speed
when, with its inline code removed, it has a number with a time or speed unit (``4.5 s``,
``2 ms``, ``508 calls/s``, ``400 calls per second``) and a measurement cue (``took``, ``about``,
``measured``, ``per call``, ...); a table row counts when its table's header has such a cue
(``measured``, ``calls/s``, ``CPU ms/call``). Configured values (``timeout: 60s``, "the waits are
2, 4, 8 s") carry no cue and are not claims. Such a line needs a shell block in its section whose
command runs a benchmark or ``ragqa`` (``python benchmarks/...``, ``ragqa ...``), so the number
can be reproduced, and that command is itself run by ``test_docs_commands``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_blocks import REPO, commands_in, prose_lines

_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_TIME_OR_SPEED = re.compile(
    r"\d[\d,.]*\s?(?:ms|µs|us|s|seconds?|minutes?)\b(?![-/])"
    r"|\d[\d,.]*\s?(?:calls?/s|calls per second|requests per second|req/s)"
)
_CUE = re.compile(r"\b(?:took|measured|about|spends?|spent|wall|cold)\b|per call|per second|calls/s|ms/call", re.I)
_MEASURING = re.compile(r"^(?:\w+=\S*\s+)*(?:python3?\s+benchmarks/|ragqa\s|pytest\s)")

KNOWN_UNMEASURED: dict[str, tuple[str, ...]] = {}
"""Claims that name no command yet, by a fragment of their line: reported to the docs' owners.
The test fails when one of them gets a command (or goes away), so this list only shrinks."""


def _without_code(lines: list[tuple[int, str, str]]) -> dict[int, str]:
    """Each line's text with inline code removed; a code span may wrap lines within a paragraph."""
    bare: dict[int, str] = {}
    paragraph: list[tuple[int, str, str]] = []
    for item in [*lines, (-1, "", "")]:
        if paragraph and (not item[1].strip() or item[0] != paragraph[-1][0] + 1):
            text = "\n".join(t for _, t, _ in paragraph)
            text = _CODE.sub(lambda m: "\n" * m[0].count("\n"), text)
            bare.update(zip([n for n, _, _ in paragraph], text.split("\n"), strict=True))
            paragraph = []
        if item[1].strip():
            paragraph.append(item)
    return bare


def claims(path: Path) -> list[tuple[int, str, str]]:
    """``(line, text, section)`` of each line of ``path`` that states a measured time or speed."""
    found = []
    header = ""
    lines = prose_lines(path)
    bare = _without_code(lines)
    for number, text, section in lines:
        stripped = text.strip()
        is_row = stripped.startswith("|")
        if not is_row:
            header = ""
        elif not header:
            header = stripped  # the first row of a table is its header
            continue
        if not _TIME_OR_SPEED.search(bare.get(number, "")):
            continue
        if _CUE.search(header if is_row else bare[number]):
            found.append((number, stripped, section))
    return found


def unmeasured(path: Path, root: Path = REPO) -> list[tuple[int, str, str]]:
    """The claims of ``path`` whose section has no benchmark or ``ragqa`` command."""
    measured_in = {c.section for c in commands_in(path, root) if _MEASURING.match(c.command)}
    return [claim for claim in claims(path) if claim[2] not in measured_in]


DOCS = [REPO / "README.md", *sorted(REPO.glob("docs/*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=[p.relative_to(REPO).as_posix() for p in DOCS])
def test_every_measured_number_names_its_command(path: Path) -> None:
    rel = path.relative_to(REPO).as_posix()
    known = KNOWN_UNMEASURED.get(rel, ())
    offending = unmeasured(path)
    new = [f"{rel}:{n} [{section}] {text}" for n, text, section in offending if not any(k in text for k in known)]
    assert not new, "a measured number without the command that measured it, in its section:\n" + "\n".join(new)
    for fragment in known:
        assert any(fragment in text for _, text, _ in offending), (
            f"{rel}: {fragment!r} no longer lacks a command; remove it from KNOWN_UNMEASURED"
        )


def test_claims_are_told_from_configured_values(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "## Speed\n\n"
        "The run took 4.5 s on 2 cores.\n"
        "With `timeout: 60s` the waits are 2, 4, 8 s.\n\n"
        "| setup | measured |\n|---|---|\n| one | 15.93 s |\n\n"
        "| key | default |\n|---|---|\n| `timeout` | 60 s |\n\n"
        "```bash\npython benchmarks/panel_latency.py\n```\n\n"
        "## Other\n\n"
        "It costs about 2 ms per call.\n\n"
        "Its usage line reads about `calls 12 · wall\n"
        "time 4.2 s` (the code span wraps).\n"
        "```text\nwall time 6.3 s\n```\n",
        encoding="utf-8",
    )
    assert [n for n, _, _ in claims(doc)] == [3, 8, 20]
    assert [n for n, _, _ in unmeasured(doc, tmp_path)] == [20]
