"""The order probe: does a judge's verdict depend on the order of the retrieved contexts?

On a seeded share of the samples (:func:`probe_selects`, deterministic by sample id), the probe
scores context precision and faithfulness a second time with the retrieved contexts in reversed
order, with the same judges, and counts per judge how many verdicts change. That share is the
position bias of Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena"
(https://arxiv.org/abs/2306.05685), section 3.3: a judge is *position consistent* when it gives
the same verdict after the order is swapped; here taken per verdict, since ragqa's judges give
one verdict per context or statement.

What is compared:

- **context precision**: the per-context usefulness verdicts. The reversed run's verdict of the
  context at reversed position ``j`` is mapped back to its original position ``N - 1 - j`` and
  compared with the original verdict of that context (one item per context). The average
  precision itself is not compared: it depends on the order by design. Only with the ``batched``
  call plan: the ``ragas`` plan asks one prompt per context, which the order cannot change.
- **faithfulness**: the per-statement support verdicts. The statements are extracted from the
  question and the response only (no context enters that prompt), so the reversed run asks the
  same extraction, which the sample's shared-call judge answers from memory (no call): both runs
  judge the same statements, and only the entailment call (contexts joined in reversed order) is
  new. If the statements differed anyway, the two scores are compared instead (one item).

A verdict is read as 1 when its value is >= 0.5 (LLM verdicts are 0 or 1; the local judge's graded
values are read at 0.5). The original verdicts are recomputed with the sample's shared-call judges
after the run scored the sample, so they are the run's own answers, from memory, with no call.
The probe's calls are new prompts (other text, so other cache keys), billed to the probe's usage
and never to a metric's; a score of the run never changes.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragqa.errors import JudgeError, SampleError
from ragqa.judges.base import Judge
from ragqa.metrics.base import CallPlan, Metric, MetricContext
from ragqa.metrics.context_precision import ContextPrecision
from ragqa.metrics.faithfulness import Faithfulness
from ragqa.schema import (
    JudgeOrderConsistency,
    MetricScore,
    OrderConsistency,
    OrderProbeResult,
    PanelResult,
    Sample,
    Usage,
)
from ragqa.usage import usage_scope

__all__ = [
    "PROBES",
    "OrderProbe",
    "OrderProbeOptions",
    "is_flagged",
    "merge_probe_results",
    "parse_probes",
    "probe_calls",
    "probe_selects",
    "probed_metrics",
    "reversed_contexts",
]

log = logging.getLogger(__name__)

ProbeName = Literal["order"]
PROBES: tuple[ProbeName, ...] = ("order",)
"""The probes a run can make (``--probe``, ``ragqa.probe.enabled``)."""


def parse_probes(probes: str | Sequence[str] | None) -> tuple[ProbeName, ...]:
    """``"order"``, ``["order"]`` or ``None`` as a tuple of probe names (each once, in order).

    Raises:
        ValueError: naming an unknown probe and the known ones.
    """
    if probes is None:
        return ()
    items = [p.strip() for p in probes.split(",")] if isinstance(probes, str) else [str(p).strip() for p in probes]
    out: list[ProbeName] = []
    for item in items:
        if not item:
            continue
        if item != "order":
            raise ValueError(f"unknown probe {item!r}; the probes are: {', '.join(PROBES)}")
        if "order" not in out:
            out.append("order")
    return tuple(out)


@dataclass(frozen=True)
class OrderProbeOptions:
    """How the order probe picks its samples and when it flags a judge (``ragqa.probe.order``).

    Attributes:
        share: the share of samples probed, in (0, 1]; each sample is in or out by a hash of
            ``seed`` and its id (:func:`probe_selects`), so the same samples are probed on every run.
        seed: the selection's seed (an integer).
        max_change_rate: a judge whose share of changed verdicts exceeds this is flagged, in [0, 1).
            The default 0.1 flags a judge that changes more than one verdict in ten when only the
            order of the contexts changed.

    Raises:
        ValueError: for a share outside (0, 1] or a rate outside [0, 1).
    """

    share: float = 0.2
    seed: int = 0
    max_change_rate: float = 0.1

    def __post_init__(self) -> None:
        """Check the ranges."""
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"probe share must be in (0, 1], e.g. 0.2, got {self.share!r}")
        if not 0.0 <= self.max_change_rate < 1.0:
            raise ValueError(f"max change rate must be in [0, 1), e.g. 0.1, got {self.max_change_rate!r}")


def probe_selects(sample_id: str, share: float, seed: int = 0) -> bool:
    """Whether the sample with ``sample_id`` is probed: a seeded hash of its id falls below ``share``.

    The first 8 bytes of ``sha256("<seed>:<sample id>")`` read as a fraction in [0, 1); the sample is
    selected when it is below ``share``. Deterministic: the same id and seed always give the same
    answer, whatever the dataset's order, size or shard.
    """
    digest = hashlib.sha256(f"{seed}:{sample_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64 < share


def reversed_contexts(sample: Sample) -> Sample | None:
    """``sample`` with its retrieved contexts (or labelled chunks) in reversed order.

    Returns:
        The copy; ``None`` when there are fewer than two contexts, or reversing leaves the order
        as it was (nothing to probe).
    """
    contexts = sample.contexts()
    if len(contexts) < 2 or contexts == contexts[::-1]:
        return None
    if sample.retrieved_contexts is not None:
        return sample.model_copy(update={"retrieved_contexts": list(reversed(sample.retrieved_contexts))})
    assert sample.context_chunks is not None  # contexts() came from them
    return sample.model_copy(update={"context_chunks": list(reversed(sample.context_chunks))})


def _probed(metric: Metric, plan: CallPlan) -> bool:
    if isinstance(metric, ContextPrecision):
        return plan == "batched"
    return type(metric) is Faithfulness


def probed_metrics(metrics: Sequence[Metric], plan: CallPlan) -> list[Metric]:
    """The metrics of ``metrics`` the order probe re-judges under call plan ``plan``.

    Faithfulness always; context precision (any mode) with the ``batched`` plan only (the ``ragas``
    plan asks one prompt per context, whose text the order cannot change).
    """
    return [m for m in metrics if _probed(m, plan)]


def probe_calls(sample: Sample, metrics: Sequence[Metric], plan: CallPlan, options: OrderProbeOptions) -> int:
    """Judge calls the probe makes per judge on ``sample``, at most (for the run's estimate).

    One per probed metric of ``metrics`` when the sample is selected and has two or more contexts
    in an order that reversing changes: faithfulness's entailment call (its statements are
    reused) and context precision's batched usefulness call. 0 otherwise.
    """
    if not probe_selects(sample.label, options.share, options.seed) or reversed_contexts(sample) is None:
        return 0
    return len(probed_metrics(metrics, plan))


@dataclass
class _Tally:
    samples: int = 0
    items: int = 0
    changed: int = 0
    samples_changed: int = 0
    failed: int = 0


@dataclass
class _Judge:
    usage: Usage = field(default_factory=Usage)
    metrics: dict[str, _Tally] = field(default_factory=dict)


class OrderProbe:
    """Runs the order probe on a run's samples and tallies each judge's changed verdicts.

    The evaluator calls :meth:`probe` once per sample after scoring it; :meth:`result` gives the
    figures. One object per evaluator; :meth:`reset` starts a new tally.

    Args:
        options: the selection and the flag rate.
        judge_ids: the panel's judge ids, in order.
        call_plan: the run's call plan (context precision is probed with ``batched`` only).
    """

    def __init__(self, options: OrderProbeOptions, judge_ids: Sequence[str], call_plan: CallPlan) -> None:
        """Start an empty tally."""
        self.options = options
        self.judge_ids = tuple(judge_ids)
        self.call_plan = call_plan
        self.reset()

    def reset(self) -> None:
        """Forget every sample probed so far."""
        self._selected = 0
        self._samples = 0
        self._metrics: list[str] = []
        self._cp_skipped = False
        self._judges = {j: _Judge() for j in self.judge_ids}

    def selects(self, sample: Sample) -> bool:
        """Whether ``sample`` is in the probe's share (:func:`probe_selects`)."""
        return probe_selects(sample.label, self.options.share, self.options.seed)

    async def probe(
        self,
        sample: Sample,
        metrics: Sequence[Metric],
        results: Sequence[PanelResult],
        judges_for: Callable[[Metric], Sequence[Judge]],
        context: MetricContext,
        deadline: float | None = None,
    ) -> None:
        """Re-judge ``sample`` with its contexts reversed and tally the changed verdicts, if selected.

        Args:
            sample: the sample, as the run scored it.
            metrics: the metrics the run scored on it, in the order of ``results``.
            results: the run's results of those metrics; a judge whose outcome failed is not probed.
            judges_for: the judges that scored a metric, in panel order (the sample's shared-call
                judges, so the original verdicts come from memory).
            context: the run's metric context.
            deadline: event-loop time after which the probe stops (its unfinished comparisons
                count as failed); ``None``: none.
        """
        if not self.selects(sample):
            return
        self._selected += 1
        for metric in metrics:
            if isinstance(metric, ContextPrecision) and not _probed(metric, self.call_plan):
                self._cp_skipped = True
        flipped = reversed_contexts(sample)
        chosen = [(m, r) for m, r in zip(metrics, results, strict=True) if _probed(m, self.call_plan)]
        if flipped is None or not chosen:
            return
        self._samples += 1
        jobs = []
        for metric, result in chosen:
            if metric.key not in self._metrics:
                self._metrics.append(metric.key)
            judges = judges_for(metric)
            for judge, outcome in zip(judges, result.judges, strict=True):
                if outcome.ok and judge.id in self._judges:
                    jobs.append(self._compare(metric, sample, flipped, judge, context))
        if deadline is None:
            await asyncio.gather(*jobs)
            return
        tasks = [asyncio.ensure_future(job) for job in jobs]
        try:
            async with asyncio.timeout_at(deadline):
                await asyncio.gather(*tasks)
        except TimeoutError:
            pass
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _compare(
        self, metric: Metric, sample: Sample, flipped: Sample, judge: Judge, context: MetricContext
    ) -> None:
        entry = self._judges[judge.id]
        tally = entry.metrics.setdefault(metric.key, _Tally())
        original: MetricScore | None = None
        turned: MetricScore | None = None
        with usage_scope() as meter:
            try:
                original = await metric.score(sample, judge, context)  # the run's own calls, from memory
                turned = await metric.score(flipped, judge, context)
            except (JudgeError, SampleError):
                pass  # a judge that fails on the reversed order: counted below, the run goes on
            except Exception:  # a bug or an unmapped provider error: the probe never stops a run
                log.exception("order probe: %s with judge %s on sample %s", metric.key, judge.id, sample.label)
            except asyncio.CancelledError:
                entry.usage = entry.usage + meter.total
                tally.failed += 1
                raise
        entry.usage = entry.usage + meter.total
        if original is None or turned is None:
            tally.failed += 1
            return
        pairs = _verdict_pairs(metric, original, turned)
        if not pairs:
            return
        changed = sum(1 for a, b in pairs if (a >= 0.5) != (b >= 0.5))
        tally.samples += 1
        tally.items += len(pairs)
        tally.changed += changed
        tally.samples_changed += changed > 0

    def result(self) -> OrderProbeResult:
        """The figures so far: per judge, pooled and per probed metric; flags by ``max_change_rate``."""
        judges = []
        for judge_id in self.judge_ids:
            entry = self._judges[judge_id]
            rows = [
                OrderConsistency(
                    metric=key,
                    n_samples=t.samples,
                    n_items=t.items,
                    n_changed=t.changed,
                    n_samples_changed=t.samples_changed,
                    n_failed=t.failed,
                    consistency=_consistency(t.changed, t.items),
                )
                for key in self._metrics
                if (t := entry.metrics.get(key)) is not None
            ]
            items = sum(r.n_items for r in rows)
            changed = sum(r.n_changed for r in rows)
            judges.append(
                JudgeOrderConsistency(
                    judge_id=judge_id,
                    n_items=items,
                    n_changed=changed,
                    consistency=_consistency(changed, items),
                    flagged=is_flagged(changed, items, self.options.max_change_rate),
                    metrics=rows,
                    usage=entry.usage,
                )
            )
        notes = []
        if self._cp_skipped:
            notes.append(
                "context precision is not probed with the ragas call plan: it asks one prompt per context, "
                "which the order of the contexts cannot change"
            )
        total = Usage()
        for j in judges:
            total = total + j.usage
        return OrderProbeResult(
            share=self.options.share,
            seed=self.options.seed,
            max_change_rate=self.options.max_change_rate,
            n_selected=self._selected,
            n_samples=self._samples,
            metrics=list(self._metrics),
            judges=judges,
            usage=total,
            notes=notes,
        )


