"""How sure a score is: confidence intervals and where the variance of an aggregate comes from (pure).

Three questions a panel can answer about a metric's aggregate (the mean over samples of the
per-sample panel aggregate):

- **How wide is it?** :func:`mean_interval` gives the confidence interval of a mean of per-cluster
  values with the samples as clusters, as recommended for evals by Miller (2024), "Adding Error
  Bars to Evals: A Statistical Approach to Language Model Evaluations", arXiv:2411.00640: the
  clustered (CLT) standard error with a Student t quantile (default), or a cluster bootstrap
  (``scipy.stats.bootstrap``, seeded). :func:`sample_interval` gives one sample's interval across
  its judges x repeats.
- **Where does the variance come from?** :func:`variance_components` splits the scores of one
  metric, shaped (samples, judges, repeats), into sample, judge, sample x judge and repeat
  variance with the ANOVA (expected mean squares) estimator of a crossed two-way random-effects
  design with replication (Searle, Casella & McCulloch 1992, *Variance Components*, ch. 4; the
  unweighted-means analysis of Yates 1934 for unequal repeats, ch. 5).
- **What would tighten it?** :func:`halving_advice` says how many samples, judges or repeats
  would halve the interval and what that costs in judge calls; :func:`decompose` does both.

What the aggregate's interval targets: the configured panel is *fixed* (its judges are the
instrument, not a draw from all possible judges) and the samples are *random* clusters. A
sample's aggregate already averages its judges and repeats, so the spread of the per-sample
aggregates carries the sample, sample x judge and repeat variance, and the interval of their mean
is the clustered standard error of Miller (2024) with one value per cluster. The judges' main
effects (one judge is stricter than another) shift the panel's mean but add no variance to it.

No I/O, no judges: every function takes numbers and returns numbers or the data shapes of
:mod:`ragqa.schema` (:class:`~ragqa.schema.Interval`, :class:`~ragqa.schema.VarianceComponents`,
:class:`~ragqa.schema.AdviceOption`, :class:`~ragqa.schema.Decomposition`, re-exported here,
importable without numpy so that reports load fast), and is tested against simulations with
known components (``tests/uncertainty/test_uncertainty.py``). ``scipy.stats`` is imported inside the function
that uses it (the bootstrap: it is slow to import and the offline path must start fast); the t
quantile of the default interval needs numpy only (:func:`t_quantile`).
"""

from ragqa.schema import DEFAULT_CONFIDENCE, AdviceOption, Decomposition, Interval, VarianceComponents, check_confidence
from ragqa.uncertainty.intervals import (
    BOOTSTRAP_RESAMPLES,
    METHODS,
    bootstrap_interval,
    mean_interval,
    sample_interval,
    t_quantile,
)
from ragqa.uncertainty.summary import calls_per_judgement, metric_intervals
from ragqa.uncertainty.variance import (
    aggregate_variance,
    decompose,
    halving_advice,
    score_cube,
    variance_components,
)

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "DEFAULT_CONFIDENCE",
    "METHODS",
    "AdviceOption",
    "Decomposition",
    "Interval",
    "VarianceComponents",
    "aggregate_variance",
    "bootstrap_interval",
    "calls_per_judgement",
    "check_confidence",
    "decompose",
    "halving_advice",
    "mean_interval",
    "metric_intervals",
    "sample_interval",
    "score_cube",
    "t_quantile",
    "variance_components",
]
