"""Retry with jittered exponential backoff for judge calls, built on tenacity.

Settings come from ``spring.ai.retry``; the rules fit an evaluator, which deviates from Spring
AI's ``RetryUtils`` on purpose in two places (documented in ``docs/judges.md``):

- ``408`` and ``429`` are retried by default (Spring AI retries no 4xx unless configured), because
  a rate-limited or overloaded provider is the normal case of a long evaluation;
- ``401`` and ``403`` are never retried, even with ``on-client-errors: true``: a wrong key or a
  missing permission does not heal by waiting. Listing them in ``on-http-codes`` still retries.

Otherwise: a status in ``exclude-on-http-codes`` is never retried (highest precedence); a
status in ``on-http-codes`` is always retried; any other 4xx only with ``on-client-errors``;
5xx, transport errors (connection refused or reset) and timeouts are retried.

``max-attempts`` counts every attempt, the first included. The base wait after the ``n``-th
failed attempt (``n`` = 1, 2, ...) is Spring's ``ExponentialBackOff``:
``b = min(initial-interval * multiplier ** (n - 1), max-interval)``; the actual wait is "equal
jitter" (AWS Architecture Blog, *Exponential Backoff and Jitter*, 2015): ``b / 2 + u * b / 2``
with ``u`` uniform in ``[0, 1)``, so concurrent calls that failed together do not retry together.

A response may ask for a wait, which then wins over the backoff (with up to 10% added jitter,
never less than asked): ``retry-after-ms`` (milliseconds), ``Retry-After`` (seconds or an HTTP
date), else ``x-ratelimit-reset-requests`` / ``x-ratelimit-reset-tokens`` (OpenAI's durations
such as ``1s``, ``6m0s``, ``20ms``; of those whose ``x-ratelimit-remaining-*`` is ``0`` when
given, the longest). A wait longer than :data:`MAX_RETRY_AFTER_S` ends the retries at once.

An optional :class:`~ragqa.judges.breaker.CircuitBreaker` admits every attempt and is told the
outcome of each. A call whose retry falls while the breaker is open waits at least until its
next probe is due (it then waits behind the probe, or becomes it), so a judge that comes back is
used by the calls already running; a new call does the same when the probe is due within the
first retry wait it would get anyway (``backoff(1)``), and fails fast otherwise. A call whose
own attempt was a failed probe is not retried again (a dead judge costs one probe per call, not
one per attempt), and a breaker open because the judge hangs ends the retries at once.

The first attempt runs outside tenacity, so a call that succeeds pays for no retry machinery; a
failed first attempt becomes tenacity's own first outcome (:func:`call_with_retry`), so every
decision, wait and log line is the one tenacity alone would make.

The provider SDK's own retries must be off (``max_retries=0``) so nothing is retried twice.
This module knows no provider: the adapter passes a ``classify`` function that turns its
exceptions into a :class:`Failure`.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random as _random
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from tenacity import AsyncRetrying, RetryCallState, stop_after_attempt

from ragqa.errors import JudgeUnavailable
from ragqa.judges.breaker import CircuitBreaker
from ragqa.settings import RetrySettings

__all__ = [
    "ALWAYS_RETRIED",
    "MAX_RETRY_AFTER_S",
    "NEVER_RETRIED",
    "Failure",
    "RetryPolicy",
    "call_with_retry",
    "parse_openai_duration",
    "parse_retry_after",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_RETRY_AFTER_S = 300.0
"""The longest wait a response may ask for, seconds; a longer one is not retried."""
ALWAYS_RETRIED = frozenset({408, 429})
"""Statuses retried without configuration (unless in ``exclude-on-http-codes``)."""
NEVER_RETRIED = frozenset({401, 403})
"""Statuses not retried even with ``on-client-errors: true`` (unless in ``on-http-codes``)."""
RETRY_AFTER_JITTER = 0.1
"""The most jitter added to a wait a response asked for, as a fraction of it."""


@dataclass(frozen=True)
class Failure:
    """A provider-neutral view of a failed request.

    Attributes:
        kind: ``status`` (an HTTP error answer), ``timeout``, ``transport`` (no answer) or
            ``other`` (never retried: a bug, a validation error, a local rate-limit refusal).
        status: the HTTP status for ``status``.
        headers: the response headers (lower-case names) for ``status``.
        detail: the cause in words for logs and errors (``connection refused``,
            ``no answer within 5s``, ``HTTP 503``); default: derived from kind and status.
    """

    kind: Literal["status", "timeout", "transport", "other"]
    status: int | None = None
    headers: Mapping[str, str] | None = field(default=None, compare=False)
    detail: str | None = field(default=None, compare=False)

    @property
    def cause(self) -> str:
        """The cause in words: :attr:`detail`, else ``HTTP <status>`` or the kind."""
        if self.detail:
            return self.detail
        return f"HTTP {self.status}" if self.kind == "status" else self.kind

    @property
    def endpoint_down(self) -> bool:
        """Whether the failure says the endpoint is down (a transport error or a timeout): a breaker counts it.

        A 5xx is an answer: the endpoint is up, and the retry policy outlives the burst.
        """
        return self.kind in ("timeout", "transport")

    @property
    def endpoint_answered(self) -> bool:
        """Whether an HTTP answer came back, of any status (the endpoint is up)."""
        return self.kind == "status" and self.status is not None


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|h|m|s)")


def parse_openai_duration(text: str) -> float | None:
    """Seconds of an OpenAI rate-limit duration (Go ``time.Duration`` style).

    Examples: ``"1s"`` -> 1.0, ``"6m0s"`` -> 360.0, ``"20ms"`` -> 0.02, ``"1h2m3.5s"`` -> 3723.5;
    a bare number is seconds.

    Returns:
        Seconds (>= 0), or ``None`` when ``text`` is not such a duration.
    """
    raw = text.strip()
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    total = 0.0
    pos = 0
    for match in _DURATION_PART.finditer(raw):
        if match.start() != pos:
            return None
        value = float(match.group(1))
        total += value * {"ms": 0.001, "h": 3600.0, "m": 60.0, "s": 1.0}[match.group(2)]
        pos = match.end()
    return total if pos == len(raw) and pos > 0 else None


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """The wait a response asks for, in seconds.

    ``retry-after-ms`` (milliseconds, OpenAI's header) wins over ``Retry-After``, which may be a
    number of seconds or an HTTP date (RFC 9110 section 10.2.3); without either,
    ``x-ratelimit-reset-requests`` / ``x-ratelimit-reset-tokens`` (:func:`parse_openai_duration`)
    are used: those whose ``x-ratelimit-remaining-requests`` / ``-tokens`` is ``0`` when such a
    header is present, else both; the longest wins.

    Args:
        headers: response headers; names are matched case-insensitively.
        now: the current POSIX time for HTTP dates (default: ``time.time()``).

    Returns:
        Seconds to wait (>= 0), or ``None`` when no valid header is present.
    """
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    raw_ms = lower.get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(0.0, float(raw_ms) / 1000.0)
        except ValueError:
            pass
    raw = lower.get("retry-after")
    if raw is not None:
        try:
            return max(0.0, float(raw))
        except ValueError:
            pass
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            when = None
        if when is not None:
            return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return _ratelimit_reset(lower)


def _ratelimit_reset(lower: Mapping[str, str]) -> float | None:
    resets: dict[str, float] = {}
    exhausted: set[str] = set()
    for what in ("requests", "tokens"):
        value = lower.get(f"x-ratelimit-reset-{what}")
        seconds = parse_openai_duration(value) if value is not None else None
        if seconds is not None:
            resets[what] = seconds
        if lower.get(f"x-ratelimit-remaining-{what}", "").strip() == "0":
            exhausted.add(what)
    if not resets:
        return None
    chosen = [v for k, v in resets.items() if k in exhausted] or list(resets.values())
    return max(chosen)


@dataclass(frozen=True)
class RetryPolicy:
    """``spring.ai.retry`` as decisions: retry or not, and how long to wait.

    Args:
        settings: the resolved retry settings.
        random: a source of uniform numbers in ``[0, 1)`` for the jitter (injectable for tests).
    """

    settings: RetrySettings
    random: Callable[[], float] = field(default=_random.random, compare=False)

    @property
    def max_attempts(self) -> int:
        """Total attempts including the first (at least 1)."""
        return max(1, self.settings.max_attempts)

    def retryable(self, failure: Failure) -> bool:
        """Whether ``failure`` may be retried (see the module docstring for the rules)."""
        if failure.kind in ("timeout", "transport"):
            return True
        if failure.kind != "status" or failure.status is None:
            return False
        status = failure.status
        if status in self.settings.exclude_on_http_codes:
            return False
        if status in self.settings.on_http_codes or status in ALWAYS_RETRIED:
            return True
        if status in NEVER_RETRIED:
            return False
        if 400 <= status < 500:
            return self.settings.on_client_errors
        return status >= 500

    def backoff(self, failed_attempts: int) -> float:
        """Spring ``ExponentialBackOff`` base wait after ``failed_attempts`` failures, seconds (no jitter).

        Returns:
            ``min(initial * multiplier ** (failed_attempts - 1), max_interval)``.
        """
        b = self.settings.backoff
        initial = b.initial_interval.total_seconds()
        cap = b.max_interval.total_seconds()
        n = max(0, failed_attempts - 1)
        try:
            wait = initial * b.multiplier**n
        except OverflowError:
            return cap
        return min(wait, cap)

    def asked_wait(self, failure: Failure) -> float | None:
        """The wait the failed response asks for (:func:`parse_retry_after`), seconds, or ``None``."""
        return parse_retry_after(failure.headers) if failure.kind == "status" else None

    def wait_for(self, failure: Failure, failed_attempts: int) -> float:
        """The wait before the next attempt, seconds.

        Returns:
            The asked wait ``a`` plus jitter (``a * (1 + 0.1 * u)``) when the response asks for
            one, else equal jitter over :meth:`backoff` ``b``: ``b / 2 + u * b / 2``.
        """
        u = min(max(self.random(), 0.0), 1.0)
        asked = self.asked_wait(failure)
        if asked is not None:
            return asked * (1.0 + RETRY_AFTER_JITTER * u)
        base = self.backoff(failed_attempts)
        return base / 2.0 + u * base / 2.0


async def call_with_retry(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    classify: Callable[[BaseException], Failure],
    label: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    breaker: CircuitBreaker | None = None,
    step: str | None = None,
) -> T:
    """Run ``attempt`` until it succeeds, a failure is not retryable, attempts run out or the breaker refuses it.

    Every retry is logged at WARNING with ``label`` (judge, model and host; never a key), the
    cause (``connection refused``, ``no answer within 5s``, ``HTTP 429``), the attempt and the
    wait. A cancelled call is never retried and logs nothing.

    Args:
        attempt: makes one request.
        policy: the retry rules and backoff.
        classify: maps an exception of ``attempt`` to a :class:`Failure`.
        label: names the caller in log lines, e.g. ``judge 'gpt' (model gpt-4o at api.openai.com:443)``.
        sleep: the sleep used between attempts (injectable for tests).
        breaker: the caller's circuit breaker, checked before every attempt and told every outcome.
        step: the prompt being asked, put on :class:`~ragqa.errors.JudgeUnavailable`.

    Returns:
        What ``attempt`` returned.

    Raises:
        JudgeUnavailable: the breaker is open (before the first attempt), the probe a retry waited
            behind failed, or the breaker cut the attempt short (the judge hangs).
        BaseException: the last exception of ``attempt`` (unchanged) once no retry is left.
    """
    probed = False  # an attempt of this call was the breaker's half-open probe

    async def guarded() -> T:
        nonlocal probed
        if breaker is None:
            return await attempt()
        await breaker.admit(step)
        probed = probed or breaker.state == "half_open"  # admitted while half-open: this attempt is the probe
        started = breaker.now()
        try:
            result = await attempt()
        except Exception as exc:
            failure = classify(exc)
            if failure.endpoint_down:
                breaker.record_failure(failure.cause, timeout=failure.kind == "timeout", started=started)
            elif failure.endpoint_answered:
                breaker.record_success()
            else:
                breaker.record_neutral()
            raise
        except BaseException:
            breaker.record_neutral()
            raise
        breaker.record_success()
        return result

    if breaker is not None and not breaker.hung:
        # an open breaker whose probe is due within the first retry wait this call would get anyway:
        # wait for the probe (and behind it) instead of failing now
        due = breaker.until_probe()
        if 0 < due <= policy.backoff(1):
            await sleep(due)
    # The first attempt runs without tenacity: a call that succeeds (nearly all of them) pays for no
    # retry machinery. A failed first attempt is handed to tenacity as its own first outcome (the
    # same exception, raised again without a second request), so every decision, wait and log line
    # after it is the one tenacity makes when it runs the first attempt itself. Anything that is
    # not an Exception (cancellation) is never retried either way and propagates as it is.
    try:
        return await guarded()
    except Exception as exc:
        first: Exception | None = exc

    def failure_of(state: RetryCallState) -> Failure | None:
        outcome = state.outcome
        if outcome is None or not outcome.failed:
            return None
        exc = outcome.exception()
        if isinstance(exc, JudgeUnavailable):  # the breaker refused or cut it: never retried
            return Failure("other")
        return classify(exc) if isinstance(exc, Exception) else None

    def should_retry(state: RetryCallState) -> bool:
        failure = failure_of(state)
        if failure is None or not policy.retryable(failure):
            return False
        if breaker is not None and breaker.state != "closed" and (breaker.hung or probed):
            return False  # the judge hangs, or this call's probe failed: no second probe per call
        asked = policy.asked_wait(failure)
        if asked is not None and asked > MAX_RETRY_AFTER_S:
            log.warning(
                "%s: %s asks to retry after %.0fs (more than %.0fs); giving up",
                label,
                failure.cause,
                asked,
                MAX_RETRY_AFTER_S,
            )
            return False
        return True

    def wait(state: RetryCallState) -> float:
        failure = failure_of(state) or Failure("other")
        planned = policy.wait_for(failure, state.attempt_number)
        # an open breaker: retry no earlier than its next probe (then wait behind it, or be it)
        return max(planned, breaker.until_probe()) if breaker is not None else planned

    def before_sleep(state: RetryCallState) -> None:
        failure = failure_of(state) or Failure("other")
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        log.warning(
            "%s: %s on attempt %d/%d; retrying in %.2fs",
            label,
            failure.cause,
            state.attempt_number,
            policy.max_attempts,
            delay,
        )

    async def replay_then_attempt() -> T:
        nonlocal first
        if first is not None:
            failed, first = first, None
            raise failed
        return await guarded()

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=should_retry,
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    result: T = await retrying(replay_then_attempt)
    return result