def _consistency(changed: int, items: int) -> float:
    return 1.0 - changed / items if items else math.nan


def is_flagged(changed: int, items: int, max_change_rate: float) -> bool:
    """Whether a judge is flagged: its share of changed verdicts ``changed / items`` exceeds ``max_change_rate``.

    Args:
        changed: verdicts that changed with the contexts reversed (>= 0).
        items: verdicts compared (>= 0); a judge with none is never flagged.
        max_change_rate: the highest share of changed verdicts that passes, in [0, 1).

    Returns:
        True when ``items > 0`` and ``changed / items > max_change_rate`` (strictly above).
    """
    return items > 0 and changed / items > max_change_rate


def _verdict_pairs(metric: Metric, original: MetricScore, turned: MetricScore) -> list[tuple[float, float]]:
    """``(original, reversed)`` verdict pairs to compare, each at the original position (see the module docstring)."""
    before, after = original.details or {}, turned.details or {}
    first = [float(v) for v in before.get("verdicts", [])]
    second = [float(v) for v in after.get("verdicts", [])]
    if isinstance(metric, ContextPrecision):
        second = second[::-1]  # reversed position j is original position N - 1 - j
        return list(zip(first, second, strict=True)) if len(first) == len(second) else []
    if before.get("statements") == after.get("statements") and len(first) == len(second):
        return list(zip(first, second, strict=True))
    if math.isnan(original.value) or math.isnan(turned.value):
        return []
    return [(1.0, 1.0 if math.isclose(original.value, turned.value, abs_tol=1e-12) else 0.0)]  # the scores


