"""The report's own words in each language, shared by the HTML and console views.

English is ``templates/labels.json``; every other language is the ``labels`` of its language pack
(:mod:`ragqa.languages`).

Only ragqa's labels are translated (column heads, captions, the usage line). What judges wrote
(reasons) and error messages are shown as they were made.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from importlib import resources

from ragqa.languages import known_languages, language_pack
from ragqa.schema import Language

__all__ = ["LABELS", "labels"]

_EN: Mapping[str, str] = json.loads(
    resources.files("ragqa.render").joinpath("templates/labels.json").read_text(encoding="utf-8")
)["en"]


def labels(language: Language) -> Mapping[str, str]:
    """The labels of ``language``: its pack's (:mod:`ragqa.languages`), English for any it leaves out."""
    pack = language_pack(language)
    return {**_EN, **pack.labels} if pack is not None and pack.labels else _EN


class _ByLanguage(Mapping[str, Mapping[str, str]]):
    """Every language's labels by code (``LABELS["ru"]``), read from the packs when asked."""

    def __getitem__(self, language: str) -> Mapping[str, str]:
        if language != "en" and language_pack(language) is None:
            raise KeyError(language)
        return labels(language)

    def __iter__(self) -> Iterator[str]:
        return iter(known_languages())

    def __len__(self) -> int:
        return len(known_languages())


LABELS: Mapping[str, Mapping[str, str]] = _ByLanguage()
"""Every label, per language (``en`` from ``templates/labels.json``, the others from their packs,
English where a pack has none); the keys are the same in each. Some are :meth:`str.format`
templates (``console_header``: ``{samples}``, ``{metrics}``, ``{judges}``)."""
