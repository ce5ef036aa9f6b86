"""The local judge's answers to the agent metrics' prompts (goal accuracy, topic adherence).

Every answer is an approximation built from the conversation transcript that the prompts carry
(:func:`ragqa.messages.render_conversation`, read back by :func:`parse_transcript`):

- ``goal_outcome``: the goal is the human's substantive turns joined (courtesies such as
  "thanks" and answers to the agent's questions left out); the end state is everything the tools
  returned and the agent said, in order;
- ``outcome_comparison``: verdict 1 when the desired outcome's sentences are supported by the
  arrived outcome (mean lexical support, :mod:`ragqa.judges.local.support`, at least the judge's
  ``support_threshold``), 0 when the arrived outcome is nothing but refusals;
- ``topic_extraction``: one topic per substantive human turn that is not an answer to the
  agent's question: its first content words;
- ``topic_refusal``: the agent refused when its reply to the human turn that best matches the
  topic calls no tool and reads as a refusal (English and Russian phrases), or is missing;
- ``topic_classification``: a topic falls into a reference topic when they share a content word
  (stem), or, when the judge uses embeddings, when their cosine reaches ``support_threshold``.

Verdicts are binary, as an LLM gives them. Every reason starts with ``local approximation``.
Each handler registers itself for its prompt (:func:`~ragqa.judges.local._handler.register_handler`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ragqa._math import cosine
from ragqa.judges.local._handler import LocalJudgeView, register_handler
from ragqa.judges.local.text import (
    STOP_WORDS,
    detect_script,
    features,
    language_pattern,
    split_sentences,
    tokens,
    word_list,
)
from ragqa.prompts.goal import (
    GOAL_OUTCOME,
    OUTCOME_COMPARISON,
    GoalOutcomeInput,
    GoalOutcomeOutput,
    OutcomeComparisonInput,
    OutcomeComparisonOutput,
)
from ragqa.prompts.topics import (
    TOPIC_CLASSIFICATION,
    TOPIC_EXTRACTION,
    TOPIC_REFUSAL,
    TopicClassificationInput,
    TopicClassificationOutput,
    TopicExtractionInput,
    TopicExtractionOutput,
    TopicRefusalInput,
    TopicRefusalOutput,
)
from ragqa.schema import Language

__all__ = ["Turn", "is_courtesy", "is_refusal", "parse_transcript", "topic_of"]

_TAG = "local approximation"
_TOPIC_WORDS = 6
"""Content words kept in a topic extracted from a human turn."""


def _refusal() -> re.Pattern[str]:
    """Phrases of an agent declining a request (pattern ``refusals`` of every language read)."""
    return language_pattern("refusals", r"\b(?:", ")")


_LINE = re.compile(r"^(Human|AI|ToolOutput): ?(.*)$")


@dataclass
class Turn:
    """One human turn and what followed it until the next human turn.

    Attributes:
        human: the human's text.
        follow_up: True when the agent's last text before this turn asked a question (the
            turn answers it rather than raising a topic).
        replies: the agent's texts, in order.
        tool_outputs: what the tools returned, in order.
        tool_calls: the ``name: args`` lines of the calls the agent made.
    """

    human: str
    follow_up: bool = False
    replies: list[str] = field(default_factory=list)
    tool_outputs: list[str] = field(default_factory=list)
    tool_calls: list[str] = field(default_factory=list)


def parse_transcript(text: str) -> list[Turn]:
    """Read a transcript written by :func:`ragqa.messages.render_conversation` back into turns.

    Lines that start no message (``Human:``, ``AI:``, ``ToolOutput:``, ``Tools:``) continue the
    previous one; a message before the first human turn opens an empty human turn.

    Returns:
        The turns in order (empty for an empty transcript).
    """
    turns: list[Turn] = []
    current: list[str] | None = None
    in_tools = False
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            kind, content = match.groups()
            in_tools = False
            if kind == "Human":
                asked = bool(turns and turns[-1].replies and turns[-1].replies[-1].rstrip().endswith("?"))
                turns.append(Turn(human=content, follow_up=asked))
                current = None
                continue
            if not turns:
                turns.append(Turn(human=""))
            target = turns[-1].replies if kind == "AI" else turns[-1].tool_outputs
            target.append(content)
            current = target
        elif line == "Tools:":
            in_tools = True
            if not turns:
                turns.append(Turn(human=""))
        elif in_tools and line.startswith("  "):
            turns[-1].tool_calls.append(line.strip())
        elif current is not None and current:
            current[-1] += "\n" + line
        elif turns and current is None and not in_tools:
            turns[-1].human += "\n" + line
    return turns


def _content(text: str) -> list[str]:
    """Content-word stems of ``text`` in order."""
    return list(features(text, detect_script(text)).content)


def is_courtesy(text: str) -> bool:
    """True when a human turn asks for nothing.

    That is: every word is a courtesy (``ok``, ``great``, ``понятно``), or the turn thanks
    (``thanks``, ``спасибо``) in at most eight words without a question mark.
    """
    words = tokens(text)
    courtesy = word_list("courtesy")
    if all(w in courtesy for w in words):
        return True
    return "?" not in text and len(words) <= 8 and any(w in word_list("thanks") for w in words)


def is_refusal(text: str) -> bool:
    """True when ``text`` reads as the agent declining (``I can only help with ...``, ``не могу помочь``)."""
    return bool(_refusal().search(text))


def _overlap(a: str, b: str) -> float:  # used to find the turn a topic came from
    """The larger share of either text's content stems found in the other (0.0 when both have none)."""
    sa, sb = set(_content(a)), set(_content(b))
    if not sa or not sb:
        return 0.0
    common = len(sa & sb)
    return max(common / len(sa), common / len(sb))


