"""Convert TruLens' Snowflake IT-helpdesk RAG traces (CSV) into ragqa's JSONL sample format.

Source: ``truera/trulens`` at commit ``e8e6bbdeb166b83452efcc2c74ad841e20bf82b1``, file
``src/benchmark/trulens/benchmark/benchmark_frameworks/experiments/cortex_eval_df_with_trulens_scores.csv``
(MIT licence). 60 rows of a real enterprise RAG assistant over IT knowledge-base PDFs.

Mapping (one JSON object per CSV row, in row order):

- ``id``: ``it-001`` ... ``it-060`` (the CSV row number, 1-based).
- ``user_input``: ``query``.
- ``response``: ``llm_answer`` with the assistant's citation markers (``【†1†】``) removed; the
  verbatim answer is kept in ``metadata.llm_answer``.
- ``reference``: ``expected_response``.
- ``retrieved_contexts``: the ``excerpt`` of each entry of ``rag_context`` (a JSON list of
  ``{index, excerpt, source, source_id, presigned_url}``), in retrieval order, verbatim.
- ``reference_contexts``: ``golden`` (a JSON list); ``null`` when the list is empty (9 rows).
- ``metadata``: ``accuracy_llm`` (0/1/2, a GPT-4 correctness grade, an LLM label), ``context_file``,
  ``retrieved_sources``, ``retrieval_hit_at_1/3``, ``retrieval_ndcg_at_1/3``, and the TruLens scores
  ``trulens_context_relevance``, ``trulens_answer_relevance``, ``trulens_groundedness``.

Usage::

    python scripts/convert_trulens.py PATH/TO/cortex_eval_df_with_trulens_scores.csv \
        -o examples/datasets/it_helpdesk.jsonl

The output is deterministic: running it again on the same CSV gives the same bytes.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from pathlib import Path
from typing import Any

CITATION = re.compile(r"\s*【†\d+†(?:】|\]\])")
"""The assistant's inline citation marker, ``【†1†】`` (3 answers close it as ``【†1†]]``), with the space before it."""


def strip_citations(text: str) -> str:
    """Remove ``【†N†】`` (or ``【†N†]]``) citation markers (and the whitespace before each) from ``text``."""
    return CITATION.sub("", text)


def _bool(value: str) -> bool:
    if value not in ("True", "False"):
        raise ValueError(f"expected True or False, got {value!r}")
    return value == "True"


def _float(value: str) -> float | None:
    return float(value) if value.strip() else None


def convert_row(number: int, row: dict[str, str]) -> dict[str, Any]:
    """Convert one CSV row (1-based ``number``) into a ragqa sample dict.

    Raises:
        ValueError: when a JSON column does not parse or has an unexpected shape.
    """
    rag_context = json.loads(row["rag_context"])
    if not isinstance(rag_context, list) or not all(isinstance(c, dict) and "excerpt" in c for c in rag_context):
        raise ValueError(f"row {number}: rag_context is not a list of {{excerpt: ...}} objects")
    golden = json.loads(row["golden"]) if row["golden"].strip() else []
    if not isinstance(golden, list) or not all(isinstance(g, str) for g in golden):
        raise ValueError(f"row {number}: golden is not a list of strings")
    context_file = json.loads(row["context_file"]) if row["context_file"].strip() else []
    return {
        "id": f"it-{number:03d}",
        "user_input": row["query"].strip(),
        "response": strip_citations(row["llm_answer"]),
        "reference": row["expected_response"],
        "retrieved_contexts": [c["excerpt"] for c in rag_context],
        "reference_contexts": golden or None,
        "metadata": {
            "accuracy_llm": int(row["accuracy_llm"]),
            "context_file": context_file,
            "retrieved_sources": [c.get("source") for c in rag_context],
            "retrieval_hit_at_1": _bool(row["retrieval_hit_at_1"]),
            "retrieval_hit_at_3": _bool(row["retrieval_hit_at_3"]),
            "retrieval_ndcg_at_1": _float(row["retrieval_ndcg_at_1"]),
            "retrieval_ndcg_at_3": _float(row["retrieval_ndcg_at_3"]),
            "trulens_context_relevance": _float(row["context_relevance_scores"]),
            "trulens_answer_relevance": _float(row["answer_relevance_scores"]),
            "trulens_groundedness": _float(row["groundedness_scores"]),
            "llm_answer": row["llm_answer"],
        },
    }


def convert(source: Path) -> list[dict[str, Any]]:
    """Read the TruLens CSV at ``source`` and return one sample dict per row."""
    csv.field_size_limit(sys.maxsize)
    with source.open(newline="", encoding="utf-8") as f:
        return [convert_row(i, row) for i, row in enumerate(csv.DictReader(f), 1)]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("csv", type=Path, help="cortex_eval_df_with_trulens_scores.csv")
    parser.add_argument("-o", "--out", type=Path, default=Path("examples/datasets/it_helpdesk.jsonl"))
    args = parser.parse_args(argv)
    samples = convert(args.csv)
    with args.out.open("w", encoding="utf-8", newline="\n") as f:
        for sample in samples:
            f.write(json.dumps(sample, ensure_ascii=False) + "\n")
    print(f"wrote {len(samples)} samples to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
