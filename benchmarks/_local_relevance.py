"""Relevance part of ``local_judge_agreement.py``: the local judge against TruLens's relevance labels.

Data (``trulens_relevance/`` of the shared data, MIT; MS MARCO text research-only):

- ``ms_marco_hard_neg_balanced.csv``: 200 queries, each with a relevant MS MARCO passage and a
  hard negative. Measured as pairwise accuracy: the relevant passage should score higher; ties
  count 0.5. Queries are split by a hash of their text into a development half (used to choose
  the relevance constants in ``ragqa.judges.local.relevance``) and a held-out half; the 95%
  interval of the accuracy on all 200 is a percentile bootstrap over the pairs (10,000
  resamples, seed 0). ``relevance_study.py`` compares the candidate signals and cross-validates
  the choice.
- ``answer_relevance_golden_set.json`` (17 graded items) and ``context_relevance_golden_set.json``
  (15): Spearman's rho with the hand-assigned score. Tiny: smoke tests, not measurements.

Scores come from the real metrics through the ``PanelEvaluator``:

- ``context_precision`` in response mode with the query as the answer (one context: the score is
  the context's graded usefulness);
- ``context_relevance`` (the NVIDIA-style two-template rating; the local judge sends a graded
  rating with each integer one) of each passage as the only retrieved context, on the MS MARCO
  pairs and the context golden set;
- ``response_relevancy`` (question generation + embedding cosine) and ``response_relevancy_llm``
  (statement relevance) for the answer-relevance set.

Baselines: the embedding cosine of query and passage alone (MiniLM when installed, and the hashing
embedder), the share of the query's content words found in the passage (lexical), and for
answers the length prior (a longer answer ranks higher). ``relevance()`` is also scored directly.

A score that is NaN (every generated question blank, no statement) is reported twice: excluded
(``n`` shows how many items were scored) and with the convention NaN = 0.0 (nothing relevant).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _bootstrap import bootstrap_ci  # a sibling of this module

from ragqa._math import cosine
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.base import Embedder, Judge
from ragqa.judges.local import LocalEmbedder, LocalJudge, minilm_available
from ragqa.judges.local.text import features
from ragqa.metrics import ContextPrecision, ContextRelevance, ResponseRelevancy
from ragqa.metrics.response_relevancy_llm import ResponseRelevancyLLM
from ragqa.schema import Sample
from ragqa.settings import LocalJudgeSettings

__all__ = ["RelevanceRow", "relevance_rows", "relevance_table", "split_of"]


def split_of(query: str) -> str:
    """``dev`` or ``test``: the half of a query, by the first byte of its BLAKE2b hash (stable everywhere)."""
    return "dev" if hashlib.blake2b(query.encode("utf-8"), digest_size=2).digest()[0] % 2 == 0 else "test"


@dataclass
class RelevanceRow:
    """One scorer's figures: MS MARCO pairwise by half, and Spearman on the golden sets."""

    scorer: str
    marco: dict[str, float] = field(default_factory=dict)  # dev / test / all
    marco_ties: int = 0
    marco_ci: tuple[float, float] = (math.nan, math.nan)  # bootstrap 95% interval of "all"
    answer: dict[str, tuple[float, float, int]] = field(default_factory=dict)  # metric: (rho, rho NaN=0, n)
    context_rho: float = math.nan
    nan: int = 0
    # context_relevance (judges only): MS MARCO by half, ties, interval, golden-set rho
    cr_marco: dict[str, float] = field(default_factory=dict)
    cr_ties: int = 0
    cr_ci: tuple[float, float] = (math.nan, math.nan)
    cr_context_rho: float = math.nan


