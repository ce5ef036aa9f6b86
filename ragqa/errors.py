"""The one error tree of ragqa.

Every error ragqa raises on purpose derives from :class:`RagqaError` and carries its context as
attributes (not only in the message), so callers never branch on message text::

    RagqaError
    ├── ConfigError            settings the user can fix; raised at start-up, before any judge call
    ├── MissingExtraError      an optional feature needs an extra that is not installed (also an ImportError)
    ├── OutputError            an output file could not be written (full disk, unwritable folder; also an OSError)
    ├── SampleError            a sample lacks a field a metric needs (or it is empty / malformed)
    │   ├── DatasetError       a dataset file cannot be read (line, column, cause)
    │   │   └── DatasetProblems  every bad record of a file at once (``.problems``, ``.n_problems``)
    │   └── InvalidSamples     every problem of a run's samples at once (``.problems``)
    └── JudgeError             a judge call failed; recorded per judge, never turned into a score
        ├── JudgeTimeout       the call did not finish within its deadline
        ├── JudgeHTTPError     the provider answered with an HTTP error after all retries
        ├── JudgeRateLimited   the provider's rate limiter rejected or timed out the call
        ├── JudgeUnavailable   the judge's circuit breaker is open (calls got no answer) or cut a hung judge's call
        ├── JudgeOutputError   the output did not validate against the prompt's schema (raw kept)
        ├── JudgeUnsupported   this judge cannot answer this prompt (e.g. the local judge)
        └── ScoreOutOfRange    a score outside the metric's declared range, or infinite (never NaN)

Programming misuse (wrong types passed by a caller) raises ``TypeError``/``ValueError`` as usual.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ConfigError",
    "DatasetError",
    "DatasetProblems",
    "InvalidSamples",
    "JudgeError",
    "JudgeHTTPError",
    "JudgeOutputError",
    "JudgeRateLimited",
    "JudgeTimeout",
    "JudgeUnavailable",
    "JudgeUnsupported",
    "MissingExtraError",
    "OutputError",
    "RagqaError",
    "SampleError",
    "ScoreOutOfRange",
]


class RagqaError(Exception):
    """Root of every error ragqa raises on purpose."""


class ConfigError(RagqaError):
    """Invalid settings: the message names the key, the problem and the fix.

    Attributes:
        key: dotted settings key (``spring.ai.openai.api-key``), or ``None`` for file-level errors.
    """

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class SampleError(RagqaError):
    """A sample cannot be scored by a metric; raised before any judge call.

    Attributes:
        sample_id: the sample's ``id`` (or ``line N`` for datasets without ids).
        field: the offending field (``retrieved_contexts``), or ``None``.
        metric: the metric that needs the field, or ``None``.
    """

    def __init__(
        self,
        message: str,
        *,
        sample_id: str | None = None,
        field: str | None = None,
        metric: str | None = None,
    ) -> None:
        where = ", ".join(
            part
            for part in (
                f"sample {sample_id}" if sample_id is not None else "",
                f"field {field!r}" if field else "",
                f"metric {metric!r}" if metric else "",
            )
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.sample_id = sample_id
        self.field = field
        self.metric = metric


class DatasetError(SampleError):
    """A dataset file (or one of its lines) cannot be read into samples.

    Attributes:
        reason: for a record's problem, the message without its location (``unknown field``...),
            so that :class:`DatasetProblems` can group records with the same problem; else ``None``.
        record: for a record's problem, the record as messages name it without the file
            (``line 7 (id 'q1')``); else ``None``.
    """

    reason: str | None = None
    record: str | None = None


class InvalidSamples(SampleError):
    """Every problem of a run's samples, found before any judge call and raised together.

    Attributes:
        problems: one :class:`SampleError` per (sample, field, metric) problem, in sample then
            metric order; each names the sample, the field, the metric and the fix.
    """

    def __init__(self, problems: list[SampleError], *, hint: str = "", limit: int = 10) -> None:
        shown = "\n".join(f"  - {p}" for p in problems[:limit])
        more = f"\n  ... and {len(problems) - limit} more" if len(problems) > limit else ""
        hint = f" ({hint})" if hint else ""
        super().__init__(f"{len(problems)} problem(s) in the samples; nothing was scored{hint}:\n{shown}{more}")
        self.problems = list(problems)


class JudgeError(RagqaError):
    """A judge call failed. Recorded as a failure of that judge; never converted into a score.

    Attributes:
        judge_id: the judge (chat model id) that failed.
        step: the prompt/step that failed (``statements``, ``nli``...), if known.
        raw: raw model output kept for the report (never contains secrets), if any.
    """

    def __init__(
        self,
        message: str,
        *,
        judge_id: str | None = None,
        step: str | None = None,
        raw: str | None = None,
    ) -> None:
        super().__init__(message)
        self.judge_id = judge_id
        self.step = step
        self.raw = raw


class JudgeTimeout(JudgeError):
    """The judge call did not finish within its deadline (after retries)."""


class JudgeHTTPError(JudgeError):
    """The provider answered an HTTP error that was not retried, or retries were exhausted.

    Attributes:
        status: the HTTP status code, or ``None`` for transport errors.
    """

    def __init__(self, message: str, *, status: int | None = None, **kwargs: str | None) -> None:
        super().__init__(message, **kwargs)
        self.status = status


class JudgeRateLimited(JudgeError):
    """ragqa's own per-provider rate limiter rejected the call (strategy ``reject`` or wait timeout)."""


