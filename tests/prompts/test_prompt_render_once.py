"""A prompt renders its fixed head (instruction, schema, examples) once per language: same text as rendering it whole.

The reference below is :meth:`ragqa.prompts.base.Prompt.messages` as it was before the head was
kept: every part rendered on every call. The kept head must give byte-identical messages for every
prompt, language and input (cache keys and judges see the text, so it may not move by a byte).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from ragqa.prompts import PROMPTS, Message, Prompt, data_block, system_rules
from ragqa.prompts.base import _words
from ragqa.schema import Language

LANGUAGES: tuple[Language, ...] = ("en", "ru", "de")  # "de" has no text of its own: English


def reference_messages(prompt: Prompt[Any, Any], data: BaseModel, language: Language) -> list[Message]:
    """Every part rendered anew, joined as the user message always was.

    A deliberate independent copy (the oracle), not a call into ``Prompt``: it matches
    ``Prompt._head`` line for line on purpose, so a change there must be made here too, knowingly.
    """
    words = _words(language)  # the frame's words: English, or the language pack's
    instruction = prompt.instructions.get(language) or prompt.instructions["en"]
    examples = prompt.examples.get(language) or prompt.examples.get("en") or ()
    parts = [
        instruction,
        f"{words['schema']}\n{json.dumps(prompt.output_schema, ensure_ascii=False)}\n{words['quotes']}",
    ]
    if examples:
        shots = [
            f"{words['example']} {i}\n"
            f"{words['input']}:\n{data_block(ex.input)}\n"
            f"{words['output']}: {ex.output.model_dump_json(indent=4, exclude_none=True)}"
            for i, ex in enumerate(examples, start=1)
        ]
        parts.append(words["examples"] + "\n" + "\n\n".join(shots))
    parts.append(
        f"-----------------------------\n\n{words['now']}\n{words['input']}:\n{data_block(data)}\n{words['output']}: "
    )
    return [Message("system", system_rules(language)), Message("user", "\n\n".join(parts))]


def inputs_of(prompt: Prompt[Any, Any]) -> list[BaseModel]:
    """Every example input of the prompt, in every language (real, varied inputs of the right model)."""
    return [ex.input for shots in prompt.examples.values() for ex in shots]


@pytest.mark.parametrize("name", sorted(PROMPTS))
def test_kept_head_renders_exactly_the_whole_prompt(name: str) -> None:
    prompt = PROMPTS[name]
    inputs = inputs_of(prompt)
    if not inputs:
        pytest.skip(f"{name} has no example input to render")
    for _ in range(2):  # the first call fills the head, the second uses it
        for language in LANGUAGES:
            for data in inputs:
                assert prompt.messages(data, language) == reference_messages(prompt, data, language)


def test_the_head_is_made_once_per_language() -> None:
    prompt = next(p for p in PROMPTS.values() if inputs_of(p))
    data = inputs_of(prompt)[0]
    prompt.messages(data, "en")
    head = prompt._heads["en"]
    prompt.messages(data, "en")
    assert prompt._heads["en"] is head
    assert prompt.messages(data, "en")[1].content.startswith(head)
