"""The retry wrapper's first attempt runs without tenacity; every outcome stays what tenacity decides.

:func:`~ragqa.judges.retry.call_with_retry` makes the first attempt itself and hands a failed one
to tenacity as tenacity's own first outcome. Here it is run side by side with the wrapper it
replaces (tenacity running every attempt, kept below as :func:`tenacity_only`) over scripted
attempts: the result or the exception (the same object), the number of attempts, every wait, every
log line and the breaker's state and counters must be equal. No wall clock: the sleep and the
jitter are injected.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

import pytest
from tenacity import AsyncRetrying, RetryCallState, stop_after_attempt

from ragqa.errors import JudgeUnavailable
from ragqa.judges.breaker import CircuitBreaker
from ragqa.judges.retry import MAX_RETRY_AFTER_S, Failure, RetryPolicy, call_with_retry
from ragqa.settings import BackoffSettings, RetrySettings

T = TypeVar("T")
log = logging.getLogger("ragqa.judges.retry")


async def tenacity_only(
    attempt: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    classify: Callable[[BaseException], Failure],
    label: str,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    breaker: CircuitBreaker | None = None,
    step: str | None = None,
) -> T:
    """The wrapper before the fast path: tenacity runs every attempt, the first included.

    A deliberate independent copy (the oracle the fast path is checked against), not a call into
    ``ragqa.judges.retry``: its parts match the production code line for line on purpose.
    """

    probed = False

    async def guarded() -> T:
        nonlocal probed
        if breaker is None:
            return await attempt()
        await breaker.admit(step)
        probed = probed or breaker.state == "half_open"
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

    def failure_of(state: RetryCallState) -> Failure | None:
        outcome = state.outcome
        if outcome is None or not outcome.failed:
            return None
        exc = outcome.exception()
        return classify(exc) if isinstance(exc, Exception) else None

    def should_retry(state: RetryCallState) -> bool:
        failure = failure_of(state)
        if failure is None or not policy.retryable(failure):
            return False
        if breaker is not None and breaker.state != "closed" and (breaker.hung or probed):
            return False
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

    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_attempts),
        wait=wait,
        retry=should_retry,
        before_sleep=before_sleep,
        sleep=sleep,
        reraise=True,
    )
    result: T = await retrying(guarded)
    return result


class Scripted(Exception):
    """A failed attempt carrying the failure the classifier reports for it."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.cause)
        self.failure = failure


def classify(exc: BaseException) -> Failure:
    return exc.failure if isinstance(exc, Scripted) else Failure("other")


S503 = Failure("status", 503, {}, "HTTP 503 from h:1")
S429_ASKS = Failure("status", 429, {"retry-after": "3"}, "HTTP 429 from h:1")
S429_TOO_LONG = Failure("status", 429, {"retry-after": "3600"}, "HTTP 429 from h:1")
S400 = Failure("status", 400, {}, "HTTP 400 from h:1")
TIMEOUT = Failure("timeout", detail="no answer within 5s from h:1")
REFUSED = Failure("transport", detail="connection refused by h:1")
CANCEL = "cancel"
BUG = "bug"

SCRIPTS: dict[str, list[Any]] = {
    "success": [],
    "503-then-success": [S503],
    "timeouts-then-success": [TIMEOUT, REFUSED],
    "503-until-attempts-run-out": [S503] * 6,
    "400-not-retried": [S400],
    "retry-after-then-success": [S429_ASKS],
    "retry-after-too-long": [S429_TOO_LONG],
    "bug-not-retried": [BUG],
    "cancelled-first": [CANCEL],
    "cancelled-on-retry": [S503, CANCEL],
    "breaker-opens": [REFUSED] * 6,
}


async def run(
    wrapper: Any, script: list[Any], caplog: pytest.LogCaptureFixture, *, with_breaker: bool
) -> tuple[Any, ...]:
    """One call through ``wrapper``: (outcome, attempts, waits, log lines, breaker view)."""
    pending = list(script)
    attempts = 0
    waits: list[float] = []
    errors: list[BaseException] = []

    async def attempt() -> str:
        nonlocal attempts
        attempts += 1
        if not pending:
            return f"answer after {attempts}"
        what = pending.pop(0)
        if what == CANCEL:
            raise asyncio.CancelledError
        error: Exception = ValueError("a bug") if what == BUG else Scripted(what)
        errors.append(error)
        raise error

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    breaker = CircuitBreaker("judge 'j'", judge_id="j", failure_threshold=3, cool_down_s=30, clock=lambda: sum(waits))
    jitter = iter([0.5, 0.25, 0.75, 0.1, 0.9, 0.3] * 3)
    settings = RetrySettings(
        max_attempts=5,
        backoff=BackoffSettings(initial_interval=timedelta(seconds=1), multiplier=2, max_interval=timedelta(seconds=8)),
    )
    caplog.clear()
    try:
        outcome: Any = await wrapper(
            attempt,
            policy=RetryPolicy(settings, random=lambda: next(jitter)),
            classify=classify,
            label="judge 'j'",
            sleep=sleep,
            breaker=breaker if with_breaker else None,
            step="nli",
        )
    except asyncio.CancelledError:
        outcome = "cancelled"
    except JudgeUnavailable as exc:
        outcome = ("unavailable", str(exc))
    except Exception as exc:
        outcome = ("raised", errors.index(exc))  # which attempt's exception, as the very object
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name.startswith("ragqa.judges")]
    view = (breaker.state, breaker.consecutive_failures, breaker.opened, breaker.rejected, breaker.last_cause)
    return outcome, attempts, waits, lines, view


@pytest.mark.parametrize("with_breaker", [True, False], ids=["breaker", "no-breaker"])
@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_the_fast_path_decides_as_tenacity_alone(
    name: str, with_breaker: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ragqa.judges")
    script = SCRIPTS[name]
    fast = await run(call_with_retry, script, caplog, with_breaker=with_breaker)
    reference = await run(tenacity_only, script, caplog, with_breaker=with_breaker)
    assert fast == reference
    outcome, attempts, waits, *_ = fast
    if name == "success":
        assert outcome == "answer after 1" and attempts == 1 and waits == []
    if name == "503-then-success":  # the failed first attempt is not sent twice
        assert outcome == "answer after 2" and attempts == 2 and len(waits) == 1
    if name == "breaker-opens" and with_breaker:
        # 3 refusals open it; the retry waits out the cool-down and is the probe; the failed probe ends the call
        assert attempts == 4 and outcome == ("raised", 3) and waits[-1] == 30


async def test_a_successful_first_attempt_builds_no_retry_machinery(monkeypatch: pytest.MonkeyPatch) -> None:
    import ragqa.judges.retry as retry_module

    built: list[object] = []

    class Counting(AsyncRetrying):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            built.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(retry_module, "AsyncRetrying", Counting)
    calls = 0

    async def attempt() -> int:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise Scripted(S503)
        return calls

    policy = RetryPolicy(RetrySettings(max_attempts=3), random=lambda: 0.0)

    async def no_sleep(seconds: float) -> None:
        return None

    assert await call_with_retry(attempt, policy=policy, classify=classify, label="t", sleep=no_sleep) == 1
    assert built == []
    assert await call_with_retry(attempt, policy=policy, classify=classify, label="t", sleep=no_sleep) == 3
    assert len(built) == 1
