"""Judge calls per sample per metric on both call plans, counted on the fake OpenAI-compatible server.

Each metric runs alone (then the six together, where metrics share the response's statements)
on samples of the shipped IT-helpdesk dataset that have exactly ``--contexts`` retrieved contexts,
with one judge served by the fake server (answering as the offline local judge would). The
table shows the chat requests the server received per sample, for the ``batched`` and the
``ragas`` call plan, and whether every score was equal on both plans.

Run::

    python benchmarks/call_counts.py                 # 10 samples with 4 contexts
    python benchmarks/call_counts.py --samples 3 --contexts 3
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import ragqa
from ragqa.container import close_container, create_container
from ragqa.datasets import load_dataset
from ragqa.report import Report
from ragqa.run.loop import run_sync
from ragqa.testing import fake_openai_server, local_judge_responder

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "examples/datasets/it_helpdesk.jsonl"
METRICS = (
    "faithfulness",
    "noise_sensitivity",
    "context_precision",
    "context_recall",
    "context_entity_recall",
    "response_relevancy",
)
CONFIG = """
spring:
  ai:
    openai: {base-url: "%s", api-key: "sk-fake-not-secret"}
    chat-models:
      list:
        - {id: judge}
    embedding-models:
      list:
        - {id: embed, options: {dimensions: 64}}
"""


def scores(report: Report) -> list[float]:
    """Every judge score of the report, in order (NaN for a failure)."""
    return [j.score.value if j.score is not None else math.nan for r in report.results for j in r.judges]


def same(a: list[float], b: list[float]) -> bool:
    """Equal lists of scores, NaN equal to NaN."""
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b, strict=True))


def main() -> int:
    """Print the table; exit 1 when a score differs between the plans."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10, help="samples to score (default 10)")
    parser.add_argument("--contexts", type=int, default=4, help="retrieved contexts per sample (default 4)")
    args = parser.parse_args()
    samples = [s for s in load_dataset(DATASET) if len(s.contexts()) == args.contexts][: args.samples]
    if not samples:
        parser.error(f"no sample of {DATASET.name} has {args.contexts} contexts")

    rows: list[tuple[str, float, float, bool]] = []
    with fake_openai_server(record=True) as server, tempfile.TemporaryDirectory() as tmp:
        server.script("*", local_judge_responder())
        config = Path(tmp) / "application.yaml"
        config.write_text(CONFIG % server.base_url, encoding="utf-8")
        for label, metrics in [*((m, [m]) for m in METRICS), ("all six", list(METRICS))]:
            calls: dict[str, float] = {}
            got: dict[str, list[float]] = {}
            for plan in ("batched", "ragas"):
                server.clear_requests()
                container = create_container(config, (), environ={})  # this server, whatever the environment says
                try:
                    report = ragqa.evaluate(samples, metrics, container=container, call_plan=plan, no_cache=True)
                finally:
                    run_sync(close_container(container))
                chat = [r for r in server.requests if r.path.endswith("/chat/completions")]
                failures = [j.failure for r in report.results for j in r.judges if j.failure is not None]
                if failures:
                    print(f"{label}, plan {plan}: a judge failed: {failures[0].message}", file=sys.stderr)
                    return 1
                calls[plan] = len(chat) / len(samples)
                got[plan] = scores(report)
            rows.append((label, calls["batched"], calls["ragas"], same(got["batched"], got["ragas"])))

    print(f"judge calls per sample and judge, {len(samples)} sample(s) with {args.contexts} contexts (fake server)")
    print()
    print("| metric | batched | ragas | scores equal |")
    print("|---|---|---|---|")
    for label, batched, ragas, equal in rows:
        print(f"| {label} | {batched:g} | {ragas:g} | {'yes' if equal else 'NO'} |")
    return 0 if all(equal for *_, equal in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
