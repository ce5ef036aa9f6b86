"""Entities of several texts in one call: the batched call plan's context entity recall step.

The ``batched`` call plan's form of :mod:`ragqa.prompts.entities`: the reference and the joined
contexts (numbered texts) in one call, answered with one entity list per text, each naming the
text's number. Each list has the per-text prompt's meaning (the unique named entities of *that*
text, each once, in its fullest form). Two calls become one;
:func:`ragqa.metrics._batched.extract_entity_lists` asks the per-text prompt again only for the
texts the answer left out.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt
from ragqa.prompts.numbered import NumberedText

__all__ = ["ENTITIES_BATCH", "EntitiesBatchInput", "EntitiesBatchOutput", "TextEntities"]


class EntitiesBatchInput(BaseModel):
    """The numbered texts to extract entities from, each on its own."""

    texts: list[NumberedText] = Field(description="The texts, numbered from 1; extract from each separately")


class TextEntities(BaseModel):
    """The unique entities of one text."""

    text: int = Field(ge=1, description="The number of the text these entities come from")
    entities: list[str] = Field(description="Unique entities of that text, each listed once")


class EntitiesBatchOutput(BaseModel):
    """One entity list per text, in the order of the texts."""

    results: list[TextEntities]


ENTITIES_BATCH: Prompt[EntitiesBatchInput, EntitiesBatchOutput] = Prompt(
    name="entities_batch",
    version="2",  # 1 was the one-message shape of the per-item prompts; never reused
    input_model=EntitiesBatchInput,
    output_model=EntitiesBatchOutput,
    instructions={
        "en": (
            "For each numbered text separately, extract its unique named entities: people, places, organisations, "
            "dates and times, events, products, and numbers with their units. List each entity once per text, even "
            "when the text mentions it in several ways, using its fullest form as written in that text. Return "
            "exactly one result per text with the text's number, in the order given, with an empty list for a text "
            "that has none."
        ),
    },
    examples={
        "en": [
            Example(
                EntitiesBatchInput(
                    texts=[
                        NumberedText(
                            number=1, text="The Sydney Opera House, designed by Jørn Utzon, opened in October 1973."
                        ),
                        NumberedText(
                            number=2,
                            text="NASA launched the James Webb Space Telescope on 25 December 2021 from Kourou.",
                        ),
                    ]
                ),
                EntitiesBatchOutput(
                    results=[
                        TextEntities(text=1, entities=["Sydney Opera House", "Jørn Utzon", "October 1973"]),
                        TextEntities(
                            text=2, entities=["NASA", "James Webb Space Telescope", "25 December 2021", "Kourou"]
                        ),
                    ]
                ),
            ),
        ],
    },
)
