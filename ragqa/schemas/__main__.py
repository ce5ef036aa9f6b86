"""``python -m ragqa.schemas``: regenerate the shipped JSON Schema files from the code."""

from __future__ import annotations

from ragqa.schemas import write_all

if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path}")
