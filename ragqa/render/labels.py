"""The report's own words in each language: ``templates/labels.json``, shared by the HTML and console views.

Only ragqa's labels are translated (column heads, captions, the usage line). What judges wrote
(reasons) and error messages are shown as they were made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources

from ragqa.schema import Language

__all__ = ["LABELS", "labels"]

LABELS: Mapping[Language, Mapping[str, str]] = json.loads(
    resources.files("ragqa.render").joinpath("templates/labels.json").read_text(encoding="utf-8")
)
"""Every label, per language (``en``, ``ru``); the keys are the same in each. Some are
:meth:`str.format` templates (``console_header``: ``{samples}``, ``{metrics}``, ``{judges}``)."""


def labels(language: Language) -> Mapping[str, str]:
    """The labels of ``language`` (English for a language without its own)."""
    return LABELS.get(language, LABELS["en"])
