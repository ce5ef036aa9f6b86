"""Multi-turn samples: the messages of an agent conversation and the tool calls in it.

The shapes are RAGAS's (``ragas.messages``): a conversation is a list of

- :class:`HumanMessage` ``{"type": "human", "content": ...}``,
- :class:`AIMessage` ``{"type": "ai", "content": ..., "tool_calls": [{"name": ..., "args": {...}}]}``,
- :class:`ToolMessage` ``{"type": "tool", "content": ...}`` (what a tool returned).

The kind may also be spelled ``role`` (``user`` and ``assistant`` are read as ``human`` and
``ai``), so chat logs in the OpenAI role names load as they are. :func:`parse_messages` checks a
conversation the way RAGAS's ``MultiTurnSample`` does, with errors that name the message and the
fix; one rule is looser than RAGAS's: several tool messages may follow one AI message that made
several tool calls (RAGAS demands that the message right before each tool message be an AI
message with tool calls, which rejects the second answer of two parallel calls).

:func:`render_conversation` writes a conversation as RAGAS's ``MultiTurnSample.pretty_repr``
does, which is what the agent metrics' prompts show the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

__all__ = [
    "AIMessage",
    "HumanMessage",
    "Message",
    "ToolCall",
    "ToolMessage",
    "conversation_parts",
    "last_human_message",
    "parse_messages",
    "parse_tool_calls",
    "render_conversation",
    "tool_calls_of",
]

_KINDS: Mapping[str, str] = {"human": "human", "user": "human", "ai": "ai", "assistant": "ai", "tool": "tool"}
"""Accepted spellings of a message's kind and the kind each means."""


class ToolCall(BaseModel):
    """One tool call: the tool's name and its arguments (RAGAS ``ToolCall``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """The tool's name (non-blank)."""
    args: dict[str, Any] = Field(default_factory=dict)
    """The arguments by name (JSON values); ``{}`` when the call takes none."""

    @field_validator("name")
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a tool call needs a non-blank name")
        return value


class HumanMessage(BaseModel):
    """What the user said."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["human"] = "human"
    """Always ``human``."""
    content: str
    """The text."""
    metadata: dict[str, Any] | None = None
    """Free-form data (RAGAS messages carry it); never sent to a judge."""


class AIMessage(BaseModel):
    """What the agent said, and the tools it called (in call order)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["ai"] = "ai"
    """Always ``ai``."""
    content: str = ""
    """The text (may be empty when the message only calls tools)."""
    tool_calls: list[ToolCall] | None = None
    """The tool calls this message made, or ``None``."""
    metadata: dict[str, Any] | None = None
    """Free-form data; never sent to a judge."""


class ToolMessage(BaseModel):
    """What a tool returned to the agent."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["tool"] = "tool"
    """Always ``tool``."""
    content: str
    """The tool's output as text."""
    metadata: dict[str, Any] | None = None
    """Free-form data; never sent to a judge."""


Message = Annotated[HumanMessage | AIMessage | ToolMessage, Field(discriminator="type")]
"""One message of a conversation, told apart by ``type``."""

_MODELS: Mapping[str, type[HumanMessage | AIMessage | ToolMessage]] = {
    "human": HumanMessage,
    "ai": AIMessage,
    "tool": ToolMessage,
}


def _describe(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def _pydantic_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def parse_tool_calls(value: Any, *, what: str = "tool call") -> list[ToolCall]:
    """Read a list of ``{name, args}`` objects into :class:`ToolCall` s.

    Args:
        value: a list of mappings (or :class:`ToolCall` s).
        what: how the error names one item (``"tool call"``, ``"message 2, tool call"``).

    Returns:
        The tool calls in order.

    Raises:
        ValueError: naming the item and the fix: not a list, an item that is not an object, a
            missing or blank ``name``, ``args`` that is not an object, an unknown key.
    """
    if not isinstance(value, list | tuple):
        raise ValueError(f'expected a list of {{"name": ..., "args": {{...}}}} objects, got {_describe(value)}')
    calls: list[ToolCall] = []
    for i, item in enumerate(value, 1):
        if isinstance(item, ToolCall):
            calls.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ValueError(f'{what} {i} is {_describe(item)}; write it as {{"name": "tool", "args": {{...}}}}')
        if "name" not in item:
            raise ValueError(f"{what} {i} has no 'name'; give the tool's name")
        args = item.get("args", {})
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ValueError(
                f"{what} {i} ({item.get('name')!r}): 'args' is {_describe(args)}, not an object; "
                'write the arguments by name, e.g. {"city": "Paris"}'
            )
        unknown = sorted(set(item) - {"name", "args"})
        if unknown:
            raise ValueError(
                f"{what} {i} ({item.get('name')!r}): unknown key(s) {', '.join(map(repr, unknown))}; "
                "a tool call has only 'name' and 'args'"
            )
        try:
            calls.append(ToolCall(name=item["name"], args=dict(args)))
        except ValidationError as exc:
            raise ValueError(f"{what} {i}: {_pydantic_problem(exc)}") from None
    return calls


def _one_message(i: int, item: Any) -> HumanMessage | AIMessage | ToolMessage:
    if isinstance(item, HumanMessage | AIMessage | ToolMessage):
        return item
    if not isinstance(item, Mapping):
        raise ValueError(f'message {i} is {_describe(item)}; write it as {{"type": "human", "content": "..."}}')
    data = dict(item)
    if "role" in data and "type" not in data:
        data["type"] = data.pop("role")
    elif "role" in data:
        raise ValueError(f"message {i} has both 'type' and 'role'; keep one of them")
    if "type" not in data:
        raise ValueError(f"message {i} has no 'type'; give human, ai or tool")
    kind = _KINDS.get(str(data["type"]).lower()) if isinstance(data["type"], str) else None
    if kind is None:
        raise ValueError(
            f"message {i} has type {data['type']!r}; use human, ai or tool (or the roles user and assistant)"
        )
    data["type"] = kind
    if kind == "ai" and data.get("tool_calls") is not None:
        data["tool_calls"] = parse_tool_calls(data["tool_calls"], what=f"message {i}, tool call")
    elif kind != "ai" and "tool_calls" in data:
        raise ValueError(f"message {i} is a {kind} message with 'tool_calls'; only ai messages call tools")
    if kind != "ai" and not isinstance(data.get("content"), str):
        got = "no 'content'" if "content" not in data else f"'content' {_describe(data['content'])}"
        raise ValueError(f"message {i} ({kind}) has {got}; give its text as a string")
    if kind == "ai" and data.get("content") is None:
        data["content"] = ""
    try:
        return _MODELS[kind].model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"message {i} ({kind}): {_pydantic_problem(exc)}") from None


