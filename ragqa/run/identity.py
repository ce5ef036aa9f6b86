"""A run's identity: the fingerprint of its configuration, the header it writes, and the checks of ``resume``.

The header (:class:`~ragqa.run.results_file.ResultsHeader`) is the first line of the results file
the :class:`~ragqa.run.runner.Runner` streams; ``--resume`` continues only a run with the same
shard, repeats, configuration (:func:`config_fingerprint`) and dataset (:func:`check_resumed`).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ragqa._version import ragqa_version
from ragqa.errors import ConfigError
from ragqa.run.plan import RunPlan
from ragqa.run.prepared import Prepared
from ragqa.run.results_file import ResultsHeader
from ragqa.run.source import FILE_DIGEST_PREFIX

if TYPE_CHECKING:
    from ragqa.evaluation import PanelEvaluator

__all__ = ["check_resumed", "config_fingerprint", "run_header"]


def _sha256(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def config_fingerprint(evaluator: PanelEvaluator) -> str:
    """``sha256:<hex>`` of what decides the scores: each judge's id and identity, the embedders, the panel options.

    The panel options include the call plan: a resumed run refuses results made with the other plan.
    With repeats (``repeats > 1``) they include the repeats and the reducer too, so a resumed run
    refuses results made with another number of repeats; a single-repeat run leaves both out, so
    its fingerprint is the one ragqa wrote before repeats existed.

    A judge's identity (:attr:`ragqa.judges.base.Judge.fingerprint`) is its provider, endpoint,
    model and decoding options, never its key or headers, so no secret enters the hash.
    """
    options = evaluator.options
    decides: dict[str, Any] = {
        "judges": [[j.id, j.fingerprint] for j in evaluator.judges],
        "embedders": [e.id for e in evaluator.embedders],
        "strategy": options.strategy,
        "quorum": options.quorum,
        "language": options.language,
        "call_plan": options.call_plan,
    }
    if options.repeats > 1:
        decides.update(repeats=options.repeats, reducer=options.reducer)
    if options.votes and evaluator.judges:  # who extracts the statements decides the voted scores
        decides.update(extractor=evaluator.judges[evaluator.extractor].id)
    if evaluator.cascade_rule is not None:  # which judges score an item, and so its aggregate
        decides.update(cascade=evaluator.cascade_rule.describe())
    return _sha256(decides)


def run_header(plan: RunPlan, prepared: Prepared, evaluator: PanelEvaluator) -> ResultsHeader:
    """The header of the run's results file (:class:`~ragqa.run.results_file.ResultsHeader`).

    A resumed run (``prepared.header`` read back) keeps its run id, ragqa version and start time;
    every other field is this run's: its :func:`config_fingerprint`, dataset, samples, metrics,
    judges and panel options. ``intervals`` and ``probe`` stay ``None`` (the finished run adds them).
    """
    old = prepared.header
    return ResultsHeader(
        run_id=old.run_id if old is not None else uuid.uuid4().hex,
        ragqa_version=old.ragqa_version if old is not None else ragqa_version(),
        config_fingerprint=config_fingerprint(evaluator),
        dataset=plan.dataset,
        dataset_fingerprint=prepared.fingerprint,
        samples=prepared.n_samples,
        metrics=tuple(m.key for m in plan.metrics),
        judges=tuple(j.id for j in evaluator.judges),
        started_at=old.started_at if old is not None else datetime.now(UTC).isoformat(timespec="seconds"),
        shard=str(plan.shard) if plan.shard is not None else None,
        dataset_samples=prepared.dataset_samples if plan.shard is not None else None,
        repeats=evaluator.options.repeats,
        confidence=evaluator.options.confidence,
        cascade=evaluator.cascade_rule.header() if evaluator.cascade_rule is not None else None,
        thresholds=plan.reliability_thresholds or None,
        extractor=evaluator.judges[evaluator.extractor].id if evaluator.options.votes and evaluator.judges else None,
    )


def check_resumed(plan: RunPlan, prepared: Prepared, evaluator: PanelEvaluator) -> None:
    """Refuse to resume results made by another run: another shard, repeats, configuration or dataset.

    Compares the header read back (``prepared.header``, not ``None``) with :func:`run_header` of this run.

    Raises:
        ConfigError: naming what differs and how to go on (key ``--resume``).
    """
    old, new = prepared.header, run_header(plan, prepared, evaluator)
    assert old is not None
    if old.shard != new.shard:
        raise ConfigError(
            f"--resume: the results are of shard {old.shard or '(none)'}, this run is shard "
            f"{new.shard or '(none)'}; use the same --shard, or run without --resume",
            key="--resume",
        )
    if old.repeats != new.repeats:
        raise ConfigError(
            f"--resume: the results were made with {old.repeats} repeat(s) per judge, this run asks for "
            f"{new.repeats}; use the same --repeats (ragqa.repeats), or run without --resume",
            key="--resume",
        )
    if old.config_fingerprint != new.config_fingerprint:
        raise ConfigError(
            f"--resume: the results were made with another configuration (judges {', '.join(old.judges)}; "
            f"fingerprint {old.config_fingerprint[:19]}..., now {new.config_fingerprint[:19]}...). Use the same "
            "settings, profile and --aggregation/--quorum/--language/--call-plan/--reducer, "
            "or run without --resume",
            key="--resume",
        )
    same = (
        old.dataset_fingerprint == prepared.digest  # a run stopped before its samples' fingerprint was taken
        if old.dataset_fingerprint.startswith(FILE_DIGEST_PREFIX)
        else old.dataset_fingerprint == new.dataset_fingerprint
    )
    if not same:
        raise ConfigError(
            f"--resume: the results were made on other samples ({old.dataset}, {old.samples} sample(s)); "
            "use the same dataset, or run without --resume",
            key="--resume",
        )
