"""Builders that many of ragqa's test modules need: judge answers, chat-model settings, sample records.

One copy here instead of one per test module. A module that needs its own defaults (an API key
that a test looks for, a client timeout) wraps these in a line or two and says why.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import SecretStr

from ragqa.judges.openai import OpenAIJudge
from ragqa.prompts.base import Prompt
from ragqa.schema import Aggregate, JudgeOutcome, MetricScore, PanelResult, RepeatOutcome
from ragqa.settings import ChatOptions, ResolvedChatModel, RetrySettings

__all__ = [
    "CALL_PLAN_METRICS",
    "SUPER_BOWL_STATEMENTS",
    "application_yaml",
    "benchmark_module",
    "chat_model",
    "faithfulness_answers",
    "http_judge",
    "local_profile_hashing",
    "nli_answer",
    "office_jsonl",
    "office_records",
    "result_of",
]


CALL_PLAN_METRICS: tuple[str, ...] = (
    "faithfulness",
    "noise_sensitivity",
    "context_precision",
    "context_recall",
    "context_entity_recall",
    "response_relevancy",
)
"""The six metrics whose judge calls ``ragqa.call-plan`` changes (``batched`` or ``ragas``)."""


def nli_answer(*verdicts: float, statements: Sequence[str] | None = None, reason: str = "r") -> dict[str, Any]:
    """A judge's answer to the NLI prompt: one verdict per statement (``s0``, ``s1``, ... unless given).

    Raises:
        ValueError: when ``statements`` and ``verdicts`` differ in length.
    """
    names = [f"s{i}" for i in range(len(verdicts))] if statements is None else list(statements)
    return {
        "verdicts": [{"statement": s, "reason": reason, "verdict": v} for s, v in zip(names, verdicts, strict=True)]
    }


SUPER_BOWL_STATEMENTS = ["The first Super Bowl was held on January 15, 1967.", "It was held in Florida."]
"""The two statements :func:`faithfulness_answers` decomposes a response into unless told others."""


def faithfulness_answers(*verdicts: int, statements: list[str] | None = None) -> Any:
    """Answers that decompose into ``statements`` and give ``verdicts`` (garbage when none).

    The answer function of a ``FunctionJudge``: ``{"statements": ...}`` to the statements prompt,
    one verdict per statement (reason "in context" or "not in context") to the NLI prompt, or text
    that is not JSON when no verdict is given. ``statements`` defaults to :data:`SUPER_BOWL_STATEMENTS`.
    """
    stmts = SUPER_BOWL_STATEMENTS if statements is None else statements

    def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
        if prompt.name == "statements":
            return {"statements": stmts}
        if not verdicts:
            return "this is not JSON"
        return {
            "verdicts": [
                {"statement": s, "reason": "in context" if v else "not in context", "verdict": v}
                for s, v in zip(stmts, verdicts, strict=True)
            ]
        }

    return answer


def chat_model(
    base_url: str,
    name: str = "m",
    *,
    id: str | None = None,
    api_key: str = "sk-test-0123456789",
    timeout_s: float | None = 600.0,
    attempts: int = 1,
    retry: RetrySettings | None = None,
    **fields: Any,
) -> ResolvedChatModel:
    """An OpenAI-compatible judge's resolved settings, as ``application.yaml`` would give them.

    Args:
        base_url: the server (the fake server's ``base_url`` in tests; Spring style, no ``/v1``).
        name: the model name sent to the server; also the judge id unless ``id`` is given.
        api_key: the key sent as the bearer token.
        timeout_s: the client timeout in seconds (600 by default: never reached however loaded the
            machine; tests count requests instead); ``None`` leaves ``ChatOptions``' default.
        attempts: ``retry.max_attempts`` when ``retry`` is not given (1: no retry).
        fields: any other field of :class:`ResolvedChatModel` (``provider_key``, ``limits``,
            ``options``, which replaces the timeout).
    """
    if "options" not in fields and timeout_s is not None:
        fields["options"] = ChatOptions(timeout=timedelta(seconds=timeout_s))
    return ResolvedChatModel(
        id=name if id is None else id,
        model=name,
        base_url=base_url,
        api_key=SecretStr(api_key),
        retry=RetrySettings(max_attempts=attempts) if retry is None else retry,
        **fields,
    )


def http_judge(
    base_url: str,
    name: str = "m",
    *,
    id: str | None = None,
    api_key: str = "sk-test-0123456789",
    timeout_s: float = 600.0,
    **options: Any,
) -> OpenAIJudge:
    """An OpenAI-compatible judge (no retry) at ``base_url``: :func:`chat_model` wrapped in :class:`OpenAIJudge`.

    Args:
        base_url: the server (the fake server's ``base_url``).
        name: the model name sent to the server; also the judge id unless ``id`` is given.
        api_key: the key sent as the bearer token.
        timeout_s: the client timeout in seconds (never reached in tests; they count requests).
        options: any other field of :class:`ChatOptions` (``temperature``, ``structured_output``,
            ``max_tokens``); ``price`` and the other fields of the settings go through :func:`chat_model`.
    """
    return OpenAIJudge(
        chat_model(
            base_url, name, id=id, api_key=api_key, options=ChatOptions(timeout=timedelta(seconds=timeout_s), **options)
        )
    )


def office_records(n: int, *, start: int = 1, moon_every: int = 3, reference: bool = False) -> list[dict[str, Any]]:
    """``n`` faithfulness samples ``s01``, ``s02``, ...; every ``moon_every``-th response is not supported.

    Sample ``i``'s response is "The office opens at nine. Office i has a kitchen." (supported by its
    one context), or "The office is on the moon. ..." when ``i % moon_every == 0``.
    ``reference`` adds a reference answer for the metrics that need one.
    """
    records = []
    for i in range(start, start + n):
        supported = "The office opens at nine." if i % moon_every else "The office is on the moon."
        record: dict[str, Any] = {
            "id": f"s{i:02d}",
            "user_input": f"When does office {i} open?",
            "response": f"{supported} Office {i} has a kitchen.",
            "retrieved_contexts": [f"The office opens at nine. Office {i} has a kitchen and a garden."],
        }
        if reference:
            record["reference"] = f"Office {i} opens at nine and has a kitchen."
        records.append(record)
    return records


def office_jsonl(n: int, **options: Any) -> str:
    """:func:`office_records` as the text of a JSONL dataset file (one record a line)."""
    return "".join(json.dumps(record) + "\n" for record in office_records(n, **options))


def result_of(*judge_values: list[float], direction: str = "higher", sample: str = "s") -> PanelResult:
    """A faithfulness result whose judges ``j0, j1, ...`` have these repeat values (one value: no repeats).

    Each judge's score is the mean of its repeats; the aggregate is the mean of the judges.
    """
    outcomes = []
    for i, values in enumerate(judge_values):
        reduced = math.fsum(values) / len(values)
        repeats = (
            [RepeatOutcome(index=r, score=MetricScore(value=v)) for r, v in enumerate(values)]
            if len(values) > 1
            else []
        )
        outcomes.append(JudgeOutcome(judge_id=f"j{i}", score=MetricScore(value=reduced), repeats=repeats))
    means = [o.score.value for o in outcomes if o.score is not None]
    agg = Aggregate(
        value=math.fsum(means) / len(means),
        strategy="mean",
        spread=max(means) - min(means),
        n_ok=len(means),
        n_nan=0,
        n_failed=0,
        quorum=1,
        quorum_met=True,
    )
    return PanelResult(sample_id=sample, metric="faithfulness", direction=direction, judges=outcomes, aggregate=agg)  # type: ignore[arg-type]


HTTP_PANEL_YAML = """
spring:
  ai:
    retry: {max-attempts: 2, backoff: {initial-interval: 10ms, max-interval: 50ms, multiplier: 2}}
    openai: {base-url: "${FAKE_URL}", api-key: "${FAKE_API_KEY}"}
    chat-models:
      default-options: {temperature: 0.0, timeout: 10s}
      list:
        - {id: judge-a}
        - {id: judge-b, options: {structured-output: function_calling}}
    embedding-models:
      list:
        - {id: embed-small, options: {dimensions: 64}}
"""
"""``application.yaml`` of two HTTP judges (one on function calling) and an embedder on the fake server.

Set ``FAKE_URL`` (the server's ``base_url``) and ``FAKE_API_KEY`` in the environment of the run."""


CASCADE_PANEL_YAML = """
spring:
  ai:
    chat-models:
      list:
        - {id: cheap-a, provider: local, local: {support-threshold: 0.6}}
        - {id: cheap-b, provider: local, local: {support-threshold: 0.4, number-check: false}}
        - {id: dear, provider: local, local: {support-threshold: 0.5}}
ragqa:
  cache: {enabled: false}
  thresholds: {faithfulness: 0.7}
  jury:
    cascade: {enabled: true, tier-2: [dear], spread: 0.2, margin: 0.05, split: true}
"""
"""``application.yaml`` of a cascade of three local judges: tier 1 ``cheap-a``, ``cheap-b``; tier 2 ``dear``.

Faithfulness's threshold 0.7; the rule spread 0.2, margin 0.05, split on; no cache."""


def benchmark_module(root: Path, name: str) -> ModuleType:
    """Import ``benchmarks/<name>.py`` of the repository at ``root`` (a sibling module of the benchmarks)."""
    folder = str(root / "benchmarks")
    sys.path.insert(0, folder)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(folder)


def application_yaml(
    judges: Sequence[str],
    *,
    base_url: str = "${FAKE_URL}",
    api_key: str,
    timeout: str = "10m",
    backoff: bool = True,
    ragqa: Sequence[str] = (),
) -> str:
    """An ``application.yaml`` (block style) of ``judges`` on one OpenAI-compatible server, scoring faithfulness.

    Retry is one attempt (with a 10 ms backoff when ``backoff``); no embedding models. ``ragqa`` adds
    lines under ``ragqa:`` after ``metrics``, e.g. ``"default-limits: {rps: 20, max-in-flight: 16}"``.
    Each judge is one line ``- {id: NAME}``, so a test may ``str.replace`` it to add options.
    """
    lines = ["", "spring:", "  ai:", "    retry:", "      max-attempts: 1"]
    if backoff:
        lines.append("      backoff: {initial-interval: 10ms, max-interval: 10ms, multiplier: 1}")
    lines += ["    openai:", f"      base-url: {base_url}", f"      api-key: {api_key}", "    chat-models:"]
    lines += [f"      default-options: {{temperature: 0.0, timeout: {timeout}}}", "      list:"]
    lines += [f"        - {{id: {judge}}}" for judge in judges]
    lines += ["    embedding-models:", "      list: []", "ragqa:", "  metrics: [faithfulness]"]
    lines += [f"  {line}" for line in ragqa]
    return "\n".join(lines) + "\n"


LOCAL_PROFILE = Path(__file__).resolve().parents[1] / "ragqa" / "settings" / "profiles" / "application-local.yaml"
"""The ``local`` profile built into ragqa: two local judges, one local embedder (MiniLM when installed)."""


def local_profile_hashing(folder: Path, application: Path | None = None) -> Path:
    """Settings in ``folder`` whose ``local`` profile is the built-in one, embedding with the hashing fallback.

    The judges are the built-in profile's; only the embedder's ``method: auto`` becomes ``hashing``,
    the path a machine without the ``embeddings`` extra takes, so a test gets those scores without
    paying for MiniLM's start (torch: several CPU seconds). ``application`` is copied as the base
    ``application.yaml`` (default: an empty one). Returns the ``application.yaml`` to pass as ``config``.
    """
    profile = LOCAL_PROFILE.read_text(encoding="utf-8")
    assert profile.count("method: auto") == 1, "the built-in local profile's embedder changed: update this helper"
    (folder / "application-local.yaml").write_text(profile.replace("method: auto", "method: hashing"), encoding="utf-8")
    config = folder / "application.yaml"
    config.write_text(application.read_text(encoding="utf-8") if application else "spring: {}\n", encoding="utf-8")
    return config