def parse_messages(value: Any) -> list[HumanMessage | AIMessage | ToolMessage]:
    """Read and check a conversation.

    Args:
        value: a list of message mappings (``type`` or ``role`` plus ``content``; ai messages may
            have ``tool_calls``) or message models.

    Returns:
        The messages in order.

    Raises:
        ValueError: naming the message (1-based) and the fix, when ``value`` is not a non-empty
            list, a message is not an object, its kind is not human / ai / tool, its content is
            not a string, a tool call is malformed (:func:`parse_tool_calls`), a tool message
            does not follow an ai message that called a tool (other tool messages may sit
            between). A conversation without a human message is accepted, as RAGAS accepts it.
    """
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError(
            f'expected a list of messages such as [{{"type": "human", "content": "..."}}], got {_describe(value)}'
        )
    if not value:
        raise ValueError("the conversation is empty; give its messages, or leave the field out")
    messages = [_one_message(i, item) for i, item in enumerate(value, 1)]
    caller: AIMessage | None = None
    for i, message in enumerate(messages, 1):
        if isinstance(message, ToolMessage):
            if caller is None or not caller.tool_calls:
                raise ValueError(
                    f"message {i} is a tool message, but no ai message with tool_calls comes before it "
                    "(only tool messages may sit between); add the ai message that called the tool, or drop "
                    "this tool output"
                )
        else:
            caller = message if isinstance(message, AIMessage) else None
    return messages


def tool_calls_of(messages: Sequence[Message]) -> list[ToolCall]:
    """Every tool call of the ai messages, in conversation order (RAGAS's predicted calls)."""
    return [call for m in messages if isinstance(m, AIMessage) for call in m.tool_calls or []]


def last_human_message(messages: Sequence[Message]) -> str | None:
    """The text of the last human message (what reports show as the question), or ``None``."""
    return next((m.content for m in reversed(messages) if isinstance(m, HumanMessage)), None)


def render_conversation(messages: Sequence[Message]) -> str:
    """The conversation as text, as RAGAS's ``MultiTurnSample.pretty_repr`` writes it.

    Lines joined by newlines: ``Human: <content>``; for an ai message ``AI: <content>`` (left out
    when the content is empty), then ``Tools:`` and one ``  <name>: <args>`` line per call when it
    called tools (``args`` as a Python dict, as RAGAS prints it); ``ToolOutput: <content>``.

    Returns:
        The transcript the agent metrics' prompts show the judge.
    """
    lines: list[str] = []
    for m in messages:
        if isinstance(m, HumanMessage):
            lines.append(f"Human: {m.content}")
        elif isinstance(m, ToolMessage):
            lines.append(f"ToolOutput: {m.content}")
        else:
            if m.content != "":
                lines.append(f"AI: {m.content}")
            if m.tool_calls is not None:
                lines.append("Tools:")
                lines.extend(f"  {call.name}: {call.args}" for call in m.tool_calls)
    return "\n".join(lines)


_ROLES = (("Human: ", "human"), ("AI: ", "ai"), ("ToolOutput: ", "tool"))


def conversation_parts(text: str) -> dict[str, list[str]]:
    """Read a transcript written by :func:`render_conversation` back into its messages' texts.

    A judge that only sees the rendered conversation (the general metrics' multi-turn form) uses
    it to tell the human turns from the agent's: lines starting ``Human:``, ``AI:`` and
    ``ToolOutput:`` open a message; ``Tools:`` and its call lines are skipped; any other line
    continues the message above it (a content with newlines). A content line that itself starts
    with one of those prefixes is read as a new message: the transcript cannot tell them apart.

    Args:
        text: a rendered conversation.

    Returns:
        ``{"human": [...], "ai": [...], "tool": [...]}``: each role's message texts, in order
        (empty lists where the role never speaks; an ai message with no content is absent).
    """
    parts: dict[str, list[str]] = {"human": [], "ai": [], "tool": []}
    current: list[str] | None = None
    for line in text.split("\n"):
        role = next(((name, line[len(prefix) :]) for prefix, name in _ROLES if line.startswith(prefix)), None)
        if role is not None:
            parts[role[0]].append(role[1])
            current = parts[role[0]]
        elif line == "Tools:":
            current = None  # the call lines that follow are not message text
        elif current is not None:
            current[-1] += "\n" + line
    return parts
