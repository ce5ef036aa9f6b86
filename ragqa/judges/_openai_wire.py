"""The OpenAI adapter's side of the HTTP seam: its SDK's errors read as ragqa failures, and its HTTP client.

:mod:`ragqa.judges._http` is provider-neutral; this module is where ``openai.*`` exceptions are
mapped (registered with :func:`~ragqa.judges._failures.register_error_classifier` on import) and where
the SDK's aiohttp client is made for :class:`~ragqa.judges.openai.OpenAIJudge` and
:class:`~ragqa.judges.openai.OpenAIEmbedder`. A native provider brings its own module like this
one, next to its adapter.
"""

from __future__ import annotations

import functools
import os
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import openai

from ragqa.judges._failures import register_error_classifier, status_failure, timeout_failure, transport_failure
from ragqa.judges.retry import Failure

__all__ = ["classify_openai_error", "openai_http_client", "shared_ssl_context"]


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
    """The SDK's aiohttp-backed client, with ``response_hook`` on every answer (the size cap).

    Its TLS settings are the SDK's defaults, built once per process (:func:`shared_ssl_context`)
    instead of once per client: a judge gets a client per event loop, and each new context reads
    the system's CA bundle again (tens of milliseconds of CPU each).
    """
    return openai.DefaultAioHttpClient(verify=shared_ssl_context(), event_hooks={"response": [response_hook]})


def shared_ssl_context() -> ssl.SSLContext:
    """The SDK's default TLS context (``httpx2.create_ssl_context()``), one per process and CA setting.

    What the SDK's client would build by itself: certificates verified against the system's CA
    bundle, or the file / directory named by ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` when set (read
    on each call, so a changed variable gets its own context). An ``ssl.SSLContext`` may be shared
    by connections, sessions and threads; aiohttp shares its own default context the same way.
    """
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    del cafile, capath  # the cache key: create_ssl_context reads the variables itself
    return httpx2.create_ssl_context()
