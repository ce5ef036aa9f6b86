"""Prompts are data: a typed input, a typed output schema, instructions and few-shot examples.

A :class:`Prompt` renders to one user message in the shape RAGAS uses (instruction, the output's
JSON schema, examples, then the input as JSON), so a judge that sees ragqa's prompt sees what it
would see under RAGAS. The ``version`` string enters cache keys: change it whenever the text or
the examples change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ragqa.schema import Language

__all__ = ["Example", "Prompt"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

_HEADERS: Mapping[Language, Mapping[str, str]] = {
    "en": {
        "schema": (
            "Please return the output in a JSON format that complies with the following schema "
            "as specified in JSON Schema:"
        ),
        "quotes": "Do not use single quotes in your response but double quotes, properly escaped with a backslash.",
        "examples": "--------EXAMPLES-----------",
        "example": "Example",
        "now": "Now perform the same with the following input",
        "input": "Input",
        "output": "Output",
    },
    "ru": {
        "schema": "Верни результат в формате JSON, соответствующем следующей JSON-схеме:",
        "quotes": "Используй только двойные кавычки, экранированные обратной косой чертой, где нужно.",
        "examples": "--------ПРИМЕРЫ-----------",
        "example": "Пример",
        "now": "Теперь сделай то же самое для следующих входных данных",
        "input": "Вход",
        "output": "Выход",
    },
}


@dataclass(frozen=True)
class Example(Generic[In, Out]):
    """One few-shot pair: an input and the output a good judge would give."""

    input: In
    output: Out


@dataclass(frozen=True)
class Prompt(Generic[In, Out]):
    """A typed judge prompt.

    Attributes:
        name: the step's name (``statements``, ``nli``...); used in traces, failures and caches.
        version: changes whenever the wording or examples change; part of every cache key.
        input_model: the pydantic model of the rendered input.
        output_model: the pydantic model the judge must return.
        instructions: the instruction per language (``en`` required).
        examples: few-shot examples per language (missing language: English examples).
    """

    name: str
    version: str
    input_model: type[In]
    output_model: type[Out]
    instructions: Mapping[Language, str]
    examples: Mapping[Language, Sequence[Example[In, Out]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check that an English instruction exists (the fallback for every language)."""
        if "en" not in self.instructions:
            raise ValueError(f"prompt {self.name!r} needs an English instruction")

    @cached_property
    def output_schema(self) -> dict[str, Any]:
        """The JSON schema of ``output_model`` (what structured output sends to the provider)."""
        return self.output_model.model_json_schema()

    def render(self, data: In, language: Language = "en") -> str:
        """Render the prompt as one user message.

        Args:
            data: the input; must be an instance of ``input_model``.
            language: the instruction and example language; falls back to English.

        Returns:
            The message text: instruction, schema, examples, input.

        Raises:
            TypeError: when ``data`` is not an ``input_model``.
        """
        if not isinstance(data, self.input_model):
            raise TypeError(f"prompt {self.name!r} expects {self.input_model.__name__}, got {type(data).__name__}")
        words = _HEADERS[language]
        instruction = self.instructions.get(language) or self.instructions["en"]
        examples = self.examples.get(language) or self.examples.get("en") or ()
        parts = [
            instruction,
            f"{words['schema']}\n{json.dumps(self.output_schema, ensure_ascii=False)}\n{words['quotes']}",
        ]
        if examples:
            shots = [
                f"{words['example']} {i}\n"
                f"{words['input']}: {ex.input.model_dump_json(indent=4, exclude_none=True)}\n"
                f"{words['output']}: {ex.output.model_dump_json(indent=4, exclude_none=True)}"
                for i, ex in enumerate(examples, start=1)
            ]
            parts.append(words["examples"] + "\n" + "\n\n".join(shots))
        parts.append(
            "-----------------------------\n\n"
            f"{words['now']}\n"
            f"{words['input']}: {data.model_dump_json(indent=4, exclude_none=True)}\n"
            f"{words['output']}: "
        )
        return "\n\n".join(parts)

    def parse(self, text: str) -> Out:
        """Validate a judge's JSON text against ``output_model``.

        Raises:
            pydantic.ValidationError: when the text is not valid JSON of the schema.
        """
        return self.output_model.model_validate_json(text)
