"""Test doubles at the judge seam: scripted and function judges, and a sample factory.

Use them to test metric logic without HTTP; use :mod:`ragqa.testing.server` (the fake
OpenAI-compatible server) to test the real client path.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from ragqa.errors import JudgeError, JudgeOutputError
from ragqa.judges.base import Judge
from ragqa.prompts.base import Prompt
from ragqa.schema import Language, Sample

__all__ = ["CountingJudge", "FunctionJudge", "RecordedCall", "ScriptedJudge", "StaticEmbedder", "make_sample"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


class CountingJudge:
    """Wraps a judge and counts the calls that reach it.

    Put it under a cache or shared-call wrapper to prove how many calls got through (a warm
    cache: 0).

    Args:
        inner: the judge to forward to; id and fingerprint are the inner judge's.
    """

    def __init__(self, inner: Judge) -> None:
        """Wrap ``inner`` with a call count of 0."""
        self.inner = inner
        self.calls = 0

    @property
    def id(self) -> str:
        """The inner judge's id."""
        return self.inner.id

    @property
    def fingerprint(self) -> str:
        """The inner judge's fingerprint (counting does not change an answer)."""
        return self.inner.fingerprint

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Count the call, then answer like the inner judge."""
        self.calls += 1
        return await self.inner.ask(prompt, data, language=language)


class RecordedCall(BaseModel):
    """One call a test double received."""

    prompt: str
    """The prompt's name."""
    data: dict[str, Any]
    """The input, as a dict."""
    language: str
    """The language asked for."""


class _Recording:
    def __init__(self, judge_id: str, kind: str, fingerprint: str | None) -> None:
        self._id = judge_id
        self._fingerprint = fingerprint if fingerprint is not None else json.dumps({"provider": kind, "id": judge_id})
        self.calls: list[RecordedCall] = []

    @property
    def id(self) -> str:
        """The judge id."""
        return self._id

    @property
    def fingerprint(self) -> str:
        """The cache identity: the ``fingerprint`` given, else the kind of double and its id (JSON).

        A double answers whatever its test scripted, so by default two doubles of one kind and id
        count as the same model; pass ``fingerprint`` to tell differently scripted ones apart.
        """
        return self._fingerprint

    def _record(self, prompt: Prompt[Any, Any], data: BaseModel, language: Language) -> None:
        self.calls.append(RecordedCall(prompt=prompt.name, data=data.model_dump(), language=language))

    def calls_to(self, prompt_name: str) -> list[RecordedCall]:
        """The calls made with the prompt named ``prompt_name``."""
        return [c for c in self.calls if c.prompt == prompt_name]


class ScriptedJudge(_Recording):
    """A judge that answers from a script.

    ``script`` maps a prompt name to a queue of answers, consumed in call order. An answer is an
    output model instance (a subclass too, e.g. a graded output of
    :mod:`ragqa.judges.local.graded`), a dict (validated against the prompt's output model, as an
    LLM's JSON is: keys it does not declare are ignored), a JSON string, or an exception instance
    (raised). Calls to a prompt with an empty or missing queue raise
    :class:`~ragqa.errors.JudgeOutputError` naming the prompt.

    Example:
        ``ScriptedJudge("j1", {"statements": [{"statements": ["a", "b"]}],
        "nli": [{"verdicts": [...]}]})``
    """

    __test__ = False

    def __init__(
        self,
        judge_id: str,
        script: dict[str, Iterable[Any]],
        *,
        delay_s: float = 0.0,
        fingerprint: str | None = None,
    ) -> None:
        """Create the judge; ``delay_s`` sleeps before each answer (to test concurrency).

        ``fingerprint`` overrides the default cache identity (``{"provider": "scripted", "id": ...}``).
        """
        super().__init__(judge_id, "scripted", fingerprint)
        self._script = {name: deque(answers) for name, answers in script.items()}
        self._delay = delay_s

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Return the next scripted answer for ``prompt``."""
        self._record(prompt, data, language)
        if self._delay:
            await asyncio.sleep(self._delay)
        queue = self._script.get(prompt.name)
        if not queue:
            raise JudgeOutputError(
                f"no scripted answer left for prompt {prompt.name!r}", judge_id=self.id, step=prompt.name
            )
        answer = queue.popleft()
        return _coerce(prompt, answer, self.id)


class FunctionJudge(_Recording):
    """A judge whose answers come from ``fn(prompt, data)`` (sync or async).

    ``fn`` may return an output model, a dict or a JSON string, or raise. It can assert on the
    input to test what a metric sends.
    """

    __test__ = False

    def __init__(
        self,
        judge_id: str,
        fn: Callable[[Prompt[Any, Any], Any], Any | Awaitable[Any]],
        *,
        fingerprint: str | None = None,
    ) -> None:
        """Create the judge.

        ``fingerprint`` overrides the default cache identity (``{"provider": "function", "id": ...}``).
        """
        super().__init__(judge_id, "function", fingerprint)
        self._fn = fn

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Return ``fn(prompt, data)`` validated against the prompt's output model."""
        self._record(prompt, data, language)
        answer = self._fn(prompt, data)
        if isinstance(answer, Awaitable):
            answer = await answer
        return _coerce(prompt, answer, self.id)


def _coerce(prompt: Prompt[Any, Out], answer: Any, judge_id: str) -> Out:
    if isinstance(answer, BaseException):
        if isinstance(answer, JudgeError) and answer.judge_id is None:
            answer.judge_id = judge_id
        raise answer
    if isinstance(answer, prompt.output_model):
        return answer
    try:
        if isinstance(answer, str):
            return prompt.output_model.model_validate_json(answer)
        return prompt.output_model.model_validate(answer)
    except ValueError as exc:
        raise JudgeOutputError(
            f"scripted answer does not fit {prompt.output_model.__name__}: {exc}",
            judge_id=judge_id,
            step=prompt.name,
            raw=str(answer),
        ) from exc


class StaticEmbedder:
    """An embedder that returns fixed vectors by text (unknown texts: ``default``)."""

    __test__ = False

    def __init__(
        self, embedder_id: str, vectors: dict[str, Sequence[float]], default: Sequence[float] | None = None
    ) -> None:
        """Create the embedder."""
        self._id = embedder_id
        self._vectors = {k: list(v) for k, v in vectors.items()}
        self._default = list(default) if default is not None else None
        self.calls: list[list[str]] = []

    @property
    def id(self) -> str:
        """The embedder id."""
        return self._id

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return the vector of each text."""
        self.calls.append(list(texts))
        out = []
        for t in texts:
            v = self._vectors.get(t, self._default)
            if v is None:
                raise JudgeError(f"no vector for {t!r}", judge_id=self._id, step="embed")
            out.append(list(v))
        return out


def make_sample(**fields: Any) -> Sample:
    """Build a :class:`~ragqa.schema.Sample` with test defaults for the common fields.

    Defaults: ``id="s1"``, a question, a response, a reference and two contexts; any keyword
    overrides them (pass ``None`` to drop a field).
    """
    base: dict[str, Any] = {
        "id": "s1",
        "user_input": "When was the first Super Bowl held?",
        "response": "The first Super Bowl was held on January 15, 1967.",
        "reference": "The first Super Bowl was held on January 15, 1967.",
        "retrieved_contexts": [
            "The First AFL-NFL World Championship Game, later known as Super Bowl I, was played on January 15, 1967.",
            "The game was played at the Los Angeles Memorial Coliseum.",
        ],
    }
    base.update(fields)
    return Sample(**base)
