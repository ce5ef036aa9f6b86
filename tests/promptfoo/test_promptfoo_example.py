"""The shipped all-RAG-types promptfoo example passes as a user runs it: offline, and on a user's fake server."""

from __future__ import annotations

from pathlib import Path

from _cli import CliResult, run_cli

from ragqa.evaluation import PanelEvaluator
from ragqa.judges.local import LocalEmbedder, LocalJudge
from ragqa.judges.local.questions import generated_question
from ragqa.metrics import ResponseRelevancy
from ragqa.testing import make_sample
from ragqa.testing.server import fake_openai_server_process

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "promptfoo"
QUESTION = "How long do I have to return an item for a refund?"


def _ragqa_test(*args: str, fake_url: str | None = None) -> CliResult:
    """``ragqa test rag_checks.yaml ARGS`` in the example's folder, as the docs tell a user to run it."""
    env = {} if fake_url is None else {"RAGQA_FAKE_URL": fake_url}
    return run_cli("test", "rag_checks.yaml", *args, cwd=EXAMPLE, env=env)


def _passes_all(proc: CliResult) -> None:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 passed, 0 failed of 6 assertion(s)" in proc.stdout
    assert "PASS  [1] refund window :: answer-relevance" in proc.stdout


def test_the_example_passes_offline_with_the_local_profile() -> None:
    _passes_all(_ragqa_test("--profile", "local"))


def test_the_example_passes_on_the_fake_server_a_user_starts() -> None:
    # `python -m ragqa.testing.server --responder ragqa`, as docs/judges.md says
    with fake_openai_server_process(responder="ragqa") as url:
        _passes_all(_ragqa_test(fake_url=url))


async def test_the_example_comment_figure_for_the_policy_wording() -> None:
    judge, embedder = LocalJudge("l"), LocalEmbedder("e", "hashing")
    scores = {}
    for response in (
        "Refunds are accepted within 30 days of purchase.",
        "You can return an item for a refund within 30 days of purchase.",
    ):
        result = await PanelEvaluator([judge], embedders=[embedder]).score(
            make_sample(user_input=QUESTION, response=response), ResponseRelevancy()
        )
        assert result.aggregate.value is not None
        scores[response] = result.aggregate.value
    policy, customer = scores.values()
    assert round(policy, 2) == 0.29  # the figure the example's comment gives (hashing embedder)
    assert customer >= 0.7


def test_a_duration_answer_generates_a_how_long_question_without_the_answer() -> None:
    response = "You can return an item for a refund within 30 days of purchase."
    questions = {generated_question(response, attempt, "en") for attempt in (1, 2, 3)}
    assert questions == {"How long return item refund purchase?"}
    assert generated_question("The plan costs $20 per month.", 1, "en") == "How much plan costs month?"
    ru = generated_question("Возврат возможен в течение 14 дней после покупки.", 1, "ru")
    assert ru.startswith("Как долго") and "14" not in ru
    # no duration or amount: the topic forms as before
    assert generated_question("Mount Kilimanjaro is in Tanzania.", 1, "en") == "What about Mount Kilimanjaro Tanzania?"
