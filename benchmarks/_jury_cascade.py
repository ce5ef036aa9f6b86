"""The cascade on the simulated jury: tier-2 calls saved against agreement with the full panel.

The panel and the truth are those of ``benchmarks/jury.py``: samples of 3 to 8 statements (70 %
truly supported), five judges right with probability 0.95, 0.9, 0.85, 0.7 and 0.6 per statement.
Here the judges are real :class:`ragqa.testing.FunctionJudge` judges answering faithfulness's
statements and verdicts prompts from the simulated verdicts, scored by ragqa's own evaluator:

- **full panel**: every judge scores every sample (``mean`` of the five faithfulness scores);
- **cascade**: tier 1 (the 0.85, 0.7 and 0.6 judges) scores every sample; the two best judges
  (tier 2) are asked only where :func:`ragqa.jury.cascade.escalation` says tier 1 is unsure
  (``ragqa.jury.cascade``), and an escalated sample's aggregate is the mean of all five.

Reported: the share of the full panel's tier-2 calls the cascade made (requests counted at the
judges), the share of samples whose pass/fail verdict (faithfulness >= the threshold) equals the
full panel's, and the audit run's own figures (``--cascade-audit``: every tier scores everything,
the report compares), which must say the same. The rule is ``spread 0.5, margin 0.1, split off``
against threshold 0.5: with judges as weak as 0.6 and 0.7, tier-1 judges fall on both sides of the
threshold on most samples, so the ``split`` check would escalate nearly everything. A second rule is
fitted by :func:`ragqa.calibration.cascade.fit_cascade` on another seed's samples with their truth
as the labels, and evaluated on this seed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragqa.calibration.cascade import CascadeItem, fit_cascade
from ragqa.evaluation import PanelEvaluator, PanelOptions
from ragqa.jury.cascade import Cascade, CascadeRule
from ragqa.metrics.faithfulness import Faithfulness
from ragqa.prompts.base import Prompt
from ragqa.report import CascadeSummary, Report
from ragqa.schema import Sample
from ragqa.testing import FunctionJudge, make_sample
from ragqa.thresholds import passes

ACCURACY = (0.95, 0.9, 0.85, 0.7, 0.6)
PREVALENCE = 0.7
JUDGES = ("j95", "j90", "j85", "j70", "j60")
TIER2 = ("j95", "j90")
THRESHOLD = 0.5
RULE = CascadeRule(spread=0.5, margin=0.1, split=False)


def simulate(seed: int, n_samples: int) -> list[NDArray[np.float64]]:
    """Per sample, the five judges' verdicts ``(k, 5)``, 0 or 1 (the draws of ``benchmarks/jury.py``)."""
    rng = np.random.default_rng(seed)
    accuracy = np.asarray(ACCURACY)
    out = []
    for _ in range(n_samples):
        k = int(rng.integers(3, 9))
        truth = (rng.random(k) < PREVALENCE).astype(np.float64)
        right = rng.random((k, len(ACCURACY))) < accuracy
        out.append(np.where(right, truth[:, None], 1.0 - truth[:, None]))
    return out


def truth_of(seed: int, n_samples: int) -> list[float]:
    """Each sample's true faithfulness (share of truly supported statements), same draws as :func:`simulate`."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_samples):
        k = int(rng.integers(3, 9))
        truth = (rng.random(k) < PREVALENCE).astype(np.float64)
        rng.random((k, len(ACCURACY)))
        out.append(float(truth.mean()))
    return out


def judges(verdicts: Sequence[NDArray[np.float64]]) -> list[FunctionJudge]:
    """The five judges: each extracts ``k`` statements and gives its simulated verdict on each."""

    def make(j: int) -> FunctionJudge:
        def answer(prompt: Prompt[Any, Any], data: Any) -> Any:
            if prompt.name == "statements":
                return {"statements": [f"{data.answer} #{i}" for i in range(len(verdicts[int(data.answer)]))]}
            if prompt.name == "nli":
                matrix = verdicts[int(data.context.strip())]
                return {
                    "verdicts": [
                        {"statement": s, "reason": "simulated", "verdict": int(matrix[i, j])}
                        for i, s in enumerate(data.statements)
                    ]
                }
            raise AssertionError(f"unexpected prompt {prompt.name}")

        return FunctionJudge(JUDGES[j], answer)

    return [make(j) for j in range(len(JUDGES))]


def samples(n: int) -> list[Sample]:
    """One sample per simulated one; its response and context carry its index (read by the judges)."""
    return [make_sample(id=f"s{i}", user_input="q", response=str(i), retrieved_contexts=[str(i)]) for i in range(n)]


@dataclass
class Run:
    """One evaluator run: its report and the requests each judge received."""

    report: Report
    calls: dict[str, int]

    def verdicts(self) -> list[bool]:
        """Each sample's pass/fail verdict against :data:`THRESHOLD`, in sample order."""
        return [passes(r.aggregate.value, THRESHOLD, r.direction) for r in self.report.results]

    def tier2_calls(self) -> int:
        """Requests the tier-2 judges received."""
        return sum(self.calls[j] for j in TIER2)

    @property
    def cascade(self) -> CascadeSummary | None:
        """The report's cascade section of faithfulness."""
        return self.report.summary("faithfulness").cascade


