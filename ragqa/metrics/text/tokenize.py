"""The word tokeniser of spring-ai-ragas's BLEU, ROUGE and chrF++ (pure).

spring-ai-ragas (``metrics/nlp``) lower-cases the text, replaces every character outside
``[a-zа-яё0-9]`` and ASCII whitespace with a space, and splits on whitespace. Latin letters with
accents, Greek, CJK and every other script are therefore deleted, and punctuation separates words
(``"Hello, world!"`` is ``["hello", "world"]``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

__all__ = ["java_tokens", "ngram_counts"]

_NOT_KEPT = re.compile(r"[^a-zа-яё0-9 \t\n\x0b\f\r]")


def java_tokens(text: str) -> list[str]:
    """Split ``text`` into words as spring-ai-ragas does.

    Args:
        text: any string.

    Returns:
        The lower-cased words (``[a-zа-яё0-9]+``), in order; empty when none remain.
    """
    return _NOT_KEPT.sub(" ", text.lower()).split()


def ngram_counts(items: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """Count the ``n``-grams of ``items`` (words or characters).

    Args:
        items: the sequence.
        n: the order (>= 1).

    Returns:
        Each n-gram (a tuple) with its count; empty when ``len(items) < n``.
    """
    return Counter(tuple(items[i : i + n]) for i in range(len(items) - n + 1))
