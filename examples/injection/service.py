"""An application service that receives ragqa's judge panel by injection (dependency-injector).

The service declares what it needs with ``Provide[Container.evaluator]``; the application creates
ragqa's container once (settings, profiles, judges, cache) and wires it into its own modules, as a
Spring application receives beans. Run it from the repository root:

    python examples/injection/service.py

It uses the ``local`` profile (the offline judges), so it needs no key and no network.
"""

from __future__ import annotations

import asyncio
import sys

from dependency_injector.wiring import Provide, inject

from ragqa import Sample
from ragqa.container import Container, close_container, create_container
from ragqa.evaluation import PanelEvaluator
from ragqa.metrics import Faithfulness


class AnswerAudit:
    """Checks a support bot's answer against its retrieved contexts before it is shown.

    Args:
        evaluator: ragqa's panel evaluator, injected from the application's container.
        threshold: the lowest panel aggregate of faithfulness (0..1, higher is better) accepted.
    """

    @inject
    def __init__(self, evaluator: PanelEvaluator = Provide[Container.evaluator], threshold: float = 0.5) -> None:
        self.evaluator = evaluator
        self.threshold = threshold

    async def check(self, question: str, answer: str, contexts: list[str]) -> tuple[bool, float]:
        """Return (accepted, the panel's faithfulness aggregate) for one answer."""
        sample = Sample(id="live", user_input=question, response=answer, retrieved_contexts=contexts)
        [result] = await self.evaluator.score_sample(sample, [Faithfulness()])
        return result.aggregate.value >= self.threshold, result.aggregate.value


async def main() -> int:
    """Wire ragqa's container into this module, audit two answers, print the verdicts."""
    container = create_container(profiles=["local"])
    container.wire(modules=[__name__])
    try:
        audit = AnswerAudit()
        contexts = ["Refunds are accepted within 30 days of purchase.", "Refunds go to the original payment method."]
        for answer in ("Refunds are accepted within 30 days of purchase.", "Refunds are paid in gold bars."):
            accepted, score = await audit.check("How long do I have to ask for a refund?", answer, contexts)
            print(f"{'accepted' if accepted else 'held back'}  faithfulness {score:.2f}  {answer}")
    finally:
        container.unwire()
        await close_container(container)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