def score(verdicts: Sequence[NDArray[np.float64]], cascade: Cascade | None, *, audit: bool = False) -> Run:
    """Score the simulated samples with the panel, as a cascade or not."""
    panel = judges(verdicts)
    evaluator = PanelEvaluator(
        panel,
        [Faithfulness()],
        options=PanelOptions(cascade=cascade, cascade_audit=audit, max_concurrent_samples=64),
    )
    report = asyncio.run(evaluator.evaluate(samples(len(verdicts))))
    return Run(report, {j.id: len(j.calls) for j in panel})


@dataclass
class Outcome:
    """The cascade against the full panel on one seed."""

    tier2_share: float
    agreement: float
    audit: CascadeSummary
    report: Report
    audit_report: Report


def cascade_of(rule: CascadeRule, source: str = "benchmarks/_jury_cascade.py") -> Cascade:
    """The simulation's cascade: tier 2 the two best judges, faithfulness's threshold :data:`THRESHOLD`."""
    return Cascade(tier2=TIER2, rule=rule, thresholds={"faithfulness": THRESHOLD}, source=source)


def run(seed: int, n_samples: int, rule: CascadeRule = RULE) -> Outcome:
    """The full panel, the cascade and the audit run on one seed."""
    verdicts = simulate(seed, n_samples)
    full = score(verdicts, None)
    cascaded = score(verdicts, cascade_of(rule))
    audited = score(verdicts, cascade_of(rule), audit=True)
    audit = audited.cascade
    assert audit is not None
    agree = np.mean(np.array(full.verdicts()) == np.array(cascaded.verdicts()))
    return Outcome(
        tier2_share=cascaded.tier2_calls() / full.tier2_calls(),
        agreement=float(agree),
        audit=audit,
        report=cascaded.report,
        audit_report=audited.report,
    )


def fitted_rule(seed: int, n_samples: int) -> CascadeRule:
    """A rule fitted on ``seed``'s samples with their truth as the labels (``ragqa calibrate --fit-cascade``)."""
    verdicts = simulate(seed, n_samples)
    audit = score(verdicts, cascade_of(RULE), audit=True)
    truth = truth_of(seed, n_samples)
    items = [
        CascadeItem.of(r, tier2=TIER2, label=passes(t, THRESHOLD, "higher"))
        for r, t in zip(audit.report.results, truth, strict=True)
    ]
    return fit_cascade(items, threshold=THRESHOLD).rule


def main(n_samples: int, seeds: int) -> None:
    """Print the cascade's table (means over the seeds) for ``benchmarks/jury.py``."""
    print("## cascade (tier 2: the 0.95 and 0.9 judges; threshold 0.5)\n")
    print("| rule | tier-2 calls, share of the full panel's | verdicts as the full panel's |", end="")
    print(" audit run: share, agreement |")
    print("|---|---|---|---|")
    rules = [("spread 0.5, margin 0.1, split off", RULE)]
    fit = fitted_rule(seeds, n_samples)  # fitted on a seed not among those reported
    shown = "off" if fit.spread is None else f"{fit.spread:g}"
    rules.append(
        (f"fitted on seed {seeds}: spread {shown}, margin {fit.margin:g}, split {'on' if fit.split else 'off'}", fit)
    )
    for name, rule in rules:
        outcomes = [run(seed, n_samples, rule) for seed in range(seeds)]
        share = np.mean([o.tier2_share for o in outcomes])
        agree = np.mean([o.agreement for o in outcomes])
        audit_share = np.mean([o.audit.tier2_share for o in outcomes])
        audit_agree = np.mean([o.audit.agreement for o in outcomes])
        print(f"| {name} | {share:.3f} | {agree:.3f} | {audit_share:.3f}, {audit_agree:.3f} |")
    print()
