"""What every shown setting hides: secret values, secret-looking headers and URL userinfo."""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["MASK", "SECRET_HINTS", "looks_secret", "mask_url"]

MASK = "**********"
"""What every secret is rendered as."""

SECRET_HINTS = ("key", "secret", "token", "password", "authorization", "cookie")
"""Substrings of a (lower-cased) key or header name whose value is never shown."""


def looks_secret(name: str) -> bool:
    """Whether a key or header ``name`` looks like it holds a secret (``api-key``, ``Authorization``)."""
    lowered = name.lower()
    return any(hint in lowered for hint in SECRET_HINTS)


def mask_url(text: str) -> str:
    """``text`` with the userinfo of a URL masked: ``https://user:key@host/x`` -> ``https://**********@host/x``.

    Args:
        text: any string; only one of the form ``scheme://userinfo@host...`` changes.

    Returns:
        The string with everything between ``://`` and the last ``@`` of the authority replaced by
        :data:`MASK` (a user name alone may be a key too, so it is masked as well); other strings
        unchanged.
    """
    if "://" not in text or "@" not in text:
        return text
    try:
        netloc = urlsplit(text).netloc
    except ValueError:  # e.g. an invalid IPv6 literal: mask the whole authority's userinfo by hand
        netloc = text.split("://", 1)[1].split("/", 1)[0]
    if "@" not in netloc:
        return text
    scheme, rest = text.split("://", 1)
    hostport = netloc.rsplit("@", 1)[1]
    return f"{scheme}://{MASK}@{hostport}{rest[len(netloc) :]}"
