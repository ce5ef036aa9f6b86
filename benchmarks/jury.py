"""Simulation study of the jury: mean of scores, claim-vote and Dawid-Skene against a known truth.

Each simulated sample has 3 to 8 statements, each truly supported with probability 0.7 (the
truth). Five judges give a verdict on every statement, right with their own accuracy (0.95, 0.9,
0.85, 0.7, 0.6, the same for supported and unsupported statements). The metric is faithfulness
(the share of supported statements), so for each sample:

- **mean of scores**: every judge's faithfulness, then their mean (ragqa's default ``mean``);
- **claim-vote**: the majority verdict per statement (``ragqa.jury.vote_verdicts``, ties to the
  first judge), then faithfulness on it (``ragqa.aggregation.strategy: claim-vote``);
- **Dawid-Skene**: the binary Dawid-Skene model fitted by EM over all statements of the run
  (``ragqa.jury.fit_dawid_skene``), a statement supported when its posterior is above 0.5, then
  faithfulness on that (the ``voted_mean`` of ``dawid-skene``'s reliability section).

Reported against the truth: the mean absolute error of the per-sample faithfulness (MAE), the
share of statements whose voted verdict is right (per-statement accuracy; the mean of scores votes
on no statement), and for Dawid-Skene the largest error of its label-free estimate of a judge's
accuracy. The best judge alone (0.95) is shown for comparison: a panel only helps when it beats
it. The ``correlated`` scenario makes the two weakest judges (0.7 and 0.6) err together:
one uniform draw per statement decides both (a judge errs when the draw exceeds its accuracy), so
their accuracies stay 0.7 and 0.6 but the 0.6 judge errs whenever the 0.7 judge does. Its residual
correlation (``ragqa.jury.residual_correlation``) is printed next to the 0.3 warning line.

Seeded: ``--seeds`` runs seeds 0..N-1 and prints the mean over them (and the spread of the MAE).

Run::

    python benchmarks/jury.py                      # 500 samples, seeds 0..9
    python benchmarks/jury.py --samples 100 --seeds 2
    python benchmarks/jury.py --real               # the real-data study instead (benchmarks/_jury_real.py)
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragqa.jury import fit_dawid_skene, residual_correlation, vote_verdicts

ACCURACY = (0.95, 0.9, 0.85, 0.7, 0.6)
PREVALENCE = 0.7


@dataclass
class Outcome:
    """One scenario on one seed."""

    mae: dict[str, float]
    statement_accuracy: dict[str, float]
    ds_accuracy_error: float
    weak_pair_correlation: float


def simulate(
    seed: int, n_samples: int, correlated: bool
) -> tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]:
    """Per sample: the truth ``(k,)`` and the panel's verdicts ``(k, 5)``, 0 or 1."""
    rng = np.random.default_rng(seed)
    accuracy = np.asarray(ACCURACY)
    truths, verdicts = [], []
    for _ in range(n_samples):
        k = int(rng.integers(3, 9))
        truth = (rng.random(k) < PREVALENCE).astype(np.float64)
        draws = rng.random((k, len(ACCURACY)))
        if correlated:
            draws[:, 4] = draws[:, 3]  # one draw decides both weak judges: they err together
        right = draws < accuracy
        verdicts.append(np.where(right, truth[:, None], 1.0 - truth[:, None]))
        truths.append(truth)
    return truths, verdicts


