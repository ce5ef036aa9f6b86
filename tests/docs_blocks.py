"""Shell commands of the user-facing docs, with the ``docs-test`` markers that say how to run them.

Collected from fenced blocks tagged ``bash``, ``sh``, ``shell`` or ``console`` in ``README.md``,
``docs/**/*.md`` and ``examples/**/README.md``:

- ``\\`` continuations are joined; a leading ``$ `` prompt is dropped; ``#`` comment lines are
  skipped. In a ``console`` block only ``$ `` lines are commands (the rest is output).
- A block may be preceded by HTML comments (invisible when rendered), one directive each:

  - ``<!-- docs-test: exit=1 -->``: the block's commands exit with 1 (default 0);
    ``exit=0,1`` gives one code per command of the block, in order.
  - ``<!-- docs-test: skip=REASON -->``: the block cannot run in a test (REASON says why).
  - ``<!-- docs-test: args=ARGS -->``: append ``ARGS`` to every command of the block (a
    benchmark's small-size option, so the documented command runs in seconds).

  An unknown directive is an error, so a typo cannot silently disable a check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHELL_TAGS = frozenset({"bash", "sh", "shell", "console"})
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<key>[a-z]+)=(?P<value>.*?)\s*-->\s*$")
_KEYS = frozenset({"exit", "skip", "args"})


@dataclass(frozen=True)
class DocCommand:
    """One shell command of the docs.

    Attributes:
        path: the doc file, relative to the repository root (``docs/cli.md``).
        line: 1-based line of the command's first line in that file.
        command: the command as a user would type it (continuations joined, prompt dropped).
        exit_code: the exit code the docs declare for it (0 unless a marker says otherwise).
        skip: why it cannot run in a test, or ``None``.
        args: extra arguments the test appends (``""`` when none).
        section: the heading of the section the block is in (``""`` before any heading).
    """

    path: str
    line: int
    command: str
    exit_code: int = 0
    skip: str | None = None
    args: str = ""
    section: str = ""

    @property
    def id(self) -> str:
        """The test id: ``docs/cli.md:19``."""
        return f"{self.path}:{self.line}"


def doc_files(root: Path = REPO) -> list[Path]:
    """The Markdown files whose shell commands are tested, sorted."""
    files = [root / "README.md", *root.glob("docs/**/*.md"), *root.glob("examples/**/README.md")]
    return sorted(p for p in files if p.is_file())


def strip_comment(command: str) -> str:
    """``command`` without a trailing ``# comment`` (a ``#`` after whitespace, outside quotes)."""
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(command):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or command[i - 1].isspace()):
            return command[:i].rstrip()
    return command.rstrip()


def _commands_of_block(lines: list[tuple[int, str]], console: bool) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in lines:
        text = raw.rstrip()
        if pending is not None:
            start, head = pending
            joined = head + " " + text.strip()
            if joined.endswith("\\"):
                pending = (start, joined[:-1].rstrip())
            else:
                out.append((start, joined))
                pending = None
            continue
        stripped = text.strip()
        if console:
            if not stripped.startswith("$ "):
                continue  # output
            stripped = stripped[2:].strip()
        elif stripped.startswith("$ "):
            stripped = stripped[2:].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending = (number, stripped[:-1].rstrip())
        else:
            out.append((number, stripped))
    if pending is not None:
        raise ValueError(f"line {pending[0]}: a '\\' continuation runs past the end of the block")
    return out


def _markers(lines: list[str], fence_index: int, where: str) -> dict[str, str]:
    found: dict[str, str] = {}
    i = fence_index - 1
    while i >= 0 and (not lines[i].strip() or _MARKER.match(lines[i])):
        match = _MARKER.match(lines[i])
        if match:
            key, value = match["key"], match["value"]
            if key not in _KEYS:
                raise ValueError(f"{where}:{i + 1}: unknown docs-test directive {key!r}; use one of {sorted(_KEYS)}")
            if key in found:
                raise ValueError(f"{where}:{i + 1}: docs-test directive {key!r} given twice for one block")
            found[key] = value
        i -= 1
    if "docs-test:" in (lines[i] if i >= 0 else "") and "<!--" in lines[i]:
        raise ValueError(f"{where}:{i + 1}: malformed docs-test marker; write <!-- docs-test: key=value -->")
    return found


def _exit_codes(value: str | None, count: int, where: str) -> list[int]:
    if value is None:
        return [0] * count
    codes = [int(v) for v in value.split(",")]
    if len(codes) == 1:
        return codes * count
    if len(codes) != count:
        raise ValueError(f"{where}: exit={value} gives {len(codes)} codes for a block of {count} commands")
    return codes


def commands_in(path: Path, root: Path = REPO) -> list[DocCommand]:
    """Every shell command in the Markdown file ``path``, with its markers applied.

    Raises:
        ValueError: on a malformed or unknown marker, an ``exit=`` list of the wrong length, or a
            continuation that runs past its block.
    """
    rel = path.relative_to(root).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    result: list[DocCommand] = []
    section = ""
    i = 0
    while i < len(lines):
        open_match = _FENCE.match(lines[i])
        if open_match is None:
            if lines[i].startswith("#"):
                section = lines[i].lstrip("#").strip()
            i += 1
            continue
        fence, indent = open_match["fence"], len(open_match["indent"])
        tag = (open_match["info"].split() or [""])[0].lower()
        body: list[tuple[int, str]] = []
        j = i + 1
        while j < len(lines):
            close = _FENCE.match(lines[j])
            if close and close["fence"][0] == fence[0] and len(close["fence"]) >= len(fence) and not close["info"]:
                break
            body.append((j + 1, lines[j][indent:] if lines[j][:indent].isspace() else lines[j].lstrip()))
            j += 1
        if tag in SHELL_TAGS:
            where = f"{rel}:{i + 1}"
            marks = _markers(lines, i, rel)
            found = _commands_of_block(body, console=tag == "console")
            codes = _exit_codes(marks.get("exit"), len(found), where)
            result.extend(
                DocCommand(
                    path=rel,
                    line=number,
                    command=command,
                    exit_code=code,
                    skip=marks.get("skip"),
                    args=marks.get("args", ""),
                    section=section,
                )
                for (number, command), code in zip(found, codes, strict=True)
            )
        i = j + 1
    return result


def all_commands(root: Path = REPO) -> list[DocCommand]:
    """Every shell command of every doc file (see :func:`doc_files`), in file and line order."""
    return [c for path in doc_files(root) for c in commands_in(path, root)]


def prose_lines(path: Path) -> list[tuple[int, str, str]]:
    """``(line number, text, section heading)`` of every line of ``path`` outside fenced blocks."""
    out: list[tuple[int, str, str]] = []
    section = ""
    fence: str | None = None
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = _FENCE.match(text)
        if fence is not None:
            if match and match["fence"][0] == fence[0] and len(match["fence"]) >= len(fence) and not match["info"]:
                fence = None
            continue
        if match:
            fence = match["fence"]
            continue
        if text.startswith("#"):
            section = text.lstrip("#").strip()
        out.append((number, text, section))
    return out
