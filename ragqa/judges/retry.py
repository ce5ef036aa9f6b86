"""Retry with backoff following ``spring.ai.retry`` (Spring AI semantics), built on tenacity.

Which failures are retried (Spring AI's ``RetryUtils`` response error handler):

- a status in ``exclude-on-http-codes`` is never retried (highest precedence);
- a status in ``on-http-codes`` is always retried;
- any other 4xx is retried only when ``on-client-errors`` is true;
- 5xx, transport errors (connection refused or reset) and timeouts are retried.

``max-attempts`` counts every attempt, the first included. The wait after the ``n``-th failed
attempt (``n`` = 1, 2, ...) is Spring's ``ExponentialBackOff``:
``min(initial-interval * multiplier ** (n - 1), max-interval)``, without jitter. A
``retry-after-ms`` (milliseconds) or ``Retry-After`` (seconds or an HTTP date) header on the
failed response wins over the computed wait; a header asking for more than
:data:`MAX_RETRY_AFTER_S` ends the retries at once instead of stalling the run.

The provider SDK's own retries must be off (``max_retries=0``) so nothing is retried twice.
This module knows no provider: the adapter passes a ``classify`` function that turns its
exceptions into a :class:`Failure`.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

from tenacity import AsyncRetrying, RetryCallState, stop_after_attempt

from ragqa.settings import RetrySettings

__all__ = ["MAX_RETRY_AFTER_S", "Failure", "RetryPolicy", "call_with_retry", "parse_retry_after"]

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_RETRY_AFTER_S = 300.0
"""The longest ``Retry-After`` honoured, seconds; a longer one is not retried."""


@dataclass(frozen=True)
class Failure:
    """A provider-neutral view of a failed request.

    Attributes:
        kind: ``status`` (an HTTP error answer), ``timeout``, ``transport`` (no answer) or
            ``other`` (never retried: a bug, a validation error, a local rate-limit refusal).
        status: the HTTP status for ``status``.
        headers: the response headers (lower-case names) for ``status``.
    """

    kind: Literal["status", "timeout", "transport", "other"]
    status: int | None = None
    headers: Mapping[str, str] | None = None


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """The wait a response asks for, in seconds.

    ``retry-after-ms`` (milliseconds, OpenAI's header) wins over ``Retry-After``, which may be a
    number of seconds or an HTTP date (RFC 9110 section 10.2.3).

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
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


@dataclass(frozen=True)
class RetryPolicy:
    """``spring.ai.retry`` as decisions: retry or not, and how long to wait.

    Args:
        settings: the resolved retry settings.
    """

    settings: RetrySettings

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
        if status in self.settings.on_http_codes:
            return True
        if 400 <= status < 500:
            return self.settings.on_client_errors
        return status >= 500

    def backoff(self, failed_attempts: int) -> float:
        """Spring ``ExponentialBackOff`` wait after ``failed_attempts`` failures, seconds.

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

    def wait_for(self, failure: Failure, failed_attempts: int) -> float:
        """The wait before the next attempt: the response's Retry-After, else :meth:`backoff`."""
        asked = parse_retry_after(failure.headers) if failure.kind == "status" else None
        return asked if asked is not None else self.backoff(failed_attempts)


async def call_with_retry(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    classify: Callable[[BaseException], Failure],
    label: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> T:
    """Run ``attempt`` until it succeeds, a failure is not retryable, or attempts run out.

    Every retry is logged at WARNING with ``label`` (judge and model; never a key), the status
    or failure kind, the attempt and the wait.

    Args:
        attempt: makes one request.
        policy: the retry rules and backoff.
        classify: maps an exception of ``attempt`` to a :class:`Failure`.
        label: names the caller in log lines, e.g. ``judge 'gpt' (model openai/gpt-4o-mini)``.
        sleep: the sleep used between attempts (injectable for tests).

    Returns:
        What ``attempt`` returned.

    Raises:
        BaseException: the last exception of ``attempt`` (unchanged) once no retry is left.
    """

    def should_retry(state: RetryCallState) -> bool:
        outcome = state.outcome
        if outcome is None or not outcome.failed:
            return False
        exc = outcome.exception()
        if exc is None or not isinstance(exc, Exception):
            return False
        failure = classify(exc)
        if not policy.retryable(failure):
            return False
        asked = parse_retry_after(failure.headers) if failure.kind == "status" else None
        if asked is not None and asked > MAX_RETRY_AFTER_S:
            log.warning(
                "%s: HTTP %s asks to retry after %.0fs (more than %.0fs); giving up",
                label,
                failure.status,
                asked,
                MAX_RETRY_AFTER_S,
            )
            return False
        return True

    def wait(state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        failure = classify(exc) if isinstance(exc, Exception) else Failure("other")
        return policy.wait_for(failure, state.attempt_number)

    def before_sleep(state: RetryCallState) -> None:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        failure = classify(exc) if isinstance(exc, Exception) else Failure("other")
        what = f"HTTP {failure.status}" if failure.kind == "status" else failure.kind
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        log.warning(
            "%s: %s on attempt %d/%d; retrying in %.2fs",
            label,
            what,
            state.attempt_number,
            policy.max_attempts,
            delay,
        )

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=should_retry,
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    result: T = await retrying(attempt)
    return result
