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

__all__ = ["Embedder", "Embedders", "Judge", "SharedCallJudge"]

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


class Embedders(list[Embedder]):
    """The configured embedders, and why there are none when the settings could not build them.

    Settings may leave an embedding model unusable (its ``${OPENROUTER_API_KEY}`` unset) while a
    run needs no embeddings at all (a CI profile that swaps only the judge panel). The container
    then builds an empty ``Embedders`` whose :attr:`unavailable` keeps the configuration error;
    the evaluator reports it, before any judge call, only for metrics that embed.

    Args:
        embedders: the embedders, in settings order.
        unavailable: why no embedder could be built (a message naming the key and the fix), or ``None``.
    """

    def __init__(self, embedders: Sequence[Embedder] = (), *, unavailable: str | None = None) -> None:
        super().__init__(embedders)
        self.unavailable = unavailable


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Mark a shared call's failure as retrieved (its waiters may all be gone)."""
    if not task.cancelled():
        task.exception()


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
        self._calls: dict[tuple[str, str, str, str], asyncio.Future[Any]] = {}
        self._waiters: dict[tuple[str, str, str, str], int] = {}

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
        """Answer like the wrapped judge, making each distinct call once.

        Cancelling one waiter leaves the shared call running for the others; when its last
        waiter is cancelled the shared call is cancelled too (and forgotten, so a later identical
        call starts afresh). A failure nobody waits for any more is retrieved, never reported as
        "Task exception was never retrieved".
        """
        key = (prompt.name, prompt.version, language, data.model_dump_json())
        task = self._calls.get(key)
        if task is None:
            task = asyncio.ensure_future(self._judge.ask(prompt, data, language=language))
            task.add_done_callback(_retrieve)
            self._calls[key] = task
            self._waiters[key] = 0
        self._waiters[key] += 1
        try:
            result: Out = await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():
                self._waiters[key] -= 1
                if self._waiters[key] == 0:
                    task.cancel()
                    del self._calls[key], self._waiters[key]
            raise
        self._waiters[key] -= 1
        return result

    @property
    def calls_made(self) -> int:
        """Number of distinct calls forwarded to the wrapped judge."""
        return len(self._calls)
