"""Memory a run keeps per sample, and its peak at the end, for the local profile's shape; trees side by side.

``ragqa evaluate DATA --profile local`` keeps, for every sample of the dataset, its id
(:class:`ragqa._ids.CompactIds`), the byte offset of each result in the streamed results file
(:class:`ragqa.run.stream.ResultStream` with a layout) and the numbers of the summaries
(:class:`ragqa.run.summary.RunSummary`); at the end it computes the summaries (agreement,
intervals, variance decomposition) from them. Everything else a run holds does not grow with the
dataset (the window of samples in flight, the local judge's bounded caches). This benchmark
builds exactly that state for N samples in a child process per tree and size: the ids ``s0 ..
s{N-1}``, a stream's offsets, and a ``RunSummary`` of two judges (``local-strict``,
``local-lenient``) on two metrics (faithfulness, hallucination) fed with N x 2 results (scores
drawn from a fixed seed, 2 calls, a latency, no cost; hallucination lower-is-better), then what
the runner computes at the end: ``summaries()`` and the per-item reliability section
(:func:`ragqa.jury.reliability.attach_item_reliability` at the metrics' default thresholds, 0.8
and 0.2, which a two-judge run computes). It reports, from ``tracemalloc`` (numpy's arrays
included), the bytes per sample kept after the last result (``kept``) and the peak while the
summaries and the section are computed (``peak``), and the growth of the peak per sample between
the two sizes. It does not depend on the machine's load; no judge runs.

    python benchmarks/run_state.py --samples 100000 300000 --base main

``--base REF`` adds a temporary ``git worktree`` of REF, run the same way, first.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

from one_pass import worktree  # a sibling of this script: the temporary worktree of --base

REPO = Path(__file__).resolve().parents[1]
JUDGES = ("local-strict", "local-lenient")
METRICS = ("faithfulness", "hallucination")
DIRECTIONS = {"faithfulness": "higher", "hallucination": "lower"}
THRESHOLDS = {"faithfulness": 0.8, "hallucination": 0.2}  # the metrics' default thresholds


def measure(n: int) -> dict[str, float]:
    """Build the run's per-sample state for ``n`` samples in this process; bytes per sample, kept and peak."""
    import random

    from ragqa._ids import CompactIds
    from ragqa.aggregate import aggregate
    from ragqa.jury.reliability import attach_item_reliability
    from ragqa.run.stream import ResultsHeader, ResultStream
    from ragqa.run.summary import RunSummary
    from ragqa.schema import JudgeOutcome, MetricScore, PanelResult, Usage

    rng = random.Random(20)
    templates = {}
    for metric in METRICS:
        rows = []
        for _ in range(64):
            outcomes = [
                JudgeOutcome(
                    judge_id=j,
                    score=MetricScore(value=rng.choice((0.0, 0.25, 0.5, 2 / 3, 0.75, 1.0))),
                    usage=Usage(calls=2, latency_s=rng.random() / 50),
                )
                for j in JUDGES
            ]
            scores = [o.score.value for o in outcomes if o.score is not None]
            rows.append(
                PanelResult(
                    sample_id="x",
                    metric=metric,
                    direction=DIRECTIONS[metric],
                    judges=outcomes,
                    aggregate=aggregate(scores, n_failed=0, strategy="mean", quorum=1),
                )
            )
        templates[metric] = rows
    fields = {"run_id": "r", "ragqa_version": "0", "config_fingerprint": "sha256:c", "dataset": "d"}
    fields.update(dataset_fingerprint="sha256:d", started_at="2026-01-01T00:00:00+00:00")
    header = ResultsHeader.from_json({**fields, "samples": n, "metrics": list(METRICS), "judges": list(JUDGES)})
    tracemalloc.start()
    labels = CompactIds(indexed=False)
    for i in range(n):
        labels.append(f"s{i}")
    with tempfile.TemporaryDirectory() as tmp:
        stream = ResultStream(Path(tmp) / "results.jsonl", header, layout=(labels, list(METRICS)))
        summary = RunSummary(JUDGES, METRICS, n, labels=labels, ranges=dict.fromkeys(METRICS, (0.0, 1.0)))
        end = 0
        for i in range(n):
            for k, metric in enumerate(METRICS):
                summary.add(i, templates[metric][i % 64])
                stream._slots[i * len(METRICS) + k] = end  # the offset write() keeps (no file is written)
                end += 3_000
        kept, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        score_source = getattr(summary, "score_chunks", summary.scores)  # a tree before the chunks: the whole matrix
        attach_item_reliability(summary.summaries(), JUDGES, THRESHOLDS, score_source)  # as the runner
        _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"kept": kept / n, "peak": peak / n, "peak_mb": peak / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, nargs="+", default=[100_000, 300_000])
    parser.add_argument("--base", help="also run a temporary git worktree of this commit (e.g. main)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure(args.child)))
        return
    print(f"load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        trees = [("this tree", REPO)]
        if args.base:
            trees.insert(0, (f"base {args.base}", stack.enter_context(worktree(args.base, Path(tmp)))))
        print(f"{'tree':<16} {'samples':>8} {'kept B/sample':>14} {'peak B/sample':>14} {'peak MB':>8}")
        slopes = {}
        for name, tree in trees:
            peaks = []
            for n in args.samples:
                env = {**os.environ, "PYTHONPATH": str(tree)}
                script = str(REPO / "benchmarks" / "run_state.py")
                out = subprocess.run(
                    [sys.executable, script, "--child", str(n)], cwd=tree, env=env, check=True, capture_output=True
                )
                row = json.loads(out.stdout)
                peaks.append((n, row["peak"] * n))
                cells = f"{row['kept']:>14.1f} {row['peak']:>14.1f} {row['peak_mb']:>8.1f}"
                print(f"{name:<16} {n:>8,} {cells}", flush=True)
            if len(peaks) >= 2:
                (n0, p0), (n1, p1) = peaks[0], peaks[-1]
                slopes[name] = (p1 - p0) / (n1 - n0)
                print(f"{name}: the peak grows {slopes[name]:.1f} bytes per sample from {n0:,} to {n1:,} samples")
        if args.base and len(slopes) == 2:
            base, this = slopes[f"base {args.base}"], slopes["this tree"]
            print(f"growth per sample, this tree / base: {this / base:.2f}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
