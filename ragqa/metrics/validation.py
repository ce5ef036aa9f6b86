"""The one sample validator of every entry point: samples are checked here before any judge is called.

The runner validates a dataset once per run (:mod:`ragqa.run.runner`); the panel evaluator
validates the samples it is given with the same function and its options' :class:`Limits`, so a
sample refused by ``ragqa evaluate`` is refused by an assertion and by ``ragqa test`` too.

Every problem is collected (sample, field, metric, fix), so one error lists them all. Two kinds:

- a metric's required fields (:meth:`ragqa.metrics.base.Metric.validate`);
- the size guards of ``ragqa.limits`` (``max-contexts-per-sample``, ``max-text-chars``, also for
  each message of a conversation), which
  name the setting to change, so one sample with 10,000 contexts is refused instead of paid for.

Loading (:mod:`ragqa.datasets`) already rejected what is not text (lone surrogates, blank chunks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragqa.errors import InvalidSamples, SampleError
from ragqa.metrics.base import Metric
from ragqa.schema import Sample

if TYPE_CHECKING:  # the settings are only read here, never built
    from ragqa.settings import Settings

__all__ = ["Limits", "Validation", "limit_problems", "validate_run", "validate_sample"]

_TEXT_FIELDS = ("user_input", "response", "reference", "noise_context")


@dataclass(frozen=True)
class Limits:
    """Input-size guards (``ragqa.limits``).

    Attributes:
        max_contexts_per_sample: most contexts (retrieved, reference or labelled chunks) one
            sample may carry (>= 1).
        max_text_chars: longest single text field or context, in characters (>= 1).
    """

    max_contexts_per_sample: int = 100
    max_text_chars: int = 200_000

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The guards of ``ragqa.limits`` (``max-contexts-per-sample``, ``max-text-chars``).

        The one place they are read: the container's panel options
        (:func:`ragqa.factory.panel_options`) and the run plan (:func:`ragqa.run.plan.make_plan`)
        both take them from here, so an assertion and a run refuse the same samples.
        """
        limits = settings.ragqa.limits
        return cls(max_contexts_per_sample=limits.max_contexts_per_sample, max_text_chars=limits.max_text_chars)


@dataclass(frozen=True)
class Validation:
    """The outcome of validating a run's samples.

    Attributes:
        problems: every problem, in sample then metric order.
        invalid: ``(sample id, metric key)`` pairs that cannot be scored; a size problem makes
            every metric of its sample invalid.
    """

    problems: tuple[SampleError, ...]
    invalid: frozenset[tuple[str, str]]

    def raise_if_any(self, *, hint: str = "") -> None:
        """Raise :class:`~ragqa.errors.InvalidSamples` listing every problem, when there is one."""
        if self.problems:
            raise InvalidSamples(list(self.problems), hint=hint)


def limit_problems(sample: Sample, limits: Limits) -> list[SampleError]:
    """The size guards for one sample: too many contexts, or a text longer than allowed.

    Returns:
        One problem per offending field, naming the ``ragqa.limits`` key to raise.
    """
    problems: list[SampleError] = []
    lists = {
        "retrieved_contexts": sample.retrieved_contexts or [],
        "reference_contexts": sample.reference_contexts or [],
        "context_chunks": [c.text for c in sample.context_chunks or []],
    }
    for field, items in lists.items():
        if len(items) > limits.max_contexts_per_sample:
            problems.append(
                SampleError(
                    f"{len(items)} contexts, more than ragqa.limits.max-contexts-per-sample "
                    f"({limits.max_contexts_per_sample}); trim the contexts, or raise that setting",
                    sample_id=sample.label,
                    field=field,
                )
            )
        sizes = [len(item) for item in items]
        if sizes and max(sizes) > limits.max_text_chars:
            longest = sizes.index(max(sizes))  # the first longest item
            problems.append(
                SampleError(
                    f"item {longest + 1} has {len(items[longest]):,} characters, more than "
                    f"ragqa.limits.max-text-chars ({limits.max_text_chars:,}); shorten it, or raise that setting",
                    sample_id=sample.label,
                    field=field,
                )
            )
    messages = [m.content for m in sample.messages or []]
    message_sizes = [len(m) for m in messages]
    longest_message = message_sizes.index(max(message_sizes)) if message_sizes else None
    if longest_message is not None and len(messages[longest_message]) > limits.max_text_chars:
        problems.append(
            SampleError(
                f"message {longest_message + 1} has {len(messages[longest_message]):,} characters, more than "
                f"ragqa.limits.max-text-chars ({limits.max_text_chars:,}); shorten it, or raise that setting",
                sample_id=sample.label,
                field="messages",
            )
        )
    for field in _TEXT_FIELDS:
        value = getattr(sample, field)
        if isinstance(value, str) and len(value) > limits.max_text_chars:
            problems.append(
                SampleError(
                    f"{len(value):,} characters, more than ragqa.limits.max-text-chars "
                    f"({limits.max_text_chars:,}); shorten it, or raise that setting",
                    sample_id=sample.label,
                    field=field,
                )
            )
    return problems


def validate_run(samples: Sequence[Sample], metrics: Sequence[Metric], limits: Limits | None = None) -> Validation:
    """Check every sample against every metric and the size guards; no judge is involved.

    Args:
        samples: the samples, each with an ``id``.
        metrics: the metrics of the run.
        limits: the size guards (default: :class:`Limits` defaults).

    Returns:
        Every problem and the (sample, metric) pairs they make unscorable.
    """
    limits = limits or Limits()
    problems: list[SampleError] = []
    invalid: set[tuple[str, str]] = set()
    for sample in samples:
        validate_sample(sample, metrics, limits, problems, invalid)
    return Validation(tuple(problems), frozenset(invalid))


def validate_sample(
    sample: Sample,
    metrics: Sequence[Metric],
    limits: Limits,
    problems: list[SampleError],
    invalid: set[tuple[str, str]],
) -> list[Metric]:
    """:func:`validate_run` of one sample: its problems are added to ``problems``, its unscorable pairs to ``invalid``.

    Returns:
        The metrics the sample can be scored with (none when a size guard fails).
    """
    sized = limit_problems(sample, limits)
    if sized:
        problems.extend(sized)
        invalid.update((sample.label, m.key) for m in metrics)
    valid = []
    for metric in metrics:
        try:
            metric.validate(sample)
        except SampleError as exc:
            problems.append(exc)
            invalid.add((sample.label, metric.key))
        else:
            if not sized:
                valid.append(metric)
    return valid
