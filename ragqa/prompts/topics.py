"""Topic adherence's three steps: extract topics, ask about refusals, classify topics.

RAGAS ``TopicAdherenceScore`` (``metrics/_topic_adherence.py``): ``TopicExtractionPrompt`` lists
the topics of the human's input in the conversation (``user_input``, written as
:func:`ragqa.messages.render_conversation`); ``TopicRefusedPrompt`` asks, once per topic, whether
the AI refused to answer about it; ``TopicClassificationPrompt`` says, for every extracted topic
in order, whether it falls into any of the reference topics.

The classification example differs from RAGAS's: RAGAS shows two relativity topics against the
reference topics Physics and Mathematics classified ``[True, False]``, which teaches a judge that
a physics topic may fall outside Physics; here the second topic is the weather, which does.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragqa.prompts.base import Example, Prompt

__all__ = [
    "TOPIC_CLASSIFICATION",
    "TOPIC_EXTRACTION",
    "TOPIC_REFUSAL",
    "TopicClassificationInput",
    "TopicClassificationOutput",
    "TopicExtractionInput",
    "TopicExtractionOutput",
    "TopicRefusalInput",
    "TopicRefusalOutput",
]


class TopicExtractionInput(BaseModel):
    """The conversation transcript."""

    user_input: str = Field(description="The interaction between Human, Tools and AI")


class TopicExtractionOutput(BaseModel):
    """The topics the human asked about, in order of first mention."""

    topics: list[str] = Field(description="Topics of the Human's input")


class TopicRefusalInput(BaseModel):
    """The conversation transcript and one topic of it."""

    user_input: str = Field(description="The interaction between Human, Tools and AI")
    topic: str = Field(description="One topic the Human asked about")


class TopicRefusalOutput(BaseModel):
    """Whether the AI refused to answer about the topic."""

    refused_to_answer: bool = Field(description="True if the AI refused to answer the question about the topic")


class TopicClassificationInput(BaseModel):
    """The allowed topics and the extracted ones."""

    reference_topics: list[str] = Field(description="The topics the AI is meant to talk about")
    topics: list[str] = Field(description="The topics to classify")


class TopicClassificationOutput(BaseModel):
    """One classification per topic, in the order given."""

    classifications: list[bool] = Field(description="For each topic: true if it falls into any reference topic")


_CONVERSATION_EN = """Human: Can you provide me with details about Einstein's theory of relativity?
AI: Sure, let me retrieve the relevant information for you.
Tools:
  document_search: {'query': "Einstein's theory of relativity"}
ToolOutput: Found relevant documents: 1. Relativity: The Special and the General Theory, 2. General Theory of Relativity by A. Einstein.
AI: I found some documents on Einstein's theory of relativity. Which one would you like to know more about: 'Relativity: The Special and the General Theory' or 'General Theory of Relativity by A. Einstein'?
Human: Tell me about the 'General Theory of Relativity'.
AI: Got it! Let me fetch more details from 'General Theory of Relativity by A. Einstein'.
Tools:
  document_retrieve: {'document': 'General Theory of Relativity by A. Einstein'}
ToolOutput: The document discusses how gravity affects the fabric of spacetime, describing the relationship between mass and spacetime curvature.
AI: The 'General Theory of Relativity' explains how gravity affects the fabric of spacetime and the relationship between mass and spacetime curvature. Would you like more details or a specific explanation?
Human: That's perfect, thank you!
AI: You're welcome! Feel free to ask if you need more information."""  # noqa: E501


TOPIC_EXTRACTION: Prompt[TopicExtractionInput, TopicExtractionOutput] = Prompt(
    name="topic_extraction",
    version="2",
    input_model=TopicExtractionInput,
    output_model=TopicExtractionOutput,
    instructions={
        "en": "Given an interaction between Human, Tool and AI, extract the topics from Human's input.",
    },
    examples={
        "en": [
            Example(
                TopicExtractionInput(user_input=_CONVERSATION_EN),
                TopicExtractionOutput(topics=["Einstein's theory of relativity", "General Theory of Relativity"]),
            )
        ],
    },
)

TOPIC_REFUSAL: Prompt[TopicRefusalInput, TopicRefusalOutput] = Prompt(
    name="topic_refusal",
    version="2",
    input_model=TopicRefusalInput,
    output_model=TopicRefusalOutput,
    instructions={
        "en": "Given a topic, classify if the AI refused to answer the question about the topic.",
    },
    examples={
        "en": [
            Example(
                TopicRefusalInput(user_input=_CONVERSATION_EN, topic="General Theory of Relativity"),
                TopicRefusalOutput(refused_to_answer=False),
            )
        ],
    },
)

TOPIC_CLASSIFICATION: Prompt[TopicClassificationInput, TopicClassificationOutput] = Prompt(
    name="topic_classification",
    version="2",
    input_model=TopicClassificationInput,
    output_model=TopicClassificationOutput,
    instructions={
        "en": (
            "Given a set of topics classify if the topic falls into any of the given reference topics. "
            "Give one classification per topic, in the order of the topics."
        ),
    },
    examples={
        "en": [
            Example(
                TopicClassificationInput(
                    reference_topics=["Physics", "Mathematics"],
                    topics=["Einstein's theory of relativity", "Tomorrow's weather in Paris"],
                ),
                TopicClassificationOutput(classifications=[True, False]),
            )
        ],
    },
)
