"""What the local judge's answer handlers see of the judge, and the text helper several of them share.

The handler modules (``answers_*``) answer one prompt each for :class:`~ragqa.judges.local.judge.LocalJudge`,
which collects their tables. They depend on this module only, never on the judge module above them:
:class:`LocalJudgeView` is the part of the judge a handler uses, and a handler that answers item by
item through another prompt's handler asks the judge for it (:meth:`LocalJudgeView.handler_for`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, Protocol, TypeVar

from pydantic import BaseModel

from ragqa.judges.base import Embedder
from ragqa.judges.local.support import SupportConfig, SupportResult
from ragqa.judges.local.text import claims, language_pattern
from ragqa.prompts.base import Prompt
from ragqa.schema import Language
from ragqa.settings import LocalJudgeSettings

__all__ = ["HANDLERS", "AnyHandler", "Handler", "LocalJudgeView", "register_handler", "statements_of"]

P = ParamSpec("P")
T = TypeVar("T")

AnyHandler = Callable[..., Awaitable[BaseModel]]
"""A handler as the judge hands it out: ``await handler(judge, data, language)``."""


class LocalJudgeView(Protocol):
    """The local judge as its handlers use it (implemented by :class:`~ragqa.judges.local.judge.LocalJudge`)."""

    settings: LocalJudgeSettings
    """The judge's settings (thresholds, ``use_embeddings``...)."""
    support_config: SupportConfig
    """The support scorer's checks."""

    def support(self, statement: str, context: str) -> SupportResult:
        """Graded support of ``statement`` by ``context``, in [0, 1]."""
        ...

    def verdict(self, value: float) -> int:
        """The binary verdict (0 or 1) of a graded value."""
        ...

    @property
    def relevance_embedder(self) -> Embedder | None:
        """The embedder relevance answers use, or ``None``."""
        ...

    async def offload(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run the synchronous ``fn`` off the event loop."""
        ...

    def handler_for(self, name: str) -> AnyHandler:
        """The handler answering the prompt named ``name``.

        Raises:
            KeyError: when the judge has no handler of that name.
        """
        ...


Handler = Callable[[LocalJudgeView, Any, Language], Awaitable[BaseModel]]
"""``async handler(judge, data, language) -> output model`` for one prompt name."""

HANDLERS: dict[str, AnyHandler] = {}
"""Prompt name -> the handler registered for it (:func:`register_handler`), in registration order."""

H = TypeVar("H", bound=Callable[..., Awaitable[BaseModel]])


def register_handler(prompt: Prompt[Any, Any]) -> Callable[[H], H]:
    """Decorator: teach the local judge to answer ``prompt`` with the decorated ``async handler``.

    ``async def handler(judge, data, language) -> prompt.output_model`` gets the judge (its
    :class:`~ragqa.judges.local._handler.LocalJudgeView`: ``support``, ``verdict``...), the
    prompt's input model and the language. The handler lives next to the prompt it answers, so a
    new prompt, with its offline answer, is one module.

    Raises:
        ValueError: when ``prompt.name`` is answered already by another handler (a built-in
            prompt's name, or a second registration of the name).
    """

    def decorate(handler: H) -> H:
        taken = HANDLERS.get(prompt.name)
        if taken is not None and taken is not handler:
            raise ValueError(f"the local judge answers prompt {prompt.name!r} already; give the prompt another name")
        HANDLERS[prompt.name] = handler
        return handler

    return decorate


def bare_yes_no(answer: str) -> re.Match[str] | None:
    """A bare yes or no (pattern ``yes_no`` of every language read), the whole answer; group 1 is the word."""
    return language_pattern("yes_no", r"^\s*(", r")\b[\s,.!]*$").match(answer)


def statements_of(question: str, answer: str) -> list[str]:
    """The statements the local judge decomposes ``answer`` into.

    Claim sentences of the answer (see :func:`ragqa.judges.local.text.claims`). Like an LLM asked
    for self-contained statements, a bare ``yes``/``no`` becomes the question with the answer
    (``"<question> — no"``; the ``no`` makes it a negated statement). A short fragment
    (``"Delhi"``) stays as it is: joining it to the question was measured to hurt (HaluEval
    pairwise 0.74 instead of 0.96), because questions paraphrase their sources.

    Args:
        question: the user input the answer replies to (may be empty).
        answer: the text to decompose.

    Returns:
        The statements in order (empty when the answer asserts nothing).
    """
    found = claims(answer)
    q = " ".join(question.split()).rstrip(" ?？").strip()
    if not q:
        return found
    yes_no = bare_yes_no(answer)
    if yes_no and not found:
        return [f"{q} — {yes_no.group(1).lower()}"]
    return found
