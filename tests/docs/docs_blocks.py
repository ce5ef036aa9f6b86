"""Shell commands of the user-facing docs, with the ``docs-test`` markers that say how to run them.

Collected from fenced blocks tagged ``bash``, ``sh``, ``shell`` or ``console`` in ``README.md``,
``docs/**/*.md`` and ``examples/**/README.md``:

- ``\\`` continuations are joined, and so are the lines of a quoted string that spans lines
  (``python -c "..."``); a leading ``$ `` prompt is dropped; ``#`` comment lines are skipped.
  In a ``console`` block only ``$ `` lines are commands (the rest is output).
- A block may be preceded by HTML comments (invisible when rendered), one directive each:

  - ``<!-- docs-test: exit=1 -->``: the block's commands exit with 1 (default 0);
    ``exit=0,1`` gives one code per command of the block, in order.
  - ``<!-- docs-test: skip=REASON -->``: the block cannot run in a test (REASON says why).
  - ``<!-- docs-test: args=ARGS -->``: append ``ARGS`` to every command of the block (a
    benchmark's small-size option, so the documented command runs in seconds).
  - ``<!-- docs-test: needs=MODULE[,MODULE] -->``: the block needs an optional extra (``pyarrow``
    for Parquet): with one of the modules not installed, as after the README's ``pip install``,
    its commands are skipped, saying which; with them installed they run.
  - ``<!-- docs-test: overrides=off -->``: run without the ``RAGQA__...`` overrides that send
    the base URLs to the docs test's fake server, for commands that start their own server
    (the example pytest suite).

  An unknown directive is an error, so a typo cannot silently disable a check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHELL_TAGS = frozenset({"bash", "sh", "shell", "console"})
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<key>[a-z]+)=(?P<value>.*?)\s*-->\s*$")
_KEYS = frozenset({"exit", "skip", "args", "overrides", "needs"})


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
        overrides: whether the ``RAGQA__...`` overrides pointing at the fake server apply.
        needs: top-level modules of optional extras the command needs (``()`` when none).
    """

    path: str
    line: int
    command: str
    exit_code: int = 0
    skip: str | None = None
    args: str = ""
    section: str = ""
    overrides: bool = True
    needs: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        """The test id: ``docs/cli.md:19``."""
        return f"{self.path}:{self.line}"


def doc_files(root: Path = REPO) -> list[Path]:
    """The Markdown files whose shell commands are tested, sorted."""
    files = [root / "README.md", *root.glob("docs/**/*.md"), *root.glob("examples/**/README.md")]
    return sorted(p for p in files if p.is_file())


def _scan(text: str) -> tuple[list[tuple[int, int]], str | None]:
    """Shell comments of ``text`` as ``(start, end)`` spans, and the quote left open at its end."""
    comments: list[tuple[int, int]] = []
    quote: str | None = None
    escaped = False
    i = 0
    while i < len(text):
        ch = text[i]
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            comments.append((i, end))
            i = end
            continue
        i += 1
    return comments, quote


def strip_comment(command: str) -> str:
    """``command`` without its ``# comments`` (a ``#`` after whitespace, outside quotes, to the line's end)."""
    out, last = [], 0
    for start, end in _scan(command)[0]:
        out.append(command[last:start].rstrip(" \t"))
        last = end
    out.append(command[last:])
    return "".join(out).rstrip()


def split_chain(command: str) -> list[str]:
    """The steps of an ``a && b`` chain (an ``&&`` inside quotes does not split), stripped."""
    steps, start = [], 0
    for i in range(len(command) - 1):
        if command[i : i + 2] == "&&" and _scan(command[:i])[1] is None and i >= start:
            steps.append(command[start:i].strip())
            start = i + 2
    steps.append(command[start:].strip())
    return steps


def _commands_of_block(lines: list[tuple[int, str]], console: bool) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    current: str | None = None  # a command still open: a trailing "\\" or an unclosed quote
    in_quote = False
    start = 0
    for number, raw in lines:
        text = raw.rstrip()
        if current is None:
            stripped = text.strip()
            if console:
                if not stripped.startswith("$ "):
                    continue  # output
                stripped = stripped[2:].strip()
            elif stripped.startswith("$ "):
                stripped = stripped[2:].strip()
            if not stripped or stripped.startswith("#"):
                continue
            current, start = stripped, number
        elif in_quote:
            current += "\n" + text  # inside a quoted string, lines are kept as written
        else:
            current += " " + text.strip()
        in_quote = _scan(current)[1] is not None
        if in_quote:
            continue
        if current.endswith("\\"):
            current = current[:-1].rstrip()
            continue
        out.append((start, current))
        current = None
    if current is not None:
        raise ValueError(f"line {start}: a command runs past the end of its block (a '\\' or an open quote)")
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
            prefix = lines[j][:indent]
            body.append((j + 1, lines[j][indent:] if prefix.strip() == "" else lines[j].lstrip()))
            j += 1
        if tag in SHELL_TAGS:
            where = f"{rel}:{i + 1}"
            marks = _markers(lines, i, rel)
            found = _commands_of_block(body, console=tag == "console")
            codes = _exit_codes(marks.get("exit"), len(found), where)
            if marks.get("overrides", "on") not in ("on", "off"):
                raise ValueError(f"{where}: overrides={marks['overrides']}; write overrides=off (or leave it out)")
            result.extend(
                DocCommand(
                    path=rel,
                    line=number,
                    command=command,
                    exit_code=code,
                    skip=marks.get("skip"),
                    args=marks.get("args", ""),
                    section=section,
                    overrides=marks.get("overrides", "on") == "on",
                    needs=tuple(name.strip() for name in marks.get("needs", "").split(",") if name.strip()),
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
