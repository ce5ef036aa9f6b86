"""Every number a text-metric page shows in bold in its worked example is what the metric computes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ragqa import build_metric
from ragqa.metrics.base import MetricContext
from ragqa.schema import Sample
from ragqa.testing import ScriptedJudge

DOCS = Path(__file__).resolve().parents[2] / "docs" / "metrics"
FOX = "The quick brown fox jumps over the lazy dog"
TYPOS = ("recieve occassion accomodate", "receive occasion accommodate")
ORDER = "Order 12345 shipped on 3 May"

# (page, metric, options, response, reference, the bold number of the page)
EXAMPLES: list[tuple[str, str, dict[str, Any], str, str, str]] = [
    ("bleu_score", "bleu_score", {}, "The quick brown fox jumps over the dog", FOX, "0.7847"),
    ("bleu_score", "bleu_score", {"variant": "ragas"}, "The quick brown fox jumps over the dog", FOX, "0.7673"),
    ("bleu_score", "bleu_score", {"variant": "promptfoo"}, "The quick brown fox jumps over the dog", FOX, "0.7673"),
    ("rouge_score", "rouge_score", {}, "The quick fox jumps high and far", FOX, "0.5"),
    ("rouge_score", "rouge_score", {"rouge_type": "rouge2"}, "The quick fox jumps high and far", FOX, "0.2857"),
    ("chrf_score", "chrf_score", {}, *TYPOS, "0.6730"),
    ("chrf_score", "chrf_score", {"word_order": 2}, *TYPOS, "0.3365"),
    ("chrf_score", "chrf_score", {"variant": "ragas"}, *TYPOS, "0.6438"),
    ("chrf_score", "chrf_score", {"beta": 1.0}, "the quick", "the quick brown fox jumps", "0.4404"),
    ("chrf_score", "chrf_score", {"beta": 3.0}, "the quick", "the quick brown fox jumps", "0.3064"),
    ("non_llm_string_similarity", "non_llm_string_similarity", {}, "Martha", "marhta", "0.9611"),
    (
        "non_llm_string_similarity",
        "non_llm_string_similarity",
        {"distance_measure": "levenshtein"},
        "Martha",
        "marhta",
        "0.6667",
    ),
    ("non_llm_string_similarity", "non_llm_string_similarity", {"variant": "ragas"}, "Martha", "marhta", "0.5"),
    ("exact_match", "exact_match", {}, "Paris", "Paris.", "0"),
    ("exact_match", "exact_match", {}, "Paris", "Paris", "1"),
    ("string_present", "string_present", {}, "The capital is Paris.", "Paris", "1"),
    ("string_present", "string_present", {}, "The capital is PARIS.", "Paris", "0"),
    ("string_present", "string_present", {"case_sensitive": False}, "The capital is PARIS.", "Paris", "1"),
    ("string_match", "string_match", {"mode": "regex"}, ORDER, r"\b\d{5}\b", "1"),
    ("string_match", "string_match", {"negate": True}, ORDER, "cancelled", "1"),
    ("string_match", "string_match", {"mode": "starts_with"}, ORDER, "order", "0"),
    ("levenshtein_distance", "levenshtein_distance", {}, "kitten", "sitting", "3"),
]


@pytest.mark.parametrize(("page", "name", "options", "response", "reference", "shown"), EXAMPLES)
async def test_worked_example(
    page: str, name: str, options: dict[str, Any], response: str, reference: str, shown: str
) -> None:
    text = (DOCS / f"{page}.md").read_text("utf-8")
    assert f"**{shown}**" in text
    assert response in text.replace("\n", " ") and reference.replace("\\\\", "\\") in text.replace("\n", " ")
    score = await build_metric(name, options).score(
        Sample(id="doc", response=response, reference=reference), ScriptedJudge("j", {}), MetricContext()
    )
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    assert round(score.value, decimals) == pytest.approx(float(shown))


def test_every_bold_number_of_a_worked_example_is_checked() -> None:
    for page in {e[0] for e in EXAMPLES}:
        text = (DOCS / f"{page}.md").read_text("utf-8")
        section = text[text.index("## Worked example") :]
        bold = re.findall(r"\*\*([\d.]+)\*\*", section)
        checked = [e[5] for e in EXAMPLES if e[0] == page]
        assert sorted(set(bold)) == sorted(set(bold) & set(checked)), page
