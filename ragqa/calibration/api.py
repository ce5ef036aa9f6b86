"""``ragqa.calibrate``: score a labelled dataset through the run layer, then calibrate."""

from __future__ import annotations

from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragqa.calibration.core import Calibration, calibrate_report, read_labels

if TYPE_CHECKING:
    from ragqa.container import Container
    from ragqa.report import Report
    from ragqa.run.progress import RunProgress
    from ragqa.schema import Sample

__all__ = ["acalibrate", "calibrate"]


def _with_fit(
    result: Calibration,
    report: Report,
    labels: Mapping[str, float],
    data: Any,
    path: str | Path | None,
    target: float | None,
) -> Calibration:
    """``result`` with the cascade rule fitted on the run and written to ``path`` (no fit without a path).

    :attr:`Calibration.cascade_fit` is the fit as the file holds it (:func:`fit_body`), taken from the
    fit in memory rather than read back from ``path``.
    """
    if path is None:
        return result
    from ragqa.calibration.cascade import fit_body, fit_report, write_fit

    source = f"{Path(data).name if isinstance(data, str | Path) else 'labelled samples'} ({result.label_field})"
    fit = fit_report(
        report,
        labels,
        pass_label=result.pass_label,
        thresholds={m.metric: m.panel.threshold for m in result.metrics},
        target=target,
        data=source,
    )
    write_fit(fit, path)
    return result.model_copy(update={"cascade_fit": fit_body(fit)})