def run(seed: int, n_samples: int, correlated: bool) -> Outcome:
    """Score one simulated run with the three aggregations."""
    truths, verdicts = simulate(seed, n_samples, correlated)
    matrix = np.vstack(verdicts)
    fit = fit_dawid_skene(matrix)
    ends = np.cumsum([0] + [len(t) for t in truths])
    true_score = np.array([t.mean() for t in truths])
    mean_scores = np.array([v.mean(axis=0).mean() for v in verdicts])
    majority = [vote_verdicts(v) for v in verdicts]
    ds = [fit.labels[ends[i] : ends[i + 1]].astype(np.float64) for i in range(len(truths))]
    truth_all = np.concatenate(truths)
    corr = residual_correlation(matrix, fit)
    true_accuracy = np.asarray(ACCURACY)
    return Outcome(
        mae={
            "mean of scores": float(np.mean(np.abs(mean_scores - true_score))),
            "claim-vote": float(np.mean(np.abs(np.array([m.mean() for m in majority]) - true_score))),
            "dawid-skene": float(np.mean(np.abs(np.array([d.mean() for d in ds]) - true_score))),
            "best judge alone": float(np.mean(np.abs(np.array([v[:, 0].mean() for v in verdicts]) - true_score))),
        },
        statement_accuracy={
            "best judge alone": float(np.mean(matrix[:, 0] == truth_all)),
            "claim-vote": float(np.mean(np.concatenate(majority) == truth_all)),
            "dawid-skene": float(np.mean(np.concatenate(ds) == truth_all)),
        },
        ds_accuracy_error=float(np.max(np.abs(fit.accuracy - true_accuracy))),
        weak_pair_correlation=float(corr[3, 4]),
    )


def main() -> None:
    """Print one table per scenario (means over the seeds)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500, help="samples per simulated run (default 500)")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    parser.add_argument("--real", action="store_true", help="run the real-data study (benchmarks/_jury_real.py)")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"), help="the labelled data (--real)")
    parser.add_argument("--begin-limit", type=int, default=1000, help="BEGIN samples drawn, seeded (--real)")
    parser.add_argument("--halueval-limit", type=int, default=None, help="HaluEval samples drawn (--real; all)")
    parser.add_argument("--boot", type=int, default=1000, help="bootstrap resamples (--real)")
    parser.add_argument(
        "--no-cascade",
        action="store_true",
        help="leave out the cascade's tables (--real; benchmarks/_jury_cascade_real.py)",
    )
    parser.add_argument("--minilm", type=int, default=200, help="samples of the MiniLM check, 0 for none (--real)")
    args = parser.parse_args()
    if args.real:
        from _jury_real import main as real

        real(
            args.data,
            begin_limit=args.begin_limit,
            halueval_limit=args.halueval_limit,
            n_boot=args.boot,
            seed=0,
            minilm=args.minilm,
            cascade=not args.no_cascade,
        )
        return
    print(
        f"{args.samples} samples of 3-8 statements (70 % supported), judges of accuracy "
        f"{', '.join(map(str, ACCURACY))}; mean over seeds 0..{args.seeds - 1}\n"
    )
    for correlated in (False, True):
        outcomes = [run(seed, args.samples, correlated) for seed in range(args.seeds)]
        name = "correlated (the 0.7 and 0.6 judges err together)" if correlated else "independent judges"
        print(f"## {name}\n")
        print("| aggregation | MAE of faithfulness per sample (sd over seeds) | per-statement accuracy |")
        print("|---|---|---|")
        for method in ("mean of scores", "claim-vote", "dawid-skene", "best judge alone"):
            maes = np.array([o.mae[method] for o in outcomes])
            acc = [o.statement_accuracy[method] for o in outcomes if method in o.statement_accuracy]
            shown = f"{np.mean(acc):.4f}" if acc else "n/a (no per-statement vote)"
            print(f"| {method} | {maes.mean():.4f} ({maes.std():.4f}) | {shown} |")
        err = np.mean([o.ds_accuracy_error for o in outcomes])
        corr = np.mean([o.weak_pair_correlation for o in outcomes])
        print(
            f"\nDawid-Skene's largest error on a judge's accuracy: {err:.4f}; "
            f"residual correlation of the 0.7 and 0.6 judges: {corr:.2f} (warning above 0.3)\n"
        )
    from _jury_cascade import main as cascade  # a sibling of this script: (c) the cascade

    cascade(args.samples, args.seeds)


if __name__ == "__main__":
    main()
