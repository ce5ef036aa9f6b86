"""Responders for the fake server: how a scripted model answers ragqa's prompts.

- :func:`local_judge_responder` answers every ragqa prompt the way the offline local judge
  (:class:`~ragqa.judges.local.LocalJudge`) would; :func:`ragqa_responder` is the same with only
  the support threshold set (three thresholds make three judges that disagree).
- :func:`default_responder` is what unscripted models get: a schema-valid placeholder for
  wire-format tests, never a judgement.

A ragqa prompt is recognised by its **output schema title** (``NLIOutput``...; the request's
``response_format`` schema or tool parameters, else the schema written in the prompt text), and
its input is read from the prompt's data block (:func:`ragqa.prompts.base.read_data_blocks`). A
request the responder cannot answer (not a ragqa prompt and no ``fallback``, no data block, a
repair turn without the original prompt, an input key the prompt does not have, an input that
does not validate) raises :class:`~ragqa.testing.wire.ResponderError`: the server answers HTTP
400 naming the problem and records it. No responder here makes up an answer.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ragqa.errors import JudgeError
from ragqa.languages import known_languages
from ragqa.prompts import PROMPTS
from ragqa.prompts.base import DATA_CLOSE, DATA_OPEN, Prompt, system_rules
from ragqa.run.loop import run_sync
from ragqa.schema import Language
from ragqa.settings import LocalJudgeSettings
from ragqa.testing.schema_examples import example_from_schema
from ragqa.testing.wire import Answer, ChatRequest, Fault, Responder, ResponderError

__all__ = [
    "default_responder",
    "foreign_prompt_responder",
    "language_of",
    "local_judge_responder",
    "memoised",
    "ragqa_prompt_of",
    "ragqa_responder",
]

_BY_TITLE: Mapping[str, Prompt[Any, Any]] = {p.output_model.__name__: p for p in PROMPTS.values()}
_SCHEMA_TEXT: Mapping[str, Prompt[Any, Any]] = {
    json.dumps(p.output_schema, ensure_ascii=False): p for p in PROMPTS.values()
}


def default_responder(request: ChatRequest) -> dict[str, Any] | str:
    """A placeholder: a schema-valid instance, ``{"ok": true}`` in JSON mode, or the text ``ok``.

    Unscripted models answer with it, so wire-format tests get a parseable answer. It is not a
    judgement (every verdict is 1, every string ``"ok"``): script a model with
    :func:`ragqa_responder` or :func:`local_judge_responder` when scores matter.
    """
    schema = request.schema
    if schema is not None:
        value = example_from_schema(schema)
        return value if isinstance(value, dict) else {"value": value}
    if request.mode == "json_object":
        return {"ok": True}
    return "ok"


_SCHEMA_MARK = "JSON Schema:"
"""What precedes the JSON schema in a prompt that writes it in its text (RAGAS's ``PydanticPrompt``)."""


def foreign_prompt_responder(request: ChatRequest) -> dict[str, Any] | str:
    """A schema-valid placeholder for another library's prompt (RAGAS's, for side-by-side benchmarks).

    The schema is the request's (``json_schema`` or ``tools`` mode), else the first JSON object
    after ``JSON Schema:`` in the last user message (how RAGAS's ``PydanticPrompt`` writes it),
    else there is none and :func:`default_responder` answers. Like :func:`default_responder`, the
    answer is a placeholder (every array one item, every string ``"ok"``), never a judgement: use
    it to count and time another evaluator's requests, not to compare its scores.

    Returns:
        A JSON object valid against the schema found, or :func:`default_responder`'s answer.
    """
    if request.schema is None:
        text = request.prompt
        at = text.find(_SCHEMA_MARK)
        if at >= 0:
            start = text.find("{", at)
            try:
                schema, _ = json.JSONDecoder().raw_decode(text, start)
            except ValueError:
                schema = None
            if isinstance(schema, dict):
                value = example_from_schema(schema)
                return value if isinstance(value, dict) else {"value": value}
    return default_responder(request)


def ragqa_prompt_of(request: ChatRequest) -> Prompt[Any, Any] | None:
    """The ragqa prompt a request asks, by its output schema title, or ``None`` when it is none.

    The title comes from the request's schema (``json_schema`` and ``tools`` modes); in the modes
    that send no schema (``json_object``, ``text``) the prompt is the one whose schema is written
    in the prompt text.
    """
    schema = request.schema
    if schema is not None:
        return _BY_TITLE.get(str(schema.get("title")))
    text = request.prompt_text
    return next((p for rendered, p in _SCHEMA_TEXT.items() if rendered in text), None)


def language_of(request: ChatRequest) -> Language:
    """The language of a ragqa prompt: the one whose judge rules are the system message (else ``en``)."""
    return next((lang for lang in known_languages() if request.system == system_rules(lang)), "en")


def _input_of(request: ChatRequest, prompt: Prompt[Any, Any]) -> Any:
    """The prompt's validated input model, read from the request's data block."""
    where = f"model {request.model!r}, prompt {prompt.name!r}"
    if not request.prompt_text:
        turn = "a repair turn without the original prompt" if request.is_repair else "a request"
        raise ResponderError(f"{where}: {turn} holds no data block ({DATA_OPEN} ... {DATA_CLOSE}) to answer from")
    data = request.input
    if data is None:
        raise ResponderError(f"{where}: the last data block is not a JSON object")
    known = set(prompt.input_model.model_fields)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ResponderError(
            f"{where}: unknown input key(s) {', '.join(map(repr, unknown))}; "
            f"{prompt.input_model.__name__} has {', '.join(sorted(known))}"
        )
    try:
        return prompt.input_model.model_validate(data)
    except ValidationError as exc:
        raise ResponderError(f"{where}: the input does not fit {prompt.input_model.__name__}: {exc}") from exc


def local_judge_responder(
    settings: LocalJudgeSettings | None = None, *, fallback: Responder | None = None
) -> Responder:
    """A responder that answers every ragqa prompt the way the offline local judge would.

    The prompt is recognised by :func:`ragqa_prompt_of`, its input read from the data block
    (also in a repair turn: the original prompt is still in the conversation) and answered by a
    :class:`~ragqa.judges.local.LocalJudge` in the prompt's language (:func:`language_of`). The
    output goes back as JSON, so graded support is lost and the client sees binary verdicts as
    from an LLM. Use it to drive every metric end to end over real HTTP.

    Args:
        settings: the local judge's settings (default: its defaults, threshold 0.5).
        fallback: responder for requests that are not ragqa prompts; default: none, and such a
            request raises :class:`~ragqa.testing.wire.ResponderError`.

    Returns:
        A responder for :meth:`~ragqa.testing.app.FakeOpenAIServer.script`; it raises
        :class:`~ragqa.testing.wire.ResponderError` for a request it cannot answer (see the
        module docstring) and when the local judge fails.
    """
    from ragqa.judges.local import LocalJudge  # the local judge's modules load only when used

    judge = LocalJudge("fake-local", settings)

    def respond(request: ChatRequest) -> Answer:
        prompt = ragqa_prompt_of(request)
        if prompt is None:
            if fallback is not None:
                return fallback(request)
            title = (request.schema or {}).get("title")
            raise ResponderError(
                f"model {request.model!r}: not a ragqa prompt (schema title {title!r}); "
                f"known titles: {', '.join(sorted(_BY_TITLE))}"
            )
        data = _input_of(request, prompt)
        language = language_of(request)
        # The server's loop runs in this thread: the local judge answers on ragqa's own loop thread.
        try:
            out = run_sync(judge.ask(prompt, data, language=language))
        except JudgeError as exc:
            raise ResponderError(f"model {request.model!r}, prompt {prompt.name!r}: {exc}") from exc
        # Send what an LLM may say: the prompt's output model, without the local judge's graded support.
        answer: dict[str, Any] = prompt.output_model.model_validate(out.model_dump(mode="json")).model_dump(mode="json")
        return answer

    return respond


def ragqa_responder(*, support_threshold: float = 0.5, fallback: Responder | None = None) -> Responder:
    """:func:`local_judge_responder` with the local judge's ``support_threshold`` set.

    Every ragqa prompt gets the local judge's answer; a statement (or reference sentence, or
    context) counts as supported when its graded support is at least ``support_threshold``.
    Keep thresholds off the supports your test data produce: a support printed as 0.90 may be
    0.8999999999999999 and then falls below a threshold of 0.9.
    Responders with different thresholds make judges that disagree on borderline statements.

    Args:
        support_threshold: graded support in [0, 1] needed for verdict 1 (default 0.5, the local
            judge's own default, so ``ragqa_responder()`` answers as ``local_judge_responder()``).
        fallback: responder for requests that are not ragqa prompts (default: a loud
            :class:`~ragqa.testing.wire.ResponderError`).

    Returns:
        A responder for :meth:`~ragqa.testing.app.FakeOpenAIServer.script`.
    """
    return local_judge_responder(LocalJudgeSettings(support_threshold=support_threshold), fallback=fallback)


def memoised(responder: Responder, *, by_model: bool = False, max_entries: int = 100_000) -> Responder:
    """``responder`` with its answers remembered by request content: the same question gets the same answer, once made.

    For deterministic responders only (:func:`ragqa_responder`, :func:`local_judge_responder`,
    :func:`foreign_prompt_responder`, :func:`default_responder`): they answer from the request's
    messages and requested schema alone, so an answer asked again is the answer they would give
    again. A benchmark that asks every judge of a panel the same prompts then runs the local
    judge's rules once per distinct prompt instead of once per request, which keeps the fake
    server's CPU off the client's on a shared machine (a real provider's CPU is not the client's).

    The key is the request's ``messages``, ``response_format`` and ``tools`` (and its ``model``
    with ``by_model``) as canonical JSON. Only answers (a dict or a string) are remembered: a
    :class:`~ragqa.testing.wire.Fault` or a :class:`~ragqa.testing.wire.ResponderError` is
    asked of ``responder`` every time. A dict answer is remembered as the JSON text the server
    sends for it (``json.dumps(answer, ensure_ascii=False)``), so the reply's bytes and token
    counts are the ones the plain responder gets. Thread-safe; the oldest answers are dropped
    past ``max_entries``.

    Args:
        responder: the deterministic responder to remember.
        by_model: key on the model too (for a responder that answers models differently).
        max_entries: the most answers kept (>= 1).

    Returns:
        A responder that answers exactly as ``responder`` does.

    Raises:
        ValueError: ``max_entries`` below 1.
    """
    if max_entries < 1:
        raise ValueError(f"max_entries must be >= 1, got {max_entries}")
    kept: OrderedDict[str, str] = OrderedDict()
    lock = threading.Lock()

    def respond(request: ChatRequest) -> Answer:
        body = request.body
        parts = [request.messages, body.get("response_format"), body.get("tools"), request.model if by_model else None]
        key = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
        with lock:
            hit = kept.get(key)
            if hit is not None:
                kept.move_to_end(key)
        if hit is None:
            answer = responder(request)
            if isinstance(answer, Fault):
                return answer
            hit = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
            with lock:
                kept[key] = hit
                if len(kept) > max_entries:
                    kept.popitem(last=False)
        return hit

    return respond
