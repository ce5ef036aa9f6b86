"""The judge's two ways through LangChain give the same answer, request and usage.

With no LangChain callback listening, :class:`~ragqa.judges.openai.OpenAIJudge` calls its
``ChatOpenAI``'s own generation step (no callback machinery: about 0.3 ms of client CPU less per
call); when tracing or a handler is configured it goes through ``ainvoke`` so that they see every
call. Both must be indistinguishable to ragqa: the validated output, the repair turn, the bytes
on the wire and the recorded usage.
"""

from __future__ import annotations

import functools
import json
import typing
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any

import openai
import pytest
import typing_extensions
from factories import chat_model
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult
from langchain_core.tracers.context import collect_runs
from langchain_openai import ChatOpenAI
from openai._constants import RAW_RESPONSE_HEADER
from openai._utils import async_maybe_transform
from openai._utils._transform import PropertyInfo
from openai.types.chat import completion_create_params

from ragqa.errors import JudgeHTTPError, JudgeOutputError
from ragqa.judges._chat_openai import BODY_KEYS, OPTION_KEYS, _JudgeChatOpenAI, wire_request
from ragqa.judges._http import classify_error, response_text
from ragqa.judges.openai import OpenAIJudge, _callbacks_configured
from ragqa.prompts.nli import NLI, NLIInput
from ragqa.settings import ChatOptions, Price
from ragqa.testing import FakeOpenAIServer, ragqa_responder
from ragqa.testing.wire import Fault
from ragqa.usage import usage_scope

pytestmark = pytest.mark.usefixtures("reset_srv")

DATA = NLIInput(context="Ada Lovelace wrote programs in London.", statements=["Ada wrote programs.", "Ada flew."])


def judge(srv: FakeOpenAIServer, mode: str) -> OpenAIJudge:
    return OpenAIJudge(
        chat_model(
            srv.base_url,
            id="judge-m",
            api_key="sk-paths-test-1234",
            options=ChatOptions(timeout=timedelta(seconds=5), structured_output=mode, max_tokens=300),  # type: ignore[arg-type]
            price=Price(prompt=2.0, completion=10.0),
        )
    )


async def run_once(srv: FakeOpenAIServer, mode: str) -> tuple[Any, list[dict[str, Any]], tuple[Any, ...]]:
    """One ask: (validated output, request bodies on the wire, usage totals)."""
    srv.clear_requests()
    j = judge(srv, mode)
    try:
        with usage_scope() as meter:
            out = await j.ask(NLI, DATA)
    finally:
        await j.aclose()
    u = meter.total
    bodies = [r.body for r in srv.requests]
    return out, bodies, (u.calls, u.prompt_tokens, u.completion_tokens, u.cost)


def test_no_listener_by_default_and_one_inside_a_run_collector() -> None:
    assert not _callbacks_configured()
    with collect_runs():
        assert _callbacks_configured()


@pytest.mark.parametrize("mode", ["json_schema", "json_mode", "function_calling", "prompt"])
async def test_both_paths_give_the_same_output_request_and_usage(srv: FakeOpenAIServer, mode: str) -> None:
    srv.script("m", ragqa_responder())
    quiet = await run_once(srv, mode)
    with collect_runs() as collector:
        traced = await run_once(srv, mode)
    assert [run.name for run in collector.traced_runs] == ["_JudgeChatOpenAI"]  # the callbacks saw the call
    assert quiet == traced
    out, bodies, usage = quiet
    assert [v.verdict for v in out.verdicts] == [1, 0]
    assert len(bodies) == 1 and usage[0] == 1


async def test_both_paths_repair_the_same_way(srv: FakeOpenAIServer) -> None:
    def answers() -> Any:
        script = iter(['{"verdict": "wrong key"}', '{"verdicts": []}'])
        return lambda request: next(script)

    srv.script("m", answers())
    quiet = await run_once(srv, "json_schema")
    srv.script("m", answers())
    with collect_runs() as collector:
        traced = await run_once(srv, "json_schema")
    assert len(collector.traced_runs) == 2
    assert quiet == traced
    assert [len(b["messages"]) for b in quiet[1]] == [2, 4] and quiet[2][0] == 2


