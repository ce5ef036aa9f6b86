"""Agreement of the local judge with labels: HaluEval QA and BEGIN (faithfulness), TruLens relevance sets.

The relevance part (MS MARCO hard negatives and the TruLens golden sets) is described in
``_local_relevance.py``; the faithfulness part below.

Runs the real Faithfulness metric (``ragqa.metrics.Faithfulness``) through the
``PanelEvaluator`` with a panel of variants:

- ``yardstick``: the design notes' simple offline method, re-implemented here: statements are the
  response's pysbd sentences; support = share of a sentence's content words (lower-cased, stop
  words removed, no stemming) found in its best-matching context sentence, capped by the share of
  its numbers found.
- ``local-strict`` / ``local-lenient``: the two local judges of ``application-local.yaml``
  read from that file (support threshold 0.6 with number and entity checks; 0.4 without them).
- ``...-binary``: the same judges with their graded support hidden, so the metric sees only the
  0/1 verdicts an LLM would give (shows how often binary verdicts tie).

Measures:

- HaluEval QA (``halueval_qa/``): for each question, the right answer should score more faithful
  to the knowledge than the hallucinated answer; ties count 0.5. Both files (one-turn and
  multi-turn hallucinations) against the same 500 right answers: 1,000 pairs.
- BEGIN (``begin/``): all four files, ``Generic`` dropped; AUROC of faithfulness for "Fully
  attributable" (positive) vs "Not fully attributable" by the Mann-Whitney U statistic (ties 0.5).

A response with no statement scores NaN under RAGAS; here NaN ranks as 0.0 (nothing supported)
and the NaN count is reported (for BEGIN, the AUROC with NaN items excluded is reported too).

Usage::

    python benchmarks/local_judge_agreement.py [--data ../shared/data] [--part all|faithfulness|relevance]
        [--begin-limit N] [--json out.json]

A missing data folder skips its part with a message (exit code 0), so the script runs in a clone
without the shared data.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import math
import random
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pysbd
from pydantic import BaseModel

from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.base import Judge
from ragqa.judges.local import GradedNLIOutput, GradedStatementVerdict, LocalJudge, minilm_available
from ragqa.judges.local.text import STOP_WORDS
from ragqa.metrics import Faithfulness
from ragqa.prompts.base import Prompt
from ragqa.prompts.nli import NLIInput, NLIOutput, StatementVerdict
from ragqa.prompts.statements import StatementsInput, StatementsOutput
from ragqa.schema import Language, Sample
from ragqa.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _local_relevance import relevance_rows, relevance_table  # noqa: E402  (a sibling of this script)

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)

REPO = Path(__file__).resolve().parents[1]
csv.field_size_limit(sys.maxsize)


# ---- the yardstick, re-implemented ------------------------------------------------------------

_SEGMENTER = pysbd.Segmenter(language="en", clean=False)
_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SEGMENTER.segment(text) if s.strip()]


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS["en"]}


def yardstick_support(statement: str, context: str) -> float:
    """Content-word share in the best context sentence, capped by the share of numbers found."""
    words = _content(statement)
    if not words:
        return 1.0
    best = max((len(words & _content(s)) / len(words) for s in _sentences(context)), default=0.0)
    numbers = set(_DIGITS.findall(statement))
    if numbers:
        found = set(_DIGITS.findall(context))
        best = min(best, len(numbers & found) / len(numbers))
    return best


class YardstickJudge:
    """The yardstick as a judge: pysbd sentences as statements, lexical share as support."""

    def __init__(self, judge_id: str = "yardstick") -> None:
        self._id = judge_id

    @property
    def id(self) -> str:
        return self._id

    @property
    def fingerprint(self) -> str:
        return json.dumps({"provider": "yardstick"})

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        if isinstance(data, StatementsInput):
            out: BaseModel = StatementsOutput(statements=_sentences(data.answer))
        elif isinstance(data, NLIInput):
            verdicts = []
            for s in data.statements:
                value = yardstick_support(s, data.context)
                verdicts.append(
                    GradedStatementVerdict(statement=s, reason="yardstick", verdict=int(value >= 0.5), support=value)
                )
            out = GradedNLIOutput(verdicts=verdicts)
        else:  # pragma: no cover - Faithfulness asks only these two
            raise NotImplementedError(prompt.name)
        assert isinstance(out, prompt.output_model)
        return out


class BinaryOnly:
    """Hides a judge's graded support: the metric sees only 0/1 verdicts, as from an LLM."""

    def __init__(self, inner: Judge, judge_id: str) -> None:
        self._inner = inner
        self._id = judge_id

    @property
    def id(self) -> str:
        return self._id

    @property
    def fingerprint(self) -> str:
        return json.dumps({"binary": self._inner.fingerprint})

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        out = await self._inner.ask(prompt, data, language=language)
        if isinstance(out, NLIOutput):  # keep only what an LLM may say: the binary verdicts
            binary = NLIOutput(verdicts=[StatementVerdict(**v.model_dump(exclude={"support"})) for v in out.verdicts])
            assert isinstance(binary, prompt.output_model)
            return binary
        return out


