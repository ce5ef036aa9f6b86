"""Shapes of what is scored: one :class:`Sample` (RAGAS field names) and its labelled context chunks.

Field names follow RAGAS (``user_input``, ``response``, ``reference``, ``retrieved_contexts``,
``reference_contexts``); promptfoo's labelled chunks are ``context_chunks``. Part of
:mod:`ragqa.schema`, which re-exports every name.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from ragqa.errors import ConfigError
from ragqa.languages import check_language, known_languages
from ragqa.messages import Message, ToolCall, last_human_message, parse_messages, parse_tool_calls

__all__ = [
    "ContextChunk",
    "Language",
    "Sample",
]


def _known_language(code: str) -> str:
    """``code`` when ragqa speaks it; the error leaves the value out (settings errors show it masked)."""
    try:
        return check_language(code)
    except ConfigError:
        codes = ", ".join(repr(c) for c in known_languages())
        message = "Input should be a language with a pack: {codes}"
        raise PydanticCustomError("language", message, {"codes": codes}) from None


Language = Annotated[str, AfterValidator(_known_language)]
"""A language code ragqa speaks: ``en`` (the source language) or one with a language pack
(:mod:`ragqa.languages`: ``ru`` built in, others installed); pydantic fields of this type refuse
any other code."""
"""Prompt and report language."""


class ContextChunk(BaseModel):
    """A retrieved chunk with a human relevance label (promptfoo's ``contextChunks``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    """The chunk's text."""
    relevant: bool
    """True when the chunk is relevant to the question (replaces the judged relevance)."""


class Sample(BaseModel):
    """One single-turn RAG or agent trace to score.

    Every field is optional here; each metric declares which fields it needs and the evaluator
    checks them for every sample before any judge call (:class:`ragqa.errors.SampleError`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str | None = None
    """Stable identifier used in reports and errors (defaults to the line number when loaded)."""
    user_input: str | None = None
    """The question or instruction given to the system under test."""
    response: str | None = None
    """The answer the system under test produced."""
    reference: str | None = None
    """The ground-truth answer."""
    retrieved_contexts: list[str] | None = None
    """Chunks the retriever returned, in retrieval order."""
    reference_contexts: list[str] | None = None
    """Gold evidence passages."""
    context_chunks: list[ContextChunk] | None = None
    """Labelled chunks (promptfoo); when set they are the contexts and their relevance labels."""
    noise_context: str | None = None
    """promptfoo's injected noise, appended as an extra irrelevant chunk by noise sensitivity."""
    messages: list[Message] | None = None
    """Multi-turn conversation (human / ai / tool messages, ai ones with tool calls; :mod:`ragqa.messages`)."""
    reference_tool_calls: list[ToolCall] | None = None
    """Expected tool calls, ``[{name, args}]``, in order."""
    reference_topics: list[str] | None = None
    """Topics the agent should stay within."""
    rubrics: dict[str, str] | None = None
    """Per-sample rubric (``score1_description`` ... ``score5_description``)."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free-form data carried into results untouched."""

    @field_validator("messages", mode="before")
    @classmethod
    def _check_messages(cls, value: Any) -> Any:
        """Check a conversation (:func:`ragqa.messages.parse_messages`); ``ValueError`` names message and fix."""
        return None if value is None else parse_messages(value)

    @field_validator("reference_tool_calls", mode="before")
    @classmethod
    def _check_tool_calls(cls, value: Any) -> Any:
        """Check expected tool calls (:func:`ragqa.messages.parse_tool_calls`)."""
        return None if value is None else parse_tool_calls(value, what="reference tool call")

    def question(self) -> str | None:
        """The question reports show: ``user_input``, else the last human message of ``messages``."""
        if self.user_input is not None or not self.messages:
            return self.user_input
        return last_human_message(self.messages)

    def contexts(self) -> list[str]:
        """Return the chunks to judge: ``retrieved_contexts``, else the texts of ``context_chunks``.

        Returns:
            The context strings in retrieval order (may be empty).
        """
        if self.retrieved_contexts is not None:
            return list(self.retrieved_contexts)
        if self.context_chunks is not None:
            return [c.text for c in self.context_chunks]
        return []

    @property
    def label(self) -> str:
        """The name used for this sample in messages: its ``id`` or ``"?"``."""
        return self.id if self.id is not None else "?"
