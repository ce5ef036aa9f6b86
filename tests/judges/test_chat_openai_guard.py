"""The judge's fast path checks the installed SDK once per body shape: a transform that would change a
body sends that shape through ``create`` instead, so a newer openai release cannot change a request."""

from __future__ import annotations

from typing import Any

import pytest

from ragqa.judges import _chat_openai


@pytest.fixture(autouse=True)
def _fresh_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_chat_openai, "_VERIFIED", {})


async def test_each_body_shape_is_checked_once_against_the_real_transform(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    real = _chat_openai.async_maybe_transform

    async def counting(body: Any, params: Any) -> Any:
        calls.append(body)
        return await real(body, params)

    monkeypatch.setattr(_chat_openai, "async_maybe_transform", counting)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}
    assert await _chat_openai._transform_is_identity(body)
    assert await _chat_openai._transform_is_identity({**body, "messages": [{"role": "user", "content": "other"}]})
    assert len(calls) == 1  # same shape: checked once
    assert await _chat_openai._transform_is_identity({**body, "n": 3})
    assert len(calls) == 2  # a new key is a new shape


async def test_a_transform_that_changes_the_body_turns_the_fast_path_off_for_that_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def renaming(body: Any, params: Any) -> Any:
        return {("max_completion_tokens" if k == "max_tokens" else k): v for k, v in body.items()}

    monkeypatch.setattr(_chat_openai, "async_maybe_transform", renaming)
    plain = {"model": "m", "messages": []}
    assert await _chat_openai._transform_is_identity(plain)
    assert not await _chat_openai._transform_is_identity({**plain, "max_tokens": 5})