class JudgeUnavailable(JudgeError):
    """The judge's circuit breaker is open, or cut a call of a judge that hangs.

    The call failed fast, without a request. The message names the cause of the last failure
    and when the next probe request is let through.
    """


class JudgeOutputError(JudgeError):
    """The judge's output failed validation against the prompt's output schema (after one repair)."""


class JudgeUnsupported(JudgeError):
    """This judge cannot answer this prompt (for example the local judge and entity extraction)."""


class ScoreOutOfRange(JudgeError):
    """A metric computed a score outside its declared ``value_range`` (or an infinity).

    Raised by :class:`~ragqa.evaluation.PanelEvaluator` when it checks every score, so it is
    recorded as that judge's failure and never aggregated. NaN is not out of range: it means
    "unscored". The cause is a judge whose output slipped past validation or a metric bug.

    Attributes:
        metric: the metric's key.
        value: the offending score.
        value_range: the metric's closed range ``(low, high)``.
    """

    def __init__(
        self,
        message: str,
        *,
        metric: str,
        value: float,
        value_range: tuple[float, float],
        **kwargs: str | None,
    ) -> None:
        super().__init__(message, **kwargs)
        self.metric = metric
        self.value = value
        self.value_range = value_range


class MissingExtraError(RagqaError, ImportError):
    """An optional feature needs a package from one of ragqa's extras, and it is not installed.

    The message names the feature and the install command (``pip install 'ragqa[pandas]'``). It is
    also an :class:`ImportError`, so code that guards optional imports catches it as usual.

    Attributes:
        extra: the extra to install (``pandas``).
    """

    def __init__(self, message: str, *, extra: str) -> None:
        super().__init__(message)
        self.extra = extra


class DatasetProblems(DatasetError):
    """Every bad record of a dataset file, found in one pass over the file before any judge call.

    The message lists the problems one a line, each naming the file, the line/item/row, the
    sample id when known, the field and the fix; records with the same problem of the same field
    (``unknown field 'answers'`` in every record) share one line that lists them. At most
    ``limit`` lines are shown, then how many problems more there are. ``sample_id`` and ``field``
    are those of the first problem.

    Attributes:
        problems: the first ``limit`` problems, in file order.
        n_problems: how many problems the file has in all (>= ``len(problems)``).
    """

    def __init__(self, source: str, problems: list[DatasetError], n_problems: int, *, limit: int = 20) -> None:
        lines, covered = _grouped_lines(problems, limit)
        shown = "\n".join(f"  - {line}" for line in lines)
        more = f"\n  ... and {n_problems - covered} more" if n_problems > covered else ""
        prefix = f"{source}: " if source else ""
        super().__init__(
            f"{prefix}{n_problems} bad record(s); nothing was scored (fix them and run again):\n{shown}{more}"
        )
        self.sample_id = problems[0].sample_id if problems else None
        self.field = problems[0].field if problems else None
        self.problems = list(problems[:limit])
        self.n_problems = n_problems


class OutputError(RagqaError, OSError):
    """An output file could not be written: a full disk, a folder that became unwritable, a quota.

    Raised after the run started (an output path that cannot be written at all is a
    :class:`ConfigError` before any judge call). The command line exits with
    :attr:`ragqa.run.ExitCode.OUTPUT` (5). Results already made are not lost: they stay in
    :attr:`partial`, and ``--resume`` (``resume=True``) writes the outputs from it once the cause
    is fixed, asking the judges only for pairs it lacks. It is also an :class:`OSError`, so code
    that catches file errors catches it as before.

    Attributes:
        path: the file that could not be written.
        partial: the ``.partial`` JSON Lines file that holds the run's results so far, or ``None``
            when nothing was kept.
        kept: (sample, metric) results in :attr:`partial` (0 when ``partial`` is ``None``).
        errno: the operating system's error number (``errno.ENOSPC`` for a full disk), if known.
    """

    def __init__(
        self, message: str, *, path: Path, partial: Path | None = None, kept: int = 0, errno: int | None = None
    ) -> None:
        super().__init__(message)
        self.path = path
        self.partial = partial
        self.kept = kept
        self.errno = errno


_RECORDS_NAMED = 10
"""Records a grouped dataset problem names before counting the rest."""


def _grouped_lines(problems: list[DatasetError], limit: int) -> tuple[list[str], int]:
    """The lines of a :class:`DatasetProblems` message, and how many problems they cover.

    Problems with the same ``field`` and ``reason`` (records' problems only) become one line,
    ``field 'answers', 10 records (line 1 (id 'a'), line 2, ...): <reason>``, at the place of the
    first; the others keep their own line. At most ``limit`` lines.
    """
    groups: dict[object, list[DatasetError]] = {}
    for problem in problems:
        key: object = (problem.field, problem.reason) if problem.reason is not None else id(problem)
        groups.setdefault(key, []).append(problem)
    lines: list[str] = []
    covered = 0
    for group in list(groups.values())[:limit]:
        covered += len(group)
        first = group[0]
        if len(group) == 1:
            lines.append(str(first))
            continue
        named = ", ".join(str(p.record) for p in group[:_RECORDS_NAMED])
        if len(group) > _RECORDS_NAMED:
            named += f", and {len(group) - _RECORDS_NAMED} more"
        field = f"field {first.field!r}, " if first.field else ""
        lines.append(f"{field}{len(group)} records ({named}): {first.reason}")
    return lines, covered
