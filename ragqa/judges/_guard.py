"""The switch that blocks real provider calls: ``RAGQA_BLOCK_REMOTE=1``.

With the variable set, every judge or embedder request to a host that is not loopback fails with
:class:`RemoteCallBlocked` before anything is sent (no DNS lookup, no connection). ragqa's own
test suite sets it for the whole session (``tests/conftest.py``); the opt-in live tests unset it.
Loopback hosts (``localhost``, ``*.localhost``, ``127.0.0.0/8``, ``::1``) stay reachable, so the
fake OpenAI-compatible server of :mod:`ragqa.testing` keeps working.

The check is one call, :func:`check_remote_allowed`, on the HTTP client's send path
(``ragqa.judges.openai``), so retries, repairs and embedding batches all pass through it.
"""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from ragqa.errors import JudgeError

__all__ = ["BLOCK_REMOTE_ENV", "RemoteCallBlocked", "check_remote_allowed", "is_loopback", "remote_calls_blocked"]

BLOCK_REMOTE_ENV = "RAGQA_BLOCK_REMOTE"
"""The environment variable; any value but empty, ``0``, ``false``, ``no`` or ``off`` turns the block on."""

_OFF = frozenset({"", "0", "false", "no", "off"})


class RemoteCallBlocked(JudgeError):
    """A request to a non-loopback host while ``RAGQA_BLOCK_REMOTE`` is on; nothing was sent."""


def remote_calls_blocked() -> bool:
    """Whether ``RAGQA_BLOCK_REMOTE`` is on now (read at every call, so tests may toggle it)."""
    return os.environ.get(BLOCK_REMOTE_ENV, "").strip().lower() not in _OFF


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is loopback, decided from the text alone (no DNS lookup).

    Loopback: ``localhost`` and names under ``.localhost`` (RFC 6761), IPv4 ``127.0.0.0/8`` and
    IPv6 ``::1`` (also IPv4-mapped). Anything else, a missing host included, is not.
    """
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return bool(address.is_loopback or (mapped is not None and mapped.is_loopback))


def check_remote_allowed(url: str, *, judge_id: str | None = None, step: str | None = None) -> None:
    """Refuse a request to ``url`` when remote calls are blocked and its host is not loopback.

    Args:
        url: the endpoint the request goes to (its base URL is enough).
        judge_id: the judge or embedder id, for the error.
        step: the prompt or step (``nli``, ``embed``...), for the error.

    Raises:
        RemoteCallBlocked: ``RAGQA_BLOCK_REMOTE`` is on and the host is not loopback.
    """
    if remote_calls_blocked() and not is_loopback(url):
        host = urlsplit(url).hostname or url
        raise RemoteCallBlocked(
            f"request to {host!r} blocked: {BLOCK_REMOTE_ENV} is on and only loopback hosts may be called "
            f"(point base-url at a local fake server, or unset {BLOCK_REMOTE_ENV} for live runs)",
            judge_id=judge_id,
            step=step,
        )