def _substantive(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if t.human.strip() and not is_courtesy(t.human)]


@register_handler(GOAL_OUTCOME)
async def _goal_outcome(judge: LocalJudgeView, data: GoalOutcomeInput, language: Language) -> GoalOutcomeOutput:
    turns = parse_transcript(data.workflow)
    goal = " ".join(" ".join(t.human.split()) for t in _substantive(turns))
    end = " ".join(" ".join(x.split()) for t in turns for x in (*t.tool_outputs, *t.replies) if x.strip())
    return GoalOutcomeOutput(user_goal=goal, end_state=end)


@register_handler(OUTCOME_COMPARISON)
async def _outcome_comparison(
    judge: LocalJudgeView, data: OutcomeComparisonInput, language: Language
) -> OutcomeComparisonOutput:
    threshold = judge.settings.support_threshold
    arrived = [s for s in split_sentences(data.arrived_outcome) if s.strip()]
    if not arrived:
        return OutcomeComparisonOutput(reason=f"{_TAG}: the conversation ends with no outcome", verdict=0)
    if all(is_refusal(s) for s in arrived):
        return OutcomeComparisonOutput(reason=f"{_TAG}: the agent only declined", verdict=0)
    sentences = [s for s in split_sentences(data.desired_outcome) if _content(s)] or [data.desired_outcome]
    values = [judge.support(s, data.arrived_outcome).value for s in sentences]
    value = math.fsum(values) / len(values)
    verdict = 1 if value >= threshold else 0
    how = "supports" if verdict else "does not support"
    return OutcomeComparisonOutput(
        reason=f"{_TAG}: the arrived outcome {how} the desired one (support {value:.2f}, threshold {threshold:.2f})",
        verdict=verdict,
    )


def topic_of(text: str) -> str:
    """The topic of a human turn: its first content words (stop words dropped), as written."""
    script = detect_script(text)
    stop, courtesy = STOP_WORDS[script], word_list("courtesy")
    words = [w for w in tokens(" ".join(text.split())) if w not in stop and len(w) > 1 and w not in courtesy]
    return " ".join(words[:_TOPIC_WORDS])


@register_handler(TOPIC_EXTRACTION)
async def _topic_extraction(
    judge: LocalJudgeView, data: TopicExtractionInput, language: Language
) -> TopicExtractionOutput:
    topics: list[str] = []
    for turn in _substantive(parse_transcript(data.user_input)):
        if turn.follow_up:
            continue
        topic = topic_of(turn.human)
        if topic and topic not in topics:
            topics.append(topic)
    return TopicExtractionOutput(topics=topics)


@register_handler(TOPIC_REFUSAL)
async def _topic_refusal(judge: LocalJudgeView, data: TopicRefusalInput, language: Language) -> TopicRefusalOutput:
    turns = [t for t in parse_transcript(data.user_input) if t.human.strip()]
    if not turns:
        return TopicRefusalOutput(refused_to_answer=True)
    best = max(turns, key=lambda t: _overlap(data.topic, t.human))
    reply = " ".join(best.replies)
    refused = not best.tool_calls and (not reply.strip() or is_refusal(reply))
    return TopicRefusalOutput(refused_to_answer=refused)


@register_handler(TOPIC_CLASSIFICATION)
async def _topic_classification(
    judge: LocalJudgeView, data: TopicClassificationInput, language: Language
) -> TopicClassificationOutput:
    references = [set(_content(r)) for r in data.reference_topics]
    out = []
    for topic in data.topics:
        stems = set(_content(topic))
        on_topic = any(stems & ref for ref in references)
        embedder = judge.relevance_embedder
        if not on_topic and data.reference_topics and embedder is not None:
            vectors = await embedder.embed([topic, *data.reference_topics])
            sims = [max(0.0, min(1.0, cosine(vectors[0], v))) for v in vectors[1:]]
            on_topic = max(sims) >= judge.settings.support_threshold
        out.append(on_topic)
    return TopicClassificationOutput(classifications=out)
