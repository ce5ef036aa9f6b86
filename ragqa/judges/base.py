"""The judge seam: one small async protocol that every metric depends on.

A :class:`Judge` answers a typed :class:`~ragqa.prompts.Prompt` with a validated instance of the
prompt's output model, or raises a :class:`~ragqa.errors.JudgeError`. An :class:`Embedder` turns
texts into vectors. Metrics never import a provider: the LangChain adapter, the local judge and
the test doubles of :mod:`ragqa.testing` all implement these protocols.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from ragqa.prompts.base import Prompt
from ragqa.schema import Language

__all__ = ["Embedder", "Judge", "SharedCallJudge"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


@runtime_checkable
class Judge(Protocol):
    """An LLM (or stand-in) that answers typed prompts."""

    @property
    def id(self) -> str:
        """The judge's identifier in reports (the chat model id of ``application.yaml``)."""
        ...

    @property
    def fingerprint(self) -> str:
        """The judge's identity for caches: covers everything that changes an answer, never a secret.

        Two judges with equal fingerprints must give the same answer to the same prompt version,
        language and input (the disk cache, :class:`~ragqa.cache.CachingJudge`, serves one's
        answers to the other). Include provider, endpoint, model, decoding options and any
        setting or algorithm version that changes an answer; never an API key or a header.
        Wrappers that do not change answers return their inner judge's fingerprint.
        """
        ...

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer ``prompt`` for ``data``.

        Returns:
            A validated instance of ``prompt.output_model``, or of a subclass of it (the local
            judge's graded outputs); an LLM's JSON is parsed into ``prompt.output_model`` itself.

        Raises:
            ragqa.errors.JudgeError: on any failure (timeout, HTTP, invalid output, unsupported).
        """
        ...


@runtime_checkable
class Embedder(Protocol):
    """An embedding model."""

    @property
    def id(self) -> str:
        """The embedding model id."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed ``texts``; returns one vector per text, in order (all of one dimension).

        Raises:
            ragqa.errors.JudgeError: on any failure.
        """
        ...


class SharedCallJudge:
    """Wraps a judge so that identical calls are made once and shared.

    Two calls are identical when prompt name, prompt version, language and the rendered input
    (its JSON) are equal: the response's statements asked by faithfulness, hallucination and
    noise sensitivity on the same sample are one call. In-flight calls are merged too. A failed
    call is shared as well (every metric that needed it sees the same error). Scope one wrapper
    to one judge and one sample so memory stays bounded.
    """

    def __init__(self, judge: Judge) -> None:
        """Wrap ``judge``."""
        self._judge = judge
        self._calls: dict[tuple[str, str, str, str], asyncio.Task[Any]] = {}

    @property
    def id(self) -> str:
        """The wrapped judge's id."""
        return self._judge.id

    @property
    def fingerprint(self) -> str:
        """The wrapped judge's fingerprint (sharing calls changes no answer)."""
        return self._judge.fingerprint

    @property
    def inner(self) -> Judge:
        """The wrapped judge."""
        return self._judge

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer like the wrapped judge, making each distinct call once."""
        key = (prompt.name, prompt.version, language, data.model_dump_json())
        task = self._calls.get(key)
        if task is None:
            task = asyncio.ensure_future(self._judge.ask(prompt, data, language=language))
            self._calls[key] = task
        result: Out = await asyncio.shield(task)
        return result

    @property
    def calls_made(self) -> int:
        """Number of distinct calls forwarded to the wrapped judge."""
        return len(self._calls)