# ---- data ----------------------------------------------------------------------------------


_YES_NO = re.compile(r"^\s*(yes|no)\W*$", re.IGNORECASE)


def halueval(data: Path) -> tuple[list[Sample], list[tuple[str, str, str, bool]]]:
    """HaluEval samples and the (file, right id, hallucinated id, right answer is a bare yes/no) pairs."""
    samples: dict[str, Sample] = {}
    pairs = []
    for name in ("qa_one-turn_data.jsonl", "qa_multi-turn_data.jsonl"):
        with (data / "halueval_qa" / name).open(encoding="utf-8") as fh:
            for i, line in enumerate(fh):
                row = json.loads(line)
                right, wrong = f"halu:{i}:right", f"halu:{name}:{i}:hallucinated"
                for sid, answer in ((right, row["right_answer"]), (wrong, row["hallucinated_answer"])):
                    samples.setdefault(
                        sid,
                        Sample(
                            id=sid,
                            user_input=row["question"],
                            response=answer,
                            retrieved_contexts=[row["knowledge"]],
                        ),
                    )
                yes_no = bool(_YES_NO.match(row["right_answer"]))
                pairs.append((name, right, wrong, yes_no))
    return list(samples.values()), pairs


def begin(data: Path, limit: int | None, seed: int) -> tuple[list[Sample], dict[str, bool]]:
    """BEGIN samples (Generic dropped) and their labels (True = fully attributable)."""
    samples, labels = [], {}
    for path in sorted((data / "begin").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as fh:
            for i, row in enumerate(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)):
                if row["begin_label"] == "Generic":
                    continue
                sid = f"begin:{path.stem}:{i}"
                samples.append(
                    Sample(
                        id=sid,
                        user_input=row["message"] or "-",
                        response=row["response"],
                        retrieved_contexts=[row["knowledge"]],
                    )
                )
                labels[sid] = row["begin_label"] == "Fully attributable"
    if limit is not None and limit < len(samples):
        samples = random.Random(seed).sample(samples, limit)
    return samples, labels


# ---- statistics ----------------------------------------------------------------------------


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """AUROC by the Mann-Whitney U statistic with average ranks (ties count 0.5)."""
    values = sorted([(v, 1) for v in positives] + [(v, 0) for v in negatives])
    rank_sum, i = 0.0, 0
    while i < len(values):
        j = i
        while j < len(values) and values[j][0] == values[i][0]:
            j += 1
        average_rank = (i + 1 + j) / 2
        rank_sum += average_rank * sum(label for _, label in values[i:j])
        i = j
    n1, n0 = len(positives), len(negatives)
    return (rank_sum - n1 * (n1 + 1) / 2) / (n1 * n0)


@dataclass
class Row:
    judge: str
    halu_pairwise: float
    halu_ties: int
    halu_no_yes_no: float
    halu_by_file: dict[str, float]
    begin_auroc: float
    begin_by_file: dict[str, float]
    nan: int
    halu_scored_pairs: float
    begin_scored_auroc: float
    n_pairs: int
    n_begin: int


def _value(x: float) -> float:
    return 0.0 if math.isnan(x) else x


