"""Real-data study of the jury: mean of scores, claim-vote and Dawid-Skene against labelled data.

Called by ``benchmarks/jury.py --real`` (see its docstring). The metric is faithfulness; the panel
is five deterministic offline judges, every variant of the local judge that changes a
faithfulness score, plus the yardstick of ``local_judge_agreement.py``:

- ``local-strict`` / ``local-lenient``: the local judges of ``application-local.yaml`` (support
  threshold 0.6 with number and entity checks; 0.4 without them), graded verdicts;
- ``local-strict-binary`` / ``local-lenient-binary``: the same with their graded support hidden,
  so their verdicts are 0/1 at their own threshold, as an LLM's are;
- ``yardstick``: pysbd sentences and the share of content words found (another method).

A second, binary panel gives every judge 0/1 verdicts, as LLM judges give (see :func:`panel`):
there the mean of scores loses the graded support that ranks samples finely, as it would with LLMs.

The embeddings extra (MiniLM) changes only the local judge's relevance answers, never its
support of a statement, so a MiniLM variant scores faithfulness exactly as its lexical twin; the
study checks that on the first samples and leaves it out of the panel (it would be a copy).

Data (``../shared/data``, loaded as ``local_judge_agreement.py`` does):

- HaluEval QA: 500 right answers (label 1) and their 1,000 hallucinated answers (label 0),
  constructed labels, the knowledge as the context;
- BEGIN: dialogue responses people labelled fully attributable (1) or not (0), ``Generic``
  dropped, a seeded draw of ``--begin-limit``.

Per sample the panel's faithfulness is (1) the mean of the judges' scores, each judge extracting
its own statements (ragqa's default ``mean``); (2) claim-vote: ``local-strict`` extracts the
statements once, every judge gives its verdicts on them, the majority per statement (graded
verdicts count as supported at >= 0.5), faithfulness on the voted verdicts; (3) Dawid-Skene:
the run's fit over all statements of the dataset, a statement supported when its posterior is
above 0.5 (the ``dawid_skene`` value of a ``dawid-skene`` run's records). Each is compared with
the label by AUROC (Mann-Whitney, ties 0.5) and by the accuracy of the gate "faithfulness >= 0.5";
a response with no statement (NaN) ranks as 0.0 and fails the gate. 95 % percentile intervals
from 1,000 seeded bootstrap resamples of the samples (Efron and Tibshirani 1993), and the paired
difference of each method from the mean of scores on the same resamples.
"""

from __future__ import annotations

import asyncio
import math
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bootstrap import interval_text
from _jury_cascade_real import TIER2
from _jury_cascade_real import table as cascade_table
from local_judge_agreement import ROOT, BinaryOnly, YardstickJudge, begin, halueval

from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.judges.base import Judge
from ragqa.judges.local import LocalJudge, minilm_available
from ragqa.judges.local.embedder import LocalEmbedder
from ragqa.metrics import Faithfulness
from ragqa.schema import PanelResult, Sample
from ragqa.settings import load_settings

METHODS = ("mean of scores", "claim-vote", "dawid-skene")


def panel(binary: bool = False) -> list[Judge]:
    """The five judges (see the module docstring); ``local-strict`` first: it extracts when voting.

    ``binary``: the binary panel instead, five judges that all give 0/1 verdicts, as LLMs do
    (``local-strict-binary``, ``local-lenient-binary``, the local judge at threshold 0.5 with and
    without its number and entity checks, and the yardstick at 0.5, each with its support hidden).
    """
    config = {m.id: m for m in load_settings(ROOT, ["local"], environ={}).judges()}
    strict = LocalJudge("local-strict", config["local-strict"].local)
    lenient = LocalJudge("local-lenient", config["local-lenient"].local)
    if binary:
        mid = config["local-strict"].local.model_copy(update={"support_threshold": 0.5})
        loose = config["local-lenient"].local.model_copy(update={"support_threshold": 0.5})
        return [
            BinaryOnly(strict, "local-strict-binary"),
            BinaryOnly(lenient, "local-lenient-binary"),
            BinaryOnly(LocalJudge("local-0.5", mid), "local-0.5-binary"),
            BinaryOnly(LocalJudge("local-0.5-nochecks", loose), "local-0.5-nochecks-binary"),
            BinaryOnly(YardstickJudge(), "yardstick-binary"),
        ]
    return [
        strict,
        lenient,
        BinaryOnly(strict, "local-strict-binary"),
        BinaryOnly(lenient, "local-lenient-binary"),
        YardstickJudge(),
    ]


