"""A disk cache of finished judge calls, so a re-run pays only for what changed.

The key is a SHA-256 of the judge's fingerprint (provider, model, decoding parameters: never
the API key), the prompt's name and version, the language and the rendered input. RAGAS keys
its cache on the function and arguments only, so two models share answers (RAGAS issue #2983);
ragqa's key cannot collide that way. Values are the validated output as JSON. Failures are never
cached. Storage is ``diskcache`` (SQLite), safe across processes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

import diskcache
from pydantic import BaseModel

from ragqa.judges.base import Judge
from ragqa.prompts.base import Prompt
from ragqa.schema import Language

__all__ = ["CachingJudge", "JudgeCache", "fingerprint_of"]

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


def fingerprint_of(judge: Judge) -> str:
    """The judge's cache identity: its ``fingerprint`` attribute when it has one, else its id.

    Adapters set ``fingerprint`` to provider, base URL, model and decoding options (no secret).
    """
    value = getattr(judge, "fingerprint", None)
    return str(value) if value is not None else judge.id


class JudgeCache:
    """A directory-backed cache of judge outputs.

    Args:
        directory: where the SQLite files live (created if missing).
        size_limit_bytes: evicts least-recently-stored entries above this size (default 1 GiB).
    """

    def __init__(self, directory: str | Path, *, size_limit_bytes: int = 2**30) -> None:
        """Open (or create) the cache."""
        self._cache = diskcache.Cache(str(directory), size_limit=size_limit_bytes)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(fingerprint: str, prompt: Prompt[Any, Any], language: Language, data: BaseModel) -> str:
        """The cache key of one call (hex SHA-256)."""
        material = json.dumps(
            [fingerprint, prompt.name, prompt.version, language, data.model_dump(mode="json")],
            ensure_ascii=False,
            sort_keys=True,
        )
        return hashlib.sha256(material.encode("utf-8")).hexdigest()

    def get(self, key: str) -> str | None:
        """The stored output JSON, or ``None``."""
        value = self._cache.get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        return str(value)

    def set(self, key: str, output_json: str) -> None:
        """Store an output."""
        self._cache.set(key, output_json)

    def close(self) -> None:
        """Close the underlying files."""
        self._cache.close()

    async def aclose(self) -> None:
        """Close the underlying files (the container's closer calls this)."""
        self.close()


class CachingJudge:
    """Wraps a judge: answers from the cache when the same call was made before.

    Cache hits record no usage (no provider request was made).
    """

    def __init__(self, judge: Judge, cache: JudgeCache) -> None:
        """Wrap ``judge`` with ``cache``."""
        self._judge = judge
        self._cache = cache
        self._fingerprint = fingerprint_of(judge)

    @property
    def id(self) -> str:
        """The wrapped judge's id."""
        return self._judge.id

    @property
    def inner(self) -> Judge:
        """The wrapped judge."""
        return self._judge

    async def ask(self, prompt: Prompt[In, Out], data: In, *, language: Language = "en") -> Out:
        """Answer from the cache, else ask the wrapped judge and store its validated output."""
        key = JudgeCache.key(self._fingerprint, prompt, language, data)
        stored = self._cache.get(key)
        if stored is not None:
            try:
                return prompt.output_model.model_validate_json(stored)
            except ValueError:
                pass  # an entry from an incompatible schema: ask again and overwrite
        out = await self._judge.ask(prompt, data, language=language)
        self._cache.set(key, out.model_dump_json())
        return out

    async def aclose(self) -> None:
        """Close the wrapped judge when it owns a client."""
        close = getattr(self._judge, "aclose", None)
        if close is not None:
            await close()
