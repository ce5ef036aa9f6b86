"""The OpenAI adapter's clients share one TLS context per process: the SDK's own defaults, built once."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import certifi
import openai
import pytest

from ragqa.judges._openai_wire import openai_http_client, shared_ssl_context


async def _hook(response: Any) -> None:
    return None


def _context(client: Any) -> ssl.SSLContext:
    context = client._transport.ssl_context
    assert isinstance(context, ssl.SSLContext)
    return context


def test_every_client_gets_the_same_context() -> None:
    first, second = openai_http_client(_hook), openai_http_client(_hook)
    assert _context(first) is _context(second) is shared_ssl_context()


def test_the_shared_context_is_the_one_the_sdk_would_build() -> None:
    shared = shared_ssl_context()
    own = _context(openai.DefaultAioHttpClient())  # the SDK's client left to its defaults
    assert own is not shared
    assert shared.verify_mode == own.verify_mode == ssl.CERT_REQUIRED
    assert shared.check_hostname and own.check_hostname
    assert (shared.protocol, shared.options, shared.minimum_version) == (own.protocol, own.options, own.minimum_version)
    assert shared.get_ca_certs() == own.get_ca_certs()
    assert shared.cert_store_stats() == own.cert_store_stats()


def test_a_ca_file_named_in_the_environment_gets_its_own_context(monkeypatch: pytest.MonkeyPatch) -> None:
    before = shared_ssl_context()
    with monkeypatch.context() as env:
        env.setenv("SSL_CERT_FILE", certifi.where())
        named = shared_ssl_context()
        assert named is not before and named is shared_ssl_context()
        expected = ssl.create_default_context(cafile=certifi.where())
        assert named.cert_store_stats() == expected.cert_store_stats()
        assert _context(openai_http_client(_hook)) is named
    assert shared_ssl_context() is before  # the variable as it was: the context made for it


def test_certifi_is_a_real_bundle() -> None:
    assert Path(certifi.where()).stat().st_size > 10_000  # the comparison above reads real certificates
