"""The local judge's answers to the agent prompts: transcript parsing, courtesies, refusals, topics, en and ru."""

from __future__ import annotations

from ragqa.judges.local import LocalJudge
from ragqa.judges.local.answers_agent import is_courtesy, is_refusal, parse_transcript, topic_of
from ragqa.messages import parse_messages, render_conversation
from ragqa.prompts.goal import GOAL_OUTCOME, OUTCOME_COMPARISON, GoalOutcomeInput, OutcomeComparisonInput
from ragqa.prompts.topics import (
    TOPIC_CLASSIFICATION,
    TOPIC_EXTRACTION,
    TOPIC_REFUSAL,
    TopicClassificationInput,
    TopicExtractionInput,
    TopicRefusalInput,
)

TRANSCRIPT = render_conversation(
    parse_messages(
        [
            {"type": "human", "content": "Will it rain in London tomorrow?\nI have a picnic."},
            {"type": "ai", "content": "", "tool_calls": [{"name": "forecast", "args": {"city": "London"}}]},
            {"type": "tool", "content": "light rain"},
            {"type": "ai", "content": "Yes, light rain is expected.\nTake an umbrella."},
            {"type": "human", "content": "Who will win the world cup?"},
            {"type": "ai", "content": "Sorry, I can only help with weather questions."},
            {"type": "human", "content": "Thanks a lot!"},
        ]
    )
)


def test_transcript_is_read_back_into_turns() -> None:
    turns = parse_transcript(TRANSCRIPT)
    assert [t.human for t in turns] == [
        "Will it rain in London tomorrow?\nI have a picnic.",
        "Who will win the world cup?",
        "Thanks a lot!",
    ]
    assert turns[0].tool_calls == ["forecast: {'city': 'London'}"]
    assert turns[0].tool_outputs == ["light rain"]
    assert turns[0].replies == ["Yes, light rain is expected.\nTake an umbrella."]
    assert turns[1].replies == ["Sorry, I can only help with weather questions."]


def test_courtesies_and_refusals() -> None:
    assert is_courtesy("Thanks a lot!") and is_courtesy("ok, great") and is_courtesy("Понятно, спасибо.")
    assert not is_courtesy("Thanks, and can you book a hotel?")
    assert is_refusal("I'm sorry, I can only help with travel bookings.")
    assert is_refusal("Извините, я могу помочь только с вопросами о тарифах.")
    assert not is_refusal("I can't find a flight on that date, but there is one the day after.")


async def test_topics_refusals_and_classification() -> None:
    judge = LocalJudge("local")
    topics = (await judge.ask(TOPIC_EXTRACTION, TopicExtractionInput(user_input=TRANSCRIPT))).topics
    assert topics == [topic_of("Will it rain in London tomorrow?\nI have a picnic."), "win world cup"]
    refused = [
        (await judge.ask(TOPIC_REFUSAL, TopicRefusalInput(user_input=TRANSCRIPT, topic=t))).refused_to_answer
        for t in topics
    ]
    assert refused == [False, True]
    classified = await judge.ask(
        TOPIC_CLASSIFICATION, TopicClassificationInput(reference_topics=["rain and weather forecasts"], topics=topics)
    )
    assert classified.classifications == [True, False]


async def test_goal_and_outcome() -> None:
    judge = LocalJudge("local")
    inferred = await judge.ask(GOAL_OUTCOME, GoalOutcomeInput(workflow=TRANSCRIPT))
    assert inferred.user_goal == "Will it rain in London tomorrow? I have a picnic. Who will win the world cup?"
    assert inferred.end_state.startswith("light rain Yes, light rain is expected.")
    achieved = await judge.ask(
        OUTCOME_COMPARISON,
        OutcomeComparisonInput(desired_outcome="Light rain is expected.", arrived_outcome=inferred.end_state),
    )
    assert achieved.verdict == 1 and achieved.reason.startswith("local approximation")
    declined = await judge.ask(
        OUTCOME_COMPARISON,
        OutcomeComparisonInput(desired_outcome="A table is booked.", arrived_outcome="Sorry, I cannot help with that."),
    )
    assert declined.verdict == 0


async def test_russian_conversation() -> None:
    judge = LocalJudge("local")
    example = TOPIC_EXTRACTION.examples["ru"][0].input
    topics = (await judge.ask(TOPIC_EXTRACTION, example, language="ru")).topics
    assert len(topics) == 2
    refused = [
        (await judge.ask(TOPIC_REFUSAL, TopicRefusalInput(user_input=example.user_input, topic=t))).refused_to_answer
        for t in topics
    ]
    assert refused == [False, True]
