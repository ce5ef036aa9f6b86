"""The HTTP seam is provider-neutral: no provider SDK in it, and a provider teaches it its own errors."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from ragqa.judges import _failures
from ragqa.judges._failures import register_error_classifier, status_failure, timeout_failure
from ragqa.judges._http import classify_error
from ragqa.judges.retry import Failure

JUDGES = Path(__file__).resolve().parents[2] / "ragqa" / "judges"


def imported_roots(path: Path) -> set[str]:
    """The top-level package of every import in ``path`` (anywhere in the file)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("module", ["_http.py", "_failures.py"])
def test_the_seam_imports_no_provider_sdk(module: str) -> None:
    assert not imported_roots(JUDGES / module) & {"openai", "anthropic", "langchain_openai", "langchain_core", "httpx"}


class AcmeOverloaded(Exception):
    """A native SDK's own error, as a provider that is not OpenAI-compatible raises it."""

    status: ClassVar[int] = 529
    headers: ClassVar[dict[str, str]] = {"Retry-After": "3"}


class AcmeTimeout(Exception):
    """The same SDK's timeout."""


@pytest.fixture
def acme_classifier() -> Iterator[None]:
    saved = list(_failures._CLASSIFIERS)

    def classify(exc: BaseException, endpoint: str | None, timeout_s: float | None) -> Failure | None:
        if isinstance(exc, AcmeOverloaded):
            return status_failure(exc.status, exc.headers, endpoint)
        if isinstance(exc, AcmeTimeout):
            return timeout_failure(exc, endpoint, timeout_s)
        return None

    register_error_classifier(classify)
    yield
    _failures._CLASSIFIERS[:] = saved


def test_a_provider_module_teaches_the_seam_its_errors(acme_classifier: None) -> None:
    failure = classify_error(AcmeOverloaded(), endpoint="api.acme.example:443")
    assert (failure.kind, failure.status, failure.headers) == ("status", 529, {"retry-after": "3"})
    assert failure.detail == "HTTP 529 from api.acme.example:443"
    late = classify_error(AcmeTimeout(), endpoint="api.acme.example:443", timeout_s=5)
    assert (late.kind, late.detail) == ("timeout", "no answer within 5s from api.acme.example:443")
    assert classify_error(ValueError("bad body")).kind == "other"


def test_openai_errors_are_read_by_the_openai_adapter() -> None:
    import httpx
    import openai

    import ragqa.judges.openai  # noqa: F401 - the adapter registers its reading of openai errors

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(503, headers={"Retry-After": "1"}, request=request)
    failure = classify_error(openai.APIStatusError("down", response=response, body=None), endpoint="127.0.0.1:9")
    assert (failure.kind, failure.status, failure.detail) == ("status", 503, "HTTP 503 from 127.0.0.1:9")
    assert classify_error(openai.APITimeoutError(request=request), timeout_s=2).kind == "timeout"