def _spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rho; NaN for fewer than 2 items or a constant list."""
    from scipy.stats import spearmanr  # type: ignore[import-untyped]

    if len(xs) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return math.nan
    return float(spearmanr(xs, ys).statistic)


def _pairwise(scores: dict[str, tuple[float, float]]) -> tuple[dict[str, float], int, tuple[float, float]]:
    """Pairwise accuracy by half from ``{query: (relevant, negative)}``, ties and the interval; NaN ranks as 0.0."""
    wins: dict[str, list[float]] = {"dev": [], "test": []}
    ties = 0
    for query, (good, bad) in scores.items():
        good, bad = (0.0 if math.isnan(v) else v for v in (good, bad))
        ties += good == bad
        wins[split_of(query)].append(1.0 if good > bad else 0.5 if good == bad else 0.0)
    every = wins["dev"] + wins["test"]
    accuracy = {k: sum(v) / len(v) for k, v in {**wins, "all": every}.items() if v}
    return accuracy, ties, bootstrap_ci(every) if every else (math.nan, math.nan)


def load(data: Path) -> tuple[dict[str, tuple[str, str]], list[dict[str, Any]], list[dict[str, Any]]]:
    """MS MARCO pairs ``{query: (relevant, negative)}`` and the two golden sets."""
    folder = data / "trulens_relevance"
    by_query: dict[str, dict[int, str]] = {}
    with (folder / "ms_marco_hard_neg_balanced.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            by_query.setdefault(row["query"], {})[int(row["expected_score"])] = row["expected_response"]
    pairs = {q: (d[1], d[0]) for q, d in by_query.items() if set(d) == {0, 1}}
    answers = json.loads((folder / "answer_relevance_golden_set.json").read_text(encoding="utf-8"))
    contexts = json.loads((folder / "context_relevance_golden_set.json").read_text(encoding="utf-8"))
    return pairs, answers, contexts


def _lexical_share(query: str, passage: str) -> float:
    words = {w for w in features(query, "en").content}
    have = set(features(passage, "en").content)
    return len(words & have) / len(words) if words else 1.0


async def _cosines(embedder: Embedder, items: Sequence[tuple[str, str]]) -> list[float]:
    texts = sorted({t for pair in items for t in pair})
    vectors = dict(zip(texts, await embedder.embed(texts), strict=True))
    return [cosine(vectors[a], vectors[b]) for a, b in items]


async def _judged(
    judge: Judge,
    embedders: Sequence[Embedder],
    pairs: dict[str, tuple[str, str]],
    answers: list[dict[str, Any]],
    contexts: list[dict[str, Any]],
) -> RelevanceRow:
    """Run the metrics for one judge and collect its figures."""
    row = RelevanceRow(judge.id)
    precision = [
        Sample(id=f"marco:{i}:{k}", user_input=q, response=q, retrieved_contexts=[p])
        for i, (q, ps) in enumerate(pairs.items())
        for k, p in enumerate(ps)
    ]
    golden_ctx = [
        Sample(id=f"ctx:{i}", user_input=r["query"], response=r["query"], retrieved_contexts=[r["expected_response"]])
        for i, r in enumerate(contexts)
    ]
    golden_ans = [
        Sample(id=f"ans:{i}", user_input=r["query"], response=r["expected_response"]) for i, r in enumerate(answers)
    ]
    options = PanelOptions(max_concurrent_samples=64)
    cp = await PanelEvaluator(
        [judge], [ContextPrecision(mode="response"), ContextRelevance()], options=options
    ).evaluate([*precision, *golden_ctx])
    metrics: list[Any] = [ResponseRelevancyLLM(), ResponseRelevancy()]
    ar = await PanelEvaluator([judge], metrics, embedders=embedders, options=options).evaluate(golden_ans)
    value: dict[tuple[str, str], float] = {}
    for result in [*cp.results, *ar.results]:
        outcome = result.judges[0]
        if outcome.score is None:
            raise RuntimeError(f"{judge.id} failed on {result.sample_id} ({result.metric}): {outcome.failure}")
        value[(result.metric, result.sample_id)] = outcome.score.value
    key = "context_precision(mode=response)"
    scores = {q: (value[(key, f"marco:{i}:0")], value[(key, f"marco:{i}:1")]) for i, q in enumerate(pairs)}
    row.marco, row.marco_ties, row.marco_ci = _pairwise(scores)
    row.context_rho = _spearman(
        [value[(key, f"ctx:{i}")] for i in range(len(contexts))], [r["expected_score"] for r in contexts]
    )
    cr = "context_relevance"
    row.cr_marco, row.cr_ties, row.cr_ci = _pairwise(
        {q: (value[(cr, f"marco:{i}:0")], value[(cr, f"marco:{i}:1")]) for i, q in enumerate(pairs)}
    )
    row.cr_context_rho = _spearman(
        [value[(cr, f"ctx:{i}")] for i in range(len(contexts))], [r["expected_score"] for r in contexts]
    )
    labels = [r["expected_score"] for r in answers]
    for metric in ("response_relevancy", "response_relevancy_llm"):
        got = [value[(metric, f"ans:{i}")] for i in range(len(answers))]
        kept = [(g, y) for g, y in zip(got, labels, strict=True) if not math.isnan(g)]
        row.answer[metric] = (
            _spearman([g for g, _ in kept], [y for _, y in kept]),
            _spearman([0.0 if math.isnan(g) else g for g in got], labels),
            len(kept),
        )
    row.nan = sum(1 for v in value.values() if math.isnan(v))
    return row


async def _baseline(
    name: str,
    score: Callable[[Sequence[tuple[str, str]]], Awaitable[list[float]]],
    pairs: dict[str, tuple[str, str]],
    answers: list[dict[str, Any]],
    contexts: list[dict[str, Any]],
) -> RelevanceRow:
    """A scorer of (query, text) pairs, measured like the judges."""
    row = RelevanceRow(name)
    items = [(q, p) for q, ps in pairs.items() for p in ps]
    values = await score(items)
    row.marco, row.marco_ties, row.marco_ci = _pairwise(
        {q: (values[2 * i], values[2 * i + 1]) for i, q in enumerate(pairs)}
    )
    ctx = await score([(r["query"], r["expected_response"]) for r in contexts])
    row.context_rho = _spearman(ctx, [r["expected_score"] for r in contexts])
    ans = await score([(r["query"], r["expected_response"]) for r in answers])
    rho = _spearman(ans, [r["expected_score"] for r in answers])
    row.answer["direct"] = (rho, rho, len(answers))
    return row


async def relevance_rows(data: Path, strict: LocalJudgeSettings) -> list[RelevanceRow]:
    """Every scorer's figures on the relevance sets (MiniLM rows only when the extra is installed)."""
    pairs, answers, contexts = load(data)
    hashing = LocalEmbedder("local-hashing", "hashing")
    embedders: list[tuple[str, LocalEmbedder]] = [("hashing", hashing)]
    if minilm_available():
        embedders.insert(0, ("minilm", LocalEmbedder("local-minilm", "minilm")))
    rows: list[RelevanceRow] = []

    async def lexical(items: Sequence[tuple[str, str]]) -> list[float]:
        return [_lexical_share(q, p) for q, p in items]

    async def length(items: Sequence[tuple[str, str]]) -> list[float]:
        return [float(len(p)) for _, p in items]

    rows.append(await _baseline("query words found (lexical)", lexical, pairs, answers, contexts))
    rows.append(await _baseline("length prior", length, pairs, answers, contexts))
    for name, embedder in embedders:
        e = embedder

        async def cos(items: Sequence[tuple[str, str]], e: Embedder = e) -> list[float]:
            return await _cosines(e, items)

        rows.append(await _baseline(f"{name} cosine alone", cos, pairs, answers, contexts))
    try:
        from ragqa.judges.local.relevance import relevance_many
    except ImportError:  # an older ragqa without the public relevance function
        relevance_many = None  # type: ignore[assignment]
    if relevance_many is not None:
        scorers: list[tuple[str, Embedder | None]] = [("lexical", None), *embedders]
        for name, maybe in scorers:

            async def direct(items: Sequence[tuple[str, str]], e: Embedder | None = maybe) -> list[float]:
                out = []
                for q, p in items:
                    out.append((await relevance_many(q, [p], e))[0].value)
                return out

            rows.append(await _baseline(f"relevance() {name}", direct, pairs, answers, contexts))
    rows.append(await _judged(LocalJudge("local-strict", strict), [hashing], pairs, answers, contexts))
    for name, embedder in embedders:
        settings = strict.model_copy(update={"use_embeddings": True})
        judge = LocalJudge(f"local-strict+{name}", settings, embedder=embedder)
        rows.append(await _judged(judge, [embedder], pairs, answers, contexts))
    return rows


