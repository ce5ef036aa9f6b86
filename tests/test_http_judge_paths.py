"""The judge's two ways through LangChain give the same answer, request and usage.

With no LangChain callback listening, :class:`~ragqa.judges.openai.OpenAIJudge` calls its
``ChatOpenAI``'s own generation step (no callback machinery: about 0.3 ms of client CPU less per
call); when tracing or a handler is configured it goes through ``ainvoke`` so that they see every
call. Both must be indistinguishable to ragqa: the validated output, the repair turn, the bytes
on the wire and the recorded usage.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from langchain_core.tracers.context import collect_runs
from pydantic import SecretStr

from ragqa.errors import JudgeHTTPError, JudgeOutputError
from ragqa.judges.openai import OpenAIJudge, _callbacks_configured
from ragqa.prompts.nli import NLI, NLIInput
from ragqa.settings import ChatOptions, Price, ResolvedChatModel, RetrySettings
from ragqa.testing import FakeOpenAIServer, ragqa_responder
from ragqa.usage import usage_scope

pytestmark = pytest.mark.usefixtures("reset_srv")

DATA = NLIInput(context="Ada Lovelace wrote programs in London.", statements=["Ada wrote programs.", "Ada flew."])


def judge(srv: FakeOpenAIServer, mode: str) -> OpenAIJudge:
    return OpenAIJudge(
        ResolvedChatModel(
            id="judge-m",
            model="m",
            base_url=srv.base_url,
            api_key=SecretStr("sk-paths-test-1234"),
            options=ChatOptions(timeout=timedelta(seconds=5), structured_output=mode, max_tokens=300),  # type: ignore[arg-type]
            retry=RetrySettings(max_attempts=1),
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
