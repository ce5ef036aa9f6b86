"""How many judge calls and tokens a run will spend, computed before the first call.

Calls are each metric's own formula (:meth:`ragqa.metrics.base.Metric.estimate_calls`, the
``calls_per_sample`` column of ``ragqa metrics``) summed over the (sample, metric) pairs to score,
with steps that metrics share on one sample (the response's statements, and their verdicts
against the contexts) counted once, multiplied by the judges of the panel and by the repeats
(:mod:`ragqa.repeats`: each repeat makes its own calls, shared steps once per repeat). It is an
upper bound: a response without statements needs fewer calls.

Tokens are estimated from text length at about 4 characters per token: per call, the size of
ragqa's prompt text (instructions, output schema and examples, measured from the prompts) plus the
sample's question, response, reference and one average context. It is an order of magnitude, not
a bill; the usage line of the report shows what was really spent. Local judges send no prompt,
so their calls count no tokens (:func:`sends_prompts`).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from itertools import groupby
from typing import TYPE_CHECKING

from ragqa.errors import ConfigError
from ragqa.judges.base import Judge
from ragqa.jury.probe import OrderProbeOptions, probe_calls
from ragqa.metrics.base import CallPlan, Metric
from ragqa.schema import Sample

if TYPE_CHECKING:
    from ragqa.evaluation import PanelEvaluator

__all__ = [
    "CHARS_PER_TOKEN",
    "EstimateTally",
    "RunEstimate",
    "TooManyCalls",
    "estimate_pairs",
    "panel_estimate",
    "prompt_overhead_chars",
    "sends_prompts",
]

CHARS_PER_TOKEN = 4.0
"""Characters per token used for the estimate (a common rule of thumb for English text)."""


@dataclass(frozen=True)
class RunEstimate:
    """Judge calls and prompt tokens a run is expected to spend (upper bound for calls).

    Attributes:
        pairs: (sample, metric) pairs to score.
        judges: judges in the panel.
        calls: judge calls, at most (repeats included).
        tokens: prompt tokens, roughly (characters / :data:`CHARS_PER_TOKEN`; repeats included).
        repeats: times each judge scores each pair (>= 1).
        panel_calls: calls among :attr:`calls` made once per sample (and repeat) for the whole panel
            instead of once per judge (claim-vote's statement extraction); 0 otherwise.
    """

    pairs: int
    judges: int
    calls: int
    tokens: int
    repeats: int = 1
    panel_calls: int = 0
    token_judges: int | None = None
    """Judges that send prompts (HTTP judges), whose calls the tokens count; ``None``: every judge."""
    probe_calls: int = 0
    """Calls among :attr:`calls` that the order probe makes (``--probe order``, :mod:`ragqa.jury.probe`)."""

    def __str__(self) -> str:
        """``estimate: 120 (sample, metric) pair(s) x 2 judge(s): at most 480 judge call(s), ~500 prompt tokens``.

        With repeats, ``x 2 judge(s) x 3 repeat(s)``. A panel of local judges only (``token_judges`` 0)
        reads ``..., no prompt tokens (local judges)``.
        """
        times = f" x {self.repeats} repeat(s)" if self.repeats > 1 else ""
        tokens = (
            "no prompt tokens (local judges)"
            if self.token_judges == 0 and self.judges
            else f"~{self.tokens:,} prompt tokens"
        )
        return (
            f"estimate: {self.pairs} (sample, metric) pair(s) x {self.judges} judge(s){times}: "
            f"at most {self.calls:,} judge call(s), {tokens}"
            + (
                f" ({self.panel_calls:,} statement extraction(s) made once per sample for the panel, not per judge)"
                if self.panel_calls
                else ""
            )
            + (f" (incl. {self.probe_calls:,} order-probe call(s))" if self.probe_calls else "")
        )


def sends_prompts(judge: Judge) -> bool:
    """Whether ``judge`` sends prompt tokens to a model: False for ragqa's local judge under any wrapper.

    Wrappers that keep the judge they wrap in ``inner`` (the cache, shared calls) are looked through.
    Without :mod:`ragqa.judges.local.judge` imported no local judge exists, so the check imports nothing.
    """
    inner: object = judge
    while hasattr(inner, "inner"):
        inner = inner.inner
    local = sys.modules.get("ragqa.judges.local.judge")
    return not (local is not None and isinstance(inner, local.LocalJudge))


@cache
def prompt_overhead_chars() -> int:
    """Mean length, in characters, of the fixed part of ragqa's prompts (instructions, schema, examples)."""
    from ragqa.prompts import PROMPTS

    sizes = []
    for prompt in PROMPTS.values():
        examples = prompt.examples.get("en") or ()
        shots = sum(len(ex.input.model_dump_json()) + len(ex.output.model_dump_json()) for ex in examples)
        sizes.append(len(prompt.instructions["en"]) + len(json.dumps(prompt.output_schema)) + shots)
    return round(sum(sizes) / len(sizes)) if sizes else 0


def _input_chars(sample: Sample) -> int:
    contexts = sample.contexts()
    mean_context = sum(len(c) for c in contexts) / len(contexts) if contexts else 0.0
    texts = (sample.user_input, sample.response, sample.reference)
    return sum(len(t) for t in texts if t) + round(mean_context)


class EstimateTally:
    """The sums behind :func:`estimate_pairs`, taken one sample at a time (no sample is kept).

    The per-sample counts do not depend on the panel's size, so a run tallies them in the same
    pass that validates the samples, before the judges exist, and :meth:`estimate` gives the
    estimate of any panel: the same numbers as :func:`estimate_pairs` on the same pairs (integer
    sums, exact in any order).

    Args:
        plan: the run's call plan.
        claim_vote: the panel votes per statement (see :func:`estimate_pairs`).
        probe: the order probe's options when the run probes (``--probe order``): its calls per
            judge are counted too (:attr:`probed`, :func:`ragqa.jury.probe.probe_calls`).
    """

    def __init__(
        self, *, plan: CallPlan = "ragas", claim_vote: bool = False, probe: OrderProbeOptions | None = None
    ) -> None:
        """Start with no pair."""
        self.plan: CallPlan = plan
        self.claim_vote = claim_vote
        self.probe = probe
        self.probed = 0
        """The order probe's calls per judge on the pairs added (0 without ``probe``)."""
        self.pairs = 0
        self._calls = 0  # sum of each sample's calls per judge, shared steps counted once
        self._shared = 0  # of which made once for the panel (claim-vote extraction)
        self._chars = 0  # sum of calls x prompt characters
        self._chars_shared = 0
        self._overhead = prompt_overhead_chars()

    def add(self, sample: Sample, metrics: Sequence[Metric]) -> None:
        """Count the pairs of ``sample`` with ``metrics`` (those still to score); no metric adds nothing."""
        if not metrics:
            return
        plan, claim_vote = self.plan, self.claim_vote
        if self.probe is not None:
            self.probed += probe_calls(sample, metrics, plan, self.probe)
        shared = 0
        if not claim_vote:
            every = [step for metric in metrics for step in metric.shared_steps(sample)]
            n = sum(metric.estimate_calls(sample, plan) for metric in metrics)
        else:
            votes = [(m, m.claim_vote is not None) for m in metrics]
            # a voting metric's extraction steps count as shared: other voting metrics make them identically
            every = [s for m, v in votes for s in m.shared_steps(sample) | (m.vote_steps(sample) if v else frozenset())]
            n = sum(m.vote_calls(sample, plan) if v else m.estimate_calls(sample, plan) for m, v in votes)
            voted = {s for m, v in votes if v for s in m.vote_steps(sample)}
            own = {step for m, v in votes if not v for step in m.shared_steps(sample)}
            shared = len(voted - own)
        n -= len(every) - len(set(every))  # a step shared by k metrics is made once: k - 1 calls less
        chars = self._overhead + _input_chars(sample)
        self.pairs += len(metrics)
        self._calls += n
        self._shared += shared
        self._chars += n * chars
        self._chars_shared += shared * chars

    def estimate(self, judges: int, *, repeats: int = 1, token_judges: int | None = None) -> RunEstimate:
        """The estimate of the pairs added so far for a panel of ``judges`` (see :func:`estimate_pairs`)."""
        shared = self._shared if judges else 0  # a panel of no judge shares nothing
        chars = self._chars - (self._chars_shared if judges else 0)
        chars_once = self._chars_shared if judges else 0
        prompting = judges if token_judges is None else token_judges
        return RunEstimate(
            pairs=self.pairs,
            judges=judges,
            calls=((self._calls - shared) * judges + shared) * repeats,
            tokens=math.ceil((chars * prompting + chars_once * min(prompting, 1)) * repeats / CHARS_PER_TOKEN),
            repeats=repeats,
            panel_calls=shared * repeats,
            token_judges=token_judges,
        )


def estimate_pairs(
    pairs: Iterable[tuple[Sample, Metric]],
    judges: int,
    *,
    plan: CallPlan = "ragas",
    repeats: int = 1,
    token_judges: int | None = None,
    claim_vote: bool = False,
) -> RunEstimate:
    """Estimate the calls and tokens of scoring ``pairs`` with a panel of ``judges``.

    Args:
        pairs: the (sample, metric) pairs the run will score (already validated), grouped by
            sample (a sample's pairs next to each other, as the runner gives them).
        judges: the number of judges of the panel (>= 0).
        plan: the run's call plan (each metric's :meth:`~ragqa.metrics.base.Metric.estimate_calls` under it).
        repeats: times each judge scores each pair (>= 1); metrics that need no judge make no call.
        token_judges: the judges that send prompts (:func:`sends_prompts`); only their calls
            count tokens. ``None``: all ``judges``.
        claim_vote: the panel votes per statement (``claim-vote``, ``dawid-skene``): a sample's
            extraction steps (:meth:`~ragqa.metrics.base.Metric.vote_steps`) are made once for the panel
            (per repeat) when every metric of the sample that needs it votes (:mod:`ragqa.jury.panel`);
            its tokens count once when any judge sends prompts.

    Returns:
        The estimate: per sample, the sum of ``metric.estimate_calls(sample, plan)`` less the calls of
        shared steps (:meth:`~ragqa.metrics.base.Metric.shared_steps`) counted more than once,
        times ``judges`` and ``repeats``; with ``claim_vote``, the extraction steps made once for the
        panel count once per repeat.
    """
    tally = EstimateTally(plan=plan, claim_vote=claim_vote)
    for _, group in groupby(pairs, key=lambda pair: id(pair[0])):
        items = list(group)
        tally.add(items[0][0], [metric for _, metric in items])
    return tally.estimate(judges, repeats=repeats, token_judges=token_judges)


def panel_estimate(
    evaluator: PanelEvaluator,
    tally: EstimateTally | None,
    todo: Iterable[tuple[int, Sample, Sequence[Metric]]],
) -> RunEstimate:
    """The estimate of a run's missing pairs with ``evaluator``'s panel, the order probe's calls included.

    Args:
        evaluator: the run's panel: its judges (those that send prompts count tokens,
            :func:`sends_prompts`), its options (call plan, votes, repeats) and its order probe.
        tally: the counts of the run's checking pass (:attr:`ragqa.run.prepared.Prepared.tally`);
            ``None``, or counts made for other panel options than ``evaluator``'s, are made again
            from ``todo``.
        todo: ``(position, sample, metrics still to score)`` of the run
            (:meth:`ragqa.run.prepared.Prepared.todo`), read only when ``tally`` cannot be used.

    Returns:
        The estimate; the order probe's calls (``probe_calls``) are added at the run's mean tokens per call.
    """
    judges = len(evaluator.judges)
    options = evaluator.options
    prompting = sum(1 for judge in evaluator.judges if sends_prompts(judge))
    probe = evaluator.probe
    wanted = (options.call_plan, options.votes, probe.options if probe is not None else None)
    if tally is None or (tally.plan, tally.claim_vote, tally.probe) != wanted:
        # the checking pass could not count (panel options that did not build then): go over the samples
        tally = EstimateTally(plan=options.call_plan, claim_vote=options.votes, probe=wanted[2])
        for _, sample, metrics in todo:
            tally.add(sample, metrics)
    estimate = tally.estimate(judges, repeats=options.repeats, token_judges=prompting)
    probed = tally.probed  # the order probe's calls per judge, counted in the same pass over the samples
    if probed:  # the probe's tokens at the run's mean per call
        extra = probed * judges
        per_call = estimate.tokens / estimate.calls if estimate.calls else 0.0
        estimate = replace(
            estimate,
            calls=estimate.calls + extra,
            tokens=round(estimate.tokens + per_call * extra),
            probe_calls=extra,
        )
    return estimate


class TooManyCalls(ConfigError):
    """The estimated judge calls exceed ``max_calls`` (``--max-calls``, ``ragqa.limits.max-calls``).

    Attributes:
        estimate: the estimate that was refused.
        max_calls: the cap.
    """

    def __init__(self, estimate: RunEstimate, max_calls: int) -> None:
        super().__init__(
            f"{estimate}; more than the cap of {max_calls:,} (--max-calls / ragqa.limits.max-calls). "
            "Nothing was called: score fewer samples or metrics, or raise the cap",
            key="ragqa.limits.max-calls",
        )
        self.estimate = estimate
        self.max_calls = max_calls
