"""Provider-neutral readings of a failed request, and the classifiers provider adapters register.

:func:`ragqa.judges._http.classify_error` asks every registered classifier first (the OpenAI
adapter's reads ``openai.*`` exceptions, :mod:`ragqa.judges._openai_wire`); a classifier builds its
:class:`~ragqa.judges.retry.Failure` with :func:`timeout_failure`, :func:`status_failure` and
:func:`transport_failure`, so every provider's failures read alike (``HTTP 503 from host:port``).
This module imports no provider SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ragqa.judges.retry import Failure

__all__ = [
    "ErrorClassifier",
    "error_classifiers",
    "register_error_classifier",
    "status_failure",
    "timeout_failure",
    "transport_failure",
]

ErrorClassifier = Callable[[BaseException, "str | None", "float | None"], "Failure | None"]
"""``classify(exc, endpoint, timeout_s)``: a provider SDK's reading of its own exception, ``None``
for one it does not know (see :func:`register_error_classifier`)."""

_CLASSIFIERS: list[ErrorClassifier] = []


def register_error_classifier(classify: ErrorClassifier) -> ErrorClassifier:
    """Teach :func:`classify_error` a provider SDK's exceptions (the adapter calls this on import); returns it."""
    if classify not in _CLASSIFIERS:
        _CLASSIFIERS.append(classify)
    return classify


def timeout_failure(exc: BaseException, endpoint: str | None, timeout_s: float | None) -> Failure:
    """A request that got no answer in time (``no answer within 5s from host:port``).

    Some transports report a refused connection as a connect *timeout*: that one is a transport
    failure (``connection refused by host:port``).
    """
    if _refused(exc):
        return transport_failure(exc, endpoint)
    at = f" {endpoint}" if endpoint else ""
    within = f" within {timeout_s:g}s" if timeout_s is not None else ""
    return Failure("timeout", detail=f"no answer{within}" + (f" from{at}" if at else ""))


def status_failure(status: int, headers: Mapping[str, str], endpoint: str | None) -> Failure:
    """An HTTP error status (``HTTP 503 from host:port``), with the response headers, lower-cased."""
    at = f" {endpoint}" if endpoint else ""
    return Failure(
        "status",
        status=status,
        headers={k.lower(): v for k, v in headers.items()},
        detail=f"HTTP {status}" + (f" from{at}" if at else ""),
    )


def transport_failure(exc: BaseException, endpoint: str | None) -> Failure:
    """A connection that failed (``connection refused by host:port``, or ``connection to ... failed (OSError)``)."""
    at = f" {endpoint}" if endpoint else ""
    if _refused(exc):
        return Failure("transport", detail="connection refused" + (f" by{at}" if at else ""))
    cause = exc.__cause__ or exc.__context__
    what = type(cause).__name__ if cause is not None else "connection error"
    return Failure("transport", detail=f"connection{' to' + at if at else ''} failed ({what})")


def error_classifiers() -> tuple[ErrorClassifier, ...]:
    """The registered classifiers, in registration order."""
    return tuple(_CLASSIFIERS)


def _refused(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