@dataclass(frozen=True)
class _Request:
    """The parameters of one :func:`calibrate` / :func:`acalibrate` call (meanings as documented there)."""

    data: Any
    label_field: str
    pass_label: float | None
    limit: int | None
    config: str | Path | None
    profile: str | Sequence[str] | None
    column_map: Mapping[str, str] | None
    out: str | Path | None
    no_cache: bool
    container: Container | None
    confidence: float
    n_resamples: int
    seed: int
    progress: bool | RunProgress | None
    fit_cascade: str | Path | None
    cascade_target: float | None

    @classmethod
    def of(cls, parameters: Mapping[str, Any]) -> _Request:
        """The request from the ``locals()`` of :func:`calibrate` / :func:`acalibrate`, taken once, by field.

        Each field is read by its own name, so a parameter renamed without its field is a ``KeyError`` on
        every call (the tests catch it), and ``metrics`` (passed to the run as is) is left out.
        """
        return cls(**{field.name: parameters[field.name] for field in fields(cls)})

    def samples(self) -> tuple[list[Sample], dict[str, float]]:
        """The samples to score (the first ``limit``) and their labels, read before any judge call.

        Raises:
            ValueError: when ``limit`` is below 1.
            DatasetError: as :func:`ragqa.calibration.core.read_labels` and the dataset reader.
        """
        from ragqa.run.api import samples_from_data

        samples, _ = samples_from_data(self.data, column_map=self.column_map)
        if self.limit is not None:
            if self.limit < 1:
                raise ValueError(f"limit must be at least 1, got {self.limit}")
            samples = samples[: self.limit]
        return samples, read_labels(samples, self.label_field)

    def run(self, samples: Sequence[Sample], metrics: Sequence[Any] | str | None) -> Coroutine[Any, Any, Report]:
        """The run of ``samples`` as :func:`ragqa.aevaluate` makes it, with :meth:`run_options`, as a coroutine.

        A cascade fit's run refuses a voting aggregation before any judge call
        (:func:`ragqa.run.api.calibration_run`), from the settings the run loads anyway.
        """
        from ragqa.run.api import calibration_run

        return calibration_run(samples, metrics, cascade_fit=self.fit_cascade is not None, **self.run_options())

    def run_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`ragqa.evaluate` / :func:`ragqa.aevaluate` for the run.

        Judge failures do not stop the run; a cascade fit asks for an audit run (every tier on every sample).
        """
        return {
            "config": self.config,
            "profile": self.profile,
            "out": self.out,
            "no_cache": self.no_cache,
            "allow_incomplete": True,
            "container": self.container,
            "progress": self.progress,
            "cascade_audit": self.fit_cascade is not None,
        }

    def calibration(self, report: Report, labels: Mapping[str, float]) -> Calibration:
        """:func:`calibrate_report` of the finished run, with the cascade fit when ``fit_cascade`` is set."""
        result = calibrate_report(
            report,
            labels,
            label_field=self.label_field,
            pass_label=self.pass_label,
            confidence=self.confidence,
            n_resamples=self.n_resamples,
            seed=self.seed,
        )
        return _with_fit(result, report, labels, self.data, self.fit_cascade, self.cascade_target)


async def acalibrate(
    data: Any,
    metrics: Sequence[Any] | str | None = None,
    *,
    label_field: str = "human_score",
    pass_label: float | None = None,
    limit: int | None = None,
    config: str | Path | None = None,
    profile: str | Sequence[str] | None = None,
    column_map: Mapping[str, str] | None = None,
    out: str | Path | None = None,
    no_cache: bool = False,
    container: Container | None = None,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    progress: bool | RunProgress | None = None,
    fit_cascade: str | Path | None = None,
    cascade_target: float | None = None,
) -> Calibration:
    """Score ``data`` with the panel and compare each judge and the aggregate with the human labels.

    The async form of :func:`calibrate` (the run goes through :func:`ragqa.aevaluate`); arguments
    and errors are those of :func:`calibrate`.
    """
    request = _Request.of(locals())
    from ragqa.run.loop import default_loop

    samples, labels = request.samples()
    return request.calibration(await default_loop().arun(request.run(samples, metrics)), labels)


def calibrate(
    data: Any,
    metrics: Sequence[Any] | str | None = None,
    *,
    label_field: str = "human_score",
    pass_label: float | None = None,
    limit: int | None = None,
    config: str | Path | None = None,
    profile: str | Sequence[str] | None = None,
    column_map: Mapping[str, str] | None = None,
    out: str | Path | None = None,
    no_cache: bool = False,
    container: Container | None = None,
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
    progress: bool | RunProgress | None = None,
    fit_cascade: str | Path | None = None,
    cascade_target: float | None = None,
) -> Calibration:
    """Score ``data`` with the panel and compare each judge and the aggregate with the human labels.

    Runs :func:`ragqa.evaluate` (the run layer: validation, cache, resumable ``.jsonl`` output)
    on the labelled samples, then :func:`calibrate_report`. Judge failures do not stop the run:
    they are left out of the figures and counted.

    Args:
        data: a dataset path (``.jsonl``, ``.json``, ``.csv``), a list of dicts or Samples, or a
            DataFrame; each sample holds its label in ``metadata[label_field]``.
        metrics: metrics to calibrate (default: ``ragqa.metrics`` of the settings).
        label_field: the ``metadata`` key of the human label (higher = better; 0/1 or a grade).
        pass_label: labels ``>=`` this pass (default 1 for binary labels, else the midpoint).
        limit: calibrate on the first ``limit`` samples only.
        config: the settings file (default: ``./application.yaml``).
        profile: settings profile(s), e.g. ``local``.
        column_map: dataset column renames, as for :func:`ragqa.evaluate`.
        out: also write the run's results here (``.jsonl``, ``.json``...).
        no_cache: do not use the judge cache.
        container: an open container to use (not closed here).
        confidence: confidence level of the bootstrap intervals.
        n_resamples: bootstrap resamples per interval.
        seed: the bootstrap's seed.
        progress: progress of the scoring, as ``progress`` of :func:`ragqa.evaluate` (default:
            on in a terminal or a notebook).
        fit_cascade: also fit the cascade's escalation rule (``ragqa.jury.cascade`` must be
            enabled; every tier then scores every sample) and write it to this JSON file, for
            ``ragqa.jury.cascade.fit`` (:mod:`ragqa.calibration.cascade`); ``None``: no fit.
        cascade_target: the agreement with the labels the fitted cascade must keep, in [0, 1]
            (default: the full panel's, less 0.01).

    Returns:
        The :class:`Calibration`: per metric, a row per judge and one for the panel aggregate.

    Raises:
        DatasetError: when a sample has no label or a non-numeric one (before any judge call), or
            the data cannot be read.
        ConfigError, InvalidSamples: as :func:`ragqa.evaluate`; with ``fit_cascade``, also a run
            aggregated by a vote per statement (``ragqa.aggregation.strategy``), before any judge call.
        ValueError: when ``limit`` is below 1.
    """
    request = _Request.of(locals())
    from ragqa.run.loop import run_sync

    samples, labels = request.samples()
    return request.calibration(run_sync(request.run(samples, metrics)), labels)
