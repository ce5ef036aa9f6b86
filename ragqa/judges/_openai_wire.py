"""The OpenAI adapter's side of the HTTP seam: its SDK's errors read as ragqa failures, and its HTTP client.

:mod:`ragqa.judges._http` is provider-neutral; this module is where ``openai.*`` exceptions are
mapped (registered with :func:`~ragqa.judges._failures.register_error_classifier` on import) and where
the SDK's aiohttp client is made for :class:`~ragqa.judges.openai.OpenAIJudge` and
:class:`~ragqa.judges.openai.OpenAIEmbedder`. A native provider brings its own module like this
one, next to its adapter.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import openai

from ragqa.judges._failures import register_error_classifier, status_failure, timeout_failure, transport_failure
from ragqa.judges.retry import Failure

__all__ = ["classify_openai_error", "openai_http_client"]


@register_error_classifier
def classify_openai_error(exc: BaseException, endpoint: str | None, timeout_s: float | None) -> Failure | None:
    """Read an exception of the OpenAI SDK as a :class:`Failure`; ``None`` for any other exception.

    ``APITimeoutError`` is a timeout (or a refused connection, which the aiohttp transport reports
    as a connect timeout), ``APIStatusError`` an HTTP status with its headers, and
    ``APIConnectionError`` a transport failure.
    """
    if isinstance(exc, openai.APITimeoutError):
        return timeout_failure(exc, endpoint, timeout_s)
    if isinstance(exc, openai.APIStatusError):
        return status_failure(exc.status_code, exc.response.headers, endpoint)
    if isinstance(exc, openai.APIConnectionError):
        return transport_failure(exc, endpoint)
    return None


def openai_http_client(response_hook: Callable[[Any], Awaitable[None]]) -> Any:
    """The SDK's aiohttp-backed client, with ``response_hook`` on every answer (the size cap)."""
    return openai.DefaultAioHttpClient(event_hooks={"response": [response_hook]})
