r"""Text from data made safe for a terminal: control characters shown, never obeyed.

A sample id, a dataset value or a judge's error body is data: an escape sequence in it
(``\x1b[2J`` clears the screen, ``\x1b]0;...\x07`` retitles the window, ``\x1b]8;;...`` forges a
link) must reach the terminal as text. rich passes ``ESC`` through unchanged, so every place that
prints such text on the console goes through :func:`printable` first; the HTML report escapes
its own way (Jinja autoescape).
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
r"""C0 controls but tab and newline, DEL, C1 controls (``\x9b`` is a one-byte CSI), the Unicode
line and paragraph separators, and the bidirectional overrides and isolates (which reorder what
is shown, the "Trojan Source" trick)."""


def _escaped(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    r"""``text`` with every control character written as a Python escape (``ESC`` -> ``\x1b``).

    Tab and newline are kept; so is every other printable character, in any script.

    Examples:
        ``printable("id\x1b[31m")`` (an ``ESC`` inside) returns the text ``id\x1b[31m`` (a backslash inside).
    """
    return _CONTROL.sub(_escaped, text)
