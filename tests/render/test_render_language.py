"""``--language ru``: the report's own words are Russian (m14); judges' reasons and error messages stay as written."""

from __future__ import annotations

import re

from _reports import quorum_run, readme_run

from ragqa.render import report_to_text
from ragqa.render.html import report_to_html
from ragqa.render.labels import LABELS
from ragqa.render.registry import RenderOptions
from ragqa.report import CacheStats

ENGLISH_WORDS = (
    "judge",
    "mean",
    "scored",
    "failed",
    "spread",
    "tokens",
    "cost",
    "calls",
    "aggregate",
    "agreement",
    "alpha",
    "spearman",
    "contested",
    "higher is better",
    "lower is better",
    "wall time",
    "sample(s)",
    "cache",
    "call plan",
    "quorum",
    "excluded",
)


def _english_left(text: str, allowed: tuple[str, ...] = ()) -> list[str]:
    """English label words in ``text`` once ids, metric keys and strategy names are taken out."""
    for keep in ("faithfulness", "hallucination", "local-strict", "local-lenient", "judge-a", "judge-b", *allowed):
        text = text.replace(keep, "")
    text = re.sub(r"\((mean|median|min|max|majority)\)", "", text)  # the strategy: a setting's value
    return [w for w in ENGLISH_WORDS if re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text)]


async def test_the_russian_console_report_has_no_english_label() -> None:
    report = (await readme_run()).model_copy(update={"cache": CacheStats(hits=3, misses=1)})
    text = report_to_text(report, width=200, language="ru")
    assert _english_left(text) == []
    for russian in (
        "примеров: 3 x метрик: 2 x судей: 2",
        "↑ чем выше, тем лучше",
        "↓ чем ниже, тем лучше",
        "судья",
        "среднее",
        "оценено",
        "агрегат (mean)",
        "согласие: альфа",
        "самый спорный s1",
        "вызовы 6 · токены 7,500 (промпт 6,000, ответ 1,500) · стоимость 0.0750",
        "кэш: попаданий 3, промахов 1",
        "время 3.5 с · план вызовов batched",
    ):
        assert russian in text, russian
    english = report_to_text(report, width=200)
    assert "3 sample(s) x 2 metric(s) x 2 judge(s)" in english and "cache: 3 hit(s), 1 miss(es)" in english


async def test_captions_and_failures_are_russian_but_the_causes_stay_as_raised() -> None:
    report = await quorum_run()
    text = report_to_text(report, width=200, language="ru")
    assert "ни один судья не оценил примеров: 1 (все судьи со сбоем); агрегата нет" in text
    assert "кворум 2: примеров ниже кворума, без агрегата: 1" in text
    assert "сбои судей (10 в 5 вызовах), исключены из агрегата" in text
    assert re.search(r"судья\s+метрика\s+пример\s+шаг\s+причина", text)
    assert "JudgeTimeout: no answer in 30 s" in text  # the error's own message, untranslated
    assert _english_left(text, allowed=("JudgeTimeout: no answer in 30 s",)) == []


def test_every_label_exists_in_both_languages_with_the_same_placeholders() -> None:
    assert set(LABELS["en"]) == set(LABELS["ru"])
    for key, english in LABELS["en"].items():
        fields = sorted(re.findall(r"\{(\w+)\}", english))
        assert fields == sorted(re.findall(r"\{(\w+)\}", LABELS["ru"][key])), key


async def test_the_russian_html_report_names_the_statement_columns_in_russian() -> None:
    report = await readme_run()
    html = report_to_html(report, RenderOptions(language="ru"))
    assert '<th class="text">утверждение</th><th class="number">вердикты</th>' in html
    assert '<th class="text">statement</th><th class="number">verdicts</th>' in report_to_html(report)