async def test_both_paths_fail_with_the_same_typed_errors(srv: FakeOpenAIServer) -> None:
    faults = [(lambda: srv.malformed("m"), JudgeOutputError), (lambda: srv.fail("m", status=400), JudgeHTTPError)]
    for inject, error in faults:
        messages = []
        for traced in (False, True):
            inject()
            with pytest.raises(error) as info:
                if traced:
                    with collect_runs():
                        await run_once(srv, "json_schema")
                else:
                    await run_once(srv, "json_schema")
            messages.append((str(info.value).split(":")[0], getattr(info.value, "raw", None)))
        assert messages[0] == messages[1]


def test_the_fast_path_is_the_chat_model_the_adapter_builds(srv: FakeOpenAIServer) -> None:
    from langchain_openai import ChatOpenAI

    j = judge(srv, "json_schema")
    model = j._make_model(None)
    assert isinstance(model, ChatOpenAI)
    assert model.max_retries == 0 and model.extra_body == {"max_tokens": 300}


# -- the judge's Chat Completions step against ChatOpenAI's own ----------------------------------
#
# ``_JudgeChatOpenAI._agenerate`` posts LangChain's payload with the SDK client LangChain built,
# skipping only the SDK's request transform. Against the step it replaces
# (``ChatOpenAI._agenerate``, which calls ``chat.completions.with_raw_response.create``), it must
# send the same request and return the same result or raise the same error.

MODES = ["json_schema", "json_mode", "function_calling", "prompt"]

_CONTENT = '{"verdicts": [{"statement": "Ada wrote programs.", "reason": "said", "verdict": 1}]}'
COMPLETIONS = {
    "content": {
        "id": "chatcmpl-fixed",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "system_fingerprint": "fp_1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": _CONTENT, "refusal": None},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": 120,
            "completion_tokens": 30,
            "total_tokens": 150,
            "prompt_tokens_details": {"cached_tokens": 64},
        },
    },
    "tool_call": {
        "id": "chatcmpl-fixed-tool",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "NLIOutput", "arguments": _CONTENT}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
    },
}


def lc_messages(repair: bool) -> list[BaseMessage]:
    messages: list[BaseMessage] = [
        SystemMessage(content=m.content) if m.role == "system" else HumanMessage(content=m.content)
        for m in NLI.messages(DATA)
    ]
    if repair:
        messages += [AIMessage(content='{"verdict": "wrong key"}'), HumanMessage(content="Answer again.")]
    return messages


Step = Callable[..., Awaitable[ChatResult]]


async def both_steps(
    srv: FakeOpenAIServer, mode: str, messages: list[BaseMessage], answer: Fault
) -> list[tuple[Any, Any, dict[str, str]]]:
    """(result or error, request body, request headers) of the judge's step, then of ChatOpenAI's."""
    j = judge(srv, mode)
    http = openai.DefaultAioHttpClient()
    llm = j._make_model(http)
    assert isinstance(llm, _JudgeChatOpenAI)
    steps: list[Step] = [llm._agenerate, functools.partial(ChatOpenAI._agenerate, llm)]
    seen = []
    try:
        for step in steps:
            srv.clear_requests()
            srv.inject("m", answer)
            try:
                outcome: Any = await step(messages, **j._request_kwargs(NLI))
            except Exception as exc:  # compared below, whatever it is
                outcome = exc
            (request,) = srv.requests
            seen.append((outcome, request.body, request.headers))
    finally:
        await http.aclose()
    return seen


def error_view(exc: BaseException) -> tuple[Any, ...]:
    """What ragqa reads from an SDK error: type, text, status, headers, body and its classification."""
    response = getattr(exc, "response", None)
    # the Date header is the server's clock: two requests a second apart differ in it and in nothing else
    headers = {k: v for k, v in response.headers.items() if k.lower() != "date"} if response is not None else None
    return (type(exc), str(exc), getattr(exc, "status_code", None), headers, response_text(exc), classify_error(exc))


@pytest.mark.parametrize("repair", [False, True])
@pytest.mark.parametrize("mode", MODES)
async def test_the_judge_step_sends_and_returns_what_chatopenai_does(
    srv: FakeOpenAIServer, mode: str, repair: bool
) -> None:
    completion = COMPLETIONS["tool_call" if mode == "function_calling" else "content"]
    fast, stock = await both_steps(srv, mode, lc_messages(repair), Fault(status=200, body=json.dumps(completion)))
    assert isinstance(fast[0], ChatResult) and isinstance(stock[0], ChatResult)
    assert fast[0] == stock[0]  # message (content, tool calls, usage, metadata) and llm_output
    assert fast[1] == stock[1]  # the JSON body
    assert fast[2] == stock[2]  # every header: auth, content type and length, SDK headers
    message = fast[0].generations[0].message
    assert isinstance(message, AIMessage) and message.usage_metadata is not None
    assert message.usage_metadata["input_tokens"] == 120 and message.usage_metadata["output_tokens"] == 30
    assert len(fast[1]["messages"]) == (4 if repair else 2)