def auroc(scores: NDArray[np.float64], labels: NDArray[np.bool_]) -> float:
    """AUROC of ``scores`` for ``labels`` by the Mann-Whitney U statistic (average ranks, ties 0.5)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    n1 = int(labels.sum())
    n0 = labels.size - n1
    if n1 == 0 or n0 == 0:
        return math.nan
    return float((ranks[labels].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def accuracy(scores: NDArray[np.float64], labels: NDArray[np.bool_]) -> float:
    """Share of samples where "score >= 0.5" agrees with the label."""
    return float(np.mean((scores >= 0.5) == labels))


async def score(
    samples: Sequence[Sample], judges: list[Judge]
) -> tuple[dict[str, dict[str, float]], list[PanelResult]]:
    """Per method and judge, each sample's faithfulness (NaN as 0.0), and the ``mean`` run's results.

    Two runs: a ``mean`` run (its results are also returned, for the cascade) and a ``dawid-skene`` run.
    """
    metric = Faithfulness()
    plain = await PanelEvaluator(judges, [metric], options=PanelOptions(max_concurrent_samples=64)).evaluate(samples)
    voting = PanelEvaluator(judges, [metric], options=PanelOptions(strategy="dawid-skene", max_concurrent_samples=64))
    voted = await voting.evaluate(samples)
    jury = voting.jury([metric])
    assert jury is not None
    jury.attach(voted.summaries, voted.results)

    def value(x: float | None) -> float:
        return 0.0 if x is None or math.isnan(x) else x

    out: dict[str, dict[str, float]] = {name: {} for name in (*METHODS, *(j.id for j in judges))}
    for result in plain.results:
        out["mean of scores"][result.sample_id] = value(result.aggregate.value)
        for outcome in result.judges:
            out[outcome.judge_id][result.sample_id] = value(outcome.score.value if outcome.score else None)
    for result in voted.results:
        out["claim-vote"][result.sample_id] = value(result.aggregate.value)
        out["dawid-skene"][result.sample_id] = value(jury.dawid_skene.get((result.sample_id, result.metric)))
    return out, plain.results


def study(
    name: str,
    samples: Sequence[Sample],
    labels: dict[str, bool],
    judges: list[Judge],
    *,
    n_boot: int,
    seed: int,
    tier2: Sequence[str] | None = None,
) -> str:
    """One dataset's table (markdown): each method and judge, AUROC and accuracy with intervals.

    With ``tier2``, the cascade's table follows (``benchmarks/_jury_cascade_real.py``).
    """
    started = time.perf_counter()
    scored, results = asyncio.run(score(samples, judges))
    elapsed = time.perf_counter() - started
    ids = [s.id for s in samples if s.id is not None]
    y = np.array([labels[i] for i in ids])
    columns = {k: np.array([v[i] for i in ids]) for k, v in scored.items()}
    rng = np.random.default_rng(seed)
    picks = [rng.integers(0, len(ids), size=len(ids)) for _ in range(n_boot)]
    base_auc = np.array([auroc(columns["mean of scores"][p], y[p]) for p in picks])
    base_acc = np.array([accuracy(columns["mean of scores"][p], y[p]) for p in picks])
    lines = [
        f"### {name}: {len(ids)} samples ({int(y.sum())} labelled 1), scored in {elapsed:.0f} s\n",
        "| method | AUROC [95% CI] | difference from mean of scores | accuracy of >= 0.5 [95% CI] "
        "| difference from mean of scores |",
        "|---|---|---|---|---|",
    ]
    plain_auc, plain_acc = auroc(columns["mean of scores"], y), accuracy(columns["mean of scores"], y)
    for method, s in columns.items():
        auc = np.array([auroc(s[p], y[p]) for p in picks])
        acc = np.array([accuracy(s[p], y[p]) for p in picks])
        same = method == "mean of scores"
        d_auc = "" if same else f"{auroc(s, y) - plain_auc:+.3f} {interval_text(auc - base_auc)}"
        d_acc = "" if same else f"{accuracy(s, y) - plain_acc:+.3f} {interval_text(acc - base_acc)}"
        shown = method if method in METHODS else f"judge {method}"
        figures = f"{auroc(s, y):.3f} {interval_text(auc)} | {d_auc} | {accuracy(s, y):.3f} {interval_text(acc)}"
        lines.append(f"| {shown} | {figures} | {d_acc} |")
    if tier2 is not None:
        lines += ["", cascade_table(name, results, labels, tier2, n_boot=n_boot, seed=seed)]
    return "\n".join(lines)


def minilm_check(samples: Sequence[Sample], n: int) -> str:
    """Whether ``local-strict`` with MiniLM scores faithfulness as the lexical one, on the first ``n`` samples."""
    if not minilm_available():
        return "MiniLM check skipped: the embeddings extra is not installed."
    config = {m.id: m for m in load_settings(ROOT, ["local"], environ={}).judges()}
    settings = config["local-strict"].local.model_copy(update={"use_embeddings": True})
    judges: list[Judge] = [
        LocalJudge("local-strict", config["local-strict"].local),
        LocalJudge("local-strict-minilm", settings, embedder=LocalEmbedder("minilm", "minilm")),
    ]
    report = asyncio.run(PanelEvaluator(judges, [Faithfulness()]).evaluate(list(samples[:n])))
    same = sum(
        1
        for r in report.results
        if r.judges[0].score is not None
        and r.judges[1].score is not None
        and (
            r.judges[0].score.value == r.judges[1].score.value
            or (math.isnan(r.judges[0].score.value) and math.isnan(r.judges[1].score.value))
        )
    )
    n_results = len(report.results)
    return f"MiniLM check: local-strict with embeddings scores faithfulness as without on {same} of {n_results} samples"


def main(
    data: Path,
    *,
    begin_limit: int,
    halueval_limit: int | None,
    n_boot: int,
    seed: int,
    minilm: int,
    cascade: bool = True,
) -> None:
    """Print the real-data tables (markdown); ``cascade``: each followed by the cascade's table."""
    if not (data / "halueval_qa").is_dir() or not (data / "begin").is_dir():
        print(f"real-data study skipped: {data} lacks halueval_qa/ or begin/")
        return
    halu_samples, _ = halueval(data)
    if halueval_limit is not None and halueval_limit < len(halu_samples):
        halu_samples = random.Random(seed).sample(halu_samples, halueval_limit)
    halu_labels = {s.id: s.id.endswith(":right") for s in halu_samples if s.id is not None}
    begin_samples, begin_labels = begin(data, begin_limit, seed)
    for binary in (False, True):
        judges = panel(binary)
        print(f"## {'binary' if binary else 'graded'} panel: {', '.join(j.id for j in judges)}")
        print(f"extractor {judges[0].id}; bootstrap {n_boot} resamples\n")
        tier2 = TIER2[binary] if cascade else None
        for name, samples, labels in (
            ("HaluEval QA", halu_samples, halu_labels),
            ("BEGIN", begin_samples, begin_labels),
        ):
            print(study(name, samples, labels, judges, n_boot=n_boot, seed=seed, tier2=tier2) + "\n")
    if minilm:
        print(minilm_check(begin_samples, minilm))
