"""An example ragqa suite for a RAG service: sync and async tests, policies, a marker, one excluded judge.

`test_invented_details_are_caught` FAILS ON PURPOSE, to show the per-judge failure message.
"""

from __future__ import annotations

import pytest
from rag_service import answer

from ragqa import Sample


def sample_for(question: str, response: str | None = None) -> Sample:
    reply = answer(question)
    return Sample(
        id=question,
        user_input=question,
        response=response if response is not None else reply.text,
        retrieved_contexts=reply.contexts,
    )


def test_refund_answer_is_faithful(ragqa):
    # sync test: threshold 0.8 comes from ragqa.thresholds in application.yaml
    result = ragqa.check_metric("faithfulness", sample_for("What is your refund policy?"))
    assert result.aggregate.n_ok == 3


async def test_shipping_answer_does_not_hallucinate_on_any_judge(ragqa):
    # async test, every judge must pass; hallucination is lower-is-better (<= 0.2)
    await ragqa.assert_metric("hallucination", sample_for("How long does shipping take?"), policy="all")


@pytest.mark.parametrize("question", ["What is your refund policy?", "Is there a warranty on laptops?"])
def test_two_of_three_judges_agree(ragqa, question):
    ragqa.check_metric("faithfulness", sample_for(question), threshold=0.9, policy="at_least:2")


def test_invented_details_are_caught(ragqa):
    # FAILS ON PURPOSE: the answer adds a borderline detail and an invented one
    response = (
        "Refunds are accepted within 30 days of purchase. "
        "Refunds are paid to the original payment method within 5 business days. "
        "Store credit never expires."
    )
    ragqa.check_metric("faithfulness", sample_for("What is your refund policy?", response))


@pytest.mark.usefixtures("judge_c_answers_garbage")
async def test_panel_survives_a_judge_answering_garbage(ragqa):
    result = await ragqa.assert_metric("faithfulness", sample_for("Is there a warranty on laptops?"), policy="all")
    assert [f.judge_id for f in result.failures] == ["judge-c"]
    assert result.aggregate.n_ok == 2


@pytest.mark.ragqa(judges=["judge-a", "judge-b"])
def test_marker_picks_judges(ragqa):
    result = ragqa.check_metric("faithfulness", sample_for("How long does shipping take?"), policy="all")
    assert [o.judge_id for o in result.judges] == ["judge-a", "judge-b"]