def merge_probe_results(parts: Sequence[OrderProbeResult]) -> OrderProbeResult | None:
    """The probe figures of a run's parts (``--shard`` parts joined by ``ragqa merge``) as one run's.

    Counts and usage add up; each consistency and flag is computed again from the sums (a judge is
    flagged when its pooled share of changed verdicts exceeds the first part's ``max_change_rate``).
    Judges and metrics keep the first part's order, then any other's. ``None`` without parts.
    """
    if not parts:
        return None
    first = parts[0]
    judges: dict[str, JudgeOrderConsistency] = {}
    for part in parts:
        for judge in part.judges:
            into = judges.setdefault(judge.judge_id, JudgeOrderConsistency(judge_id=judge.judge_id))
            rows = {m.metric: m for m in into.metrics}
            for row in judge.metrics:
                old = rows.get(row.metric, OrderConsistency(metric=row.metric))
                rows[row.metric] = OrderConsistency(
                    metric=row.metric,
                    n_samples=old.n_samples + row.n_samples,
                    n_items=old.n_items + row.n_items,
                    n_changed=old.n_changed + row.n_changed,
                    n_samples_changed=old.n_samples_changed + row.n_samples_changed,
                    n_failed=old.n_failed + row.n_failed,
                    consistency=_consistency(old.n_changed + row.n_changed, old.n_items + row.n_items),
                )
            into.metrics = list(rows.values())
            into.usage = into.usage + judge.usage
    for judge in judges.values():
        judge.n_items = sum(m.n_items for m in judge.metrics)
        judge.n_changed = sum(m.n_changed for m in judge.metrics)
        judge.consistency = _consistency(judge.n_changed, judge.n_items)
        judge.flagged = is_flagged(judge.n_changed, judge.n_items, first.max_change_rate)
    total = Usage()
    for part in parts:
        total = total + part.usage
    return OrderProbeResult(
        share=first.share,
        seed=first.seed,
        max_change_rate=first.max_change_rate,
        n_selected=sum(p.n_selected for p in parts),
        n_samples=sum(p.n_samples for p in parts),
        metrics=list(dict.fromkeys(m for p in parts for m in p.metrics)),
        judges=list(judges.values()),
        usage=total,
        notes=list(dict.fromkeys(n for p in parts for n in p.notes)),
    )
