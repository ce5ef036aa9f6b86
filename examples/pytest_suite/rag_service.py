"""A toy RAG service standing in for the system under test: keyword retrieval plus a template answer."""

from __future__ import annotations

from dataclasses import dataclass

DOCUMENTS = {
    "refunds": "Refunds are accepted within 30 days of purchase. Refunds go to the original payment method.",
    "shipping": "Standard shipping takes 3 to 5 business days. Express shipping takes 1 business day.",
    "warranty": "Every laptop has a two-year warranty. The warranty covers hardware defects only.",
}

ANSWERS = {
    "refunds": "Refunds are accepted within 30 days of purchase.",
    "shipping": "Standard shipping takes 3 to 5 business days.",
    "warranty": "Every laptop has a two-year warranty covering hardware defects.",
}


@dataclass(frozen=True)
class Reply:
    text: str
    contexts: list[str]


def retrieve(question: str) -> list[str]:
    words = question.lower()
    hits = [text for topic, text in DOCUMENTS.items() if topic.rstrip("s") in words]
    return hits or list(DOCUMENTS.values())


def answer(question: str) -> Reply:
    words = question.lower()
    topic = next((t for t in ANSWERS if t.rstrip("s") in words), None)
    text = ANSWERS[topic] if topic else "I do not know."
    return Reply(text=text, contexts=retrieve(question))