async def run(data: Path, begin_limit: int | None, seed: int) -> tuple[list[Row], float]:
    # The two judges exactly as application-local.yaml configures them, so the docs stay in step.
    panel = {m.id: m for m in load_settings(ROOT, ["local"], environ={}).judges()}
    strict = LocalJudge("local-strict", panel["local-strict"].local)
    lenient = LocalJudge("local-lenient", panel["local-lenient"].local)
    judges: list[Judge] = [
        YardstickJudge(),
        strict,
        lenient,
        BinaryOnly(strict, "local-strict-binary"),
        BinaryOnly(lenient, "local-lenient-binary"),
    ]
    halu_samples, pairs = halueval(data)
    begin_samples, labels = begin(data, begin_limit, seed)
    evaluator = PanelEvaluator(judges, [Faithfulness()], options=PanelOptions(max_concurrent_samples=64))
    started = time.perf_counter()
    report = await evaluator.evaluate([*halu_samples, *begin_samples])
    elapsed = time.perf_counter() - started

    scores: dict[str, dict[str, float]] = {j.id: {} for j in judges}
    for result in report.results:
        for outcome in result.judges:
            if outcome.score is None:
                raise RuntimeError(f"{outcome.judge_id} failed on {result.sample_id}: {outcome.failure}")
            scores[outcome.judge_id][result.sample_id] = outcome.score.value

    rows = []
    for judge in judges:
        s = scores[judge.id]
        by_file: dict[str, list[float]] = {}
        ties = 0
        plain: list[float] = []
        for name, right, wrong, yes_no in pairs:
            a, b = _value(s[right]), _value(s[wrong])
            ties += a == b
            won = 1.0 if a > b else 0.5 if a == b else 0.0
            by_file.setdefault(name, []).append(won)
            if not yes_no:
                plain.append(won)
        outcomes = [x for xs in by_file.values() for x in xs]
        per_file: dict[str, tuple[list[float], list[float]]] = {}
        for sample in begin_samples:
            assert sample.id is not None
            pos, neg = per_file.setdefault(sample.id.split(":")[1], ([], []))
            (pos if labels[sample.id] else neg).append(_value(s[sample.id]))
        all_pos = [v for pos, _ in per_file.values() for v in pos]
        all_neg = [v for _, neg in per_file.values() for v in neg]
        scored = [
            1.0 if s[r] > s[w] else 0.5 if s[r] == s[w] else 0.0
            for _, r, w, _ in pairs
            if not (math.isnan(s[r]) or math.isnan(s[w]))
        ]
        finite = [x for x in begin_samples if x.id is not None and not math.isnan(s[x.id])]
        rows.append(
            Row(
                judge=judge.id,
                halu_pairwise=sum(outcomes) / len(outcomes),
                halu_ties=ties,
                halu_no_yes_no=sum(plain) / len(plain),
                halu_by_file={k: sum(v) / len(v) for k, v in by_file.items()},
                begin_auroc=auroc(all_pos, all_neg),
                begin_by_file={k: auroc(p, n) for k, (p, n) in per_file.items() if p and n},
                nan=sum(1 for v in s.values() if math.isnan(v)),
                halu_scored_pairs=sum(scored) / len(scored),
                begin_scored_auroc=auroc(
                    [s[x.id] for x in finite if x.id is not None and labels[x.id]],
                    [s[x.id] for x in finite if x.id is not None and not labels[x.id]],
                ),
                n_pairs=len(pairs),
                n_begin=len(all_pos) + len(all_neg),
            )
        )
    return rows, elapsed


def table(rows: Sequence[Row]) -> str:
    head = (
        "| judge | HaluEval pairwise | ties | without yes/no | one-turn | multi-turn | BEGIN AUROC | wow test "
        "| wow dev | cmu dev | tc dev | NaN | HaluEval, NaN excluded | BEGIN, NaN excluded |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        b = r.begin_by_file
        lines.append(
            f"| {r.judge} | {r.halu_pairwise:.3f} | {r.halu_ties} | {r.halu_no_yes_no:.3f} | "
            f"{r.halu_by_file.get('qa_one-turn_data.jsonl', math.nan):.3f} | "
            f"{r.halu_by_file.get('qa_multi-turn_data.jsonl', math.nan):.3f} | {r.begin_auroc:.3f} | "
            f"{b.get('begin_test_wow', math.nan):.3f} | {b.get('begin_dev_wow', math.nan):.3f} | "
            f"{b.get('begin_dev_cmu', math.nan):.3f} | {b.get('begin_dev_tc', math.nan):.3f} | {r.nan} "
            f"| {r.halu_scored_pairs:.3f} | {r.begin_scored_auroc:.3f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the shared data directory")
    parser.add_argument(
        "--part", choices=("all", "faithfulness", "relevance"), default="all", help="which sets to score"
    )
    parser.add_argument("--begin-limit", type=int, default=None, help="score a random sample of BEGIN items")
    parser.add_argument("--seed", type=int, default=0, help="seed of the BEGIN sample")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    payload: dict[str, Any] = {}
    if args.part in ("all", "faithfulness"):
        if not (args.data / "halueval_qa").is_dir() or not (args.data / "begin").is_dir():
            print(f"skipped faithfulness: {args.data} has no halueval_qa/ and begin/ folders (pass --data)")
        else:
            rows, elapsed = asyncio.run(run(args.data, args.begin_limit, args.seed))
            print(table(rows))
            print(
                f"\n{rows[0].n_pairs} HaluEval pairs, {rows[0].n_begin} BEGIN items "
                f"(fully vs not fully attributable), {len(rows)} judges: {elapsed:.1f} s\n"
            )
            payload["faithfulness"] = [r.__dict__ for r in rows]
    if args.part in ("all", "relevance"):
        if not (args.data / "trulens_relevance").is_dir():
            print(f"skipped relevance: {args.data} has no trulens_relevance/ folder (pass --data)")
        else:
            panel = {m.id: m for m in load_settings(ROOT, ["local"], environ={}).judges()}
            started = time.perf_counter()
            relevance = asyncio.run(relevance_rows(args.data, panel["local-strict"].local))
            print(relevance_table(relevance))
            note = "" if minilm_available() else " (MiniLM rows left out: the embeddings extra is not installed)"
            print(f"\nrelevance sets, {len(relevance)} scorers: {time.perf_counter() - started:.1f} s{note}")
            payload["relevance"] = [r.__dict__ for r in relevance]
    if args.json is not None:
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
