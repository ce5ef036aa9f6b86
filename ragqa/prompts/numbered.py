"""Numbered texts: how the batched prompts show a list of contexts (or texts) to a judge.

A batched prompt (one call for what the ``ragas`` call plan asks item by item) must say which
item each part of its answer is about. Each item carries its number (1-based, in the order the
metric gives them) and the answer names that number, so a missing, repeated or invented row is
seen and only the items left out are asked again one by one.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

__all__ = ["NumberedText", "numbered"]


class NumberedText(BaseModel):
    """One item of a batched prompt's list: its number and its text."""

    number: int = Field(ge=1, description="The item's number, 1 for the first; answers refer to it")
    text: str = Field(description="The item's text")


def numbered(texts: Sequence[str]) -> list[NumberedText]:
    """``texts`` numbered from 1 in the order given.

    Args:
        texts: the items (contexts, or texts to extract from), in order.

    Returns:
        ``[NumberedText(number=i + 1, text=t) for i, t in enumerate(texts)]``.
    """
    return [NumberedText(number=i, text=t) for i, t in enumerate(texts, start=1)]
