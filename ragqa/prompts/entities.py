"""Entity extraction: the unique named entities of a text.

Used by context entity recall, once for the reference and once for the joined contexts. Mirrors
RAGAS's entity-extraction prompt: output ``{"entities": [str]}``; people, places,
organisations, dates, events, products and quantities count; different mentions of the same
entity are listed once.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = ["ENTITIES", "EntitiesInput", "EntitiesOutput"]


class EntitiesInput(BaseModel):
    """The text to extract entities from."""

    text: str = Field(description="The text to extract entities from")


class EntitiesOutput(BaseModel):
    """The unique entities, in order of first mention."""

    entities: list[str] = Field(description="Unique entities, each listed once")


ENTITIES: Prompt[EntitiesInput, EntitiesOutput] = Prompt(
    name="entities",
    version="2",
    input_model=EntitiesInput,
    output_model=EntitiesOutput,
    instructions={
        "en": (
            "Extract the unique named entities of the text: people, places, organisations, dates and times, "
            "events, products, and numbers with their units. List each entity once, even when the text mentions "
            "it in several ways, using its fullest form as written in the text. Return an empty list when there "
            "are none."
        ),
    },
    examples={
        "en": [
            Example(
                EntitiesInput(
                    text=(
                        "The Sydney Opera House, designed by Jørn Utzon, opened in October 1973. "
                        "The opera house hosts about 1,500 performances each year."
                    )
                ),
                EntitiesOutput(
                    entities=["Sydney Opera House", "Jørn Utzon", "October 1973", "1,500 performances"],
                ),
            ),
            Example(
                EntitiesInput(text="NASA launched the James Webb Space Telescope on 25 December 2021 from Kourou."),
                EntitiesOutput(entities=["NASA", "James Webb Space Telescope", "25 December 2021", "Kourou"]),
            ),
        ],
    },
)