def relevance_table(rows: Sequence[RelevanceRow]) -> str:
    """The Markdown tables of :func:`relevance_rows` (all scorers; then ``context_relevance`` of the judges).

    Answer relevance: a judge row gives ``response_relevancy`` / ``response_relevancy_llm``
    (Spearman with NaN excluded, then with NaN = 0, then the number scored); a baseline row gives
    its own score of (question, answer).
    """
    lines = [
        "| scorer | MS MARCO pairwise, dev half | held-out half | all 200 | 95% CI | ties | answer relevance rho "
        "| rho, NaN = 0 | context relevance rho | NaN |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        parts = [r.answer[k] for k in ("direct", "response_relevancy", "response_relevancy_llm") if k in r.answer]
        rho = " / ".join(f"{a:.2f} ({n})" for a, _, n in parts)
        rho0 = " / ".join(f"{b:.2f}" for _, b, _ in parts)
        lines.append(
            f"| {r.scorer} | {r.marco.get('dev', math.nan):.3f} | {r.marco.get('test', math.nan):.3f} "
            f"| {r.marco.get('all', math.nan):.3f} | {r.marco_ci[0]:.3f}-{r.marco_ci[1]:.3f} | {r.marco_ties} "
            f"| {rho} | {rho0} | {r.context_rho:.2f} | {r.nan} |"
        )
    lines += [
        "",
        "context_relevance (judges only):",
        "",
        "| judge | MS MARCO pairwise, dev half | held-out half | all 200 | 95% CI | ties | context relevance rho |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.cr_marco:
            lines.append(
                f"| {r.scorer} | {r.cr_marco.get('dev', math.nan):.3f} | {r.cr_marco.get('test', math.nan):.3f} "
                f"| {r.cr_marco.get('all', math.nan):.3f} | {r.cr_ci[0]:.3f}-{r.cr_ci[1]:.3f} | {r.cr_ties} "
                f"| {r.cr_context_rho:.2f} |"
            )
    return "\n".join(lines)