@pytest.mark.parametrize(
    "answer",
    [
        Fault(status=500),
        Fault(status=503, retry_after=2),
        Fault(status=429, retry_after_ms=1500),
        Fault(status=400),
        Fault(status=401),
        Fault(status=200, body='{"id": "chatcmpl-x", "choices": [{"mess'),  # truncated JSON
        Fault(status=200, body="<html>gateway</html>"),  # not JSON at all
        Fault(status=200, body='{"id": "chatcmpl-x", "object": "chat.completion"}'),  # no choices
        Fault(status=200, body='{"error": {"message": "upstream failed"}}'),
    ],
    ids=["500", "503-retry-after", "429-retry-after-ms", "400", "401", "truncated", "html", "no-choices", "error"],
)
async def test_the_judge_step_fails_as_chatopenai_does(srv: FakeOpenAIServer, answer: Fault) -> None:
    fast, stock = await both_steps(srv, "json_schema", lc_messages(False), answer)
    assert isinstance(fast[0], Exception) and isinstance(stock[0], Exception)
    assert error_view(fast[0]) == error_view(stock[0])
    assert fast[1] == stock[1] and fast[2] == stock[2]


@pytest.mark.parametrize("repair", [False, True])
@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_transform_is_the_identity_on_every_body_the_judge_sends(
    srv: FakeOpenAIServer, mode: str, repair: bool
) -> None:
    j = judge(srv, mode)
    llm = j._make_model(None)
    payload = llm._get_request_payload(lc_messages(repair), stop=["\n\n"], **j._request_kwargs(NLI))
    wire = wire_request(payload)
    assert wire is not None
    body, options = wire
    as_create_sends = {**dict.fromkeys(BODY_KEYS, openai.omit), **body}  # every keyword create() takes
    params = completion_create_params.CompletionCreateParamsNonStreaming
    transformed = await async_maybe_transform(as_create_sends, params)
    assert transformed == body
    assert options["extra_json"] == payload["extra_body"] and options["headers"] == {RAW_RESPONSE_HEADER: "true"}


def _property_infos(tp: Any, seen: set[int]) -> Iterator[PropertyInfo]:
    """Every ``PropertyInfo`` annotation reachable from the type ``tp`` (TypedDicts, unions, containers)."""
    if id(tp) in seen:
        return
    seen.add(id(tp))
    if typing.get_origin(tp) is typing.Annotated:
        inner, *metadata = typing.get_args(tp)
        yield from (m for m in metadata if isinstance(m, PropertyInfo))
        yield from _property_infos(inner, seen)
        return
    if typing.is_typeddict(tp) or typing_extensions.is_typeddict(tp):
        for hint in typing.get_type_hints(tp, include_extras=True).values():
            yield from _property_infos(hint, seen)
        return
    for arg in typing.get_args(tp):
        yield from _property_infos(arg, seen)


def test_chat_parameters_have_nothing_for_the_transform_to_rename_or_format() -> None:
    """The reason the transform may be skipped; an SDK that adds an alias or a format fails here."""
    infos = list(_property_infos(completion_create_params.CompletionCreateParamsNonStreaming, set()))
    assert [(i.alias, i.format) for i in infos if i.alias is not None or i.format is not None] == []
    assert {"messages", "model", "temperature", "tools", "tool_choice", "stream"} <= BODY_KEYS
    assert not BODY_KEYS & OPTION_KEYS


@pytest.mark.parametrize(
    "payload",
    [
        {"model": "m", "messages": [], "response_format": {"type": "json_object"}},  # LangChain's parse branch
        {"model": "m", "messages": [], "stream": True},
        {"model": "m", "messages": [], "not_a_create_keyword": 1},  # create() would refuse it
        {"messages": []},
    ],
    ids=["response_format", "stream", "unknown-key", "no-model"],
)
def test_payloads_the_sdk_must_see_go_through_create(payload: dict[str, Any]) -> None:
    assert wire_request(payload) is None
